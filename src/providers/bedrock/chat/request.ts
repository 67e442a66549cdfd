/**
 * OpenAI chat completions ⇄ Bedrock Converse (request and whole answer; the
 * stream is in chat-stream.ts). Source: Bedrock Runtime API reference,
 * Converse (`POST /model/{modelId}/converse`), ConverseRequest and its shapes
 * (Message, ContentBlock, ToolConfiguration, InferenceConfiguration,
 * OutputConfig), ConverseResponse, TokenUsage, StopReason.
 *
 *   OpenAI                                  Converse
 *   system / developer messages          →  system: [{text}] (lifted out of the turn order)
 *   user                                 →  {role:'user', content: [{text}|{image}|{document}|{audio}]}
 *   assistant (+ tool_calls, function_call) → {role:'assistant', content: [{text}, {toolUse:{toolUseId,name,input}}]}
 *   tool / function                      →  {role:'user', content: [{toolResult:{toolUseId, content:[{text}]}}]}
 *   (consecutive turns of one role are merged: Converse wants user and assistant to alternate)
 *   image_url data: URL | s3:// URL      →  {image:{format, source:{bytes (base64)} | {s3Location}}}
 *   file (file_data data: URL)           →  {document:{format, name, source:{bytes}}}
 *   input_audio                          →  {audio:{format, source:{bytes}}}
 *   cache_control on a part              →  a {cachePoint:{type:'default'}} after it
 *   max_completion_tokens | max_tokens   →  inferenceConfig.maxTokens
 *   temperature, top_p, stop             →  inferenceConfig.temperature, topP, stopSequences
 *   tools / functions                    →  toolConfig.tools[].toolSpec {name, description, inputSchema:{json}, strict}
 *   tool_choice auto|required|{function} →  toolConfig.toolChoice {auto}|{any}|{tool:{name}}
 *   response_format json_schema          →  outputConfig.textFormat {type:'json_schema', structure:{jsonSchema:{schema (JSON text), name, description}}}
 *   response_format json_object          →  the same with the schema {"type":"object"}
 *   user, safety_identifier, metadata    →  requestMetadata (string map, kept in Bedrock's invocation logs)
 *   service_tier                         →  serviceTier {type}
 *   anything else (top_k, thinking, reasoning_effort, penalties, …) → additionalModelRequestFields,
 *     Converse's channel for a model's own parameters: models that know them take them, others say no.
 *   Converse's own field names (guardrailConfig, performanceConfig, …) sent by the client pass as given.
 *
 *   back: text blocks → content, toolUse → tool_calls (or function_call for legacy `functions`),
 *   reasoningContent → reasoning_content, stopReason → finish_reason,
 *   usage {inputTokens (+cacheRead +cacheWrite), outputTokens, totalTokens, cacheReadInputTokens}.
 */
import { err, invalid, ok, type GatewayError, type Result } from '../../../shared/errors.js';
import type { OpenAIMessageParam } from '../../shared/openai-request.js';
import { badResponse, completionId, nowSeconds, putToolCalls, type FinishReason, type OpenAIToolCall, type OpenAIUsage } from '../../shared/openai-answer.js';
import type {
  ContentBlock,
  ConverseMessage,
  ConverseRequest,
  ConverseResponse,
  DocumentFormat,
  ImageFormat,
  InferenceConfiguration,
  OutputConfig,
  StopReason,
  SystemContentBlock,
  TokenUsage,
  ToolChoice,
  ToolConfiguration,
  ToolResultContent,
  ToolSpecification,
} from '../wire.js';

// ---- The OpenAI request, as the gateway reads it ------------------------------

interface OpenAIContentPart {
  type: string;
  text?: string;
  refusal?: string;
  image_url?: { url?: string } | string;
  file?: { file_data?: string; file_id?: string; filename?: string };
  input_audio?: { data?: string; format?: string };
  cache_control?: unknown;
}

