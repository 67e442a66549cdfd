/**
 * Chat completions → Cohere Chat v2 (POST /v2/chat), and the translator that
 * pairs it with the answer's reader (response.ts, stream.ts). Field facts:
 * see ../wire.ts.
 *
 * Every parameter of the client's body meets the rule of CHAT_PARAMS; one
 * the table does not name — Cohere's own, such as `k`, `documents`,
 * `citation_options`, `safety_mode`, `priority`, `strict_tools` — is passed
 * on as the client sent it.
 */
import { ok, type Result } from '../../../shared/errors.js';
import {
  assistantCalls,
  isSet,
  LegacyCallIds,
  maxTokens,
  partText,
  refuse,
  schemaObject,
  stopSequences,
  textParts,
  usesLegacyFunctions,
  type ChatRequest,
  type FunctionDefinition,
  type Message,
} from '../../shared/openai-request.js';
import { applyPolicy, dropped, EMPTY, mapped, ONE, refused, TEXT_ONLY, ZERO, type ParamPolicy } from '../../shared/params.js';
import { chatTranslator } from '../../shared/translator.js';
import { cohereError } from '../errors.js';
import type {
  CohereAssistantMessage,
  CohereChatRequest,
  CohereImageContent,
  CohereMessage,
  CohereResponseFormat,
  CohereTextContent,
  CohereThinking,
  CohereTool,
  CohereToolCall,
} from '../wire.js';
import { fromCohereChat } from './response.js';
import { chatStream } from './stream.js';

export const CHAT_PARAMS: ParamPolicy = {
  rules: {
    model: mapped('model'),
    messages: mapped('messages (developer → system; text beside tool calls → tool_plan)'),
    stream: mapped('stream'),
    stream_options: mapped('the usage chunk (from message-end)'),
    tools: mapped('tools (function tools only); any strict function → strict_tools'),
    functions: mapped('tools'),
    tool_choice: mapped('tool_choice REQUIRED | NONE; a named function or allowed_tools narrow the tools offered'),
    function_call: mapped('tool_choice'),
    response_format: mapped('response_format (json_schema → json_object with json_schema)'),
    max_tokens: mapped('max_tokens'),
    max_completion_tokens: mapped('max_tokens'),
    stop: mapped('stop_sequences'),
    temperature: mapped('temperature'),
    top_p: mapped('p (within 0.01–0.99)'),
    seed: mapped('seed'),
    frequency_penalty: mapped('frequency_penalty'),
    presence_penalty: mapped('presence_penalty'),
    logprobs: mapped('logprobs'),
    reasoning_effort: mapped("thinking ('none' → disabled, any other effort → enabled)"),
    thinking: mapped('thinking (Cohere\'s token_budget, or Anthropic\'s budget_tokens)'),
    user: dropped("an end-user id for OpenAI's abuse monitoring; Cohere's chat has no such field"),
    safety_identifier: dropped("an end-user id for OpenAI's abuse monitoring; Cohere's chat has no such field"),
    parallel_tool_calls: dropped('Cohere has no switch: its models may always call several tools in one turn'),
    store: dropped("OpenAI's stored completions"),
    metadata: dropped("tags for OpenAI's stored completions"),
    service_tier: dropped("OpenAI's processing tiers"),
    prompt_cache_key: dropped("routing hint for OpenAI's prompt cache; Cohere caches on its own"),
    prompt_cache_retention: dropped("OpenAI's prompt cache lifetime"),
    verbosity: dropped("a hint to OpenAI's GPT-5 models"),
    n: refused("Cohere's chat returns one choice per request", ONE),
    logit_bias: refused("Cohere's chat has no logit bias", EMPTY),
    top_logprobs: refused("Cohere reports the chosen tokens' log probabilities only, not alternatives", ZERO),
    modalities: refused("Cohere's chat answers in text only", TEXT_ONLY),
    audio: refused("Cohere's chat answers in text only"),
    prediction: refused('Cohere has no predicted outputs'),
    web_search_options: refused("Cohere's chat has no built-in web search"),
  },
  others: 'passed',
};

export const cohereChat = chatTranslator({
  api: 'Cohere Chat v2',
  params: CHAT_PARAMS,
  translate: toCohereChat,
  read(body) {
    // Cohere's answer names no model: the request's is reported.
    const model = typeof body.model === 'string' ? body.model : '';
    const legacyFunctions = usesLegacyFunctions(body);
    return { response: (bytes) => fromCohereChat(bytes, model, legacyFunctions), stream: () => chatStream(model, legacyFunctions), error: cohereError };
  },
});

