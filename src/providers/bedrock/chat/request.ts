/**
 * OpenAI chat completions → Bedrock Converse (`POST /model/{modelId}/converse`,
 * `/converse-stream` when streamed), and the translator that pairs it with the
 * answer's reader (response.ts, stream.ts). Source: Bedrock Runtime API
 * reference, Converse, ConverseRequest and its shapes (Message,
 * ContentBlock, ToolConfiguration, InferenceConfiguration, OutputConfig).
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
 *
 * Every other parameter meets the rule of CONVERSE_PARAMS; one the table does
 * not name (top_k, thinking, reasoning_effort, …) goes in
 * additionalModelRequestFields, Converse's channel for a model's own
 * parameters: models that know them take them, others say no.
 */
import { ok, type Result } from '../../../shared/errors.js';
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
import { applyPolicy, dropped, EMPTY, FALSE, mapped, ONE, passed, refused, TEXT_ONLY, ZERO, type ParamPolicy } from '../../shared/params.js';
import { chatTranslator } from '../../shared/translator.js';
import { bedrockError } from '../errors.js';
import type {
  ContentBlock,
  ConverseMessage,
  ConverseRequest,
  DocumentFormat,
  ImageFormat,
  InferenceConfiguration,
  OutputConfig,
  SystemContentBlock,
  ToolChoice,
  ToolConfiguration,
  ToolResultContent,
  ToolSpecification,
} from '../wire.js';
import { fromConverse } from './response.js';
import { converseStream } from './stream.js';

/**
 * Converse's own top-level fields: a client that sends them means them as
 * Converse does, so they are passed as given (and win over mapped values).
 * `messages` is OpenAI's field too and `modelId` travels in the path.
 */
const NATIVE_FIELDS = [
  'system', 'inferenceConfig', 'toolConfig', 'guardrailConfig', 'additionalModelRequestFields', 'promptVariables',
  'additionalModelResponseFieldPaths', 'requestMetadata', 'performanceConfig', 'serviceTier', 'outputConfig',
] as const;

export const CONVERSE_PARAMS: ParamPolicy = {
  rules: {
    model: mapped('the modelId in the path'),
    messages: mapped('messages; system and developer messages → system'),
    stream: mapped('ConverseStream instead of Converse'),
    stream_options: mapped('the usage chunk (from the metadata event)'),
    max_tokens: mapped('inferenceConfig.maxTokens'),
    max_completion_tokens: mapped('inferenceConfig.maxTokens'),
    temperature: mapped('inferenceConfig.temperature'),
    top_p: mapped('inferenceConfig.topP'),
    stop: mapped('inferenceConfig.stopSequences'),
    tools: mapped('toolConfig.tools[].toolSpec (function tools only)'),
    functions: mapped('toolConfig.tools[].toolSpec'),
    tool_choice: mapped('toolConfig.toolChoice (auto, required → any, a named function → tool; none: no tools)'),
    function_call: mapped('toolConfig.toolChoice'),
    response_format: mapped('outputConfig.textFormat (json_schema; json_object as the schema {"type":"object"})'),
    user: mapped('requestMetadata.user'),
    safety_identifier: mapped('requestMetadata.safety_identifier'),
    metadata: mapped('requestMetadata (string values only)'),
    service_tier: mapped('serviceTier.type (auto: left to Bedrock)'),
    ...Object.fromEntries(NATIVE_FIELDS.map((k) => [k, mapped(`${k}, Converse's own field, as given`)])),
    reasoning_effort: passed(),
    verbosity: passed(),
    frequency_penalty: passed(ZERO),
    presence_penalty: passed(ZERO),
    logit_bias: passed(EMPTY),
    seed: dropped('no Converse field, and no model family on Bedrock shares one name for it'),
    store: dropped('Bedrock keeps nothing; invocation logging is account configuration'),
    prediction: dropped("a latency hint; Bedrock's prompt cache is set by cachePoint blocks"),
    prompt_cache_key: dropped("a latency hint; Bedrock's prompt cache is set by cachePoint blocks"),
    parallel_tool_calls: dropped('Converse has no switch: every tool call the model makes is returned'),
    top_logprobs: dropped('only meaningful with logprobs, which Converse does not return'),
    n: refused('Converse returns one choice per request', ONE),
    logprobs: refused('Converse does not return log probabilities', FALSE),
    modalities: refused('Converse answers in text only', TEXT_ONLY),
    audio: refused('Converse answers in text only'),
    web_search_options: refused('Bedrock has no web search'),
  },
  others: 'passed',
};

