// A mock Cohere API (v2 chat and embed) on loopback. It speaks Cohere's wire format —
// bearer auth, `{"message": …}` errors, `event:`/`data:` SSE ending in `data: [DONE]` —
// and rejects what Cohere rejects (missing key or model, bad roles, tool_choice REQUIRED
// without tools, out-of-range sampling, a missing input_type…), so every request the
// gateway translates is checked before it is answered. Source of the shapes: Cohere's
// API reference (docs.cohere.com/reference/chat, /chat-stream, /embed).
import type http from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import { countWords, pause, startMockServer, type RecordedRequest } from './mock-server.js';

export interface CohereScripted {
  /** Default 200. */
  status?: number;
  /** Object → JSON. */
  body?: unknown;
  /** Sent as-is with this content type (a non-JSON error page, say). */
  raw?: { text: string; contentType: string };
  /** Stream events, each framed as `event: <type>` + `data: <json>`, then `data: [DONE]` unless noDone. */
  events?: Record<string, unknown>[];
  noDone?: boolean;
  /** Sends the stream in pieces of this many bytes, cutting lines, CRLFs and characters anywhere. */
  splitBytes?: number;
  /** Line ending of the stream (Cohere sends LF). */
  eol?: '\n' | '\r\n';
  chunkDelayMs?: number;
}

export interface MockCohere {
  /** http://127.0.0.1:<port>: Cohere's base, before its /v1 or /v2. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Answers for a path without its query, used in order once the request passed the checks. */
  enqueue(path: string, ...responses: CohereScripted[]): void;
  reset(): void;
  close(): Promise<void>;
}

export const DEFAULT_EMBED_DIMS = 8;

export async function startMockCohere(opts: { apiKey: string }): Promise<MockCohere> {
  const server = await startMockServer<CohereScripted>(async (rec, _req, res, signal) => {
    const pathname = new URL(rec.path, 'http://mock').pathname;
    const reply = check(rec, pathname, opts.apiKey) ?? server.next(pathname) ?? defaultReply(rec, pathname);
    await send(res, reply, signal);
  });
  return { url: server.url, requests: server.requests, enqueue: server.enqueue, reset: server.reset, close: server.close };
}

// ---------------------------------------------------------------------------------------
// What Cohere refuses

const fail = (status: number, message: string): CohereScripted => ({ status, body: { id: randomUUID(), message } });
const invalidRequest = (message: string): CohereScripted => fail(400, `invalid request: ${message}`);

function check(rec: RecordedRequest, pathname: string, apiKey: string): CohereScripted | undefined {
  const auth = rec.headers.authorization;
  if (auth === undefined) return fail(401, 'no api key supplied');
  const token = /^Bearer (.+)$/i.exec(auth)?.[1];
  if (token !== apiKey) return fail(401, 'invalid api token');
  if (rec.method !== 'POST' || (pathname !== '/v2/chat' && pathname !== '/v2/embed')) return undefined;
  if (rec.json === undefined) return invalidRequest('body must be valid JSON');
  const body = rec.json;
  if (typeof body.model !== 'string' || body.model === '') return invalidRequest('model must be specified');
  return pathname === '/v2/chat' ? checkChat(body) : checkEmbed(body);
}

function checkChat(body: any): CohereScripted | undefined {
  if (!Array.isArray(body.messages) || body.messages.length === 0) return invalidRequest('messages must contain at least one message');
  for (const [i, m] of body.messages.entries()) {
    const problem = checkMessage(m);
    if (problem) return invalidRequest(`messages[${i}]: ${problem}`);
  }
  for (const [i, t] of (body.tools ?? []).entries()) {
    if (t?.type !== 'function' || typeof t.function?.name !== 'string') return invalidRequest(`tools[${i}]: type must be function, with a function name`);
    if (typeof t.function.parameters !== 'object' || t.function.parameters === null) return invalidRequest(`tools[${i}].function.parameters is required`);
  }
  if (body.tool_choice !== undefined) {
    if (body.tool_choice !== 'REQUIRED' && body.tool_choice !== 'NONE') return invalidRequest('tool_choice must be one of REQUIRED, NONE');
    if (body.tool_choice === 'REQUIRED' && !(body.tools?.length > 0)) return invalidRequest('tool_choice REQUIRED requires tools');
  }
  const rf = body.response_format;
  if (rf !== undefined) {
    if (rf.type !== 'text' && rf.type !== 'json_object') return invalidRequest('response_format.type must be one of text, json_object');
    if (rf.type === 'text' && rf.json_schema !== undefined) return invalidRequest('json_schema must not be specified with response_format type text');
  }
  if (body.temperature !== undefined && !(body.temperature >= 0 && body.temperature <= 1)) return invalidRequest('temperature must be between 0 and 1');
  if (body.p !== undefined && !(body.p >= 0.01 && body.p <= 0.99)) return invalidRequest('p must be between 0.01 and 0.99');
  if (body.stop_sequences !== undefined && !(Array.isArray(body.stop_sequences) && body.stop_sequences.length <= 5)) {
    return invalidRequest('stop_sequences must be a list of at most 5 strings');
  }
  return undefined;
}