/** Tool calls' fields are unknown until checked: the body validator looks no deeper than "object". */
type OpenAIMessage = OpenAIMessageParam<OpenAIContentPart>;

interface OpenAIFunction {
  name: string;
  description?: string;
  parameters?: unknown;
  strict?: boolean;
}

interface OpenAITool {
  type: string;
  function?: OpenAIFunction;
  cache_control?: unknown;
}

type OpenAIToolChoice = 'none' | 'auto' | 'required' | { type: string; function?: { name: string } };

interface OpenAIResponseFormat {
  type: 'text' | 'json_object' | 'json_schema';
  json_schema?: { name: string; description?: string; schema?: unknown; strict?: boolean };
}

/** What a translated chat request remembers for reading the answer back. */
export interface ChatContext {
  model: string;
  /** The client used the legacy `functions`: answer with function_call, not tool_calls. */
  legacyFunctions: boolean;
  includeUsage: boolean;
}

// ---- Request ----------------------------------------------------------------------

/**
 * Converse's own top-level fields: a client that sends them means them as
 * Converse does, so they are passed as given (and win over mapped values).
 * `messages` is OpenAI's field too and `modelId` travels in the path.
 */
const NATIVE_FIELDS = new Set([
  'system', 'inferenceConfig', 'toolConfig', 'guardrailConfig', 'additionalModelRequestFields', 'promptVariables',
  'additionalModelResponseFieldPaths', 'requestMetadata', 'performanceConfig', 'serviceTier', 'outputConfig',
]);

/** OpenAI fields mapped below, each by its own rule. */
const MAPPED = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop',
  'tools', 'tool_choice', 'parallel_tool_calls', 'functions', 'function_call', 'response_format', 'user',
  'safety_identifier', 'metadata', 'service_tier', 'n', 'logprobs', 'top_logprobs', 'seed', 'store', 'prediction',
  'prompt_cache_key', 'modalities', 'audio', 'web_search_options',
]);

/**
 * OpenAI fields with no effect at this value: not sent on (a model that lacks
 * the parameter would refuse the extra key for nothing).
 */
function isNeutral(key: string, value: unknown): boolean {
  if (value === null) return true; // OpenAI reads null as "not set"
  if (key === 'frequency_penalty' || key === 'presence_penalty') return value === 0;
  if (key === 'logit_bias') return typeof value === 'object' && Object.keys(value as object).length === 0;
  return false;
}