export function toCohereChat(body: ChatRequest): Result<CohereChatRequest> {
  const native = applyPolicy(body, CHAT_PARAMS, 'cohere');
  if (!native.ok) return native;
  const messages = toCohereMessages(body.messages);
  if (!messages.ok) return messages;
  const out: CohereChatRequest = { ...native.value, messages: messages.value };
  if (isSet(body.model)) out.model = body.model;
  if (body.stream === true) out.stream = true;

  const tools = toCohereTools(body);
  if (!tools.ok) return tools;
  const choice = toolChoice(body, tools.value.tools);
  if (!choice.ok) return choice;
  if (choice.value.tools.length > 0) out.tools = choice.value.tools;
  if (tools.value.strict) out.strict_tools = true;
  if (choice.value.choice !== undefined) out.tool_choice = choice.value.choice;

  if (isSet(body.response_format)) out.response_format = toResponseFormat(body.response_format);
  const max = maxTokens(body);
  if (max !== undefined) out.max_tokens = max;
  const stop = stopSequences(body);
  if (stop !== undefined) out.stop_sequences = stop;
  for (const key of ['temperature', 'seed', 'frequency_penalty', 'presence_penalty'] as const) {
    const v = body[key];
    if (isSet(v)) out[key] = v;
  }
  // Cohere's p spans 0.01–0.99: OpenAI's common top_p 1 ("no cut") becomes 0.99, 0 ("greedy") 0.01.
  if (isSet(body.top_p)) out.p = Math.min(0.99, Math.max(0.01, body.top_p));
  if (body.logprobs === true) out.logprobs = true;
  const thinking = toThinking(body);
  if (!thinking.ok) return thinking;
  if (thinking.value !== undefined) out.thinking = thinking.value;
  return ok(out);
}

// ---------------------------------------------------------------------------
// Messages

function toCohereMessages(messages: Message[]): Result<CohereMessage[]> {
  const out: CohereMessage[] = [];
  const legacy = new LegacyCallIds();
  for (const [i, m] of messages.entries()) {
    const at = `messages[${i}]`;
    // `name` (a participant's name) has no Cohere counterpart and is not sent.
    switch (m.role) {
      case 'system':
      case 'developer': {
        // Cohere has one system role; OpenAI's developer role is its newer name.
        const content = textContent(m, at);
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
        const msg = assistantMessage(m, at, i, legacy);
        if (!msg.ok) return msg;
        out.push(msg.value);
        break;
      }
      case 'tool': {
        const content = textContent(m, at);
        if (!content.ok) return content;
        out.push({ role: 'tool', tool_call_id: m.tool_call_id!, content: content.value });
        break;
      }
      case 'function': {
        const id = legacy.answer(m.name, at);
        if (!id.ok) return id;
        // The body validator allows a function message only string or null content.
        out.push({ role: 'tool', tool_call_id: id.value, content: typeof m.content === 'string' ? m.content : '' });
        break;
      }
    }
  }
  return ok(out);
}

/** System, tool and assistant content: a string, or text parts only. */
function textContent(m: Message, at: string): Result<string | CohereTextContent[]> {
  if (typeof m.content === 'string') return ok(m.content);
  const texts = textParts(m.content, at, m.role);
  if (!texts.ok) return texts;
  return ok(isSet(m.content) ? texts.value.map(({ text }) => ({ type: 'text', text })) : '');
}

/** User content: text and images (Cohere's image_url block has OpenAI's shape). */
function userContent(content: string | NonNullable<Message['content']>, at: string): Result<string | (CohereTextContent | CohereImageContent)[]> {
  if (typeof content === 'string') return ok(content);
  const parts: (CohereTextContent | CohereImageContent)[] = [];
  for (const [j, p] of content.entries()) {
    const here = `${at}.content[${j}]`;
    if (p.type === 'text') {
      const text = partText(p, here);
      if (!text.ok) return text;
      parts.push({ type: 'text', text: text.value });
    } else if (p.type === 'image_url') {
      const url = p.image_url?.url;
      if (typeof url !== 'string') return refuse(`${here}.image_url.url`, 'must be a string (an https URL or a data URI)');
      const image: CohereImageContent = { type: 'image_url', image_url: { url } };
      const detail = p.image_url?.detail;
      if (detail === 'auto' || detail === 'low' || detail === 'high') image.image_url.detail = detail;
      else if (isSet(detail)) return refuse(`${here}.image_url.detail`, "must be 'auto', 'low' or 'high'");
      parts.push(image);
    } else {
      return refuse(`${here}.type`, `content part '${p.type}' is not supported by cohere (text and image_url only)`);
    }
  }
  return ok(parts);
}