function checkMessage(m: any): string | undefined {
  const texts = (c: any, allowImages: boolean): boolean =>
    typeof c === 'string' ||
    (Array.isArray(c) &&
      c.every(
        (p: any) =>
          (p?.type === 'text' && typeof p.text === 'string') ||
          (allowImages && p?.type === 'image_url' && typeof p.image_url?.url === 'string'),
      ));
  switch (m?.role) {
    case 'system':
      return texts(m.content, false) ? undefined : 'system content must be a string or text blocks';
    case 'user':
      return texts(m.content, true) ? undefined : 'user content must be a string or text and image_url blocks';
    case 'tool':
      if (typeof m.tool_call_id !== 'string') return 'tool_call_id is required';
      return texts(m.content, false) ? undefined : 'tool content must be a string or content blocks';
    case 'assistant':
      if (m.content !== undefined && !texts(m.content, false)) return 'assistant content must be a string or text blocks';
      for (const c of m.tool_calls ?? []) {
        if (typeof c?.id !== 'string' || c.type !== 'function' || typeof c.function?.name !== 'string' || typeof c.function?.arguments !== 'string') {
          return 'tool_calls need id, type function and function{name, arguments}';
        }
      }
      return undefined;
    default:
      return `role must be one of system, user, assistant, tool`;
  }
}

const INPUT_TYPES = new Set(['search_document', 'search_query', 'classification', 'clustering', 'image']);
const EMBEDDING_TYPES = new Set(['float', 'int8', 'uint8', 'binary', 'ubinary', 'base64']);

function checkEmbed(body: any): CohereScripted | undefined {
  if (!INPUT_TYPES.has(body.input_type)) return invalidRequest('valid input_type must be provided with the provided model');
  if (!Array.isArray(body.texts) || body.texts.length === 0 || !body.texts.every((t: unknown) => typeof t === 'string')) {
    return invalidRequest('one of texts, images or inputs must be specified');
  }
  if (body.texts.length > 96) return invalidRequest(`texts can have at most 96 elements, but got ${body.texts.length}`);
  if (body.embedding_types !== undefined && !body.embedding_types.every((t: string) => EMBEDDING_TYPES.has(t))) {
    return invalidRequest('embedding_types must be float, int8, uint8, binary, ubinary or base64');
  }
  if (body.output_dimension !== undefined && ![256, 512, 1024, 1536].includes(body.output_dimension)) {
    return invalidRequest('output_dimension must be one of 256, 512, 1024, 1536');
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------
// Default answers: echo chat, deterministic embeddings, and an echo of anything else

function defaultReply(rec: RecordedRequest, pathname: string): CohereScripted {
  if (rec.method === 'POST' && pathname === '/v2/chat') return chat(rec.json);
  if (rec.method === 'POST' && pathname === '/v2/embed') return embed(rec.json);
  return { body: { method: rec.method, path: rec.path, headers: rec.headers, body: rec.body.toString('utf8') } };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.filter((p) => p?.type === 'text').map((p) => p.text).join(' ');
  return '';
}

const words = (s: string): string[] => s.split(/(?=\s)/).filter((w) => w.length > 0);

/**
 * Echoes the last user message; with tools offered (and not refused) after a user turn,
 * calls the first tool with {"q": <that text>}; after a tool result, reports it.
 */
function chat(body: any): CohereScripted {
  const messages: any[] = body.messages;
  const last = messages.at(-1);
  const promptTokens = messages.reduce((n, m) => n + countWords(textOf(m.content)), 0);
  const id = randomUUID();
  const tool = body.tool_choice !== 'NONE' && last.role === 'user' ? body.tools?.[0] : undefined;
  if (tool !== undefined) {
    const name: string = tool.function.name;
    const plan = `I will call ${name}.`;
    const call = { id: `${name}_${id.slice(0, 8)}`, type: 'function', function: { name, arguments: JSON.stringify({ q: textOf(last.content) }) } };
    const usage = usageOf(promptTokens, countWords(plan) + 5);
    if (body.stream !== true) {
      return { body: { id, finish_reason: 'TOOL_CALL', message: { role: 'assistant', tool_plan: plan, tool_calls: [call] }, usage } };
    }
    const args = call.function.arguments;
    return {
      events: [
        { type: 'message-start', id, delta: { message: { role: 'assistant' } } },
        ...words(plan).map((w) => ({ type: 'tool-plan-delta', delta: { message: { tool_plan: w } } })),
        { type: 'tool-call-start', index: 0, delta: { message: { tool_calls: { ...call, function: { name, arguments: '' } } } } },
        ...[args.slice(0, 5), args.slice(5)].map((a) => ({ type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: a } } } } })),
        { type: 'tool-call-end', index: 0 },
        { type: 'message-end', delta: { finish_reason: 'TOOL_CALL', usage } },
      ],
    };
  }
  const text = last.role === 'tool' ? `[cohere] tool said: ${textOf(last.content)}` : `[cohere] echo: ${textOf([...messages].reverse().find((m) => m.role === 'user')?.content)}`;
  const pieces = words(text);
  const usage = usageOf(promptTokens, pieces.length);
  if (body.stream !== true) {
    return { body: { id, finish_reason: 'COMPLETE', message: { role: 'assistant', content: [{ type: 'text', text }] }, usage } };
  }
  return {
    events: [
      { type: 'message-start', id, delta: { message: { role: 'assistant' } } },
      { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
      ...pieces.map((p) => ({ type: 'content-delta', index: 0, delta: { message: { content: { text: p } } } })),
      { type: 'content-end', index: 0 },
      { type: 'message-end', delta: { finish_reason: 'COMPLETE', usage } },
    ],
  };
}

