/**
 * Chat completions ⇄ Cohere Chat v2 (POST /v2/chat): the OpenAI-shaped
 * request turned into Cohere's, and Cohere's whole answer turned back. The
 * stream has its own file (chat-stream.ts). Field facts: see wire.ts.
 *
 * Every top-level parameter of the client's body meets exactly one rule:
 * mapped to Cohere's counterpart (HANDLED), dropped because it only concerns
 * OpenAI's platform (DROPPED, each with its reason), refused because Cohere
 * cannot do what it asks (refusal()), or — anything else, i.e. Cohere's own
 * parameters such as `k`, `documents`, `citation_options`, `safety_mode`,
 * `priority`, `strict_tools` — passed on as the client sent it.
 */
import { GatewayError, invalid, ok, type Result } from '../../../shared/errors.js';
import type { OpenAIFunctionCallParam, OpenAIMessageParam } from '../../shared/openai-request.js';
import { completionId, nowSeconds, putToolCalls, type FinishReason, type OpenAIToolCall, type OpenAIUsage } from '../../shared/openai-answer.js';
import type {
  CohereAssistantMessage,
  CohereChatRequest,
  CohereChatResponse,
  CohereFinishReason,
  CohereImageContent,
  CohereLogprobItem,
  CohereMessage,
  CohereResponseFormat,
  CohereTextContent,
  CohereThinking,
  CohereTool,
  CohereToolCall,
  CohereUsage,
} from '../wire.js';

// ---------------------------------------------------------------------------
// The client's side (OpenAI's chat request), as far as it is read here. The
// server's schema has checked roles and the outline; the inside of content
// parts, tools and tool calls is checked here.

interface OpenAIPart {
  type: string;
  text?: unknown;
  refusal?: unknown;
  image_url?: { url?: unknown; detail?: unknown };
}

type OpenAIMessage = OpenAIMessageParam<OpenAIPart>;

interface OpenAIFunction {
  name: string;
  description?: unknown;
  parameters?: unknown;
  strict?: unknown;
}

/** What the answer's translation needs to know of the request. */
export interface ChatContext {
  /** Cohere's answer names no model: the request's is reported. */
  model: string;
  includeUsage: boolean;
  /** The client used the legacy `functions`: answer with `function_call`, as OpenAI does. */
  legacyFunctions: boolean;
}

/** Parameters read by toCohereChat below (mapped, or checked by refusal() and then dropped). */
const HANDLED = new Set([
  'model', 'messages', 'stream', 'stream_options', 'tools', 'functions', 'tool_choice', 'function_call',
  'response_format', 'max_tokens', 'max_completion_tokens', 'stop', 'temperature', 'top_p', 'seed',
  'frequency_penalty', 'presence_penalty', 'logprobs', 'top_logprobs', 'n', 'logit_bias', 'modalities',
  'reasoning_effort', 'thinking',
]);

/** OpenAI parameters with no Cohere counterpart whose absence changes nothing the client can see. */
const DROPPED: Readonly<Record<string, string>> = {
  user: "an end-user id for OpenAI's abuse monitoring; Cohere's chat has no such field",
  safety_identifier: "an end-user id for OpenAI's abuse monitoring; Cohere's chat has no such field",
  parallel_tool_calls: 'Cohere has no switch: its models may always call several tools in one turn',
  store: "OpenAI's stored completions",
  metadata: "tags for OpenAI's stored completions",
  service_tier: "OpenAI's processing tiers",
  prompt_cache_key: "routing hint for OpenAI's prompt cache; Cohere caches on its own",
  prompt_cache_retention: "OpenAI's prompt cache lifetime",
  verbosity: "a hint to OpenAI's GPT-5 models",
};

/** Why a parameter Cohere cannot honour is refused (null: this value is fine). */
function refusal(key: string, value: unknown): string | null {
  switch (key) {
    case 'n':
      return value === 1 ? null : "Cohere's chat returns one choice per request; n must be 1";
    case 'logit_bias':
      return Object.keys(value as object).length === 0 ? null : "Cohere's chat has no logit bias";
    case 'top_logprobs':
      return value === 0 ? null : "Cohere reports the chosen tokens' log probabilities only, not alternatives";
    case 'modalities':
      return Array.isArray(value) && value.every((m) => m === 'text') ? null : "Cohere's chat answers in text only";
    case 'audio':
      return "Cohere's chat answers in text only";
    case 'prediction':
      return 'Cohere has no predicted outputs';
    case 'web_search_options':
      return "Cohere's chat has no built-in web search";
    default:
      return null;
  }
}

