/**
 * OpenAI chat request → Anthropic Messages request, and the translator that
 * pairs it with the answer's reader. Pure: no I/O, no settings, so Claude on
 * Vertex AI (vertex-ai/chat/request.ts) reuses it as it is.
 *
 * Every parameter of the client's body meets the rule of MESSAGES_PARAMS
 * (shared/params.ts); one the table does not name is passed on unchanged as
 * an Anthropic-native field (top_k, mcp_servers, context_management…), so
 * Anthropic itself rejects what it does not know.
 */
import { ok, type Result } from '../../../shared/errors.js';
import type { ErrorReader } from '../../contract.js';
import {
  assistantCalls,
  dataUrl,
  isSet,
  LegacyCallIds,
  maxTokens,
  modelOf,
  partText,
  refuse,
  schemaObject,
  stopSequences,
  textParts,
  usesLegacyFunctions,
  type ChatRequest,
  type FunctionDefinition,
  type Message,
  type Part,
} from '../../shared/openai-request.js';
import { applyPolicy, dropped, mapped, ONE, refused, TEXT_ONLY, type ParamPolicy } from '../../shared/params.js';
import type { ChatReading } from '../../shared/openai-answer.js';
import { chatTranslator } from '../../shared/translator.js';
import { anthropicError } from '../errors.js';
import type {
  AnthropicCacheControl,
  AnthropicMessageParam,
  AnthropicNativeBlock,
  AnthropicRequest,
  AnthropicRequestBlock,
  AnthropicSource,
  AnthropicTextBlock,
  AnthropicThinkingConfig,
  AnthropicTool,
  AnthropicToolChoice,
  AnthropicToolResultBlock,
  AnthropicToolResultPart,
} from '../wire.js';
import { readMessage } from './response.js';
import { AnthropicStream } from './stream.js';

/**
 * max_tokens when the client sends neither max_tokens nor max_completion_tokens
 * (Anthropic requires it; OpenAI defaults to the model's limit). 4096 is the
 * largest output every Claude model accepts (Claude 3 Haiku's ceiling), so
 * the default never turns a valid request into a 400. With `thinking`, the
 * budget is added: Anthropic requires max_tokens > budget_tokens.
 */
export const DEFAULT_MAX_TOKENS = 4096;

export const MESSAGES_PARAMS: ParamPolicy = {
  rules: {
    model: mapped('model'),
    messages: mapped('messages; system and developer messages → system'),
    max_tokens: mapped('max_tokens (default 4096, plus the thinking budget)'),
    max_completion_tokens: mapped('max_tokens'),
    temperature: mapped('temperature'),
    top_p: mapped('top_p'),
    stop: mapped('stop_sequences'),
    stream: mapped('stream'),
    stream_options: mapped('the usage chunk (from message_delta usage)'),
    tools: mapped('tools (function tools; other types as written: server tools)'),
    functions: mapped('tools'),
    tool_choice: mapped('tool_choice (auto, none, required → any, a named function → tool)'),
    function_call: mapped('tool_choice'),
    parallel_tool_calls: mapped('tool_choice.disable_parallel_tool_use (false)'),
    response_format: mapped('output_config.format (json_schema); json_object is left out: no schema-less JSON mode'),
    user: mapped('metadata.user_id'),
    safety_identifier: mapped('metadata.user_id'),
    thinking: mapped('thinking'),
    service_tier: mapped('service_tier (auto, default → standard_only)'),
    output_config: mapped('output_config'),
    seed: dropped('no seeded sampling in the Messages API'),
    frequency_penalty: dropped('no token penalties or biases'),
    presence_penalty: dropped('no token penalties or biases'),
    logit_bias: dropped('no token penalties or biases'),
    logprobs: dropped('no log probabilities: answers carry logprobs: null'),
    top_logprobs: dropped('no log probabilities'),
    metadata: dropped("OpenAI's stored-completion tags; Anthropic's metadata takes only user_id (from user)"),
    store: dropped("OpenAI's stored completions"),
    prompt_cache_key: dropped('Anthropic caches at cache_control breakpoints, not by key'),
    reasoning_effort: dropped("an OpenAI reasoning-model knob; Claude's is thinking"),
    verbosity: dropped('an OpenAI reasoning-model knob'),
    prediction: dropped('an OpenAI-hosted feature'),
    web_search_options: dropped("an OpenAI-hosted feature (Anthropic's web search is a server tool)"),
    n: refused('Anthropic returns one choice per request', ONE),
    audio: refused('Anthropic does not produce audio'),
    modalities: refused('Anthropic produces text only', TEXT_ONLY),
  },
  others: 'passed',
};