export function toConverse(body: Record<string, unknown>): Result<{ request: ConverseRequest; context: ChatContext }> {
  const model = body.model;
  if (typeof model !== 'string' || model === '') return err(invalid('model: bedrock needs a model id or ARN', 'model'));

  // Converse answers with one choice and without log probabilities.
  if (typeof body.n === 'number' && body.n > 1) return err(invalid('n: bedrock returns one choice per request; n must be 1', 'n'));
  if (body.logprobs === true) return err(invalid('logprobs: bedrock does not return log probabilities', 'logprobs'));
  if (Array.isArray(body.modalities) && body.modalities.some((m) => m !== 'text')) {
    return err(invalid('modalities: bedrock Converse answers in text only', 'modalities'));
  }
  if (body.audio != null) return err(invalid('audio: bedrock Converse answers in text only', 'audio'));
  if (body.web_search_options != null) return err(invalid('web_search_options: bedrock has no web search', 'web_search_options'));
  // Dropped on purpose: `seed` (no Converse field, and no model family on Bedrock shares one name for it);
  // `store` (Bedrock keeps nothing; invocation logging is account configuration); `prediction` and
  // `prompt_cache_key` (latency hints; Bedrock's prompt cache is set by cachePoint blocks);
  // `parallel_tool_calls` (Converse has no switch: every tool call the model makes is returned);
  // `top_logprobs` (only meaningful with logprobs, refused above); `stream`/`stream_options` pick the operation.

  const messages = toMessages(body.messages as OpenAIMessage[]);
  if (!messages.ok) return messages;
  const { system, turns, hasToolBlocks } = messages.value;

  const legacyFunctions = Array.isArray(body.functions) && body.tools == null;
  const tools = toToolConfig(body, hasToolBlocks);
  if (!tools.ok) return tools;

  const request: ConverseRequest = { messages: turns };
  if (system.length > 0) request.system = system;
  const inference = toInferenceConfig(body);
  if (Object.keys(inference).length > 0) request.inferenceConfig = inference;
  if (tools.value !== undefined) request.toolConfig = tools.value;
  const output = toOutputConfig(body.response_format as OpenAIResponseFormat | null | undefined);
  if (output !== undefined) request.outputConfig = output;
  const metadata = toRequestMetadata(body);
  if (!metadata.ok) return metadata;
  if (metadata.value !== undefined) request.requestMetadata = metadata.value;
  if (typeof body.service_tier === 'string' && body.service_tier !== 'auto') request.serviceTier = { type: body.service_tier };

  const additional: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (MAPPED.has(key) || NATIVE_FIELDS.has(key) || isNeutral(key, value)) continue;
    additional[key] = value;
  }
  if (Object.keys(additional).length > 0) request.additionalModelRequestFields = additional;
  for (const key of NATIVE_FIELDS) {
    const value = body[key];
    if (value === undefined) continue;
    if (key === 'additionalModelRequestFields' && isRecord(value)) {
      request.additionalModelRequestFields = { ...request.additionalModelRequestFields, ...value };
    } else {
      request[key] = value;
    }
  }

  const streamOptions = body.stream_options as { include_usage?: boolean } | null | undefined;
  return ok({ request, context: { model, legacyFunctions, includeUsage: streamOptions?.include_usage === true } });
}

function toInferenceConfig(body: Record<string, unknown>): InferenceConfiguration {
  const config: InferenceConfiguration = {};
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') config.maxTokens = maxTokens;
  // Ranges differ per model (Claude: temperature 0–1); Bedrock judges them.
  if (typeof body.temperature === 'number') config.temperature = body.temperature;
  if (typeof body.top_p === 'number') config.topP = body.top_p;
  if (typeof body.stop === 'string') config.stopSequences = [body.stop];
  else if (Array.isArray(body.stop) && body.stop.length > 0) config.stopSequences = body.stop as string[];
  return config;
}

interface Turns {
  system: SystemContentBlock[];
  turns: ConverseMessage[];
  hasToolBlocks: boolean;
}