export function toCohereChat(body: Record<string, unknown>): Result<{ request: CohereChatRequest; context: ChatContext }> {
  const out: CohereChatRequest = { messages: [] };
  for (const key in body) {
    const value = body[key];
    if (value === null || value === undefined) continue; // OpenAI's null means unset
    const why = refusal(key, value);
    if (why !== null) return { ok: false, error: invalid(`${key}: not supported by cohere (${why})`, key, 'unsupported_parameter') };
    if (!HANDLED.has(key) && !(key in DROPPED)) out[key] = value;
  }

  const messages = toCohereMessages(body.messages as OpenAIMessage[]);
  if (!messages.ok) return messages;
  out.messages = messages.value;
  if (isSet(body.model)) out.model = body.model;
  if (body.stream === true) out.stream = true;

  const legacyFunctions = isSet(body.functions) && !isSet(body.tools);
  const tools = toCohereTools(body);
  if (!tools.ok) return tools;
  const choice = toolChoice(body, tools.value.tools);
  if (!choice.ok) return choice;
  if (choice.value.tools.length > 0) out.tools = choice.value.tools;
  if (tools.value.strict) out.strict_tools = true;
  if (choice.value.choice !== undefined) out.tool_choice = choice.value.choice;

  if (isSet(body.response_format)) out.response_format = toResponseFormat(body.response_format as { type: string; json_schema?: { schema?: unknown } });
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens !== null && maxTokens !== undefined) out.max_tokens = maxTokens as number;
  if (typeof body.stop === 'string') out.stop_sequences = [body.stop];
  else if (Array.isArray(body.stop)) out.stop_sequences = body.stop as string[];
  for (const key of ['temperature', 'seed', 'frequency_penalty', 'presence_penalty'] as const) {
    if (typeof body[key] === 'number') out[key] = body[key];
  }
  // Cohere's p spans 0.01–0.99: OpenAI's common top_p 1 ("no cut") becomes 0.99, 0 ("greedy") 0.01.
  if (typeof body.top_p === 'number') out.p = Math.min(0.99, Math.max(0.01, body.top_p));
  if (body.logprobs === true) out.logprobs = true;
  const thinking = toThinking(body);
  if (!thinking.ok) return thinking;
  if (thinking.value !== undefined) out.thinking = thinking.value;

  const streamOptions = body.stream_options as { include_usage?: unknown } | null | undefined;
  return ok({
    request: out,
    context: {
      model: typeof body.model === 'string' ? body.model : '',
      includeUsage: body.stream === true && streamOptions?.include_usage === true,
      legacyFunctions,
    },
  });
}

function isSet(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function bad(message: string, param: string): { ok: false; error: GatewayError } {
  return { ok: false, error: invalid(`${param}: ${message}`, param) };
}

// ---------------------------------------------------------------------------
// Messages

function toCohereMessages(messages: OpenAIMessage[]): Result<CohereMessage[]> {
  const out: CohereMessage[] = [];
  // A legacy `function` message answers the latest assistant `function_call`; Cohere pairs by id, so one is made up.
  let pendingFunctionCall: string | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const at = `messages[${i}]`;
    // `name` (a participant's name) has no Cohere counterpart and is not sent.
    switch (m.role) {
      case 'system':
      case 'developer': {
        // Cohere has one system role; OpenAI's developer role is its newer name.
        const content = textContent(m.content, at);
        if (!content.ok) return content;
        out.push({ role: 'system', content: content.value });
        break;
      }
      case 'user': {
        const content = userContent(m.content!, at);
        if (!content.ok) return content;
        out.push({ role: 'user', content: content.value });
        break;
      }
      case 'assistant': {
        const msg = assistantMessage(m, at, i);
        if (!msg.ok) return msg;
        if (m.function_call !== undefined && m.function_call !== null) pendingFunctionCall = legacyCallId(i);
        out.push(msg.value);
        break;
      }
      case 'tool': {
        const content = textContent(m.content, at);
        if (!content.ok) return content;
        out.push({ role: 'tool', tool_call_id: m.tool_call_id!, content: content.value });
        break;
      }
      case 'function': {
        if (pendingFunctionCall === undefined) {
          return bad('a function message must follow an assistant message with function_call', at);
        }
        // The server's schema allows a function message only string or null content.
        out.push({ role: 'tool', tool_call_id: pendingFunctionCall, content: typeof m.content === 'string' ? m.content : '' });
        pendingFunctionCall = undefined;
        break;
      }
    }
  }
  return ok(out);
}

