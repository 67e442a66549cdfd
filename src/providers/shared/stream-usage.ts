/**
 * Usage on every stream. OpenAI reports a streamed answer's usage only when
 * the request sets `stream_options.include_usage` (an extra last chunk with
 * empty `choices`, and `"usage": null` on every other chunk), so the gateway
 * sets it for providers that answer it that way (openai/adapter.ts, Azure
 * OpenAI), marks the call (`addedUsage`), and the respond stage strips what the
 * client did not ask for (pipeline/usage-strip.ts). Translated streams always
 * end with the usage chunk (stream.ts; StreamedAnswer.addedUsage says whether
 * to strip it). OpenAI-compatible providers differ:
 *
 * - `on-request`: OpenAI's behaviour: asked, then stripped.
 * - `always`: the provider reports usage at the end of every stream unasked
 *   (and may refuse `stream_options`, as Mistral does with a 422): nothing to
 *   ask, nothing to strip.
 * - `unknown`: not asked, because the provider may refuse the option or lay
 *   out the answer so that it cannot be stripped back exactly; usage it
 *   reports is read, else the tokens are counted (logs/token-count.ts).
 */
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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