function toMessages(messages: OpenAIMessage[]): Result<Turns> {
  const system: SystemContentBlock[] = [];
  const turns: ConverseMessage[] = [];
  let hasToolBlocks = false;
  // Legacy function calls carry no id: each gets one from its message's position, and the
  // function message answering it (same name, later) reuses it.
  const pendingFunctionIds = new Map<string, string[]>();

  const append = (role: 'user' | 'assistant', content: ContentBlock[]): void => {
    const last = turns.at(-1);
    if (last !== undefined && last.role === role) last.content.push(...content);
    else turns.push({ role, content });
  };

  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const at = `messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer': {
        const blocks = systemBlocks(m.content, at);
        if (!blocks.ok) return blocks;
        system.push(...blocks.value);
        break;
      }
      case 'user': {
        const blocks = userBlocks(m.content, at);
        if (!blocks.ok) return blocks;
        append('user', blocks.value);
        break;
      }
      case 'assistant': {
        const blocks = assistantBlocks(m, at, i, pendingFunctionIds);
        if (!blocks.ok) return blocks;
        if (m.tool_calls?.length || m.function_call) hasToolBlocks = true;
        // A turn with nothing in it (content null, no calls) says nothing; Converse refuses empty turns.
        if (blocks.value.length > 0) append('assistant', blocks.value);
        break;
      }
      case 'tool': {
        const content = toolResultContent(m.content, at);
        if (!content.ok) return content;
        hasToolBlocks = true;
        append('user', [{ toolResult: { toolUseId: m.tool_call_id!, content: content.value } }, ...cachePointAfter(m.content)]);
        break;
      }
      case 'function': {
        const ids = pendingFunctionIds.get(m.name!);
        const id = ids?.shift();
        if (id === undefined) {
          return err(invalid(`${at}: function message '${m.name}' answers no earlier assistant function_call`, `${at}.name`));
        }
        const content = toolResultContent(m.content, at);
        if (!content.ok) return content;
        hasToolBlocks = true;
        append('user', [{ toolResult: { toolUseId: id, content: content.value } }, ...cachePointAfter(m.content)]);
        break;
      }
    }
  }
  return ok({ system, turns, hasToolBlocks });
}

/** A cachePoint cannot sit inside a tool result: one marked part puts it right after the result. */
function cachePointAfter(content: OpenAIMessage['content']): ContentBlock[] {
  return Array.isArray(content) && content.some((p) => p.cache_control != null) ? [{ cachePoint: { type: 'default' } }] : [];
}

function systemBlocks(content: OpenAIMessage['content'], at: string): Result<SystemContentBlock[]> {
  if (typeof content === 'string') return ok([{ text: content }]);
  const out: SystemContentBlock[] = [];
  for (const [j, part] of (content ?? []).entries()) {
    if (part.type !== 'text') return err(invalid(`${at}.content[${j}]: bedrock system prompts take text parts only`, `${at}.content[${j}].type`));
    out.push({ text: part.text ?? '' });
    if (part.cache_control != null) out.push({ cachePoint: { type: 'default' } });
  }
  return ok(out);
}

function userBlocks(content: OpenAIMessage['content'], at: string): Result<ContentBlock[]> {
  if (typeof content === 'string') return ok([{ text: content }]);
  const out: ContentBlock[] = [];
  for (const [j, part] of (content ?? []).entries()) {
    const block = partBlock(part, `${at}.content[${j}]`);
    if (!block.ok) return block;
    out.push(block.value);
    if (part.cache_control != null) out.push({ cachePoint: { type: 'default' } });
  }
  return ok(out);
}

function partBlock(part: OpenAIContentPart, at: string): Result<ContentBlock> {
  switch (part.type) {
    case 'text':
      return ok({ text: part.text ?? '' });
    case 'image_url': {
      const url = typeof part.image_url === 'string' ? part.image_url : part.image_url?.url;
      if (typeof url !== 'string') return err(invalid(`${at}.image_url.url is required`, `${at}.image_url.url`));
      return imageBlock(url, `${at}.image_url.url`);
    }
    case 'file': {
      const file = part.file ?? {};
      if (typeof file.file_data !== 'string') {
        return err(invalid(`${at}.file: bedrock takes a file's bytes (file_data as a data: URL); file_id is not resolved`, `${at}.file.file_data`));
      }
      return documentBlock(file.file_data, file.filename, `${at}.file.file_data`);
    }
    case 'input_audio': {
      const audio = part.input_audio ?? {};
      if (typeof audio.data !== 'string' || typeof audio.format !== 'string') {
        return err(invalid(`${at}.input_audio needs data and format`, `${at}.input_audio`));
      }
      return ok({ audio: { format: audio.format, source: { bytes: audio.data } } });
    }
    default:
      return err(invalid(`${at}: content part type '${part.type}' has no bedrock equivalent`, `${at}.type`));
  }
}

const IMAGE_FORMATS: Readonly<Record<string, ImageFormat>> = {
  'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp',
  png: 'png', jpeg: 'jpeg', jpg: 'jpeg', gif: 'gif', webp: 'webp',
};

const DOCUMENT_FORMATS: Readonly<Record<string, DocumentFormat>> = {
  'application/pdf': 'pdf', 'text/csv': 'csv', 'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html', 'text/plain': 'txt', 'text/markdown': 'md',
};

