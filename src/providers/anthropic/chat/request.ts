/**
 * OpenAI chat request → Anthropic Messages request. Pure: no I/O, no config,
 * so the Vertex AI adapter (Claude on Vertex) reuses it as it is.
 *
 * Every field of the client's body is either mapped, dropped by the DROPPED
 * rule below (OpenAI-only knobs with no Anthropic counterpart), refused with
 * a 400 (a request Claude cannot answer as asked), or — when this file does
 * not know it — passed on unchanged as an Anthropic-native field (top_k,
 * mcp_servers, context_management…), so Anthropic itself rejects what it
 * does not know.
 */
import { GatewayError, invalid, ok, type Result } from '../../../shared/errors.js';
import type { OpenAIFunctionCallParam, OpenAIMessageParam } from '../../shared/openai-request.js';
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
  AnthropicToolUseBlock,
} from '../wire.js';

/**
 * max_tokens when the client sends neither max_tokens nor max_completion_tokens
 * (Anthropic requires it; OpenAI defaults to the model's limit). 4096 is the
 * largest output every Claude model accepts (Claude 3 Haiku's ceiling), so
 * the default never turns a valid request into a 400. With `thinking`, the
 * budget is added: Anthropic requires max_tokens > budget_tokens.
 */
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * OpenAI parameters with no Anthropic counterpart. Each only tunes or
 * annotates a request Claude can still answer, so it is dropped, not refused.
 */
const DROPPED = new Set([
  'seed', // no seeded sampling in the Messages API
  'frequency_penalty', // no token penalties or biases
  'presence_penalty',
  'logit_bias',
  'logprobs', // no log probabilities: answers carry logprobs: null
  'top_logprobs',
  'metadata', // OpenAI's stored-completion tags; Anthropic's metadata takes only user_id (from `user`)
  'store',
  'prompt_cache_key', // Anthropic caches at cache_control breakpoints, not by key
  'reasoning_effort', // OpenAI reasoning-model knobs; Claude's is `thinking`
  'verbosity',
  'prediction', // OpenAI-hosted features
  'web_search_options',
  'stream_options', // read by the translator (include_usage), not sent
  'n', // only n = 1 gets this far (n > 1 is refused)
  'modalities', // only ['text'] gets this far
]);

/** Fields translate() maps itself; everything else is DROPPED or passed on. */
const MAPPED = new Set([
  'model', 'messages', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'stream',
  'tools', 'functions', 'tool_choice', 'function_call', 'parallel_tool_calls', 'response_format',
  'user', 'safety_identifier', 'thinking', 'service_tier', 'output_config', 'audio',
]);

interface OpenAIPart {
  type: string;
  text?: unknown;
  refusal?: unknown;
  image_url?: { url?: unknown };
  file?: { file_data?: unknown; file_id?: unknown; filename?: unknown };
  cache_control?: AnthropicCacheControl;
  [key: string]: unknown;
}

type OpenAIContent = string | OpenAIPart[] | null | undefined;

interface OpenAIMessage extends OpenAIMessageParam<OpenAIPart> {
  /** Anthropic thinking blocks returned by this gateway (message.thinking_blocks), sent back as they came. */
  thinking_blocks?: unknown;
}

interface OpenAIFunction {
  name?: unknown;
  description?: unknown;
  parameters?: unknown;
  strict?: unknown;
}

/** What the answer's translation needs to know about the request. */
export interface ReplyOptions {
  /** stream_options.include_usage: a usage chunk before [DONE]. */
  includeUsage: boolean;
  /** The request used the deprecated `functions`: answer with message.function_call. */
  legacyFunctions: boolean;
}

export function replyOptions(body: Record<string, unknown>): ReplyOptions {
  const so = body.stream_options as { include_usage?: unknown } | null | undefined;
  return { includeUsage: so?.include_usage === true, legacyFunctions: isLegacy(body) };
}

function isLegacy(body: Record<string, unknown>): boolean {
  return Array.isArray(body.functions) && !Array.isArray(body.tools);
}

/** The Messages API body for an OpenAI chat body (validated by server/validation.ts), or the 400 naming what cannot be sent. */
export function toAnthropicRequest(body: Record<string, unknown>): Result<AnthropicRequest, GatewayError> {
  try {
    return ok(translate(body));
  } catch (e) {
    if (e instanceof GatewayError) return { ok: false, error: e };
    throw e;
  }
}

