/**
 * What a provider adapter is: a translator between the client's OpenAI-shaped
 * request and the provider's wire format. The OpenAI-compatible family needs
 * no translation; adapters for other wire formats add response transforms.
 */
import type { ConfigNode } from '../config/types.js';
import type { GatewayError, Result } from '../shared/errors.js';

/** The gateway's first-class endpoints; anything else is the generic proxy. */
export type Endpoint = 'chat' | 'completions' | 'embeddings' | 'proxy';

export const ENDPOINT_PATHS: Record<Exclude<Endpoint, 'proxy'>, string> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
};

/** A leaf target once the provider is known: config keys plus the request's own credentials. */
export interface ResolvedTarget {
  provider: string;
  node: ConfigNode;
  /** Authorization header from the client, used when the target carries no api_key. */
  clientAuthorization: string | undefined;
  /** custom_host from the target, else x-gateway-custom-host. */
  customHost: string | undefined;
}

export interface ProviderCall {
  /** Absolute URL of the provider endpoint. */
  url: string;
  /** Headers the provider needs (auth, version); the router adds forwarded ones. */
  headers: Record<string, string>;
}

export interface ProviderAdapter {
  readonly name: string;
  /**
   * Where and how to call the provider for this endpoint. `path` is the part
   * after /v1 (query included) — the endpoint's path or, for the generic proxy,
   * the client's own.
   */
  prepare(target: ResolvedTarget, endpoint: Endpoint, path: string): Result<ProviderCall, GatewayError>;
}
