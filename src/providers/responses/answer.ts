/**
 * The Response object (OpenAI's `response`) made from a chat answer: the
 * request's settings echoed as OpenAI echoes them, the output items
 * (reasoning, the assistant's message, its function calls), the status
 * (`incomplete` when the answer was cut by max tokens or a content filter)
 * and usage in the Responses shape. Shapes: the `openai` SDK's Response,
 * ResponseOutputItem and ResponseUsage types.
 */
import { badResponse, nowSeconds, type OpenAIUsage } from '../shared/openai-answer.js';
import { err, ok, type Result } from '../../shared/errors.js';
import { itemId, responseId } from './ids.js';
import type { ResponsesBody } from './request.js';

export type Json = Record<string, unknown>;

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export function responseUsage(u: OpenAIUsage | undefined | null): ResponseUsage | null {
  if (u === undefined || u === null) return null;
  const input = u.prompt_tokens ?? 0;
  const output = u.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: u.total_tokens ?? input + output,
  };
}

/** The Response for `body` before any output: status in_progress, what the request set echoed. */
export function responseShell(body: ResponsesBody, model: string): Json {
  const reasoning = body.reasoning as Json | undefined;
  return {
    id: responseId(),
    object: 'response',
    created_at: nowSeconds(),
    status: 'in_progress',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: reasoning?.effort ?? null, summary: reasoning?.summary ?? null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage: null,
    user: body.user ?? null,
  };
}

/** A chat finish reason → the Response's status and incomplete_details. */
export function finished(response: Json, finishReason: unknown): void {
  if (finishReason === 'length' || finishReason === 'content_filter') {
    response.status = 'incomplete';
    response.incomplete_details = { reason: finishReason === 'length' ? 'max_output_tokens' : 'content_filter' };
  } else {
    response.status = 'completed';
  }
}

export function messageItem(text: string, refusal: string | null, status: 'in_progress' | 'completed'): Json {
  const content: Json[] = [];
  if (text !== '' || refusal === null) content.push(textPart(text));
  if (refusal !== null) content.push({ type: 'refusal', refusal });
  return { id: itemId('msg'), type: 'message', status, role: 'assistant', content };
}

export function textPart(text: string): Json {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function functionCallItem(callId: string, name: string, args: string, status: 'in_progress' | 'completed'): Json {
  return { id: itemId('fc'), type: 'function_call', status, call_id: callId, name, arguments: args };
}

export function reasoningItem(summary: string): Json {
  return { id: itemId('rs'), type: 'reasoning', summary: summary === '' ? [] : [{ type: 'summary_text', text: summary }] };
}

interface ChatMessage {
  content?: unknown;
  refusal?: unknown;
  reasoning_content?: unknown;
  tool_calls?: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[];
}

/** A whole chat.completion (text) → the Response (text); a 502 when it is not a chat completion. */
export function responseFromChat(chatText: string, body: ResponsesBody, provider: string): Result<string> {
  let chat: { model?: unknown; choices?: { message?: ChatMessage; finish_reason?: unknown }[]; usage?: OpenAIUsage };
  try {
    chat = JSON.parse(chatText) as typeof chat;
  } catch {
    return err(badResponse(provider, 'sent an answer that is not valid JSON'));
  }
  const choice = Array.isArray(chat.choices) ? chat.choices[0] : undefined;
  if (choice === undefined || typeof choice.message !== 'object' || choice.message === null) {
    return err(badResponse(provider, 'sent an answer without a choice'));
  }
  const m = choice.message;
  const response = responseShell(body, typeof chat.model === 'string' ? chat.model : String(body.model ?? ''));
  const output = response.output as Json[];
  if (typeof m.reasoning_content === 'string' && m.reasoning_content !== '') output.push(reasoningItem(m.reasoning_content));
  const text = typeof m.content === 'string' ? m.content : '';
  const refusal = typeof m.refusal === 'string' ? m.refusal : null;
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
  if (text !== '' || refusal !== null || calls.length === 0) output.push(messageItem(text, refusal, 'completed'));
  for (const c of calls) {
    output.push(functionCallItem(String(c.id ?? itemId('item')), String(c.function?.name ?? ''), String(c.function?.arguments ?? ''), 'completed'));
  }
  finished(response, choice.finish_reason);
  response.usage = responseUsage(chat.usage);
  return ok(JSON.stringify(response));
}