function assistantMessage(m: Message, at: string, index: number, legacy: LegacyCallIds): Result<CohereAssistantMessage> {
  const read = assistantCalls(m, index, legacy);
  if (!read.ok) return read;
  const calls = read.value.map((c): CohereToolCall => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  const content = textContent(m, at);
  if (!content.ok) return content;
  if (calls.length === 0) return ok({ role: 'assistant', content: content.value });
  // Text beside tool calls is Cohere's tool_plan: the reasoning it gives before calling (and wants back).
  const plan = typeof content.value === 'string' ? content.value : content.value.map((p) => p.text).join('');
  return ok(plan === '' ? { role: 'assistant', tool_calls: calls } : { role: 'assistant', tool_calls: calls, tool_plan: plan });
}

// ---------------------------------------------------------------------------
// Tools

function toCohereTools(body: ChatRequest): Result<{ tools: CohereTool[]; strict: boolean }> {
  const tools: CohereTool[] = [];
  let strict = false;
  const add = (f: FunctionDefinition, at: string): Result<null> => {
    // OpenAI allows no parameters; Cohere requires a schema.
    const params = schemaObject(f.parameters, `${at}.parameters`);
    if (!params.ok) return params;
    const tool: CohereTool = { type: 'function', function: { name: f.name, parameters: params.value } };
    if (typeof f.description === 'string') tool.function.description = f.description;
    // Cohere's strictness is one switch for the whole request: any strict tool turns it on.
    if (f.strict === true) strict = true;
    tools.push(tool);
    return ok(null);
  };
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (t.type !== 'function') return refuse(`tools[${i}].type`, `tool type '${t.type}' is not supported by cohere (function only)`);
    const added = add(t.function!, `tools[${i}].function`);
    if (!added.ok) return added;
  }
  for (const [i, f] of (body.functions ?? []).entries()) {
    const added = add(f, `functions[${i}]`);
    if (!added.ok) return added;
  }
  return ok({ tools, strict });
}

/**
 * Cohere's tool_choice is REQUIRED or NONE (absent: the model decides). It
 * cannot name a function, so forcing one is done by offering only that one
 * with REQUIRED; `allowed_tools` narrows the offer the same way.
 */
function toolChoice(body: ChatRequest, tools: CohereTool[]): Result<{ choice?: 'REQUIRED' | 'NONE'; tools: CohereTool[] }> {
  const legacy = !isSet(body.tool_choice);
  const c = legacy ? body.function_call : body.tool_choice;
  if (!isSet(c) || c === 'auto') return ok({ tools });
  if (c === 'none') return ok({ choice: 'NONE', tools });
  if (c === 'required') return ok({ choice: 'REQUIRED', tools });
  const only = (names: unknown[], at: string): Result<CohereTool[]> => {
    const kept = tools.filter((t) => names.includes(t.function.name));
    const missing = names.find((n) => !tools.some((t) => t.function.name === n));
    return missing === undefined ? ok(kept) : refuse(at, `names '${String(missing)}', which is not among the request's tools`);
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
  return refuse('tool_choice.type', `tool choice '${String(obj.type)}' is not supported by cohere`);
}

// ---------------------------------------------------------------------------
// Output format and reasoning

function toResponseFormat(f: NonNullable<ChatRequest['response_format']>): CohereResponseFormat {
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
function toThinking(body: ChatRequest): Result<CohereThinking | undefined> {
  const t = body.thinking as { type?: unknown; token_budget?: unknown; budget_tokens?: unknown } | null | undefined;
  if (isSet(t)) {
    if (t.type !== 'enabled' && t.type !== 'disabled') return refuse('thinking.type', "must be 'enabled' or 'disabled'");
    const budget = t.token_budget ?? t.budget_tokens;
    return ok(typeof budget === 'number' ? { type: t.type, token_budget: budget } : { type: t.type });
  }
  const effort = body.reasoning_effort;
  if (!isSet(effort)) return ok(undefined);
  return ok({ type: effort === 'none' ? 'disabled' : 'enabled' });
}