export const messagesChat = chatTranslator({
  api: 'Anthropic Messages',
  params: MESSAGES_PARAMS,
  translate: toMessagesRequest,
  read: (body) => messagesReading(body, anthropicError),
});

/** How a Messages answer is read; `error` reads the provider's error answers (Anthropic's, or Vertex AI's around them). */
export function messagesReading(body: ChatRequest, error: ErrorReader): ChatReading {
  const legacyFunctions = usesLegacyFunctions(body);
  return { response: (raw) => readMessage(raw, legacyFunctions), stream: () => new AnthropicStream(legacyFunctions), error };
}

/** The Messages API body for an OpenAI chat body, or the 400 naming what cannot be sent. */
export function toMessagesRequest(body: ChatRequest): Result<AnthropicRequest> {
  const model = modelOf(body, 'anthropic');
  if (!model.ok) return model;
  const native = applyPolicy(body, MESSAGES_PARAMS, 'anthropic');
  if (!native.ok) return native;

  const turns = convertMessages(body.messages);
  if (!turns.ok) return turns;
  const { system, messages } = turns.value;
  const thinking = isSet(body.thinking) ? (body.thinking as AnthropicThinkingConfig) : undefined;
  const budget = typeof thinking?.budget_tokens === 'number' ? thinking.budget_tokens : 0;
  const out: AnthropicRequest = { model: model.value, messages, max_tokens: maxTokens(body) ?? DEFAULT_MAX_TOKENS + budget };
  if (system.length > 0) out.system = system;
  if (isSet(body.temperature)) out.temperature = body.temperature;
  if (isSet(body.top_p)) out.top_p = body.top_p;
  const stop = stopSequences(body);
  if (stop !== undefined) out.stop_sequences = stop;
  if (body.stream === true) out.stream = true;
  if (thinking !== undefined) out.thinking = thinking;

  const user = body.user ?? body.safety_identifier;
  if (typeof user === 'string') out.metadata = { user_id: user };
  const tier = serviceTier(body.service_tier);
  if (tier !== undefined) out.service_tier = tier;

  const tools = convertTools(body);
  if (!tools.ok) return tools;
  if (tools.value !== undefined) out.tools = tools.value;
  const choice = convertToolChoice(body, tools.value !== undefined);
  if (!choice.ok) return choice;
  if (choice.value !== undefined) out.tool_choice = choice.value;

  const config = isSet(body.output_config) ? (body.output_config as Record<string, unknown>) : undefined;
  const format = outputFormat(body.response_format);
  if (!format.ok) return format;
  if (format.value !== undefined) out.output_config = { ...config, format: format.value };
  else if (config !== undefined) out.output_config = config;

  return ok(Object.assign(out, native.value));
}

/** OpenAI 'auto' and 'default' have Anthropic counterparts; 'flex' and 'priority' have none and are left to Anthropic's default. */
function serviceTier(tier: unknown): AnthropicRequest['service_tier'] {
  if (tier === 'auto') return 'auto';
  if (tier === 'default' || tier === 'standard_only') return 'standard_only';
  return undefined;
}

// ---------------------------------------------------------------------------
// Messages

