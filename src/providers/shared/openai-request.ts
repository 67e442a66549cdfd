/**
 * The client's OpenAI request as every translator reads it. The body
 * validator (pipeline/validation.ts) has checked roles, the outline of content
 * parts, tools, tool_choice and response_format, and the types of the scalar
 * parameters; what lies deeper (a tool call's id and arguments, a part's
 * text, an image's URL) is unknown until a translator reads it, with the
 * readers below, which refuse what they cannot read with a 400 naming the
 * place (`messages[1].tool_calls[0].function.arguments`).
 */
import { err, invalid, ok, type Result } from '../../shared/errors.js';

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';

/** A content part: its `type` is checked, the rest is the translator's to read. */
export interface Part {
  type: string;
  text?: unknown;
  refusal?: unknown;
  image_url?: { url?: unknown; detail?: unknown };
  input_audio?: { data?: unknown; format?: unknown };
  file?: { file_data?: unknown; file_id?: unknown; filename?: unknown };
  /** Anthropic's prompt-caching marker, which clients put on OpenAI-shaped parts. */
  cache_control?: unknown;
  [field: string]: unknown;
}

export interface FunctionCall {
  name?: unknown;
  arguments?: unknown;
}

export interface ToolCall {
  id?: unknown;
  type?: unknown;
  function?: FunctionCall;
}

export interface Message {
  role: Role;
  /** Required for system, developer, user and tool; a function message's is a string or null. */
  content?: string | Part[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  function_call?: FunctionCall | null;
  /** Fields providers add to OpenAI's messages (Anthropic's thinking_blocks). */
  [field: string]: unknown;
}

export interface FunctionDefinition {
  name: string;
  description?: unknown;
  parameters?: unknown;
  strict?: unknown;
}

export interface Tool {
  type: string;
  function?: FunctionDefinition;
  /** A built-in tool's configuration, under its type's name (`google_search: {…}`), or cache_control. */
  [field: string]: unknown;
}

export type ToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: string; function?: { name?: unknown }; allowed_tools?: { mode?: unknown; tools?: unknown }; [field: string]: unknown };

export interface ResponseFormat {
  type: 'text' | 'json_object' | 'json_schema';
  json_schema?: { name: string; description?: unknown; schema?: unknown; strict?: unknown };
}

/** OpenAI's chat request as validated; every other parameter is `unknown` until the translator's policy (params.ts) rules on it. */
export interface ChatRequest {
  model?: unknown;
  messages: Message[];
  stream?: boolean | null;
  stream_options?: { include_usage?: unknown } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stop?: string | string[] | null;
  n?: number | null;
  seed?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  response_format?: ResponseFormat;
  tools?: Tool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  functions?: FunctionDefinition[];
  function_call?: 'none' | 'auto' | { name: string };
  user?: string;
  [param: string]: unknown;
}

/** OpenAI's embeddings request as validated. */
export interface EmbeddingsRequest {
  model?: unknown;
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
  [param: string]: unknown;
}

/** OpenAI reads null as "not set". */
export function isSet<T>(v: T | null | undefined): v is T {
  return v !== undefined && v !== null;
}

/** A 400 at `param` (`${param}: ${what}`). */
export function refuse(param: string, what: string): Result<never> {
  return err(invalid(`${param}: ${what}`, param));
}

/** The request's model id, which every translated API needs (a URL or the body names it). */
export function modelOf(body: { model?: unknown }, provider: string): Result<string> {
  return typeof body.model === 'string' && body.model !== '' ? ok(body.model) : refuse('model', `provider '${provider}' needs a model`);
}

/** The request used the deprecated `functions` (and no `tools`): OpenAI answers it with `function_call`. */
export function usesLegacyFunctions(body: ChatRequest): boolean {
  return isSet(body.functions) && !isSet(body.tools);
}

/** The client asked for the usage chunk that ends a stream (stream_options.include_usage). */
export function asksUsage(body: ChatRequest): boolean {
  return body.stream_options?.include_usage === true;
}

/** max_completion_tokens, else max_tokens: the same limit, OpenAI's current name winning. */
export function maxTokens(body: ChatRequest): number | undefined {
  return body.max_completion_tokens ?? body.max_tokens ?? undefined;
}

/** `stop` as a list; none when absent or empty. */
export function stopSequences(body: ChatRequest): string[] | undefined {
  if (typeof body.stop === 'string') return [body.stop];
  return Array.isArray(body.stop) && body.stop.length > 0 ? body.stop : undefined;
}

/** The embeddings input as texts: providers embed text, not OpenAI's token ids. */
export function embeddingTexts(body: EmbeddingsRequest, provider: string): Result<string[]> {
  const input = body.input;
  if (typeof input === 'string') return ok([input]);
  if (Array.isArray(input) && input.every((x): x is string => typeof x === 'string')) return ok(input);
  return refuse('input', `provider '${provider}' embeds text only (a string or an array of strings), not token ids`);
}

/** Text of content that holds text only (text and refusal parts), each with its part (for cache markers); `at` is the message. */
export function textParts(content: Message['content'], at: string, role: Role): Result<{ text: string; part: Part | null }[]> {
  if (!isSet(content)) return ok([]);
  if (typeof content === 'string') return ok([{ text: content, part: null }]);
  const out: { text: string; part: Part }[] = [];
  for (const [j, part] of content.entries()) {
    const here = `${at}.content[${j}]`;
    if (part.type !== 'text' && part.type !== 'refusal') return refuse(`${here}.type`, `'${part.type}' parts are not accepted in ${role} messages (text only)`);
    const text = part.type === 'text' ? part.text : part.refusal;
    if (typeof text !== 'string') return refuse(`${here}.${part.type}`, 'must be a string');
    out.push({ text, part });
  }
  return ok(out);
}