/** System, tool and assistant content: a string, or text parts only. */
function textContent(content: string | OpenAIPart[] | null | undefined, at: string): Result<string | CohereTextContent[]> {
  if (content === null || content === undefined) return ok('');
  if (typeof content === 'string') return ok(content);
  const parts: CohereTextContent[] = [];
  for (let j = 0; j < content.length; j++) {
    const p = content[j]!;
    const text = p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : undefined;
    if (typeof text !== 'string') {
      if (p.type === 'text' || p.type === 'refusal') return bad(`must be a string`, `${at}.content[${j}].${p.type}`);
      return bad(`content part '${p.type}' is not supported by cohere in this role (text only)`, `${at}.content[${j}].type`);
    }
    parts.push({ type: 'text', text });
  }
  return ok(parts);
}

/** User content: text and images (Cohere's image_url block has OpenAI's shape). */
function userContent(content: string | OpenAIPart[], at: string): Result<string | (CohereTextContent | CohereImageContent)[]> {
  if (typeof content === 'string') return ok(content);
  const parts: (CohereTextContent | CohereImageContent)[] = [];
  for (let j = 0; j < content.length; j++) {
    const p = content[j]!;
    const here = `${at}.content[${j}]`;
    if (p.type === 'text') {
      if (typeof p.text !== 'string') return bad('must be a string', `${here}.text`);
      parts.push({ type: 'text', text: p.text });
    } else if (p.type === 'image_url') {
      const url = p.image_url?.url;
      if (typeof url !== 'string') return bad('must be a string (an https URL or a data URI)', `${here}.image_url.url`);
      const image: CohereImageContent = { type: 'image_url', image_url: { url } };
      const detail = p.image_url?.detail;
      if (detail === 'auto' || detail === 'low' || detail === 'high') image.image_url.detail = detail;
      else if (detail !== undefined && detail !== null) return bad("must be 'auto', 'low' or 'high'", `${here}.image_url.detail`);
      parts.push(image);
    } else {
      return bad(`content part '${p.type}' is not supported by cohere (text and image_url only)`, `${here}.type`);
    }
  }
  return ok(parts);
}

function assistantMessage(m: OpenAIMessage, at: string, index: number): Result<CohereAssistantMessage> {
  const calls: CohereToolCall[] = [];
  for (let j = 0; j < (m.tool_calls ?? []).length; j++) {
    const c = m.tool_calls![j]!;
    const here = `${at}.tool_calls[${j}]`;
    if (c.type !== 'function') return bad(`tool call type '${String(c.type)}' is not supported by cohere (function only)`, `${here}.type`);
    const call = toolCall(c.id, c.function, here);
    if (!call.ok) return call;
    calls.push(call.value);
  }
  if (m.function_call !== undefined && m.function_call !== null) {
    const call = toolCall(legacyCallId(index), m.function_call, `${at}.function_call`);
    if (!call.ok) return call;
    calls.push(call.value);
  }
  const content = textContent(m.content, at);
  if (!content.ok) return content;
  if (calls.length === 0) return ok({ role: 'assistant', content: content.value });
  // Text beside tool calls is Cohere's tool_plan: the reasoning it gives before calling (and wants back).
  const plan = typeof content.value === 'string' ? content.value : content.value.map((p) => p.text).join('');
  return ok(plan === '' ? { role: 'assistant', tool_calls: calls } : { role: 'assistant', tool_calls: calls, tool_plan: plan });
}

/** The made-up id pairing a legacy function_call (in message `index`) with the function message answering it. */
function legacyCallId(index: number): string {
  return `function-call-${index}`;
}

function toolCall(id: unknown, fn: OpenAIFunctionCallParam | undefined, at: string): Result<CohereToolCall> {
  if (typeof id !== 'string') return bad('must be a string', `${at}.id`);
  if (typeof fn?.name !== 'string') return bad('must be a string', `${at}.function.name`);
  if (typeof fn.arguments !== 'string') return bad('must be a JSON string', `${at}.function.arguments`);
  return ok({ id, type: 'function', function: { name: fn.name, arguments: fn.arguments } });
}