function convertMessages(list: Message[]): Result<{ system: AnthropicTextBlock[]; messages: AnthropicMessageParam[] }> {
  const system: AnthropicTextBlock[] = [];
  const turns: AnthropicMessageParam[] = [];
  const legacy = new LegacyCallIds();
  for (const [i, m] of list.entries()) {
    const at = `messages[${i}]`;
    switch (m.role) {
      // Anthropic has one top-level system prompt: every system/developer message joins it, in order.
      case 'system':
      case 'developer': {
        const texts = textParts(m.content, at, m.role);
        if (!texts.ok) return texts;
        for (const { text, part } of texts.value) if (text !== '') system.push(withCache({ type: 'text', text }, part ?? {}));
        break;
      }
      case 'user': {
        // `name` has no Anthropic counterpart (nor on any other role).
        const blocks = userBlocks(m.content, at);
        if (!blocks.ok) return blocks;
        append(turns, 'user', blocks.value);
        break;
      }
      case 'assistant': {
        const blocks = assistantBlocks(m, i, legacy);
        if (!blocks.ok) return blocks;
        append(turns, 'assistant', blocks.value);
        break;
      }
      case 'tool': {
        const result = toolResult(m.tool_call_id, m.content, at);
        if (!result.ok) return result;
        append(turns, 'user', [result.value]);
        break;
      }
      case 'function': {
        const id = legacy.answer(m.name, at);
        if (!id.ok) return id;
        const result = toolResult(id.value, m.content, at);
        if (!result.ok) return result;
        append(turns, 'user', [result.value]);
        break;
      }
    }
  }
  for (const t of turns) if (t.role === 'user') toolResultsFirst(t);
  return ok({ system, messages: turns });
}

/** Anthropic requires user and assistant turns to alternate: consecutive same-role messages become one turn. */
function append(turns: AnthropicMessageParam[], role: 'user' | 'assistant', blocks: AnthropicRequestBlock[]): void {
  const last = turns.at(-1);
  if (last?.role === role) last.content.push(...blocks);
  else turns.push({ role, content: blocks });
}

/** Anthropic requires a user turn's tool_result blocks before its other content (a tool message merged after a user one). */
function toolResultsFirst(turn: AnthropicMessageParam): void {
  const results = turn.content.filter((b) => b.type === 'tool_result');
  if (results.length === 0 || results.length === turn.content.length) return;
  turn.content = [...results, ...turn.content.filter((b) => b.type !== 'tool_result')];
}

function userBlocks(content: Message['content'], at: string): Result<AnthropicRequestBlock[]> {
  if (typeof content === 'string') return ok([{ type: 'text', text: content }]);
  return blocksOf(content ?? [], at);
}

function blocksOf(parts: Part[], at: string): Result<AnthropicRequestBlock[]> {
  const blocks: AnthropicRequestBlock[] = [];
  for (const [k, p] of parts.entries()) {
    const block = partBlock(p, `${at}.content[${k}]`);
    if (!block.ok) return block;
    blocks.push(block.value);
  }
  return ok(blocks);
}

function assistantBlocks(m: Message, i: number, legacy: LegacyCallIds): Result<AnthropicRequestBlock[]> {
  const at = `messages[${i}]`;
  const blocks: AnthropicRequestBlock[] = [];
  // Thinking blocks come first in an assistant turn, signatures intact, or Anthropic rejects the turn.
  // (reasoning_content alone cannot be replayed: Anthropic verifies each block's signature.)
  if (Array.isArray(m.thinking_blocks)) {
    for (const [k, b] of (m.thinking_blocks as unknown[]).entries()) {
      const type = (b as { type?: unknown } | null)?.type;
      if (type !== 'thinking' && type !== 'redacted_thinking') return refuse(`${at}.thinking_blocks[${k}].type`, 'must be thinking or redacted_thinking');
      blocks.push(b as AnthropicRequestBlock);
    }
  }
  // Empty text blocks are refused by Anthropic; an assistant turn that only calls tools often carries content "".
  if (typeof m.content === 'string') {
    if (m.content !== '') blocks.push({ type: 'text', text: m.content });
  } else {
    for (const [k, p] of (m.content ?? []).entries()) {
      if (p.type === 'refusal') {
        if (typeof p.refusal === 'string' && p.refusal !== '') blocks.push({ type: 'text', text: p.refusal });
      } else if (!(p.type === 'text' && p.text === '')) {
        const block = partBlock(p, `${at}.content[${k}]`);
        if (!block.ok) return block;
        blocks.push(block.value);
      }
    }
  }
  const calls = assistantCalls(m, i, legacy);
  if (!calls.ok) return calls;
  for (const { id, name, input } of calls.value) blocks.push({ type: 'tool_use', id, name, input });
  return ok(blocks);
}