export const converseChat = chatTranslator({
  api: 'Bedrock Converse',
  params: CONVERSE_PARAMS,
  translate: toConverse,
  headers: (body) => ({ accept: body.stream === true ? 'application/vnd.amazon.eventstream' : 'application/json' }),
  read(body) {
    // Converse's answers name no model: the request's is reported.
    const model = typeof body.model === 'string' ? body.model : '';
    const legacyFunctions = usesLegacyFunctions(body);
    return { response: (bytes) => fromConverse(bytes, model, legacyFunctions), stream: () => converseStream(model, legacyFunctions), error: bedrockError };
  },
});

export function toConverse(body: ChatRequest): Result<ConverseRequest> {
  const model = modelOf(body, 'bedrock');
  if (!model.ok) return model;
  const additional = applyPolicy(body, CONVERSE_PARAMS, 'bedrock');
  if (!additional.ok) return additional;

  const messages = toMessages(body.messages);
  if (!messages.ok) return messages;
  const { system, turns, hasToolBlocks } = messages.value;
  const tools = toToolConfig(body, hasToolBlocks);
  if (!tools.ok) return tools;

  const request: ConverseRequest = { messages: turns };
  if (system.length > 0) request.system = system;
  const inference = toInferenceConfig(body);
  if (Object.keys(inference).length > 0) request.inferenceConfig = inference;
  if (tools.value !== undefined) request.toolConfig = tools.value;
  const output = toOutputConfig(body.response_format);
  if (output !== undefined) request.outputConfig = output;
  const metadata = toRequestMetadata(body);
  if (!metadata.ok) return metadata;
  if (metadata.value !== undefined) request.requestMetadata = metadata.value;
  if (typeof body.service_tier === 'string' && body.service_tier !== 'auto') request.serviceTier = { type: body.service_tier };
  if (Object.keys(additional.value).length > 0) request.additionalModelRequestFields = additional.value;

  for (const key of NATIVE_FIELDS) {
    const value = body[key];
    if (value === undefined) continue;
    if (key === 'additionalModelRequestFields' && isRecord(value)) {
      request.additionalModelRequestFields = { ...request.additionalModelRequestFields, ...value };
    } else {
      (request as Record<string, unknown>)[key] = value;
    }
  }
  return ok(request);
}

function toInferenceConfig(body: ChatRequest): InferenceConfiguration {
  const config: InferenceConfiguration = {};
  const max = maxTokens(body);
  if (max !== undefined) config.maxTokens = max;
  // Ranges differ per model (Claude: temperature 0–1); Bedrock judges them.
  if (isSet(body.temperature)) config.temperature = body.temperature;
  if (isSet(body.top_p)) config.topP = body.top_p;
  const stop = stopSequences(body);
  if (stop !== undefined) config.stopSequences = stop;
  return config;
}

interface Turns {
  system: SystemContentBlock[];
  turns: ConverseMessage[];
  hasToolBlocks: boolean;
}

