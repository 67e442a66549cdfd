/**
 * OpenAI's answer shapes, for translators: the answer readers' response
 * headers, SSE framing, ids, chat.completion and chat.completion.chunk,
 * usage, tool calls, and the 502 of an answer that cannot be read. One
 * place, so every translator answers the same way.
 */
import { randomBytes } from 'node:crypto';
import { err, GatewayError, ok, type Result } from '../../shared/errors.js';
import type { Answer, ErrorReader, StreamedAnswer, WholeAnswer } from '../contract.js';
import { asksUsage, type ChatRequest } from './openai-request.js';

export const SSE_DONE = 'data: [DONE]\n\n';

/** One `data:` server-sent event. */
export function sseEvent(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export function completionId(prefix = 'chatcmpl'): string {
  return `${prefix}-${randomBytes(12).toString('base64url')}`;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

/** A chat.completion.chunk with one choice (index 0) carrying `delta`. */
export function chatChunk(
  id: string,
  model: string,
  created: number,
  delta: Record<string, unknown>,
  finishReason: FinishReason | null = null,
): Record<string, unknown> {
  return { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
}

/** The last chunk OpenAI sends when stream_options.include_usage is set: no choices, only usage. */
export function usageChunk(id: string, model: string, created: number, usage: OpenAIUsage): Record<string, unknown> {
  return { id, object: 'chat.completion.chunk', created, model, choices: [], usage };
}

export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * An answer's tool calls on its message. A request that used the legacy
 * `functions` gets OpenAI's legacy shape, which carries one call.
 */
export function putToolCalls(
  message: { tool_calls?: OpenAIToolCall[]; function_call?: OpenAIToolCall['function'] },
  calls: OpenAIToolCall[],
  legacyFunctions: boolean,
): void {
  if (calls.length === 0) return;
  if (legacyFunctions) message.function_call = calls[0]!.function;
  else message.tool_calls = calls;
}

/**
 * The delta streaming part of the tool call numbered `index` (in order of
 * appearance): tool_calls[index], or for a legacy `functions` request
 * function_call, first call only (undefined: nothing to send).
 */
export function toolCallDelta(
  index: number,
  call: { id?: string; type?: 'function'; function: { name?: string; arguments: string } },
  legacyFunctions: boolean,
): Record<string, unknown> | undefined {
  if (!legacyFunctions) return { tool_calls: [{ index, ...call }] };
  return index === 0 ? { function_call: call.function } : undefined;
}

/** The 502 of a whole answer the gateway cannot read (`what` follows the provider's name). */
export function badResponse(provider: string, what: string): GatewayError {
  return new GatewayError(502, `${provider} ${what}`, { code: 'bad_upstream_response' });
}

/** A whole answer's JSON; a 502 `bad_upstream_response` when it does not parse. */
export function parseAnswer(raw: Buffer, provider: string): Result<unknown> {
  try {
    return ok(JSON.parse(raw.toString('utf8')) as unknown);
  } catch {
    return err(badResponse(provider, 'sent an answer that is not valid JSON'));
  }
}

/** Response headers of a translated whole answer. */
export const JSON_HEADERS: Readonly<Record<string, string>> = { 'content-type': 'application/json' };
/** Response headers of a translated stream. */
export const SSE_HEADERS: Readonly<Record<string, string>> = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

/** A whole answer's reader. */
export function wholeAnswer(response: WholeAnswer['response'], error: ErrorReader): WholeAnswer {
  return { streamed: false, headers: JSON_HEADERS, response, error };
}

/** How the answer to one chat request is read: whole, streamed, or the provider's error. */
export interface ChatReading {
  response: WholeAnswer['response'];
  stream: StreamedAnswer['stream'];
  error: ErrorReader;
}

/** A chat answer's reader: streamed when the client asked for a stream, else whole. */
export function chatAnswer(body: ChatRequest, read: ChatReading): Answer {
  if (body.stream !== true) return wholeAnswer(read.response, read.error);
  return { streamed: true, headers: SSE_HEADERS, addedUsage: !asksUsage(body), stream: read.stream, error: read.error };
}