function toolResult(id: unknown, content: Message['content'], at: string): Result<AnthropicToolResultBlock> {
  if (typeof id !== 'string' || id === '') return refuse(`${at}.tool_call_id`, 'must be a non-empty string');
  const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: id };
  if (typeof content === 'string') block.content = content;
  else if (Array.isArray(content)) {
    const parts = blocksOf(content, at);
    if (!parts.ok) return parts;
    block.content = parts.value as AnthropicToolResultPart[];
  }
  return ok(block);
}

/** One OpenAI content part as an Anthropic block. */
function partBlock(p: Part, at: string): Result<AnthropicRequestBlock> {
  switch (p.type) {
    case 'text': {
      const text = partText(p, at);
      return text.ok ? ok(withCache({ type: 'text', text: text.value }, p)) : text;
    }
    case 'image_url':
      return imageBlock(p, at);
    case 'file':
      return fileBlock(p, at);
    case 'input_audio':
      return refuse(`${at}.type`, 'Anthropic takes no audio input');
    default:
      // Anthropic's own block types (image with a source, document, search_result…) go as sent.
      return ok(p as AnthropicNativeBlock);
  }
}

/** data: URLs become base64 sources (a PDF a document block), other URLs url sources; OpenAI's `detail` has no counterpart. */
function imageBlock(p: Part, at: string): Result<AnthropicRequestBlock> {
  const url = p.image_url?.url;
  if (typeof url !== 'string' || url === '') return refuse(`${at}.image_url.url`, 'must be a non-empty string');
  if (!url.startsWith('data:')) return ok(withCache({ type: 'image', source: { type: 'url', url } }, p));
  const source = base64Source(url, `${at}.image_url.url`);
  if (!source.ok) return source;
  return ok(withCache(source.value.media_type === 'application/pdf' ? { type: 'document', source: source.value } : { type: 'image', source: source.value }, p));
}

/** OpenAI file parts carry base64 file data (a data URL, or bare base64 of a PDF); OpenAI file ids mean nothing to Anthropic. */
function fileBlock(p: Part, at: string): Result<AnthropicRequestBlock> {
  const data = p.file?.file_data;
  if (typeof data !== 'string' || data === '') return refuse(`${at}.file.file_data`, "Anthropic needs the file's data (OpenAI file ids cannot be sent)");
  let source: AnthropicSource = { type: 'base64', media_type: 'application/pdf', data };
  if (data.startsWith('data:')) {
    const parsed = base64Source(data, `${at}.file.file_data`);
    if (!parsed.ok) return parsed;
    source = parsed.value;
  }
  return ok(withCache({ type: 'document', source, ...(typeof p.file?.filename === 'string' ? { title: p.file.filename } : {}) }, p));
}

function base64Source(url: string, at: string): Result<AnthropicSource & { type: 'base64' }> {
  const data = dataUrl(url, at);
  if (!data.ok) return data;
  if (data.value.mediaType === '') return refuse(at, 'must name its media type (data:<media type>;base64,<data>)');
  return ok({ type: 'base64', media_type: data.value.mediaType, data: data.value.base64 });
}

/** Anthropic's prompt-caching marker, which clients put on OpenAI-shaped parts and tools, is kept. */
function withCache<T extends AnthropicRequestBlock | AnthropicTool>(block: T, from: Readonly<Record<string, unknown>>): T {
  return from.cache_control === undefined ? block : { ...block, cache_control: from.cache_control as AnthropicCacheControl };
}