// ---------------------------------------------------------------------------
// Tools

function toCohereTools(body: Record<string, unknown>): Result<{ tools: CohereTool[]; strict: boolean }> {
  const tools: CohereTool[] = [];
  let strict = false;
  const add = (f: OpenAIFunction, at: string): GatewayError | null => {
    const params = f.parameters ?? { type: 'object', properties: {} }; // OpenAI allows none; Cohere requires a schema
    if (typeof params !== 'object' || Array.isArray(params)) return invalid(`${at}.parameters: must be a JSON schema object`, `${at}.parameters`);
    const tool: CohereTool = { type: 'function', function: { name: f.name, parameters: params as Record<string, unknown> } };
    if (typeof f.description === 'string') tool.function.description = f.description;
    // Cohere's strictness is one switch for the whole request: any strict tool turns it on.
    if (f.strict === true) strict = true;
    tools.push(tool);
    return null;
  };
  const list = (body.tools ?? []) as { type: string; function?: OpenAIFunction }[];
  for (let i = 0; i < list.length; i++) {
    const t = list[i]!;
    if (t.type !== 'function') return bad(`tool type '${t.type}' is not supported by cohere (function only)`, `tools[${i}].type`);
    const e = add(t.function!, `tools[${i}].function`);
    if (e !== null) return { ok: false, error: e };
  }
  const functions = (body.functions ?? []) as OpenAIFunction[];
  for (let i = 0; i < functions.length; i++) {
    const e = add(functions[i]!, `functions[${i}]`);
    if (e !== null) return { ok: false, error: e };
  }
  return ok({ tools, strict });
}

/**
 * Cohere's tool_choice is REQUIRED or NONE (absent: the model decides). It
 * cannot name a function, so forcing one is done by offering only that one
 * with REQUIRED; `allowed_tools` narrows the offer the same way.
 */
function toolChoice(body: Record<string, unknown>, tools: CohereTool[]): Result<{ choice?: 'REQUIRED' | 'NONE'; tools: CohereTool[] }> {
  const legacy = !isSet(body.tool_choice);
  const c = legacy ? body.function_call : body.tool_choice;
  if (c === undefined || c === null || c === 'auto') return ok({ tools });
  if (c === 'none') return ok({ choice: 'NONE', tools });
  if (c === 'required') return ok({ choice: 'REQUIRED', tools });
  const only = (names: unknown[], at: string): Result<CohereTool[]> => {
    const kept = tools.filter((t) => names.includes(t.function.name));
    const missing = names.find((n) => !tools.some((t) => t.function.name === n));
    return missing === undefined ? ok(kept) : bad(`names '${String(missing)}', which is not among the request's tools`, at);
  };
  const obj = c as { type?: unknown; name?: unknown; function?: { name?: unknown }; allowed_tools?: { mode?: unknown; tools?: unknown } };
  if (legacy) {
    const kept = only([obj.name], 'function_call.name');
    return kept.ok ? ok({ choice: 'REQUIRED', tools: kept.value }) : kept;
  }
  if (obj.type === 'function') {
    const kept = only([obj.function?.name], 'tool_choice.function.name');
    return kept.ok ? ok({ choice: 'REQUIRED', tools: kept.value }) : kept;
  }
  if (obj.type === 'allowed_tools' && Array.isArray(obj.allowed_tools?.tools)) {
    const names = (obj.allowed_tools.tools as { function?: { name?: unknown } }[]).map((t) => t.function?.name);
    const kept = only(names, 'tool_choice.allowed_tools.tools');
    if (!kept.ok) return kept;
    return ok(obj.allowed_tools.mode === 'required' ? { choice: 'REQUIRED', tools: kept.value } : { tools: kept.value });
  }
  return bad(`tool choice '${String(obj.type)}' is not supported by cohere`, 'tool_choice.type');
}

// ---------------------------------------------------------------------------
// Output format and reasoning

function toResponseFormat(f: { type: string; json_schema?: { schema?: unknown } }): CohereResponseFormat {
  if (f.type === 'json_object') return { type: 'json_object' };
  if (f.type === 'json_schema') {
    // Cohere always holds its output to a given schema; the schema's name and `strict` have no counterpart.
    const schema = f.json_schema?.schema;
    return schema !== null && typeof schema === 'object' ? { type: 'json_object', json_schema: schema as Record<string, unknown> } : { type: 'json_object' };
  }
  return { type: 'text' };
}

