/**
 * OpenAI chat request → Gemini GenerateContentRequest
 * (https://ai.google.dev/api/generate-content#request-body), and the
 * translator that pairs it with the answer's reader (response.ts, stream.ts).
 * Vertex AI takes the same body for Google's models, so the translator is
 * made per provider (messages name the provider called).
 *
 * Every parameter of the client's body meets the rule of GEMINI_PARAMS; one
 * the table does not name is refused: nothing disappears unseen.
 */
import { ok, type Result } from '../../../shared/errors.js';
import type { ChatTranslator } from '../../contract.js';
import {
  assistantCalls,
  dataUrl,
  isSet,
  LegacyCallIds,
  maxTokens,
  partText,
  refuse,
  stopSequences,
  textParts,
  type ChatRequest,
  type FunctionDefinition,
  type Message,
  type Part,
} from '../../shared/openai-request.js';
import { applyPolicy, dropped, mapped, refused, TEXT_ONLY, type ParamPolicy } from '../../shared/params.js';
import { chatTranslator } from '../../shared/translator.js';
import { googleError } from '../errors.js';
import { modelId } from '../model.js';
import { toGeminiSchema } from '../schema.js';
import { signatureOf } from '../tool-ids.js';
import type {
  GeminiContent,
  GeminiFunctionDeclaration,
  GeminiGenerationConfig,
  GeminiPart,
  GeminiThinkingConfig,
  GeminiTool,
  GeminiToolConfig,
  GenerateContentRequest,
} from '../wire.js';
import { readChatCompletion } from './response.js';
import { GeminiStream } from './stream.js';

export const GEMINI_PARAMS: ParamPolicy = {
  rules: {
    model: mapped('the model in the URL'),
    messages: mapped('contents; system and developer messages → systemInstruction'),
    stream: mapped('streamGenerateContent?alt=sse instead of generateContent'),
    stream_options: mapped('the usage chunk (from usageMetadata)'),
    temperature: mapped('generationConfig.temperature'),
    top_p: mapped('generationConfig.topP'),
    top_k: mapped('generationConfig.topK'),
    max_tokens: mapped('generationConfig.maxOutputTokens'),
    max_completion_tokens: mapped('generationConfig.maxOutputTokens'),
    stop: mapped('generationConfig.stopSequences'),
    n: mapped('generationConfig.candidateCount'),
    seed: mapped('generationConfig.seed'),
    presence_penalty: mapped('generationConfig.presencePenalty'),
    frequency_penalty: mapped('generationConfig.frequencyPenalty'),
    logprobs: mapped('generationConfig.responseLogprobs'),
    top_logprobs: mapped('generationConfig.logprobs'),
    response_format: mapped('generationConfig.responseMimeType application/json, responseSchema (json_schema)'),
    tools: mapped('tools: functionDeclarations; google_search, code_execution, url_context as built-in tools'),
    functions: mapped('tools: functionDeclarations'),
    tool_choice: mapped('toolConfig.functionCallingConfig (AUTO, ANY, NONE, allowedFunctionNames)'),
    function_call: mapped('toolConfig.functionCallingConfig'),
    reasoning_effort: mapped('generationConfig.thinkingConfig (thinkingLevel on Gemini 3, else a thinkingBudget)'),
    thinking: mapped('generationConfig.thinkingConfig (includeThoughts, thinkingBudget)'),
    safety_settings: mapped('safetySettings'),
    cached_content: mapped('cachedContent'),
    user: dropped('generateContent has no end-user field'),
    logit_bias: dropped('Gemini cannot bias tokens'),
    parallel_tool_calls: dropped('Gemini has no switch for it: the model may always call several functions in one turn'),
    store: dropped("OpenAI's stored completions"),
    metadata: dropped("tags for OpenAI's stored completions"),
    service_tier: dropped("OpenAI's processing tiers"),
    prompt_cache_key: dropped("a hint for OpenAI's prompt cache (Gemini caches implicitly)"),
    safety_identifier: dropped("OpenAI's abuse-monitoring id"),
    modalities: refused('Gemini chat answers in text here', TEXT_ONLY),
    audio: refused('Gemini chat answers in text here'),
    prediction: refused('Gemini has no predicted outputs'),
    web_search_options: refused('Gemini searches through its google_search tool'),
    verbosity: refused("a hint to OpenAI's GPT-5 models, with no Gemini counterpart"),
  },
  others: 'refused',
};