/** A text part's text. */
export function partText(part: Part, at: string): Result<string> {
  return typeof part.text === 'string' ? ok(part.text) : refuse(`${at}.text`, 'must be a string');
}

/** A tool call of an assistant message, read: its id, function name and arguments (the object their JSON text encodes, and that text). */
export function toolCall(call: ToolCall, at: string): Result<{ id: string } & ReadCall> {
  if (call.type !== undefined && call.type !== 'function') return refuse(`${at}.type`, `'${String(call.type)}' tool calls cannot be sent on (function only)`);
  if (typeof call.id !== 'string' || call.id === '') return refuse(`${at}.id`, 'must be a non-empty string');
  const fn = functionCall(call.function, `${at}.function`);
  return fn.ok ? ok({ id: call.id, ...fn.value }) : fn;
}

export interface ReadCall {
  name: string;
  input: Record<string, unknown>;
  /** The arguments' JSON text as the client sent it ('{}' when it sent none). */
  arguments: string;
}

/** A function call (a tool call's `function`, or a legacy `function_call`): its name and arguments. */
export function functionCall(fn: FunctionCall | null | undefined, at: string): Result<ReadCall> {
  if (typeof fn?.name !== 'string' || fn.name === '') return refuse(`${at}.name`, 'must be a non-empty string');
  const input = toolArguments(fn.arguments, `${at}.arguments`);
  if (!input.ok) return input;
  return ok({ name: fn.name, input: input.value, arguments: typeof fn.arguments === 'string' && fn.arguments.trim() !== '' ? fn.arguments : '{}' });
}

/** OpenAI carries call arguments as JSON text of an object; absent or blank: no arguments. */
export function toolArguments(args: unknown, at: string): Result<Record<string, unknown>> {
  if (!isSet(args)) return ok({});
  if (typeof args !== 'string') return refuse(at, 'must be a JSON string');
  if (args.trim() === '') return ok({});
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    return refuse(at, 'is not valid JSON');
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? ok(value as Record<string, unknown>) : refuse(at, 'must encode a JSON object');
}

/**
 * An assistant message's calls, read: its tool_calls, then its legacy
 * function_call, which gets an id from `legacy` (the function message that
 * answers it cites that id).
 */
export function assistantCalls(m: Message, index: number, legacy: LegacyCallIds): Result<({ id: string } & ReadCall)[]> {
  const at = `messages[${index}]`;
  const calls: ({ id: string } & ReadCall)[] = [];
  for (const [j, tc] of (m.tool_calls ?? []).entries()) {
    const call = toolCall(tc, `${at}.tool_calls[${j}]`);
    if (!call.ok) return call;
    calls.push(call.value);
  }
  if (isSet(m.function_call)) {
    const call = functionCall(m.function_call, `${at}.function_call`);
    if (!call.ok) return call;
    calls.push({ id: legacy.call(call.value.name, index), ...call.value });
  }
  return ok(calls);
}

/**
 * Ids for legacy function calls, which carry none: each assistant
 * `function_call` gets one from its message's position, and the `function`
 * message answering it (the next of that name) cites it.
 */
export class LegacyCallIds {
  private readonly byName = new Map<string, string[]>();

  /** The id of the function_call in message `index`. */
  call(name: string, index: number): string {
    const id = `call_fn_${index}`;
    const ids = this.byName.get(name);
    if (ids === undefined) this.byName.set(name, [id]);
    else ids.push(id);
    return id;
  }

  /** The id a function message (`at`) answers, or a 400 when no earlier call of its name is unanswered. */
  answer(name: string | undefined, at: string): Result<string> {
    const id = name === undefined ? undefined : this.byName.get(name)?.shift();
    return id === undefined ? refuse(`${at}.name`, `no earlier assistant function_call named '${name}' is unanswered`) : ok(id);
  }
}

/** A data: URL (RFC 2397) as its media type (lower case; '' when none is given) and its bytes in base64. */
export function dataUrl(url: string, at: string): Result<{ mediaType: string; base64: string }> {
  const m = /^data:([^;,]*)((?:;[^;,]*)*?)(;base64)?,(.*)$/s.exec(url);
  if (m === null) return refuse(at, 'must be a data URL (data:<media type>;base64,<data>)');
  const mediaType = m[1]!.toLowerCase();
  if (m[3] !== undefined) return ok({ mediaType, base64: m[4]! });
  try {
    return ok({ mediaType, base64: Buffer.from(decodeURIComponent(m[4]!), 'utf8').toString('base64') });
  } catch {
    return refuse(at, 'is not a valid data URL (its data is not percent-encoded text)');
  }
}

/** A JSON Schema object (tool parameters, response_format schema); OpenAI allows a function without one, which takes no arguments. */
export function schemaObject(schema: unknown, at: string): Result<Record<string, unknown>> {
  if (schema === undefined) return ok({ type: 'object', properties: {} });
  return typeof schema === 'object' && schema !== null && !Array.isArray(schema) ? ok(schema as Record<string, unknown>) : refuse(at, 'must be a JSON schema object');
}