function translate(body: Record<string, unknown>): AnthropicRequest {
  const model = body.model;
  if (typeof model !== 'string' || model === '') throw invalid('model: is required by Anthropic', 'model');
  refuseUnanswerable(body);

  const { system, messages } = convertMessages(body.messages as OpenAIMessage[]);
  const thinking = isSet(body.thinking) ? (body.thinking as AnthropicThinkingConfig) : undefined;
  const budget = typeof thinking?.budget_tokens === 'number' ? thinking.budget_tokens : 0;
  const requested = body.max_completion_tokens ?? body.max_tokens;
  const out: AnthropicRequest = {
    model,
    messages,
    max_tokens: typeof requested === 'number' ? requested : DEFAULT_MAX_TOKENS + budget,
  };
  if (system.length > 0) out.system = system;
  if (typeof body.temperature === 'number') out.temperature = body.temperature;
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  if (typeof body.stop === 'string') out.stop_sequences = [body.stop];
  else if (Array.isArray(body.stop)) out.stop_sequences = body.stop as string[];
  if (body.stream === true) out.stream = true;
  if (thinking !== undefined) out.thinking = thinking;

  const user = body.user ?? body.safety_identifier;
  if (typeof user === 'string') out.metadata = { user_id: user };
  const tier = serviceTier(body.service_tier);
  if (tier !== undefined) out.service_tier = tier;

  const tools = convertTools(body);
  if (tools !== undefined) out.tools = tools;
  const choice = convertToolChoice(body, tools !== undefined);
  if (choice !== undefined) out.tool_choice = choice;

  const native = isSet(body.output_config) ? (body.output_config as Record<string, unknown>) : undefined;
  const format = outputFormat(body.response_format);
  if (format !== undefined) out.output_config = { ...native, format };
  else if (native !== undefined) out.output_config = native;

  for (const key of Object.keys(body)) {
    if (MAPPED.has(key) || DROPPED.has(key) || !isSet(body[key])) continue;
    out[key] = body[key];
  }
  return out;
}

/** Requests whose answer Claude cannot give in the shape asked for. */
function refuseUnanswerable(body: Record<string, unknown>): void {
  if (typeof body.n === 'number' && body.n > 1) throw invalid('n: Anthropic returns one choice per request', 'n');
  if (isSet(body.audio)) throw invalid('audio: Anthropic does not produce audio', 'audio');
  if (Array.isArray(body.modalities) && body.modalities.some((m) => m !== 'text')) {
    throw invalid('modalities: Anthropic produces text only', 'modalities');
  }
}

/** OpenAI's nulls mean "unset". */
function isSet(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** OpenAI 'auto' and 'default' have Anthropic counterparts; 'flex' and 'priority' have none and are left to Anthropic's default. */
function serviceTier(tier: unknown): AnthropicRequest['service_tier'] {
  if (tier === 'auto') return 'auto';
  if (tier === 'default' || tier === 'standard_only') return 'standard_only';
  return undefined;
}

// ---------------------------------------------------------------------------
// Messages

function convertMessages(list: OpenAIMessage[]): { system: AnthropicTextBlock[]; messages: AnthropicMessageParam[] } {
  const system: AnthropicTextBlock[] = [];
  const turns: AnthropicMessageParam[] = [];
  // Legacy `function` messages name their call instead of citing an id: the latest call of that name gets it.
  const functionCallIds = new Map<string, string>();
  list.forEach((m, i) => {
    const at = `messages[${i}]`;
    switch (m.role) {
      // Anthropic has one top-level system prompt: every system/developer message joins it, in order.
      case 'system':
      case 'developer':
        system.push(...systemBlocks(m.content, at));
        break;
      case 'user':
        // `name` has no Anthropic counterpart (nor on any other role).
        append(turns, 'user', userBlocks(m.content, at));
        break;
      case 'assistant':
        append(turns, 'assistant', assistantBlocks(m, i, functionCallIds));
        break;
      case 'tool':
        append(turns, 'user', [toolResult(m.tool_call_id, m.content, at)]);
        break;
      case 'function': {
        const id = functionCallIds.get(m.name ?? '');
        if (id === undefined) throw invalid(`${at}.name: no earlier assistant function_call named '${m.name}'`, `${at}.name`);
        append(turns, 'user', [toolResult(id, m.content, at)]);
        break;
      }
    }
  });
  for (const t of turns) if (t.role === 'user') toolResultsFirst(t);
  return { system, messages: turns };
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

function systemBlocks(content: OpenAIContent, at: string): AnthropicTextBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  const blocks: AnthropicTextBlock[] = [];
  (content ?? []).forEach((p, k) => {
    if (p.type !== 'text' || typeof p.text !== 'string') {
      throw invalid(`${at}.content[${k}]: Anthropic's system prompt takes text parts only`, `${at}.content[${k}]`);
    }
    if (p.text !== '') blocks.push(withCache({ type: 'text', text: p.text }, p));
  });
  return blocks;
}

function userBlocks(content: OpenAIContent, at: string): AnthropicRequestBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return (content ?? []).map((p, k) => partBlock(p, `${at}.content[${k}]`));
}

