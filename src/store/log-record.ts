/**
 * One request to a model endpoint or the generic proxy, as the log keeps it:
 * built once the answer is finished (or refused) by logs/build.ts, handed to
 * the log queue, written to `request_logs` (logs.ts). Bodies, metadata and
 * errors in a record are already redacted (logs/redact.ts); nothing here
 * holds a gateway or provider key.
 */
import type { CacheStatus } from '../shared/cache-status.js';
import type { Endpoint } from '../shared/endpoint.js';

/** The layout of this record; a different layout would get a new name, so readers can tell stored records apart. */
export const LOG_FORMAT = 'v1';

export interface LogRecord {
  /** UUIDv7 (store/ids.ts newId): time-ordered, so lists page by id newest first. */
  id: string;
  /** Unix milliseconds when the gateway received the request. */
  createdAtMs: number;
  traceId: string;
  spanId: string | null;
  parentSpanId: string | null;
  spanName: string | null;
  workspaceId: string;
  apiKeyId: string;
  /** The key's user for user keys (data visibility: members may see only their own keys' logs); null for service keys. */
  userId: string | null;
  /** Saved config used (id), if any. */
  configId: string | null;
  /** The virtual key or provider (virtual_keys row) whose stored credentials answered, if any. */
  virtualKeyId: string | null;
  integrationId: string | null;
  /** The prompt the request ran (a run, or its config's prompt_id), and the version it rendered. */
  promptId: string | null;
  promptVersion: number | null;
  /** Canonical provider name (`openai`, `anthropic`, …); null when the request failed before one was chosen. */
  provider: string | null;
  model: string | null;
  endpoint: Endpoint;
  method: string;
  /** Path after /v1, without the query. */
  path: string;
  /** Status the client got. */
  status: number;
  /** Whole request, as the client saw it, until the last byte. */
  latencyMs: number;
  /** From the answering attempt's request to the provider's first byte; null when no provider answered. */
  upstreamTtfbMs: number | null;
  /** Null when unknown (no answer, or an answer without usage that could not be counted). */
  promptTokens: number | null;
  completionTokens: number | null;
  totalTokens: number | null;
  /** Tokens were counted by the gateway, not reported by the provider. */
  tokensEstimated: boolean;
  /** USD: catalog price times the integration's pricing multiplier; null when the model has no price. */
  costUsd: number | null;
  cacheStatus: CacheStatus | null;
  /** Retries made on the answering target. */
  retryCount: number;
  /** x-gateway-last-used-option-index: the path of the answering target, e.g. `config.targets[1]`. */
  lastUsedOptionIndex: string | null;
  metadata: Record<string, string> | null;
  /** The error the client got (the gateway's envelope or the provider's error body); null on success. */
  error: unknown;
  /** What the config's hooks and guardrails found, async ones included; null without hooks. */
  hooks: LoggedHooks | null;
  /** Allow-listed request headers (redact.ts safeHeaders). */
  requestHeaders: Record<string, string> | null;
  /** Redacted body text; null when bodies are not logged for the workspace. */
  requestBody: string | null;
  responseBody: string | null;
  logFormat: string;
}

/**
 * What a request's hooks and guardrails came to: `denied` a denying hook
 * failed (the request was refused), `failed` a hook failed and none denied,
 * `passed` every hook passed.
 */
export const HOOK_STATUSES = ['passed', 'failed', 'denied'] as const;
export type HookStatus = (typeof HOOK_STATUSES)[number];

/** A check's outcome in one request: failed where it failed once, else errored where it errored once, else passed. */
export const CHECK_OUTCOMES = ['passed', 'failed', 'errored'] as const;
export type CheckOutcome = (typeof CHECK_OUTCOMES)[number];

/** A request's hook results as the log keeps them (made by guardrails/log-form.ts). */
export interface LoggedHooks {
  /** hook_results as JSON, in the log's compact form (guardrails/log-form.ts unpackResults reads it). */
  results: string;
  status: HookStatus;
  /** Each check the request ran, by id, with its outcome. */
  checks: Readonly<Record<string, CheckOutcome>>;
}
