/**
 * The validated Config object of the spec. Only `parseConfig` (schema.ts)
 * produces values of these types, so holding a `Config` means it passed every
 * rule; raw header JSON is `unknown` until then.
 */

import type { ProviderFields } from './schema.js';

declare const validated: unique symbol;

export type StrategyMode = 'single' | 'loadbalance' | 'fallback' | 'conditional';

/** A query over metadata.*, params.* and url.pathname (see routing/conditions.ts). */
export type ConditionQuery = { [key: string]: unknown };

export interface Strategy {
  mode: StrategyMode;
  conditions?: { query: ConditionQuery; then: string }[];
  default?: string;
  on_status_codes?: number[];
}

export interface CacheConfig {
  mode: 'simple' | 'semantic';
  max_age?: number;
  /** Semantic mode: the least cosine similarity that counts as the same question (0..1). */
  similarity_threshold?: number;
  /** Semantic mode: where conversations are embedded; absent, the config's first target. */
  embedding?: EmbeddingTarget;
}

/**
 * The embeddings endpoint of the semantic cache, named the way a target names
 * its provider and credentials, plus the embedding model.
 */
export interface EmbeddingTarget extends ProviderFields {
  model?: string;
  provider?: string;
  api_key?: string;
  virtual_key?: string;
  request_timeout?: number;
}

export interface RetryConfig {
  attempts: number;
  on_status_codes?: number[];
  use_retry_after_headers?: boolean;
}

export interface CircuitBreakerConfig {
  failure_threshold: number;
  cooldown_interval: number;
  failure_status_codes?: number[];
}

export interface Feedback {
  value?: number;
  weight?: number;
  metadata?: Record<string, unknown>;
}

export interface HookOutcome {
  feedback?: Feedback;
  deny?: boolean;
}

export interface HookCheck {
  id: string;
  parameters: Record<string, unknown>;
}

export interface Hook {
  id: string;
  type?: string;
  async?: boolean;
  checks?: HookCheck[];
  on_fail?: HookOutcome;
  on_success?: HookOutcome;
}

export type Guardrail =
  | string
  | ({
      id?: string;
      deny?: boolean;
      async?: boolean;
      on_fail?: HookOutcome;
      on_success?: HookOutcome;
    } & { [check: string]: unknown });

export interface Deployment {
  deployment_id: string;
  alias: string;
  api_version: string;
  is_default?: boolean;
}

/** One node of the config tree: the root or any target at any depth. */
export interface ConfigNode {
  strategy?: Strategy;
  targets?: ConfigNode[];
  name?: string;
  provider?: string;
  api_key?: string;
  virtual_key?: string;
  custom_host?: string;
  strict_compat_compliance?: boolean;
  resource_name?: string;
  deployment_id?: string;
  api_version?: string;
  deployments?: Deployment[];
  override_params?: Record<string, unknown>;
  default_params?: Record<string, unknown>;
  drop_params?: string[];
  prompt_id?: string;
  request_timeout?: number;
  cache?: CacheConfig;
  retry?: RetryConfig;
  cb_config?: CircuitBreakerConfig;
  weight?: number;
  on_status_codes?: number[];
  passthrough?: boolean;
  forward_headers?: string[];
  before_request_hooks?: Hook[];
  after_request_hooks?: Hook[];
  input_guardrails?: Guardrail[];
  output_guardrails?: Guardrail[];
  cloud1_access_key_id?: string;
  cloud1_secret_access_key?: string;
  cloud1_region?: string;
  cloud1_session_token?: string;
  vendor_organization?: string;
  vendor_project?: string;
  cloud2_project_id?: string;
  cloud2_region?: string;
  cloud2_service_account_json?: Record<string, unknown>;
  cloud3_region?: string;
  cloud3_deployment_name?: string;
  cloud3_endpoint_name?: string;
  cloud3_api_version?: string;
  cloud3_deployment_type?: 'serverless' | 'managed';
  cloud3_entra_scope?: string;
  /** Entra ID client credentials (tenant, app id, secret): the token replaces api_key. */
  cloud3_entra_tenant_id?: string;
  cloud3_entra_client_id?: string;
  cloud3_entra_client_secret?: string;
  cloud3_resource_name?: string;
  cloud3_deployment_id?: string;
  cloud3_model_name?: string;
  Authorization?: string;
}

/** A root config that passed validation. */
export type Config = ConfigNode & { readonly [validated]: true };