/** `data:<mime>;base64,<bytes>`, the only inline form Bedrock can take (it wants the bytes). */
function parseDataUrl(url: string): { mime: string; bytes: string } | null {
  const m = /^data:([^;,]+)((?:;[^;,]*)*);base64,(.*)$/s.exec(url);
  return m === null ? null : { mime: m[1]!.toLowerCase(), bytes: m[3]! };
}

function imageBlock(url: string, at: string): Result<ContentBlock> {
  if (url.startsWith('s3://')) {
    const ext = /\.([a-z]+)$/i.exec(url)?.[1]?.toLowerCase();
    const format = ext === undefined ? undefined : IMAGE_FORMATS[ext];
    if (format === undefined) return err(invalid(`${at}: the image format of '${url}' is unknown (png, jpeg, gif or webp)`, at));
    return ok({ image: { format, source: { s3Location: { uri: url } } } });
  }
  const data = parseDataUrl(url);
  if (data === null) {
    // Bedrock fetches nothing from the web; the gateway does not fetch for it either.
    return err(invalid(`${at}: bedrock takes images as base64 data: URLs or s3:// locations`, at));
  }
  const format = IMAGE_FORMATS[data.mime];
  if (format === undefined) return err(invalid(`${at}: image type '${data.mime}' is not one bedrock takes (png, jpeg, gif, webp)`, at));
  return ok({ image: { format, source: { bytes: data.bytes } } });
}

function documentBlock(fileData: string, filename: string | undefined, at: string): Result<ContentBlock> {
  const data = parseDataUrl(fileData);
  if (data === null) return err(invalid(`${at}: expected a base64 data: URL`, at));
  const image = IMAGE_FORMATS[data.mime];
  if (image !== undefined) return ok({ image: { format: image, source: { bytes: data.bytes } } });
  const format = DOCUMENT_FORMATS[data.mime];
  if (format === undefined) return err(invalid(`${at}: file type '${data.mime}' is not one bedrock takes`, at));
  return ok({ document: { format, name: documentName(filename), source: { bytes: data.bytes } } });
}

/** Bedrock allows letters, digits, single spaces, hyphens, parentheses and square brackets in a document name. */
function documentName(filename: string | undefined): string {
  const base = (filename ?? 'document').replace(/\.[^.]*$/, '');
  const clean = base.replace(/[^A-Za-z0-9 \-()[\]]+/g, '-').replace(/\s+/g, ' ').trim().slice(0, 200);
  return clean === '' ? 'document' : clean;
}

function assistantBlocks(m: OpenAIMessage, at: string, index: number, pending: Map<string, string[]>): Result<ContentBlock[]> {
  const out: ContentBlock[] = [];
  // Empty text blocks are left out: Converse refuses blank text, and "" beside tool calls is common.
  if (typeof m.content === 'string') {
    if (m.content !== '') out.push({ text: m.content });
  } else {
    for (const [j, part] of (m.content ?? []).entries()) {
      const text = part.type === 'text' ? part.text : part.type === 'refusal' ? part.refusal : undefined;
      if (text === undefined) return err(invalid(`${at}.content[${j}]: assistant content takes text and refusal parts`, `${at}.content[${j}].type`));
      if (text !== '') out.push({ text });
      if (part.cache_control != null) out.push({ cachePoint: { type: 'default' } });
    }
  }
  for (const [j, call] of (m.tool_calls ?? []).entries()) {
    if (typeof call.id !== 'string' || typeof call.function?.name !== 'string') {
      return err(invalid(`${at}.tool_calls[${j}] needs an id and a function name`, `${at}.tool_calls[${j}]`));
    }
    const input = parseArguments(call.function.arguments, `${at}.tool_calls[${j}].function.arguments`);
    if (!input.ok) return input;
    out.push({ toolUse: { toolUseId: call.id, name: call.function.name, input: input.value } });
  }
  if (m.function_call) {
    if (typeof m.function_call.name !== 'string') return err(invalid(`${at}.function_call needs a name`, `${at}.function_call.name`));
    const input = parseArguments(m.function_call.arguments, `${at}.function_call.arguments`);
    if (!input.ok) return input;
    const id = `call_fn${index}`;
    const ids = pending.get(m.function_call.name) ?? [];
    ids.push(id);
    pending.set(m.function_call.name, ids);
    out.push({ toolUse: { toolUseId: id, name: m.function_call.name, input: input.value } });
  }
  return ok(out);
}