// ---------------------------------------------------------------------------
// Tools and structured output

function convertTools(body: ChatRequest): Result<(AnthropicTool | AnthropicNativeBlock)[] | undefined> {
  const out: (AnthropicTool | AnthropicNativeBlock)[] = [];
  for (const [i, t] of (body.tools ?? []).entries()) {
    // Non-function tools are Anthropic's server tools (web_search_…, code_execution_…), sent as written.
    if (t.type !== 'function') {
      out.push(t as AnthropicNativeBlock);
      continue;
    }
    const tool = functionTool(t.function!, `tools[${i}].function`);
    if (!tool.ok) return tool;
    out.push(withCache(tool.value, t));
  }
  for (const [i, f] of (body.functions ?? []).entries()) {
    const tool = functionTool(f, `functions[${i}]`);
    if (!tool.ok) return tool;
    out.push(tool.value);
  }
  return ok(out.length > 0 ? out : undefined);
}

function functionTool(f: FunctionDefinition, at: string): Result<AnthropicTool> {
  if (f.name === '') return refuse(`${at}.name`, 'must be a non-empty string');
  const schema = schemaObject(f.parameters, `${at}.parameters`);
  if (!schema.ok) return schema;
  const tool: AnthropicTool = { name: f.name, input_schema: schema.value };
  if (typeof f.description === 'string') tool.description = f.description;
  // strict: false is Anthropic's default; only true is sent, so models without strict tool use never see the field.
  if (f.strict === true) tool.strict = true;
  return ok(tool);
}

const NATIVE_CHOICES = new Set(['auto', 'any', 'tool', 'none']);

function convertToolChoice(body: ChatRequest, hasTools: boolean): Result<AnthropicToolChoice | undefined> {
  const legacy = usesLegacyFunctions(body);
  const raw = body.tool_choice ?? (legacy ? body.function_call : undefined);
  const param = isSet(body.tool_choice) ? 'tool_choice' : 'function_call';
  let choice: AnthropicToolChoice | undefined;
  if (raw === 'auto' || raw === 'none') choice = { type: raw };
  else if (raw === 'required') choice = { type: 'any' };
  else if (typeof raw === 'object' && raw !== null) {
    const o = raw as { type?: unknown; name?: unknown; function?: { name?: unknown } };
    const name = o.type === 'function' ? o.function?.name : param === 'function_call' ? o.name : undefined;
    if (typeof name === 'string') choice = { type: 'tool', name };
    else if (typeof o.type === 'string' && NATIVE_CHOICES.has(o.type)) choice = raw as AnthropicToolChoice;
    else return refuse(param, 'Anthropic takes auto, none, required or one named function');
  }
  // OpenAI's parallel_tool_calls: false (and legacy functions, which call one at a time) = Anthropic's disable_parallel_tool_use.
  const serial = body.parallel_tool_calls === false || legacy;
  if (serial && hasTools && choice?.type !== 'none') return ok({ ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true });
  return ok(choice);
}

/**
 * response_format json_schema → Anthropic's structured outputs
 * (`output_config.format`, GA: https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs).
 * Chosen over a forced tool: the answer stays text content (streamed as text
 * deltas), and it combines with the client's own tools and with thinking,
 * which a forced tool_choice does not. Models without structured outputs
 * answer Anthropic's 400, relayed as such.
 *
 * json_object has no Anthropic counterpart (structured outputs need a schema
 * closed with additionalProperties: false): it is left out. OpenAI requires a
 * json_object request to ask for JSON in its messages, so that instruction
 * reaches Claude anyway; only the guarantee is lost.
 */
function outputFormat(rf: ChatRequest['response_format']): Result<{ type: 'json_schema'; schema: Record<string, unknown> } | undefined> {
  if (rf?.type !== 'json_schema') return ok(undefined);
  const schema = rf.json_schema?.schema;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return refuse('response_format.json_schema.schema', "Anthropic's structured outputs need a schema object");
  }
  return ok({ type: 'json_schema', schema: schema as Record<string, unknown> });
}