function assistantBlocks(m: OpenAIMessage, i: number, functionCallIds: Map<string, string>): AnthropicRequestBlock[] {
  const at = `messages[${i}]`;
  const blocks: AnthropicRequestBlock[] = [];
  // Thinking blocks come first in an assistant turn, signatures intact, or Anthropic rejects the turn.
  // (reasoning_content alone cannot be replayed: Anthropic verifies each block's signature.)
  if (Array.isArray(m.thinking_blocks)) {
    m.thinking_blocks.forEach((b: unknown, k) => {
      const type = (b as { type?: unknown } | null)?.type;
      if (type !== 'thinking' && type !== 'redacted_thinking') {
        throw invalid(`${at}.thinking_blocks[${k}].type: must be thinking or redacted_thinking`, `${at}.thinking_blocks[${k}].type`);
      }
      blocks.push(b as AnthropicRequestBlock);
    });
  }
  // Empty text blocks are refused by Anthropic; an assistant turn that only calls tools often carries content "".
  if (typeof m.content === 'string') {
    if (m.content !== '') blocks.push({ type: 'text', text: m.content });
  } else {
    (m.content ?? []).forEach((p, k) => {
      const path = `${at}.content[${k}]`;
      if (p.type === 'refusal') {
        if (typeof p.refusal === 'string' && p.refusal !== '') blocks.push({ type: 'text', text: p.refusal });
      } else if (!(p.type === 'text' && p.text === '')) {
        blocks.push(partBlock(p, path));
      }
    });
  }
  (m.tool_calls ?? []).forEach((tc, j) => {
    const path = `${at}.tool_calls[${j}]`;
    if (typeof tc.id !== 'string' || tc.id === '') throw invalid(`${path}.id: must be a non-empty string`, `${path}.id`);
    blocks.push(toolUse(tc.id, tc.function, `${path}.function`));
  });
  if (m.function_call !== undefined && m.function_call !== null) {
    // Legacy calls have no id; one is made from the message's position so the `function` reply can cite it.
    const id = `toolu_fn_${i}`;
    const block = toolUse(id, m.function_call, `${at}.function_call`);
    functionCallIds.set(block.name, id);
    blocks.push(block);
  }
  return blocks;
}

function toolUse(id: string, fn: OpenAIFunctionCallParam | undefined, at: string): AnthropicToolUseBlock {
  if (typeof fn?.name !== 'string' || fn.name === '') throw invalid(`${at}.name: must be a non-empty string`, `${at}.name`);
  return { type: 'tool_use', id, name: fn.name, input: parseArguments(fn.arguments, `${at}.arguments`) };
}

/** OpenAI carries call arguments as JSON text; Anthropic wants the object. */
function parseArguments(args: unknown, at: string): Record<string, unknown> {
  if (args === undefined || args === null || args === '') return {};
  if (typeof args !== 'string') throw invalid(`${at}: must be a JSON string`, at);
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    throw invalid(`${at}: is not valid JSON`, at);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(`${at}: must encode a JSON object (Anthropic's tool_use input)`, at);
  }
  return value as Record<string, unknown>;
}

function toolResult(id: unknown, content: OpenAIContent, at: string): AnthropicToolResultBlock {
  if (typeof id !== 'string' || id === '') throw invalid(`${at}.tool_call_id: must be a non-empty string`, `${at}.tool_call_id`);
  const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: id };
  if (typeof content === 'string') block.content = content;
  else if (Array.isArray(content)) {
    block.content = content.map((p, k) => partBlock(p, `${at}.content[${k}]`) as AnthropicToolResultPart);
  }
  return block;
}

/** One OpenAI content part as an Anthropic block. */
function partBlock(p: OpenAIPart, at: string): AnthropicRequestBlock {
  switch (p.type) {
    case 'text':
      if (typeof p.text !== 'string') throw invalid(`${at}.text: must be a string`, `${at}.text`);
      return withCache({ type: 'text', text: p.text }, p);
    case 'image_url':
      return imageBlock(p, at);
    case 'file':
      return fileBlock(p, at);
    case 'input_audio':
      throw invalid(`${at}: Anthropic takes no audio input`, at);
    default:
      // Anthropic's own block types (image with a source, document, search_result…) go as sent.
      return p as AnthropicNativeBlock;
  }
}

/** data: URLs become base64 sources (a PDF a document block), other URLs url sources; OpenAI's `detail` has no counterpart. */
function imageBlock(p: OpenAIPart, at: string): AnthropicRequestBlock {
  const url = p.image_url?.url;
  if (typeof url !== 'string' || url === '') throw invalid(`${at}.image_url.url: must be a non-empty string`, `${at}.image_url.url`);
  if (!url.startsWith('data:')) return withCache({ type: 'image', source: { type: 'url', url } }, p);
  const source = dataUrl(url, `${at}.image_url.url`);
  return withCache(source.media_type === 'application/pdf' ? { type: 'document', source } : { type: 'image', source }, p);
}