function toMessages(messages: Message[]): Result<Turns> {
  const system: SystemContentBlock[] = [];
  const turns: ConverseMessage[] = [];
  let hasToolBlocks = false;
  const legacy = new LegacyCallIds();

  const append = (role: 'user' | 'assistant', content: ContentBlock[]): void => {
    const last = turns.at(-1);
    if (last !== undefined && last.role === role) last.content.push(...content);
    else turns.push({ role, content });
  };

  for (const [i, m] of messages.entries()) {
    const at = `messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer': {
        const texts = textParts(m.content, at, m.role);
        if (!texts.ok) return texts;
        for (const { text, part } of texts.value) {
          // Converse refuses blank text blocks.
          if (text !== '') system.push({ text });
          if (isSet(part?.cache_control)) system.push({ cachePoint: { type: 'default' } });
        }
        break;
      }
      case 'user': {
        const blocks = userBlocks(m.content, at);
        if (!blocks.ok) return blocks;
        append('user', blocks.value);
        break;
      }
      case 'assistant': {
        const blocks = assistantBlocks(m, at, i, legacy);
        if (!blocks.ok) return blocks;
        if (m.tool_calls?.length || m.function_call) hasToolBlocks = true;
        // A turn with nothing in it (content null, no calls) says nothing; Converse refuses empty turns.
        if (blocks.value.length > 0) append('assistant', blocks.value);
        break;
      }
      case 'tool':
      case 'function': {
        const id = m.role === 'tool' ? ok(m.tool_call_id!) : legacy.answer(m.name, at);
        if (!id.ok) return id;
        const content = toolResultContent(m.content, at);
        if (!content.ok) return content;
        hasToolBlocks = true;
        append('user', [{ toolResult: { toolUseId: id.value, content: content.value } }, ...cachePointAfter(m.content)]);
        break;
      }
    }
  }
  return ok({ system, turns, hasToolBlocks });
}

/** A cachePoint cannot sit inside a tool result: one marked part puts it right after the result. */
function cachePointAfter(content: Message['content']): ContentBlock[] {
  return Array.isArray(content) && content.some((p) => isSet(p.cache_control)) ? [{ cachePoint: { type: 'default' } }] : [];
}

function userBlocks(content: Message['content'], at: string): Result<ContentBlock[]> {
  if (typeof content === 'string') return ok([{ text: content }]);
  const out: ContentBlock[] = [];
  for (const [j, part] of (content ?? []).entries()) {
    const block = partBlock(part, `${at}.content[${j}]`);
    if (!block.ok) return block;
    out.push(block.value);
    if (isSet(part.cache_control)) out.push({ cachePoint: { type: 'default' } });
  }
  return ok(out);
}

function partBlock(part: Part, at: string): Result<ContentBlock> {
  switch (part.type) {
    case 'text': {
      const text = partText(part, at);
      return text.ok ? ok({ text: text.value }) : text;
    }
    case 'image_url': {
      const url = part.image_url?.url;
      if (typeof url !== 'string') return refuse(`${at}.image_url.url`, 'is required');
      return imageBlock(url, `${at}.image_url.url`);
    }
    case 'file': {
      const data = part.file?.file_data;
      if (typeof data !== 'string') return refuse(`${at}.file.file_data`, "bedrock takes a file's bytes (file_data as a data: URL); file_id is not resolved");
      return documentBlock(data, part.file?.filename, `${at}.file.file_data`);
    }
    case 'input_audio': {
      const audio = part.input_audio;
      if (typeof audio?.data !== 'string' || typeof audio.format !== 'string') return refuse(`${at}.input_audio`, 'needs data and format');
      return ok({ audio: { format: audio.format, source: { bytes: audio.data } } });
    }
    default:
      return refuse(`${at}.type`, `content part type '${part.type}' has no bedrock equivalent`);
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

function imageBlock(url: string, at: string): Result<ContentBlock> {
  if (url.startsWith('s3://')) {
    const ext = /\.([a-z]+)$/i.exec(url)?.[1]?.toLowerCase();
    const format = ext === undefined ? undefined : IMAGE_FORMATS[ext];
    if (format === undefined) return refuse(at, `the image format of '${url}' is unknown (png, jpeg, gif or webp)`);
    return ok({ image: { format, source: { s3Location: { uri: url } } } });
  }
  // Bedrock fetches nothing from the web; the gateway does not fetch for it either.
  if (!url.startsWith('data:')) return refuse(at, 'bedrock takes images as base64 data: URLs or s3:// locations');
  const data = dataUrl(url, at);
  if (!data.ok) return data;
  const format = IMAGE_FORMATS[data.value.mediaType];
  if (format === undefined) return refuse(at, `image type '${data.value.mediaType}' is not one bedrock takes (png, jpeg, gif, webp)`);
  return ok({ image: { format, source: { bytes: data.value.base64 } } });
}

function documentBlock(fileData: string, filename: unknown, at: string): Result<ContentBlock> {
  const data = dataUrl(fileData, at);
  if (!data.ok) return data;
  const { mediaType, base64 } = data.value;
  const image = IMAGE_FORMATS[mediaType];
  if (image !== undefined) return ok({ image: { format: image, source: { bytes: base64 } } });
  const format = DOCUMENT_FORMATS[mediaType];
  if (format === undefined) return refuse(at, `file type '${mediaType}' is not one bedrock takes`);
  return ok({ document: { format, name: documentName(filename), source: { bytes: base64 } } });
}

/** Bedrock allows letters, digits, single spaces, hyphens, parentheses and square brackets in a document name. */
function documentName(filename: unknown): string {
  const base = (typeof filename === 'string' ? filename : 'document').replace(/\.[^.]*$/, '');
  const clean = base.replace(/[^A-Za-z0-9 \-()[\]]+/g, '-').replace(/\s+/g, ' ').trim().slice(0, 200);
  return clean === '' ? 'document' : clean;
}

function assistantBlocks(m: Message, at: string, index: number, legacy: LegacyCallIds): Result<ContentBlock[]> {
  const out: ContentBlock[] = [];
  // Empty text blocks are left out: Converse refuses blank text, and "" beside tool calls is common.
  const texts = textParts(m.content, at, 'assistant');
  if (!texts.ok) return texts;
  for (const { text, part } of texts.value) {
    if (text !== '') out.push({ text });
    if (isSet(part?.cache_control)) out.push({ cachePoint: { type: 'default' } });
  }
  const calls = assistantCalls(m, index, legacy);
  if (!calls.ok) return calls;
  for (const { id, name, input } of calls.value) out.push({ toolUse: { toolUseId: id, name, input } });
  return ok(out);
}

function toolResultContent(content: Message['content'], at: string): Result<ToolResultContent[]> {
  // An empty list, not an empty text: Converse refuses blank text blocks.
  if (typeof content === 'string' || !isSet(content)) return ok(content ? [{ text: content }] : []);
  const out: ToolResultContent[] = [];
  for (const [j, part] of content.entries()) {
    const block = partBlock(part, `${at}.content[${j}]`);
    if (!block.ok) return block;
    const b = block.value;
    if (!('text' in b || 'image' in b || 'document' in b)) return refuse(`${at}.content[${j}].type`, 'tool results take text, image and file parts');
    out.push(b);
  }
  return ok(out);
}

function toToolConfig(body: ChatRequest, hasToolBlocks: boolean): Result<ToolConfiguration | undefined> {
  const specs: (ToolSpecification | { cachePoint: { type: 'default' } })[] = [];
  for (const [i, tool] of (body.tools ?? []).entries()) {
    if (tool.type !== 'function' || tool.function === undefined) return refuse(`tools[${i}].type`, `bedrock takes function tools only, not '${tool.type}'`);
    const spec = toolSpec(tool.function, `tools[${i}].function`);
    if (!spec.ok) return spec;
    specs.push(spec.value);
    if (isSet(tool.cache_control)) specs.push({ cachePoint: { type: 'default' } });
  }
  for (const [i, fn] of (body.functions ?? []).entries()) {
    const spec = toolSpec(fn, `functions[${i}]`);
    if (!spec.ok) return spec;
    specs.push(spec.value);
  }

  let choice: ToolChoice | undefined;
  const tc = body.tool_choice ?? body.function_call;
  if (tc === 'none') {
    // Converse has no "none": without tools the model cannot call one. A history that holds
    // tool blocks needs toolConfig, so there the tools stay and the model decides (auto).
    if (!hasToolBlocks) return ok(undefined);
  } else if (tc === 'auto') {
    choice = { auto: {} };
  } else if (tc === 'required') {
    choice = { any: {} };
  } else if (isSet(tc)) {
    const name = 'function' in tc ? tc.function?.name : 'name' in tc ? tc.name : undefined;
    if (typeof name !== 'string') return refuse('tool_choice', `bedrock can force one named function, not '${(tc as { type?: unknown }).type}'`);
    choice = { tool: { name } };
  }
  if (specs.length === 0) return ok(undefined);
  return ok(choice === undefined ? { tools: specs } : { tools: specs, toolChoice: choice });
}

function toolSpec(fn: FunctionDefinition, at: string): Result<ToolSpecification> {
  // Converse requires an input schema; OpenAI allows none (a function without parameters).
  const schema = schemaObject(fn.parameters, `${at}.parameters`);
  if (!schema.ok) return schema;
  const spec: ToolSpecification['toolSpec'] = { name: fn.name, inputSchema: { json: schema.value } };
  if (typeof fn.description === 'string') spec.description = fn.description;
  if (typeof fn.strict === 'boolean') spec.strict = fn.strict;
  return ok({ toolSpec: spec });
}

function toOutputConfig(format: ChatRequest['response_format']): OutputConfig | undefined {
  if (format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') {
    // Converse's structured output wants a schema: "any JSON object" is JSON mode's promise.
    return { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: '{"type":"object"}', name: 'json_object' } } } };
  }
  const js = format.json_schema!;
  // OpenAI's `strict` has no counterpart: Bedrock's structured output is always enforced.
  const jsonSchema: OutputConfig['textFormat']['structure']['jsonSchema'] = { schema: JSON.stringify(js.schema ?? {}), name: js.name };
  if (typeof js.description === 'string') jsonSchema.description = js.description;
  return { textFormat: { type: 'json_schema', structure: { jsonSchema } } };
}

function toRequestMetadata(body: ChatRequest): Result<Record<string, string> | undefined> {
  const out: Record<string, string> = {};
  if (isSet(body.metadata)) {
    if (!isRecord(body.metadata) || !Object.values(body.metadata).every((v) => typeof v === 'string')) return refuse('metadata', 'must be an object of string values');
    Object.assign(out, body.metadata);
  }
  if (typeof body.user === 'string') out.user = body.user;
  if (typeof body.safety_identifier === 'string') out.safety_identifier = body.safety_identifier;
  return ok(Object.keys(out).length > 0 ? out : undefined);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
