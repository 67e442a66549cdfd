/**
 * OpenAI chat request → Gemini GenerateContentRequest
 * (https://ai.google.dev/api/generate-content#request-body; Vertex AI takes
 * the same body). Every field of the client's body is either mapped, dropped
 * by a rule in DROPPED (with the reason), or refused with a 400 naming it:
 * nothing disappears unseen.
 */
import { invalid, ok, type GatewayError, type Result } from '../../../shared/errors.js';
import type {
  ChatMessage,
  ChatRequest,
  ChatTool,
  ContentPart,
  FunctionDefinition,
  ResponseFormat,
  ToolChoice,
} from '../openai-chat.js';
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

/** Fields read below (model and stream choose the URL; stream_options the translator). */
const MAPPED = new Set([
  'model', 'messages', 'stream', 'stream_options', 'temperature', 'top_p', 'top_k', 'max_tokens', 'max_completion_tokens',
  'stop', 'n', 'seed', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'response_format', 'tools',
  'tool_choice', 'functions', 'function_call', 'reasoning_effort', 'thinking', 'safety_settings', 'cached_content',
]);

/** OpenAI fields with no Gemini counterpart whose absence changes nothing the client can rely on. */
const DROPPED: Readonly<Record<string, string>> = {
  user: 'generateContent has no end-user field',
  logit_bias: 'Gemini cannot bias tokens',
  parallel_tool_calls: 'Gemini has no switch for it: the model may always call several functions in one turn',
  store: "OpenAI's stored completions",
  metadata: "tags for OpenAI's stored completions",
  service_tier: "OpenAI's processing tiers",
  prompt_cache_key: "a hint for OpenAI's prompt cache (Gemini caches implicitly)",
  safety_identifier: "OpenAI's abuse-monitoring id",
};

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

export interface TranslatedChat {
  request: GenerateContentRequest;
  stream: boolean;
  includeUsage: boolean;
}

/** `provider` names the provider in messages about what it does not take. */
export function toGenerateContent(body: ChatRequest, provider: string): Result<TranslatedChat, GatewayError> {
  try {
    return ok(translate(body, provider));
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, error: invalid(e.message, e.param) };
    throw e;
  }
}

/** A 400 raised deep in the translation, caught once at the top. */
class Refusal extends Error {
  constructor(message: string, readonly param: string) {
    super(message);
  }
}

function translate(body: ChatRequest, provider: string): TranslatedChat {
  for (const key of Object.keys(body)) {
    if (!MAPPED.has(key) && !(key in DROPPED) && (body as unknown as Record<string, unknown>)[key] != null) {
      throw new Refusal(`${key}: not supported by provider '${provider}'`, key);
    }
  }
  const request: GenerateContentRequest = { contents: toContents(body.messages) };
  const system = systemParts(body.messages);
  if (system.length > 0) request.systemInstruction = { parts: system };

  const { tools, names } = toTools(body.tools, body.functions, body.tool_choice);
  if (tools.length > 0) request.tools = tools;
  const toolConfig = toToolConfig(body.tool_choice, body.function_call, names);
  if (toolConfig !== undefined) request.toolConfig = toolConfig;

  const generationConfig = toGenerationConfig(body);
  if (Object.keys(generationConfig).length > 0) request.generationConfig = generationConfig;
  if (body.safety_settings != null) request.safetySettings = body.safety_settings;
  if (body.cached_content != null) request.cachedContent = body.cached_content;
  return { request, stream: body.stream === true, includeUsage: body.stream_options?.include_usage === true };
}

// ---------------------------------------------------------------------------------------
// Messages

/** System and developer messages, in order, become the one systemInstruction Gemini takes (without empty texts, which it refuses). */
function systemParts(messages: ChatMessage[]): GeminiPart[] {
  const parts: GeminiPart[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'system' || m.role === 'developer') parts.push(...textParts(m.content, `messages[${i}].content`).filter((p) => p.text !== ''));
  });
  return parts;
}