/** The translator for `provider` (google, or vertex-ai for Google's models there). */
export function geminiChat(provider: string): ChatTranslator {
  return chatTranslator({
    api: 'Gemini generateContent',
    params: GEMINI_PARAMS,
    translate: (body) => toGenerateContent(body, provider),
    read(body) {
      // The model the URL names: the answer's, when Gemini reports no modelVersion.
      const model = modelId(body);
      const ctx = { provider, model: model.ok ? model.value : '' };
      return { response: (bytes) => readChatCompletion(bytes, ctx), stream: () => new GeminiStream(ctx), error: googleError };
    },
  });
}

/** The Gemini API method and its query for a request: streamed or not. */
export function geminiMethod(body: Record<string, unknown>): string {
  return body.stream === true ? 'streamGenerateContent?alt=sse' : 'generateContent';
}

/**
 * OpenAI's reasoning_effort as Gemini 2.5 thinking budgets, per Google's own
 * OpenAI-compatibility table (https://ai.google.dev/gemini-api/docs/openai);
 * it has no "minimal", which gets the smallest budget it uses.
 */
const THINKING_BUDGETS: Readonly<Record<string, number>> = { none: 0, minimal: 1024, low: 1024, medium: 8192, high: 24576 };

/** OpenAI tool types that are Gemini built-in tools, with the Tool field each becomes. */
const BUILT_IN_TOOLS: Readonly<Record<string, 'googleSearch' | 'codeExecution' | 'urlContext'>> = {
  google_search: 'googleSearch',
  code_execution: 'codeExecution',
  url_context: 'urlContext',
};

const AUDIO_MIME: Readonly<Record<string, string>> = { wav: 'audio/wav', mp3: 'audio/mp3' };

/** Media types Gemini reads, by file extension, for URLs given without one. */
const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', heic: 'image/heic', heif: 'image/heif',
  gif: 'image/gif', pdf: 'application/pdf', txt: 'text/plain', wav: 'audio/wav', mp3: 'audio/mp3', aac: 'audio/aac',
  ogg: 'audio/ogg', flac: 'audio/flac', aiff: 'audio/aiff', mp4: 'video/mp4', mpeg: 'video/mpeg', mov: 'video/mov',
  avi: 'video/avi', webm: 'video/webm', wmv: 'video/wmv', flv: 'video/x-flv', '3gp': 'video/3gpp',
};

/** `provider` names the provider in messages about what it does not take. */
export function toGenerateContent(body: ChatRequest, provider: string): Result<GenerateContentRequest> {
  const model = modelId(body);
  if (!model.ok) return model;
  const checked = applyPolicy(body, GEMINI_PARAMS, provider);
  if (!checked.ok) return checked;
  const contents = toContents(body.messages);
  if (!contents.ok) return contents;
  const request: GenerateContentRequest = { contents: contents.value };
  const system = systemParts(body.messages);
  if (!system.ok) return system;
  if (system.value.length > 0) request.systemInstruction = { parts: system.value };

  const tools = toTools(body);
  if (!tools.ok) return tools;
  if (tools.value.tools.length > 0) request.tools = tools.value.tools;
  const toolConfig = toToolConfig(body, tools.value.names);
  if (!toolConfig.ok) return toolConfig;
  if (toolConfig.value !== undefined) request.toolConfig = toolConfig.value;

  const generationConfig = toGenerationConfig(body);
  if (!generationConfig.ok) return generationConfig;
  if (Object.keys(generationConfig.value).length > 0) request.generationConfig = generationConfig.value;
  if (isSet(body.safety_settings)) request.safetySettings = body.safety_settings as unknown[];
  if (isSet(body.cached_content)) request.cachedContent = body.cached_content as string;
  return ok(request);
}

// ---------------------------------------------------------------------------------------
// Messages

/** System and developer messages, in order, become the one systemInstruction Gemini takes (without empty texts, which it refuses). */
function systemParts(messages: Message[]): Result<GeminiPart[]> {
  const parts: GeminiPart[] = [];
  for (const [i, m] of messages.entries()) {
    if (m.role !== 'system' && m.role !== 'developer') continue;
    const texts = textParts(m.content, `messages[${i}]`, m.role);
    if (!texts.ok) return texts;
    for (const { text } of texts.value) if (text !== '') parts.push({ text });
  }
  return ok(parts);
}