/** Cohere bills fewer input tokens than the model reads: its own preamble is free. */
function usageOf(input: number, output: number) {
  return { billed_units: { input_tokens: input, output_tokens: output }, tokens: { input_tokens: input + 10, output_tokens: output } };
}

function embed(body: any): CohereScripted {
  const texts: string[] = body.texts;
  const dims: number = body.output_dimension ?? DEFAULT_EMBED_DIMS;
  return {
    body: {
      id: randomUUID(),
      texts,
      embeddings: { float: texts.map((t) => mockVector(t, dims)) },
      meta: { api_version: { version: '2' }, billed_units: { input_tokens: texts.reduce((n, t) => n + countWords(t), 0) } },
      response_type: 'embeddings_by_type',
    },
  };
}

/** The mock's embedding of a text: deterministic, float32-exact values. */
export function mockVector(text: string, dims: number): number[] {
  const out: number[] = [];
  for (let block = 0; out.length < dims; block++) {
    const h = createHash('sha256').update(`${block}:${text}`).digest();
    for (let i = 0; i < h.length && out.length < dims; i += 4) out.push(Math.fround((h.readUInt32LE(i) / 0xffffffff) * 2 - 1));
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Sending

async function send(res: http.ServerResponse, r: CohereScripted, signal: AbortSignal): Promise<void> {
  const headers: Record<string, string> = { 'x-request-id': randomUUID() };
  if (r.events !== undefined) {
    const eol = r.eol ?? '\n';
    const frames = r.events.map((e) => `event: ${String(e.type)}${eol}data: ${JSON.stringify(e)}${eol}${eol}`);
    if (!r.noDone) frames.push(`data: [DONE]${eol}${eol}`);
    res.writeHead(r.status ?? 200, { ...headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const bytes = Buffer.from(frames.join(''), 'utf8');
    const pieces: Buffer[] = [];
    if (r.splitBytes !== undefined) for (let i = 0; i < bytes.length; i += r.splitBytes) pieces.push(bytes.subarray(i, i + r.splitBytes));
    else for (const f of frames) pieces.push(Buffer.from(f, 'utf8'));
    for (const [i, p] of pieces.entries()) {
      if (res.destroyed) return;
      if (i > 0 && r.chunkDelayMs !== undefined && !(await pause(r.chunkDelayMs, signal))) return;
      res.write(p);
    }
    res.end();
    return;
  }
  if (r.raw !== undefined) {
    res.writeHead(r.status ?? 200, { ...headers, 'content-type': r.raw.contentType });
    res.end(r.raw.text);
    return;
  }
  res.writeHead(r.status ?? 200, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify(r.body ?? {}));
}