function toContents(messages: ChatMessage[]): GeminiContent[] {
  const contents: GeminiContent[] = [];
  // Tool results name the function they answer; OpenAI's name it only through the call id.
  const callNames = new Map<string, string>();
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    let content: GeminiContent | null;
    switch (m.role) {
      case 'system':
      case 'developer':
        return;
      case 'user':
        content = { role: 'user', parts: userParts(m.content, `${at}.content`) };
        break;
      case 'assistant':
        content = assistantContent(m, at, callNames);
        break;
      case 'tool': {
        const name = (m.tool_call_id !== undefined ? callNames.get(m.tool_call_id) : undefined) ?? m.name;
        if (name === undefined) {
          throw new Refusal(`${at}.tool_call_id: '${m.tool_call_id}' matches no tool call of an earlier assistant message`, `${at}.tool_call_id`);
        }
        content = { role: 'user', parts: [{ functionResponse: { name, response: functionOutput(m.content, `${at}.content`) } }] };
        break;
      }
      case 'function':
        content = { role: 'user', parts: [{ functionResponse: { name: m.name!, response: functionOutput(m.content, `${at}.content`) } }] };
        break;
    }
    if (content === null) return;
    // Gemini wants turns to alternate; consecutive turns of one role (parallel tool results,
    // a tool result followed by a user message) become one turn.
    const last = contents.at(-1);
    if (last !== undefined && last.role === content.role) last.parts.push(...content.parts);
    else contents.push(content);
  });
  return contents;
}

function assistantContent(m: ChatMessage, at: string, callNames: Map<string, string>): GeminiContent | null {
  // Gemini refuses empty text parts ("empty text parameter"): an assistant turn with no text says nothing.
  const parts: GeminiPart[] = textParts(m.content, `${at}.content`).filter((p) => p.text !== '');
  m.tool_calls?.forEach((call, j) => {
    const where = `${at}.tool_calls[${j}]`;
    if (call.type !== 'function' || call.function === undefined) {
      throw new Refusal(`${where}.type: only function tool calls can be sent to Gemini`, `${where}.type`);
    }
    callNames.set(call.id, call.function.name);
    const part: GeminiPart = { functionCall: { name: call.function.name, args: parseArguments(call.function.arguments, `${where}.function.arguments`) } };
    const signature = signatureOf(call.id);
    if (signature !== undefined) part.thoughtSignature = signature;
    parts.push(part);
  });
  if (m.function_call != null) {
    parts.push({ functionCall: { name: m.function_call.name, args: parseArguments(m.function_call.arguments, `${at}.function_call.arguments`) } });
  }
  return parts.length === 0 ? null : { role: 'model', parts };
}

