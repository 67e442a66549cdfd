/**
 * Anthropic errors → the contract's envelope, Anthropic's status kept.
 * Anthropic's body (https://docs.anthropic.com/en/api/errors):
 *   {"type":"error","error":{"type":"invalid_request_error","message":"…"},"request_id":"req_…"}
 * error.type becomes the envelope's code (invalid_request_error,
 * authentication_error, permission_error, not_found_error, request_too_large,
 * rate_limit_error, api_error, overloaded_error…); the envelope's type follows
 * the status, as for the gateway's own errors.
 */
import { GatewayError } from '../../shared/errors.js';
import type { ProviderHeaders } from '../contract.js';
import type { AnthropicErrorBody } from './wire.js';

/** Anthropic's retry-after (on 429 and 529) goes on to the client, so it can wait as Anthropic asks. */
export function anthropicError(status: number, raw: Buffer, headers?: ProviderHeaders): GatewayError {
  const retryAfter = headers?.['retry-after'];
  const extra = typeof retryAfter === 'string' ? { 'retry-after': retryAfter } : undefined;
  const text = raw.toString('utf8');
  let body: Partial<AnthropicErrorBody> | undefined;
  try {
    body = JSON.parse(text) as Partial<AnthropicErrorBody>;
  } catch {
    // Not Anthropic's JSON (a proxy's HTML page, say): its text is the message.
  }
  const e = body?.error;
  if (typeof e?.message === 'string') {
    return new GatewayError(status, e.message, { code: typeof e.type === 'string' ? e.type : undefined, headers: extra });
  }
  const excerpt = text.trim().slice(0, 500);
  return new GatewayError(status, `anthropic answered ${status}${excerpt === '' ? '' : `: ${excerpt}`}`, { headers: extra });
}

/** HTTP status of each Anthropic error type (same page), for errors that arrive inside a 200 stream. */
const STATUS_OF: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** An `error` event of a stream, as the error the answer would have been had it come before the stream began. */
export function streamError(e: { type?: unknown; message?: unknown } | undefined): GatewayError {
  const type = typeof e?.type === 'string' ? e.type : 'api_error';
  const message = typeof e?.message === 'string' ? e.message : 'anthropic stream failed';
  return new GatewayError(STATUS_OF[type] ?? 500, message, { code: type });
}
