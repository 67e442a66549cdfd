/**
 * Vertex AI's errors → the contract's envelope, the status kept. Vertex's own
 * frontend (auth, quota, unknown model) answers google.rpc.Status, as the
 * Gemini API does (../google/errors.ts); Claude's own errors come in
 * Anthropic's body (`{"type":"error",…}`, ../anthropic/errors.ts).
 */
import { anthropicError } from '../anthropic/errors.js';
import type { ProviderHeaders } from '../contract.js';
import { googleError } from '../google/errors.js';
import type { GatewayError } from '../../shared/errors.js';

/** Claude's own errors are Anthropic's body (type "error"); Vertex's frontend answers in Google's shape. */
export function vertexClaudeError(status: number, raw: Buffer, headers: ProviderHeaders): GatewayError {
  let type: unknown;
  try {
    type = (JSON.parse(raw.toString('utf8')) as { type?: unknown } | null)?.type;
  } catch {
    // Not JSON: either reader quotes it.
  }
  return type === 'error' ? anthropicError(status, raw, headers) : googleError(status, raw);
}