function toContents(messages: Message[]): Result<GeminiContent[]> {
  const contents: GeminiContent[] = [];
  // Tool results name the function they answer; OpenAI's name it only through the call id.
  const callNames = new Map<string, string>();
  for (const [i, m] of messages.entries()) {
    const at = `messages[${i}]`;
    let content: Result<GeminiContent | null>;
    switch (m.role) {
      case 'system':
      case 'developer':
        continue;
      case 'user': {
        const parts = userParts(m.content, at);
        content = parts.ok ? ok({ role: 'user', parts: parts.value }) : parts;
        break;
      }
      case 'assistant':
        content = assistantContent(m, i, callNames);
        break;
      case 'tool':
      case 'function': {
        // Gemini matches a function's response to its call by name.
        const name = m.role === 'function' ? m.name : ((m.tool_call_id !== undefined ? callNames.get(m.tool_call_id) : undefined) ?? m.name);
        if (name === undefined) return refuse(`${at}.tool_call_id`, `'${m.tool_call_id}' matches no tool call of an earlier assistant message`);
        const response = functionOutput(m, at);
        content = response.ok ? ok({ role: 'user', parts: [{ functionResponse: { name, response: response.value } }] }) : response;
        break;
      }
    }
    if (!content.ok) return content;
    if (content.value === null) continue;
    // Gemini wants turns to alternate; consecutive turns of one role (parallel tool results,
    // a tool result followed by a user message) become one turn.
    const last = contents.at(-1);
    if (last !== undefined && last.role === content.value.role) last.parts.push(...content.value.parts);
    else contents.push(content.value);
  }
  return ok(contents);
}

function assistantContent(m: Message, index: number, callNames: Map<string, string>): Result<GeminiContent | null> {
  const at = `messages[${index}]`;
  // Gemini refuses empty text parts ("empty text parameter"): an assistant turn with no text says nothing.
  const texts = textParts(m.content, at, 'assistant');
  if (!texts.ok) return texts;
  const parts: GeminiPart[] = texts.value.filter(({ text }) => text !== '').map(({ text }) => ({ text }));
  // A legacy function_call's made-up id is never cited: Gemini matches the function's response by name.
  const calls = assistantCalls(m, index, new LegacyCallIds());
  if (!calls.ok) return calls;
  for (const { id, name, input } of calls.value) {
    callNames.set(id, name);
    const part: GeminiPart = { functionCall: { name, args: input } };
    const signature = signatureOf(id);
    if (signature !== undefined) part.thoughtSignature = signature;
    parts.push(part);
  }
  return ok(parts.length === 0 ? null : { role: 'model', parts });
}

/**
 * Gemini's functionResponse.response is a JSON object: a tool result that is
 * one is sent as it is; anything else goes under "output", the key Gemini's
 * reference names for a function's output.
 */
function functionOutput(m: Message, at: string): Result<Record<string, unknown>> {
  const texts = textParts(m.content, at, m.role);
  if (!texts.ok) return texts;
  const text = texts.value.map((p) => p.text).join('');
  let value: unknown = text;
  try {
    value = JSON.parse(text);
  } catch {
    // plain text output
  }
  return ok(typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { output: value });
}

function userParts(content: Message['content'], at: string): Result<GeminiPart[]> {
  if (!isSet(content)) return ok([]);
  if (typeof content === 'string') return ok([{ text: content }]);
  const parts: GeminiPart[] = [];
  for (const [j, p] of content.entries()) {
    const part = userPart(p, `${at}.content[${j}]`);
    if (!part.ok) return part;
    parts.push(part.value);
  }
  return ok(parts);
}

function userPart(p: Part, at: string): Result<GeminiPart> {
  switch (p.type) {
    case 'text': {
      const text = partText(p, at);
      return text.ok ? ok({ text: text.value }) : text;
    }
    case 'image_url': {
      // `detail` has no per-image counterpart (Gemini's mediaResolution applies to the whole request): dropped.
      const url = p.image_url?.url;
      if (typeof url !== 'string') return refuse(`${at}.image_url.url`, 'must be a string');
      return mediaPart(url, `${at}.image_url.url`, 'image/jpeg');
    }
    case 'input_audio': {
      const audio = p.input_audio;
      const mimeType = typeof audio?.format === 'string' ? AUDIO_MIME[audio.format] : undefined;
      if (mimeType === undefined) return refuse(`${at}.input_audio.format`, 'must be wav or mp3');
      if (typeof audio?.data !== 'string') return refuse(`${at}.input_audio.data`, 'must be base64 text');
      return ok({ inlineData: { mimeType, data: audio.data } });
    }
    case 'file': {
      const file = p.file ?? {};
      const guess = typeof file.filename === 'string' ? mimeFromPath(file.filename) : undefined;
      if (typeof file.file_data === 'string') return mediaPart(file.file_data, `${at}.file.file_data`, guess ?? 'application/pdf');
      // A file id is a Gemini Files API URI (or gs:// object) the client uploaded there.
      if (typeof file.file_id === 'string') return ok({ fileData: { fileUri: file.file_id, ...(guess !== undefined ? { mimeType: guess } : {}) } });
      return refuse(`${at}.file`, 'needs file_data or file_id');
    }
    default:
      return refuse(`${at}.type`, `'${p.type}' content parts cannot be sent to Gemini`);
  }
}