/** Tool arguments are JSON text in OpenAI and a JSON value in Converse. */
function parseArguments(args: unknown, at: string): Result<unknown> {
  if (typeof args !== 'string') return err(invalid(`${at} must be a string of JSON`, at));
  if (args.trim() === '') return ok({});
  try {
    return ok(JSON.parse(args));
  } catch {
    return err(invalid(`${at} is not valid JSON`, at));
  }
}

function toolResultContent(content: OpenAIMessage['content'], at: string): Result<ToolResultContent[]> {
  // An empty list, not an empty text: Converse refuses blank text blocks.
  if (typeof content === 'string' || content == null) return ok(content ? [{ text: content }] : []);
  const out: ToolResultContent[] = [];
  for (const [j, part] of content.entries()) {
    const block = partBlock(part, `${at}.content[${j}]`);
    if (!block.ok) return block;
    const b = block.value;
    if (!('text' in b || 'image' in b || 'document' in b)) {
      return err(invalid(`${at}.content[${j}]: tool results take text, image and file parts`, `${at}.content[${j}].type`));
    }
    out.push(b);
  }
  return ok(out);
}

function toToolConfig(body: Record<string, unknown>, hasToolBlocks: boolean): Result<ToolConfiguration | undefined> {
  const specs: (ToolSpecification | { cachePoint: { type: 'default' } })[] = [];
  for (const [i, tool] of ((body.tools as OpenAITool[] | null | undefined) ?? []).entries()) {
    if (tool.type !== 'function' || tool.function === undefined) {
      return err(invalid(`tools[${i}]: bedrock takes function tools only, not '${tool.type}'`, `tools[${i}].type`));
    }
    specs.push(toolSpec(tool.function));
    if (tool.cache_control != null) specs.push({ cachePoint: { type: 'default' } });
  }
  for (const fn of (body.functions as OpenAIFunction[] | null | undefined) ?? []) specs.push(toolSpec(fn));

  let choice: ToolChoice | undefined;
  const tc = (body.tool_choice ?? body.function_call) as OpenAIToolChoice | { name: string } | null | undefined;
  if (tc === 'none') {
    // Converse has no "none": without tools the model cannot call one. A history that holds
    // tool blocks needs toolConfig, so there the tools stay and the model decides (auto).
    if (!hasToolBlocks) return ok(undefined);
  } else if (tc === 'auto') {
    choice = { auto: {} };
  } else if (tc === 'required') {
    choice = { any: {} };
  } else if (tc != null && typeof tc === 'object') {
    const name = 'function' in tc ? tc.function?.name : 'name' in tc ? tc.name : undefined;
    if (typeof name !== 'string') {
      return err(invalid(`tool_choice: bedrock can force one named function, not '${(tc as { type?: string }).type}'`, 'tool_choice'));
    }
    choice = { tool: { name } };
  }
  if (specs.length === 0) return ok(undefined);
  return ok(choice === undefined ? { tools: specs } : { tools: specs, toolChoice: choice });
}

function toolSpec(fn: OpenAIFunction): ToolSpecification {
  // Converse requires an input schema; OpenAI allows none (a function without parameters).
  const spec: ToolSpecification['toolSpec'] = { name: fn.name, inputSchema: { json: fn.parameters ?? { type: 'object', properties: {} } } };
  if (fn.description !== undefined) spec.description = fn.description;
  if (fn.strict !== undefined && fn.strict !== null) spec.strict = fn.strict;
  return { toolSpec: spec };
}