/** OpenAI file parts carry base64 file data (a data URL, or bare base64 of a PDF); OpenAI file ids mean nothing to Anthropic. */
function fileBlock(p: OpenAIPart, at: string): AnthropicRequestBlock {
  const data = p.file?.file_data;
  if (typeof data !== 'string' || data === '') {
    throw invalid(`${at}.file.file_data: Anthropic needs the file's data (OpenAI file ids cannot be sent)`, `${at}.file.file_data`);
  }
  const source: AnthropicSource = data.startsWith('data:')
    ? dataUrl(data, `${at}.file.file_data`)
    : { type: 'base64', media_type: 'application/pdf', data };
  return withCache({ type: 'document', source, ...(typeof p.file?.filename === 'string' ? { title: p.file.filename } : {}) }, p);
}

function dataUrl(url: string, at: string): AnthropicSource & { type: 'base64' } {
  const comma = url.indexOf(',');
  const meta = comma === -1 ? [] : url.slice(5, comma).split(';');
  const mediaType = meta[0];
  if (mediaType === undefined || mediaType === '' || !meta.includes('base64')) {
    throw invalid(`${at}: must be a base64 data URL (data:<media type>;base64,<data>)`, at);
  }
  return { type: 'base64', media_type: mediaType, data: url.slice(comma + 1) };
}

/** Anthropic's prompt-caching marker, which clients put on OpenAI-shaped parts and tools, is kept. */
function withCache<T extends AnthropicRequestBlock | AnthropicTool>(block: T, from: { cache_control?: AnthropicCacheControl }): T {
  return from.cache_control === undefined ? block : { ...block, cache_control: from.cache_control };
}

// ---------------------------------------------------------------------------
// Tools and structured output

function convertTools(body: Record<string, unknown>): (AnthropicTool | AnthropicNativeBlock)[] | undefined {
  const out: (AnthropicTool | AnthropicNativeBlock)[] = [];
  if (Array.isArray(body.tools)) {
    body.tools.forEach((t: { type: string; function?: OpenAIFunction; cache_control?: AnthropicCacheControl }, i) => {
      // Non-function tools are Anthropic's server tools (web_search_…, code_execution_…), sent as written.
      out.push(t.type === 'function' ? withCache(functionTool(t.function!, `tools[${i}].function`), t) : (t as AnthropicNativeBlock));
    });
  }
  if (Array.isArray(body.functions)) body.functions.forEach((f: OpenAIFunction, i) => out.push(functionTool(f, `functions[${i}]`)));
  return out.length > 0 ? out : undefined;
}

function functionTool(f: OpenAIFunction, at: string): AnthropicTool {
  if (typeof f.name !== 'string' || f.name === '') throw invalid(`${at}.name: must be a non-empty string`, `${at}.name`);
  const schema = f.parameters ?? { type: 'object', properties: {} };
  if (typeof schema !== 'object' || Array.isArray(schema)) throw invalid(`${at}.parameters: must be a JSON schema object`, `${at}.parameters`);
  const tool: AnthropicTool = { name: f.name, input_schema: schema as Record<string, unknown> };
  if (typeof f.description === 'string') tool.description = f.description;
  // strict: false is Anthropic's default; only true is sent, so models without strict tool use never see the field.
  if (f.strict === true) tool.strict = true;
  return tool;
}

const NATIVE_CHOICES = new Set(['auto', 'any', 'tool', 'none']);

function convertToolChoice(body: Record<string, unknown>, hasTools: boolean): AnthropicToolChoice | undefined {
  const legacy = isLegacy(body);
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
    else throw invalid(`${param}: Anthropic takes auto, none, required or one named function`, param);
  }
  // OpenAI's parallel_tool_calls: false (and legacy functions, which call one at a time) = Anthropic's disable_parallel_tool_use.
  const serial = body.parallel_tool_calls === false || legacy;
  if (serial && hasTools && choice?.type !== 'none') return { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return choice;
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
 * closed with additionalProperties: false): it is dropped. OpenAI requires a
 * json_object request to ask for JSON in its messages, so that instruction
 * reaches Claude anyway; only the guarantee is lost.
 */
function outputFormat(rf: unknown): { type: 'json_schema'; schema: Record<string, unknown> } | undefined {
  const f = rf as { type?: unknown; json_schema?: { schema?: unknown } } | null | undefined;
  if (f?.type !== 'json_schema') return undefined;
  const schema = f.json_schema?.schema;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw invalid("response_format.json_schema.schema: Anthropic's structured outputs need a schema object", 'response_format.json_schema.schema');
  }
  return { type: 'json_schema', schema: schema as Record<string, unknown> };
}