/**
 * `thinking` (strict compatibility off) in Cohere's shape or Anthropic's
 * (`budget_tokens`); else OpenAI's reasoning_effort: 'none' turns reasoning
 * off, any other effort on (Cohere's budget is in tokens, not levels).
 */
function toThinking(body: Record<string, unknown>): Result<CohereThinking | undefined> {
  const t = body.thinking as { type?: unknown; token_budget?: unknown; budget_tokens?: unknown } | null | undefined;
  if (t !== null && t !== undefined) {
    if (t.type !== 'enabled' && t.type !== 'disabled') return bad("must be 'enabled' or 'disabled'", 'thinking.type');
    const budget = t.token_budget ?? t.budget_tokens;
    return ok(typeof budget === 'number' ? { type: t.type, token_budget: budget } : { type: t.type });
  }
  const effort = body.reasoning_effort;
  if (effort === undefined || effort === null) return ok(undefined);
  return ok({ type: effort === 'none' ? 'disabled' : 'enabled' });
}

// ---------------------------------------------------------------------------
// The answer

/** Cohere's finish reasons; ERROR is not a finish but a failure, answered as one. */
export function finishReason(r: CohereFinishReason | undefined, legacyFunctions: boolean): FinishReason {
  switch (r) {
    case 'MAX_TOKENS':
    case 'TIMEOUT': // cut short by Cohere's time limit: the text is truncated, as with a token limit
      return 'length';
    case 'TOOL_CALL':
      return legacyFunctions ? 'function_call' : 'tool_calls';
    default: // COMPLETE, STOP_SEQUENCE
      return 'stop';
  }
}

/** Cohere's `tokens` are the model's own counts; `billed_units` leave out what Cohere does not bill (its own preamble). */
export function toUsage(u: CohereUsage | undefined): OpenAIUsage {
  const prompt = u?.tokens?.input_tokens ?? u?.billed_units?.input_tokens ?? 0;
  const completion = u?.tokens?.output_tokens ?? u?.billed_units?.output_tokens ?? 0;
  const usage: OpenAIUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (typeof u?.cached_tokens === 'number') usage.prompt_tokens_details = { cached_tokens: u.cached_tokens };
  return usage;
}

/** A Cohere log-probability item is a text chunk of one or more tokens: its log probability is their sum. */
export function toLogprobs(items: CohereLogprobItem[]): { content: Record<string, unknown>[]; refusal: null } {
  return {
    content: items.map((item) => {
      const token = item.text ?? '';
      return {
        token,
        logprob: (item.logprobs ?? []).reduce((a, b) => a + b, 0),
        bytes: [...Buffer.from(token, 'utf8')],
        top_logprobs: [],
      };
    }),
    refusal: null,
  };
}

export function generationFailed(detail: string | undefined): GatewayError {
  return new GatewayError(502, `cohere: the generation failed${detail ? `: ${detail}` : ''}`, { code: 'provider_generation_error' });
}

export function fromCohereChat(res: CohereChatResponse, ctx: ChatContext): Result<string> {
  if (res.finish_reason === 'ERROR') return { ok: false, error: generationFailed(undefined) };
  const content = res.message?.content ?? [];
  const text = content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('');
  const thinking = content.flatMap((c) => (c.type === 'thinking' ? [c.thinking] : [])).join('');
  const calls = res.message?.tool_calls ?? [];
  const message: Record<string, unknown> = { role: 'assistant', content: text, refusal: null };
  if (calls.length > 0) {
    // The plan is what the model said before calling: OpenAI's content beside tool_calls.
    message.content = text !== '' ? text : res.message.tool_plan || null;
    const openAICalls = calls.map((c): OpenAIToolCall => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } }));
    putToolCalls(message, openAICalls, ctx.legacyFunctions);
  }
  // Reasoning text in the field DeepSeek, vLLM and others use; OpenAI's own API does not return it.
  if (thinking !== '') message.reasoning_content = thinking;
  return ok(
    JSON.stringify({
      id: res.id ?? completionId(),
      object: 'chat.completion',
      created: nowSeconds(),
      model: ctx.model,
      choices: [
        {
          index: 0,
          message,
          logprobs: res.logprobs === undefined ? null : toLogprobs(res.logprobs),
          finish_reason: finishReason(res.finish_reason, ctx.legacyFunctions),
        },
      ],
      usage: toUsage(res.usage),
    }),
  );
}