/** A data: URL becomes inline bytes; an http(s) or gs:// URL a file reference Gemini fetches itself. */
function mediaPart(url: string, param: string, fallbackMime: string): Result<GeminiPart> {
  if (url.startsWith('data:')) {
    const data = dataUrl(url, param);
    return data.ok ? ok({ inlineData: { mimeType: data.value.mediaType || fallbackMime, data: data.value.base64 } }) : data;
  }
  if (/^(https?|gs):\/\//i.test(url)) return ok({ fileData: { mimeType: mimeFromPath(url) ?? fallbackMime, fileUri: url } });
  return refuse(param, 'must be a data: URL or an http(s):// or gs:// URL');
}

function mimeFromPath(path: string): string | undefined {
  const clean = path.replace(/[?#].*$/s, '');
  const dot = clean.lastIndexOf('.');
  return dot === -1 || dot < clean.lastIndexOf('/') ? undefined : MIME_BY_EXTENSION[clean.slice(dot + 1).toLowerCase()];
}

// ---------------------------------------------------------------------------------------
// Tools

function toTools(body: ChatRequest): Result<{ tools: GeminiTool[]; names: string[] }> {
  const declarations: GeminiFunctionDeclaration[] = [];
  const builtIns: GeminiTool[] = [];
  // allowed_tools narrows the tools the model may use; Gemini's allowedFunctionNames works only
  // with mode ANY, so the narrowing is done by declaring only those functions.
  const choice = body.tool_choice;
  const allowed =
    typeof choice === 'object' && choice.type === 'allowed_tools'
      ? new Set(((choice.allowed_tools?.tools ?? []) as { function?: { name?: unknown } }[]).map((t) => t.function?.name))
      : null;
  for (const [i, tool] of (body.tools ?? []).entries()) {
    if (tool.type === 'function' && tool.function !== undefined) {
      if (allowed !== null && !allowed.has(tool.function.name)) continue;
      const d = declaration(tool.function, `tools[${i}].function`);
      if (!d.ok) return d;
      declarations.push(d.value);
      continue;
    }
    const field = BUILT_IN_TOOLS[tool.type];
    if (field === undefined) return refuse(`tools[${i}].type`, `'${tool.type}' tools cannot be sent to Gemini`);
    const config = tool[tool.type];
    builtIns.push({ [field]: typeof config === 'object' && config !== null ? config : {} });
  }
  for (const [i, f] of (body.functions ?? []).entries()) {
    const d = declaration(f, `functions[${i}]`);
    if (!d.ok) return d;
    declarations.push(d.value);
  }
  const tools: GeminiTool[] = declarations.length > 0 ? [{ functionDeclarations: declarations }, ...builtIns] : builtIns;
  return ok({ tools, names: declarations.map((d) => d.name) });
}

function declaration(f: FunctionDefinition, at: string): Result<GeminiFunctionDeclaration> {
  // `strict` is dropped: Gemini has no switch for it (function arguments follow the schema as given).
  const d: GeminiFunctionDeclaration = { name: f.name };
  if (typeof f.description === 'string') d.description = f.description;
  // A function without parameters is declared without a schema: Gemini refuses an OBJECT with no properties.
  const props = (f.parameters as { properties?: unknown } | undefined)?.properties;
  if (f.parameters !== undefined && typeof props === 'object' && props !== null && Object.keys(props).length > 0) {
    const schema = toGeminiSchema(f.parameters, `${at}.parameters`);
    if (!schema.ok) return schema;
    d.parameters = schema.value;
  }
  return ok(d);
}

function toToolConfig(body: ChatRequest, names: string[]): Result<GeminiToolConfig | undefined> {
  const choice = body.tool_choice;
  if (choice !== undefined) {
    if (choice === 'none') return ok({ functionCallingConfig: { mode: 'NONE' } });
    if (choice === 'auto') return ok({ functionCallingConfig: { mode: 'AUTO' } });
    if (choice === 'required') return ok({ functionCallingConfig: { mode: 'ANY' } });
    if (choice.type === 'function') return forced(choice.function?.name, names, 'tool_choice.function.name');
    if (choice.type === 'allowed_tools') return ok({ functionCallingConfig: { mode: choice.allowed_tools?.mode === 'required' ? 'ANY' : 'AUTO' } });
    return refuse('tool_choice.type', `'${choice.type}' cannot be sent to Gemini`);
  }
  const fc = body.function_call;
  if (fc === 'none') return ok({ functionCallingConfig: { mode: 'NONE' } });
  if (fc === 'auto') return ok({ functionCallingConfig: { mode: 'AUTO' } });
  if (isSet(fc)) return forced(fc.name, names, 'function_call.name');
  return ok(undefined);
}

function forced(name: unknown, names: string[], param: string): Result<GeminiToolConfig> {
  if (typeof name !== 'string' || !names.includes(name)) return refuse(param, `'${String(name)}' is not one of the declared functions`);
  return ok({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } });
}

// ---------------------------------------------------------------------------------------
// Generation config

function toGenerationConfig(b: ChatRequest): Result<GeminiGenerationConfig> {
  const g: GeminiGenerationConfig = {};
  if (isSet(b.temperature)) g.temperature = b.temperature;
  if (isSet(b.top_p)) g.topP = b.top_p;
  if (isSet(b.top_k)) g.topK = b.top_k as number;
  const max = maxTokens(b);
  if (max !== undefined) g.maxOutputTokens = max;
  const stop = stopSequences(b);
  if (stop !== undefined) g.stopSequences = stop;
  if (isSet(b.n)) g.candidateCount = b.n;
  if (isSet(b.seed)) g.seed = b.seed;
  if (isSet(b.presence_penalty)) g.presencePenalty = b.presence_penalty;
  if (isSet(b.frequency_penalty)) g.frequencyPenalty = b.frequency_penalty;
  if (isSet(b.logprobs)) g.responseLogprobs = b.logprobs;
  if (isSet(b.top_logprobs)) g.logprobs = b.top_logprobs;
  if (b.response_format !== undefined) {
    const format = responseFormat(b.response_format, g);
    if (!format.ok) return format;
  }
  const thinking = thinkingConfig(b);
  if (!thinking.ok) return thinking;
  if (thinking.value !== undefined) g.thinkingConfig = thinking.value;
  return ok(g);
}

function responseFormat(f: NonNullable<ChatRequest['response_format']>, g: GeminiGenerationConfig): Result<null> {
  if (f.type === 'json_object') g.responseMimeType = 'application/json';
  if (f.type === 'json_schema') {
    // name, description and strict have no place in Gemini's config: the schema itself is what constrains the output.
    g.responseMimeType = 'application/json';
    const schema = f.json_schema?.schema;
    if (schema !== undefined) {
      const converted = toGeminiSchema(schema, 'response_format.json_schema.schema');
      if (!converted.ok) return converted;
      g.responseSchema = converted.value;
    }
  }
  return ok(null);
}

/**
 * reasoning_effort: Gemini 3 models take a thinking level of the same names;
 * earlier thinking models a token budget. `thinking` (Anthropic's shape) sets
 * the budget and asks for thought summaries, returned as reasoning_content.
 */
function thinkingConfig(b: ChatRequest): Result<GeminiThinkingConfig | undefined> {
  const thinking = b.thinking as { type?: unknown; budget_tokens?: unknown } | null | undefined;
  if (isSet(thinking)) {
    return ok(
      thinking.type === 'enabled'
        ? { includeThoughts: true, ...(typeof thinking.budget_tokens === 'number' ? { thinkingBudget: thinking.budget_tokens } : {}) }
        : { thinkingBudget: 0 },
    );
  }
  const effort = b.reasoning_effort;
  if (!isSet(effort)) return ok(undefined);
  if (typeof effort !== 'string') return refuse('reasoning_effort', 'must be a string');
  if (/^gemini-3/.test(typeof b.model === 'string' ? b.model : '')) return ok({ thinkingLevel: effort === 'none' ? 'minimal' : effort });
  const budget = THINKING_BUDGETS[effort];
  if (budget === undefined) return refuse('reasoning_effort', `'${effort}' is not one of ${Object.keys(THINKING_BUDGETS).join(', ')}`);
  return ok({ thinkingBudget: budget });
}
