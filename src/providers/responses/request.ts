/**
 * A Responses API request (POST /v1/responses) as an OpenAI chat request,
 * for providers without a Responses API of their own: the chat body every
 * provider's chat translator already takes. Wire format: OpenAI's API
 * reference, "Create a model response", and the `openai` SDK's types
 * (resources/responses/responses.d.ts).
 *
 * - `instructions` → a first system message; `input` (a string, or items)
 *   → messages: message items (input_text, input_image, input_file parts;
 *   an assistant's output_text and refusal), `function_call` items → the
 *   assistant's tool_calls (consecutive calls, and a call after the
 *   assistant's text, join one assistant message), `function_call_output`
 *   → a tool message; reasoning items from earlier output are dropped
 *   (chat has no place for them).
 * - function tools → chat tools; tool_choice; `text.format` → response_format;
 *   `reasoning.effort` → reasoning_effort; max_output_tokens →
 *   max_completion_tokens; a stream asks for its usage.
 * - What the gateway keeps for itself (store, metadata, previous_response_id,
 *   truncation, include) is not sent; what chat cannot do (built-in tools,
 *   background, stored prompts, conversations) is a 400 naming the field.
 */
import { err, invalid, ok, type Result } from '../../shared/errors.js';
import type { ChatRequest, Message, Part, Tool, ToolCall } from '../shared/openai-request.js';

export type ResponsesBody = Record<string, unknown>;

/** Fields the gateway reads itself, or that have no effect over chat: not sent. */
const KEPT_BY_GATEWAY = new Set([
  'model', 'input', 'instructions', 'stream', 'store', 'metadata', 'previous_response_id', 'truncation', 'include',
  'service_tier', 'prompt_cache_key', 'safety_identifier', 'stream_options', 'tools', 'tool_choice', 'text',
  'reasoning', 'max_output_tokens', 'temperature', 'top_p', 'parallel_tool_calls', 'user', 'top_logprobs', 'background',
]);

const bad = (param: string, what: string): Result<never> => err(invalid(`${param}: ${what}`, param));

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The chat request for a Responses request, or a 400 naming the field chat cannot carry. */
export function toChat(body: ResponsesBody, provider: string): Result<ChatRequest> {
  for (const key in body) {
    if (!KEPT_BY_GATEWAY.has(key) && body[key] !== undefined && body[key] !== null) {
      return bad(key, `not served by provider '${provider}', which the gateway answers over its chat API`);
    }
  }
  if (body.background === true) return bad('background', `background responses are not served by provider '${provider}'`);
  const messages: Message[] = [];
  if (typeof body.instructions === 'string' && body.instructions !== '') messages.push({ role: 'system', content: body.instructions });
  const input = inputMessages(body.input);
  if (!input.ok) return input;
  messages.push(...input.value);
  const chat: ChatRequest = { messages };
  if (body.model !== undefined) chat.model = body.model;
  if (body.stream === true) {
    chat.stream = true;
    // The Responses stream ends with its usage: the chat stream is asked for it.
    chat.stream_options = { include_usage: true };
  }
  for (const k of ['temperature', 'top_p', 'parallel_tool_calls', 'user'] as const) if (isSet(body[k])) chat[k] = body[k] as never;
  if (isSet(body.max_output_tokens)) chat.max_completion_tokens = body.max_output_tokens as number;
  if (isSet(body.top_logprobs)) {
    chat.logprobs = true;
    chat.top_logprobs = body.top_logprobs as number;
  }
  const tools = chatTools(body.tools, provider);
  if (!tools.ok) return tools;
  if (tools.value !== undefined) chat.tools = tools.value;
  const choice = toolChoice(body.tool_choice);
  if (!choice.ok) return choice;
  if (choice.value !== undefined) chat.tool_choice = choice.value;
  const format = responseFormat(body.text);
  if (!format.ok) return format;
  if (format.value !== undefined) chat.response_format = format.value;
  if (isObject(body.reasoning) && isSet(body.reasoning.effort)) chat.reasoning_effort = body.reasoning.effort;
  return ok(chat);
}