function toOutputConfig(format: OpenAIResponseFormat | null | undefined): OutputConfig | undefined {
  if (format == null || format.type === 'text') return undefined;
  if (format.type === 'json_object') {
    // Converse's structured output wants a schema: "any JSON object" is JSON mode's promise.
    return { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: '{"type":"object"}', name: 'json_object' } } } };
  }
  const js = format.json_schema!;
  // OpenAI's `strict` has no counterpart: Bedrock's structured output is always enforced.
  const jsonSchema: OutputConfig['textFormat']['structure']['jsonSchema'] = { schema: JSON.stringify(js.schema ?? {}), name: js.name };
  if (js.description !== undefined) jsonSchema.description = js.description;
  return { textFormat: { type: 'json_schema', structure: { jsonSchema } } };
}

function toRequestMetadata(body: Record<string, unknown>): Result<Record<string, string> | undefined> {
  const out: Record<string, string> = {};
  if (body.metadata != null) {
    if (!isRecord(body.metadata) || !Object.values(body.metadata).every((v) => typeof v === 'string')) {
      return err(invalid('metadata: must be an object of string values', 'metadata'));
    }
    Object.assign(out, body.metadata);
  }
  if (typeof body.user === 'string') out.user = body.user;
  if (typeof body.safety_identifier === 'string') out.safety_identifier = body.safety_identifier;
  return ok(Object.keys(out).length > 0 ? out : undefined);
}

// ---- Response ----------------------------------------------------------------------

export function finishReason(stop: StopReason | string, legacyFunctions: boolean): FinishReason {
  switch (stop) {
    case 'tool_use':
      return legacyFunctions ? 'function_call' : 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, and the model's own malformed_* endings
      return 'stop';
  }
}

/** OpenAI counts cached prompt tokens inside prompt_tokens; Bedrock reports them beside inputTokens. */
export function toUsage(u: TokenUsage): OpenAIUsage {
  const cacheRead = u.cacheReadInputTokens ?? 0;
  const prompt = u.inputTokens + cacheRead + (u.cacheWriteInputTokens ?? 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: u.outputTokens,
    total_tokens: u.totalTokens ?? prompt + u.outputTokens,
    prompt_tokens_details: { cached_tokens: cacheRead },
  };
}

export function fromConverse(raw: Buffer, ctx: ChatContext): Result<string, GatewayError> {
  let res: ConverseResponse;
  try {
    res = JSON.parse(raw.toString('utf8')) as ConverseResponse;
  } catch {
    return err(badResponse('bedrock', 'answered with JSON that does not parse'));
  }
  if (!isRecord(res) || !isRecord(res.usage) || typeof res.stopReason !== 'string') {
    return err(badResponse('bedrock', 'answered without stopReason or usage'));
  }
  let text = '';
  let reasoning = '';
  const calls: OpenAIToolCall[] = [];
  for (const block of res.output?.message?.content ?? []) {
    if (typeof block.text === 'string') text += block.text;
    else if (block.toolUse) {
      const { toolUseId: id, name, input } = block.toolUse;
      calls.push({ id, type: 'function', function: { name, arguments: JSON.stringify(input ?? {}) } });
    } else if (block.reasoningContent?.reasoningText) reasoning += block.reasoningContent.reasoningText.text;
  }
  const message: Record<string, unknown> = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text, refusal: null };
  if (reasoning !== '') message.reasoning_content = reasoning;
  putToolCalls(message, calls, ctx.legacyFunctions);
  return ok(
    JSON.stringify({
      id: completionId(),
      object: 'chat.completion',
      created: nowSeconds(),
      model: ctx.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(res.stopReason, ctx.legacyFunctions) }],
      usage: toUsage(res.usage),
    }),
  );
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
