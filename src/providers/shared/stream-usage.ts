/**
 * Usage on every stream. OpenAI reports a streamed answer's usage only when
 * the request sets `stream_options.include_usage` (an extra last chunk with
 * empty `choices`, and `"usage": null` on every other chunk), so the gateway
 * sets it for providers that answer it that way, and the relay strips what
 * the client did not ask for (server/usage-strip.ts). Providers differ:
 *
 * - `on-request`: OpenAI's behaviour: asked, then stripped.
 * - `always`: the provider reports usage at the end of every stream unasked
 *   (and may refuse `stream_options`, as Mistral does with a 422): nothing to
 *   ask, nothing to strip.
 * - `unknown`: not asked, because the provider may refuse the option or lay
 *   out the answer so that it cannot be stripped back exactly; usage it
 *   reports is read, else the tokens are counted (logs/token-count.ts).
 */
import { ok, type GatewayError, type Result } from '../../shared/errors.js';
import type { CallInput, ProviderAdapter, ProviderCall } from '../types.js';
import type { Endpoint } from '../../shared/endpoint.js';

export type StreamUsage = 'on-request' | 'always' | 'unknown';

/** A streamed chat or text completion whose client did not ask for usage. */
export function wantsUsage(endpoint: Endpoint, body: Record<string, unknown> | null): body is Record<string, unknown> {
  if ((endpoint !== 'chat' && endpoint !== 'completions') || body === null || body.stream !== true) return false;
  const so = body.stream_options;
  return !(isObject(so) && so.include_usage === true);
}

/** `body` with stream_options.include_usage set, its other stream options kept. */
export function withUsage(body: Record<string, unknown>): Record<string, unknown> {
  const so = body.stream_options;
  return { ...body, stream_options: { ...(isObject(so) ? so : {}), include_usage: true } };
}

/**
 * An adapter of an `on-request` provider: streams the client did not ask
 * usage for are prepared from the body with include_usage, and the call says
 * so (`addedUsage`) so the relay strips the extra chunk. The client's body is
 * not touched: the cache key was made from it.
 */
export function askingUsage(adapter: ProviderAdapter): ProviderAdapter {
  return {
    name: adapter.name,
    prepare(input: CallInput) {
      if (!wantsUsage(input.endpoint, input.body)) return adapter.prepare(input);
      const body = withUsage(input.body);
      const call = adapter.prepare({ ...input, body });
      return call instanceof Promise ? call.then((c) => asked(c, body)) : asked(call, body);
    },
  };
}

function asked(call: Result<ProviderCall, GatewayError>, body: Record<string, unknown>): Result<ProviderCall, GatewayError> {
  if (!call.ok) return call;
  const c = call.value;
  // An adapter that relays the client's own body (OpenAI's wire format) sets none: the asking body goes instead.
  const sent = c.body === undefined && c.translator === undefined ? JSON.stringify(body) : c.body;
  return ok({ ...c, body: sent, addedUsage: true });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