function isSet(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function inputMessages(input: unknown): Result<Message[]> {
  if (typeof input === 'string') return ok([{ role: 'user', content: input }]);
  if (!Array.isArray(input)) return bad('input', 'must be a string or an array of items');
  const out: Message[] = [];
  for (let i = 0; i < input.length; i++) {
    const item = input[i] as unknown;
    const at = `input[${i}]`;
    if (!isObject(item)) return bad(at, 'must be an object');
    const type = item.type ?? 'message';
    if (type === 'message') {
      const m = message(item, at);
      if (!m.ok) return m;
      out.push(m.value);
    } else if (type === 'function_call') {
      const call = functionCall(item, at);
      if (!call.ok) return call;
      const last = out[out.length - 1];
      // A call follows the assistant's text, or another call, of the same turn: one assistant message.
      if (last?.role === 'assistant') (last.tool_calls ??= []).push(call.value);
      else out.push({ role: 'assistant', content: null, tool_calls: [call.value] });
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string' || item.call_id === '') return bad(`${at}.call_id`, 'must be a non-empty string');
      const content = outputContent(item.output, `${at}.output`);
      if (!content.ok) return content;
      out.push({ role: 'tool', tool_call_id: item.call_id, content: content.value });
    } else if (type === 'reasoning') {
      continue; // an earlier answer's reasoning: chat has no place for it
    } else {
      return bad(`${at}.type`, `'${String(type)}' items are not served over the chat API`);
    }
  }
  if (out.length === 0) return bad('input', 'has no message to send');
  return ok(out);
}

const ROLES = new Set(['user', 'system', 'developer', 'assistant']);

function message(item: Record<string, unknown>, at: string): Result<Message> {
  const role = item.role;
  if (typeof role !== 'string' || !ROLES.has(role)) return bad(`${at}.role`, "must be 'user', 'system', 'developer' or 'assistant'");
  const content = item.content;
  if (typeof content === 'string') return ok({ role: role as Message['role'], content });
  const read = chatParts(content, `${at}.content`);
  if (!read.ok) return read;
  const parts = read.value;
  if (role === 'assistant') {
    // Chat's assistant content is text (and refusal): joined, as the answer it was.
    const text = parts.filter((p) => p.type === 'text').map((p) => p.text as string).join('');
    const refusal = parts.find((p) => p.type === 'refusal');
    const m: Message = { role: 'assistant', content: text === '' && refusal !== undefined ? null : text };
    if (refusal !== undefined) m.refusal = refusal.refusal;
    return ok(m);
  }
  return ok({ role: role as Message['role'], content: parts });
}

function chatPart(part: unknown, at: string): Result<Part> {
  if (!isObject(part)) return bad(at, 'must be an object');
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      if (typeof part.text !== 'string') return bad(`${at}.text`, 'must be a string');
      return ok({ type: 'text', text: part.text });
    case 'refusal':
      return ok({ type: 'refusal', refusal: part.refusal });
    case 'input_image':
      if (typeof part.image_url !== 'string') return bad(`${at}.image_url`, 'must be a URL or a data URL (file_id is not served over chat)');
      return ok({ type: 'image_url', image_url: part.detail === undefined || part.detail === null ? { url: part.image_url } : { url: part.image_url, detail: part.detail } });
    case 'input_file':
      if (typeof part.file_data !== 'string') return bad(`${at}.file_data`, 'must be a data URL (file_id and file_url are not served over chat)');
      return ok({ type: 'file', file: { file_data: part.file_data, ...(typeof part.filename === 'string' ? { filename: part.filename } : {}) } });
    default:
      return bad(`${at}.type`, `'${String(part.type)}' parts are not served over the chat API`);
  }
}

function functionCall(item: Record<string, unknown>, at: string): Result<ToolCall> {
  if (typeof item.call_id !== 'string' || item.call_id === '') return bad(`${at}.call_id`, 'must be a non-empty string');
  if (typeof item.name !== 'string' || item.name === '') return bad(`${at}.name`, 'must be a non-empty string');
  if (typeof item.arguments !== 'string') return bad(`${at}.arguments`, 'must be a string of JSON');
  return ok({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } });
}

/** A function call's output: a string, or input parts (text, images). */
function outputContent(output: unknown, at: string): Result<string | Part[]> {
  return typeof output === 'string' ? ok(output) : chatParts(output, at);
}

/** An array of Responses content parts as chat parts. */
function chatParts(content: unknown, at: string): Result<Part[]> {
  if (!Array.isArray(content)) return bad(at, 'must be a string or an array of parts');
  const parts: Part[] = [];
  for (let j = 0; j < content.length; j++) {
    const part = chatPart(content[j], `${at}[${j}]`);
    if (!part.ok) return part;
    parts.push(part.value);
  }
  return ok(parts);
}

function chatTools(tools: unknown, provider: string): Result<Tool[] | undefined> {
  if (!isSet(tools)) return ok(undefined);
  if (!Array.isArray(tools)) return bad('tools', 'must be an array');
  const out: Tool[] = [];
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i] as unknown;
    const at = `tools[${i}]`;
    if (!isObject(t)) return bad(at, 'must be an object');
    if (t.type !== 'function') return bad(`${at}.type`, `'${String(t.type)}' tools are not served by provider '${provider}' (function tools are)`);
    if (typeof t.name !== 'string' || t.name === '') return bad(`${at}.name`, 'must be a non-empty string');
    const fn: NonNullable<Tool['function']> = { name: t.name };
    if (isSet(t.description)) fn.description = t.description;
    if (isSet(t.parameters)) fn.parameters = t.parameters;
    if (isSet(t.strict)) fn.strict = t.strict;
    out.push({ type: 'function', function: fn });
  }
  return ok(out.length === 0 ? undefined : out);
}

function toolChoice(choice: unknown): Result<ChatRequest['tool_choice']> {
  if (!isSet(choice)) return ok(undefined);
  if (choice === 'none' || choice === 'auto' || choice === 'required') return ok(choice);
  if (isObject(choice) && choice.type === 'function' && typeof choice.name === 'string') return ok({ type: 'function', function: { name: choice.name } });
  return bad('tool_choice', "must be 'none', 'auto', 'required' or {type: 'function', name} over the chat API");
}

function responseFormat(text: unknown): Result<ChatRequest['response_format']> {
  if (!isObject(text) || !isObject(text.format)) return ok(undefined);
  const f = text.format;
  switch (f.type) {
    case 'text':
      return ok(undefined);
    case 'json_object':
      return ok({ type: 'json_object' });
    case 'json_schema': {
      if (typeof f.name !== 'string' || f.name === '') return bad('text.format.name', 'must be a non-empty string');
      if (!isObject(f.schema)) return bad('text.format.schema', 'must be a JSON Schema object');
      const js: NonNullable<NonNullable<ChatRequest['response_format']>['json_schema']> = { name: f.name, schema: f.schema };
      if (isSet(f.description)) js.description = f.description;
      if (isSet(f.strict)) js.strict = f.strict;
      return ok({ type: 'json_schema', json_schema: js });
    }
    default:
      return bad('text.format.type', "must be 'text', 'json_object' or 'json_schema'");
  }
}