function parseArguments(text: string | undefined, param: string): Record<string, unknown> {
  if (text === '' || text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Refusal(`${param}: not valid JSON`, param);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Refusal(`${param}: must be a JSON object`, param);
  return value as Record<string, unknown>;
}

/**
 * Gemini's functionResponse.response is a JSON object: a tool result that is
 * one is sent as it is; anything else goes under "output", the key Gemini's
 * reference names for a function's output.
 */
function functionOutput(content: ChatMessage['content'], param: string): Record<string, unknown> {
  const text = textParts(content, param).map((p) => p.text).join('');
  let value: unknown = text;
  try {
    value = JSON.parse(text);
  } catch {
    // plain text output
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { output: value };
}

/** Text-only content (system, developer, assistant, tool). */
function textParts(content: ChatMessage['content'], param: string): { text: string }[] {
  if (content == null) return [];
  if (typeof content === 'string') return [{ text: content }];
  return content.map((p, j) => {
    if (p.type === 'text') return { text: (p as { text: string }).text };
    if (p.type === 'refusal') return { text: (p as { refusal: string }).refusal };
    throw new Refusal(`${param}[${j}].type: '${p.type}' parts are only accepted in user messages`, `${param}[${j}].type`);
  });
}

function userParts(content: ChatMessage['content'], param: string): GeminiPart[] {
  if (content == null) return [];
  if (typeof content === 'string') return [{ text: content }];
  return content.map((p, j) => userPart(p, `${param}[${j}]`));
}

function userPart(p: ContentPart, at: string): GeminiPart {
  switch (p.type) {
    case 'text':
      return { text: (p as { text: string }).text };
    case 'image_url': {
      // `detail` has no per-image counterpart (Gemini's mediaResolution applies to the whole request): dropped.
      const url = (p as { image_url?: { url?: unknown } }).image_url?.url;
      if (typeof url !== 'string') throw new Refusal(`${at}.image_url.url: must be a string`, `${at}.image_url.url`);
      return mediaPart(url, `${at}.image_url.url`, 'image/jpeg');
    }
    case 'input_audio': {
      const audio = (p as { input_audio?: { data?: unknown; format?: unknown } }).input_audio;
      const mimeType = typeof audio?.format === 'string' ? AUDIO_MIME[audio.format] : undefined;
      if (mimeType === undefined) throw new Refusal(`${at}.input_audio.format: must be wav or mp3`, `${at}.input_audio.format`);
      if (typeof audio?.data !== 'string') throw new Refusal(`${at}.input_audio.data: must be base64 text`, `${at}.input_audio.data`);
      return { inlineData: { mimeType, data: audio.data } };
    }
    case 'file': {
      const file = (p as { file?: { file_data?: unknown; file_id?: unknown; filename?: unknown } }).file ?? {};
      const guess = typeof file.filename === 'string' ? mimeFromPath(file.filename) : undefined;
      if (typeof file.file_data === 'string') return mediaPart(file.file_data, `${at}.file.file_data`, guess ?? 'application/pdf');
      // A file id is a Gemini Files API URI (or gs:// object) the client uploaded there.
      if (typeof file.file_id === 'string') return { fileData: { fileUri: file.file_id, ...(guess !== undefined ? { mimeType: guess } : {}) } };
      throw new Refusal(`${at}.file: needs file_data or file_id`, `${at}.file`);
    }
    default:
      throw new Refusal(`${at}.type: '${p.type}' content parts cannot be sent to Gemini`, `${at}.type`);
  }
}

/** A data: URL becomes inline bytes; an http(s) or gs:// URL a file reference Gemini fetches itself. */
function mediaPart(url: string, param: string, fallbackMime: string): GeminiPart {
  if (url.startsWith('data:')) {
    const m = /^data:([^;,]*)((?:;[^;,]*)*?)(;base64)?,(.*)$/s.exec(url);
    if (m === null) throw new Refusal(`${param}: not a valid data URL`, param);
    const data = m[3] !== undefined ? m[4]! : Buffer.from(decodeURIComponent(m[4]!), 'utf8').toString('base64');
    return { inlineData: { mimeType: m[1] || fallbackMime, data } };
  }
  if (/^(https?|gs):\/\//i.test(url)) return { fileData: { mimeType: mimeFromPath(url) ?? fallbackMime, fileUri: url } };
  throw new Refusal(`${param}: must be a data: URL or an http(s):// or gs:// URL`, param);
}

function mimeFromPath(path: string): string | undefined {
  const clean = path.replace(/[?#].*$/s, '');
  const dot = clean.lastIndexOf('.');
  return dot === -1 || dot < clean.lastIndexOf('/') ? undefined : MIME_BY_EXTENSION[clean.slice(dot + 1).toLowerCase()];
}

// ---------------------------------------------------------------------------------------
// Tools

function toTools(tools: ChatTool[] | undefined, functions: FunctionDefinition[] | undefined, choice: ToolChoice | undefined): { tools: GeminiTool[]; names: string[] } {
  const declarations: GeminiFunctionDeclaration[] = [];
  const builtIns: GeminiTool[] = [];
  // allowed_tools narrows the tools the model may use; Gemini's allowedFunctionNames works only
  // with mode ANY, so the narrowing is done by declaring only those functions.
  const allowed =
    typeof choice === 'object' && choice.type === 'allowed_tools'
      ? new Set((choice as { allowed_tools: { tools: { function?: { name: string } }[] } }).allowed_tools.tools.map((t) => t.function?.name))
      : null;
  (tools ?? []).forEach((tool, i) => {
    if (tool.type === 'function' && tool.function !== undefined) {
      if (allowed === null || allowed.has(tool.function.name)) declarations.push(declaration(tool.function, `tools[${i}].function`));
      return;
    }
    const field = BUILT_IN_TOOLS[tool.type];
    if (field === undefined) throw new Refusal(`tools[${i}].type: '${tool.type}' tools cannot be sent to Gemini`, `tools[${i}].type`);
    const config = tool[tool.type];
    builtIns.push({ [field]: typeof config === 'object' && config !== null ? config : {} });
  });
  (functions ?? []).forEach((f, i) => declarations.push(declaration(f, `functions[${i}]`)));
  const out: GeminiTool[] = declarations.length > 0 ? [{ functionDeclarations: declarations }, ...builtIns] : builtIns;
  return { tools: out, names: declarations.map((d) => d.name) };
}

function declaration(f: FunctionDefinition, at: string): GeminiFunctionDeclaration {
  // `strict` is dropped: Gemini has no switch for it (function arguments follow the schema as given).
  const d: GeminiFunctionDeclaration = { name: f.name };
  if (f.description !== undefined) d.description = f.description;
  // A function without parameters is declared without a schema: Gemini refuses an OBJECT with no properties.
  const props = f.parameters?.properties;
  if (f.parameters !== undefined && typeof props === 'object' && props !== null && Object.keys(props).length > 0) {
    const schema = toGeminiSchema(f.parameters, `${at}.parameters`);
    if (!schema.ok) throw new Refusal(schema.error.message, schema.error.param ?? `${at}.parameters`);
    d.parameters = schema.value;
  }
  return d;
}

function toToolConfig(choice: ToolChoice | undefined, functionCall: ChatRequest['function_call'], names: string[]): GeminiToolConfig | undefined {
  if (choice !== undefined) {
    if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
    if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
    if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
    if (choice.type === 'function') {
      const name = (choice as { function: { name: string } }).function.name;
      return forced(name, names, 'tool_choice.function.name');
    }
    if (choice.type === 'allowed_tools') {
      const mode = (choice as { allowed_tools: { mode: string } }).allowed_tools.mode;
      return { functionCallingConfig: { mode: mode === 'required' ? 'ANY' : 'AUTO' } };
    }
    throw new Refusal(`tool_choice.type: '${choice.type}' cannot be sent to Gemini`, 'tool_choice.type');
  }
  if (functionCall === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (functionCall === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (functionCall != null) return forced(functionCall.name, names, 'function_call.name');
  return undefined;
}

function forced(name: string, names: string[], param: string): GeminiToolConfig {
  if (!names.includes(name)) throw new Refusal(`${param}: '${name}' is not one of the declared functions`, param);
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } };
}

// ---------------------------------------------------------------------------------------
// Generation config

function toGenerationConfig(b: ChatRequest): GeminiGenerationConfig {
  const g: GeminiGenerationConfig = {};
  if (b.temperature != null) g.temperature = b.temperature;
  if (b.top_p != null) g.topP = b.top_p;
  if (b.top_k != null) g.topK = b.top_k;
  const max = b.max_completion_tokens ?? b.max_tokens;
  if (max != null) g.maxOutputTokens = max;
  if (b.stop != null) g.stopSequences = typeof b.stop === 'string' ? [b.stop] : b.stop;
  if (b.n != null) g.candidateCount = b.n;
  if (b.seed != null) g.seed = b.seed;
  if (b.presence_penalty != null) g.presencePenalty = b.presence_penalty;
  if (b.frequency_penalty != null) g.frequencyPenalty = b.frequency_penalty;
  if (b.logprobs != null) g.responseLogprobs = b.logprobs;
  if (b.top_logprobs != null) g.logprobs = b.top_logprobs;
  if (b.response_format !== undefined) responseFormat(b.response_format, g);
  const thinking = thinkingConfig(b);
  if (thinking !== undefined) g.thinkingConfig = thinking;
  return g;
}

function responseFormat(f: ResponseFormat, g: GeminiGenerationConfig): void {
  if (f.type === 'json_object') g.responseMimeType = 'application/json';
  if (f.type === 'json_schema') {
    // name, description and strict have no place in Gemini's config: the schema itself is what constrains the output.
    g.responseMimeType = 'application/json';
    const schema = f.json_schema.schema;
    if (schema !== undefined) {
      const converted = toGeminiSchema(schema, 'response_format.json_schema.schema');
      if (!converted.ok) throw new Refusal(converted.error.message, converted.error.param ?? 'response_format.json_schema.schema');
      g.responseSchema = converted.value;
    }
  }
}

/**
 * reasoning_effort: Gemini 3 models take a thinking level of the same names;
 * earlier thinking models a token budget. `thinking` (Anthropic's shape) sets
 * the budget and asks for thought summaries, returned as reasoning_content.
 */
function thinkingConfig(b: ChatRequest): GeminiThinkingConfig | undefined {
  if (b.thinking != null) {
    return b.thinking.type === 'enabled'
      ? { includeThoughts: true, ...(b.thinking.budget_tokens !== undefined ? { thinkingBudget: b.thinking.budget_tokens } : {}) }
      : { thinkingBudget: 0 };
  }
  if (b.reasoning_effort == null) return undefined;
  const effort = b.reasoning_effort;
  if (/^gemini-3/.test(b.model ?? '')) return { thinkingLevel: effort === 'none' ? 'minimal' : effort };
  const budget = THINKING_BUDGETS[effort];
  if (budget === undefined) throw new Refusal(`reasoning_effort: '${effort}' is not one of ${Object.keys(THINKING_BUDGETS).join(', ')}`, 'reasoning_effort');
  return { thinkingBudget: budget };
}
