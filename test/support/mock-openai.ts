// A mock OpenAI upstream on loopback for the gateway's HTTP tests. It speaks OpenAI's
// wire format (bodies, SSE framing, error shape, response headers) closely enough that
// the official `openai` SDK parses it, so the gateway is tested against realistic bytes.
//
// Embeddings are deterministic. Any model gets a unit vector drawn from the SHA-256 of
// the input (8 dimensions by default): equal inputs, equal vectors; any other pair is
// unrelated. The model WORDS_EMBEDDING_MODEL is the semantic cache's test model, under
// which a paraphrase is close and a different question far (see wordVector).
import type http from 'node:http';
import { after, afterEach, before } from 'node:test';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { countWords, float32Base64, pause, startMockServer, type RecordedRequest } from './mock-server.js';

export interface ScriptedResponse {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** Object → JSON; Buffer/string sent as-is. */
  body?: unknown | Buffer | string;
  /** Wait before sending headers. */
  delayMs?: number;
  /** Raw SSE payloads, each sent as `data: ${s}\n\n`, then `data: [DONE]\n\n` unless noDone. */
  sse?: string[];
  /** Pause between SSE events (including before [DONE]). */
  chunkDelayMs?: number;
  noDone?: boolean;
  /** Destroy the socket without answering (after delayMs), i.e. a network error. */
  destroy?: boolean;
}

export interface MockOpenAI {
  /** http://127.0.0.1:<port>/v1 */
  readonly url: string;
  readonly port: number;
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[];
  /**
   * Queue responses for a path without its query (e.g. '/v1/chat/completions'), any method;
   * consumed in order, then the default behaviour resumes.
   */
  enqueue(path: string, ...responses: ScriptedResponse[]): void;
  /** Clears recorded requests (in place), queues and the aborted-stream count. */
  reset(): void;
  /** Number of SSE responses whose peer (the gateway) closed the connection before the end. */
  readonly abortedStreams: number;
  /** Resolves once abortedStreams >= n; rejects after timeoutMs (abort propagation is async). */
  waitForAbortedStreams(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const MODEL_PATHS = new Set(['/v1/chat/completions', '/v1/completions', '/v1/embeddings']);
const FINGERPRINT = 'fp_5f0c1b2a3d';
const DEFAULT_EMBEDDING_DIMS = 8;

/** The bag-of-words test embedding model (wordVector), 256 dimensions unless `dimensions` says otherwise. */
export const WORDS_EMBEDDING_MODEL = 'mock-words-embedding';
const WORDS_DIMS = 256;
/** Words that carry no meaning for the test model, so "what is two plus two" ≈ "What's two plus two?". */
const STOP_WORDS = new Set(
  'a an the is are was were be am what whats s of to in on at for and or do does did i you me my your it its this that please can could would will tell how'.split(' '),
);

/** A mock for the tests of a file or describe block: started before them, reset after each, closed after all. The returned function gives it. */
export function useMockOpenAI(opts: { apiKey?: string; name?: string } = {}): () => MockOpenAI {
  let mock: MockOpenAI | undefined;
  before(async () => {
    mock = await startMockOpenAI(opts);
  });
  afterEach(() => mock?.reset());
  after(() => mock?.close());
  return () => mock!;
}

export async function startMockOpenAI(opts: { apiKey?: string; name?: string } = {}): Promise<MockOpenAI> {
  const name = opts.name ?? 'mock';
  let aborted = 0;
  const abortWaiters = new Set<{ n: number; resolve: () => void }>();

  const onStreamAborted = (): void => {
    aborted++;
    for (const w of abortWaiters) {
      if (aborted >= w.n) {
        abortWaiters.delete(w);
        w.resolve();
      }
    }
  };

  const server = await startMockServer<ScriptedResponse>(async (rec, req, res, signal) => {
    try {
      const pathname = new URL(rec.path, 'http://mock').pathname;
      const reply = server.next(pathname) ?? defaultReply(rec, pathname, name, opts.apiKey);
      await send(req, res, reply, rec.at, signal, onStreamAborted);
    } catch (err) {
      if (!res.headersSent) {
        writeJson(res, 500, openaiHeaders(rec.at), errorBody(`mock failure: ${String(err)}`, 'server_error'));
      } else {
        res.destroy();
      }
    }
  });

  return {
    url: `${server.url}/v1`,
    port: server.port,
    requests: server.requests,
    enqueue: server.enqueue,
    reset() {
      server.reset();
      aborted = 0;
    },
    get abortedStreams() {
      return aborted;
    },
    waitForAbortedStreams(n, timeoutMs = 2000) {
      if (aborted >= n) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          abortWaiters.delete(waiter);
          reject(new Error(`expected ${n} aborted stream(s), saw ${aborted} within ${timeoutMs}ms`));
        }, timeoutMs);
        const waiter = {
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        abortWaiters.add(waiter);
      });
    },
    close: server.close,
  };
}

// ---------------------------------------------------------------------------------------
// Sending

async function send(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  r: ScriptedResponse,
  arrivedAt: number,
  signal: AbortSignal,
  onStreamAborted: () => void,
): Promise<void> {
  if (r.sse) {
    res.on('close', () => {
      if (!res.writableFinished) onStreamAborted();
    });
  }
  if (r.delayMs && !(await pause(r.delayMs, signal))) return;
  if (r.destroy) {
    req.socket.destroy();
    return;
  }
  const status = r.status ?? 200;
  const headers = openaiHeaders(arrivedAt);

  if (r.sse) {
    headers['content-type'] = 'text/event-stream; charset=utf-8';
    headers['cache-control'] = 'no-cache';
    res.writeHead(status, mergeHeaders(headers, r.headers));
    const events = r.noDone ? r.sse : [...r.sse, '[DONE]'];
    for (const [i, ev] of events.entries()) {
      if (i > 0 && r.chunkDelayMs && !(await pause(r.chunkDelayMs, signal))) return;
      if (!(await write(res, `data: ${ev}\n\n`, signal))) return;
    }
    res.end();
    return;
  }

  let payload: Buffer | string;
  if (r.body === undefined) {
    payload = '';
  } else if (typeof r.body === 'string' || r.body instanceof Uint8Array) {
    payload = typeof r.body === 'string' ? r.body : Buffer.from(r.body);
  } else {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(r.body);
  }
  res.writeHead(status, mergeHeaders(headers, r.headers));
  res.end(payload);
}

/** Writes with back-pressure; resolves false once the peer is gone. */
async function write(res: http.ServerResponse, chunk: string, signal: AbortSignal): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  try {
    await once(res, 'drain', { signal });
    return true;
  } catch {
    return false;
  }
}

function writeJson(res: http.ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Scripted headers override the defaults case-insensitively (no duplicate header lines). */
function mergeHeaders(base: Record<string, string>, extra: Record<string, string> | undefined): Record<string, string> {
  const out = { ...base };
  for (const [k, v] of Object.entries(extra ?? {})) out[k.toLowerCase()] = v;
  return out;
}

/** The metadata headers OpenAI puts on every API response. */
function openaiHeaders(arrivedAt: number): Record<string, string> {
  return {
    'x-request-id': `req_${randomBytes(16).toString('hex')}`,
    'openai-processing-ms': String(Date.now() - arrivedAt),
    'openai-version': '2020-10-01',
    'openai-organization': 'user-switchyard-mock',
    'x-ratelimit-limit-requests': '10000',
    'x-ratelimit-limit-tokens': '30000000',
    'x-ratelimit-remaining-requests': '9999',
    'x-ratelimit-remaining-tokens': '29999000',
    'x-ratelimit-reset-requests': '6ms',
    'x-ratelimit-reset-tokens': '2ms',
  };
}

// ---------------------------------------------------------------------------------------
// Default behaviour

function defaultReply(rec: RecordedRequest, pathname: string, name: string, apiKey: string | undefined): ScriptedResponse {
  if (rec.method === 'POST' && MODEL_PATHS.has(pathname)) {
    if (apiKey !== undefined) {
      const denied = checkAuth(rec.headers.authorization, apiKey);
      if (denied) return denied;
    }
    if (rec.json === undefined || rec.json === null || typeof rec.json !== 'object' || Array.isArray(rec.json)) {
      return errorReply(
        400,
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
      );
    }
    if (typeof rec.json.model !== 'string') {
      return errorReply(400, 'you must provide a model parameter');
    }
    if (pathname === '/v1/chat/completions') return chatCompletion(rec.json, name);
    if (pathname === '/v1/completions') return textCompletion(rec.json, name);
    return embeddings(rec.json);
  }
  if (rec.method === 'GET' && pathname === '/v1/binary') {
    return {
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
    };
  }
  if (rec.method === 'POST' && pathname === '/v1/upload') {
    const contentType = rec.headers['content-type'] ?? '';
    if (!/^multipart\/form-data;\s*boundary=/i.test(contentType)) {
      return errorReply(400, `Expected multipart/form-data with a boundary, got '${contentType}'`, 'invalid_request_error', 'file');
    }
    return { body: { bytes: rec.body.length, content_type: contentType } };
  }
  return {
    body: { method: rec.method, path: rec.path, headers: rec.headers, body_base64: rec.body.toString('base64') },
  };
}

function checkAuth(authorization: string | undefined, apiKey: string): ScriptedResponse | undefined {
  if (!authorization) {
    return errorReply(
      401,
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
    );
  }
  const token = /^Bearer\s+(.*)$/i.exec(authorization)?.[1] ?? authorization;
  if (token === apiKey) return undefined;
  // OpenAI masks the middle of the rejected key.
  const masked = token.length > 8 ? `${token.slice(0, 3)}${'*'.repeat(token.length - 7)}${token.slice(-4)}` : '***';
  return errorReply(
    401,
    `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com/account/api-keys.`,
    'invalid_request_error',
    null,
    'invalid_api_key',
  );
}

function errorBody(message: string, type = 'invalid_request_error', param: string | null = null, code: string | null = null) {
  return { error: { message, type, param, code } };
}

function errorReply(
  status: number,
  message: string,
  type = 'invalid_request_error',
  param: string | null = null,
  code: string | null = null,
): ScriptedResponse {
  return { status, body: errorBody(message, type, param, code) };
}

const missing = (param: string): ScriptedResponse =>
  errorReply(400, `Missing required parameter: '${param}'.`, 'invalid_request_error', param, 'missing_required_parameter');

/** OpenAI's chat answer to `body`: an echo of the last user message by `name`, whole or as SSE payloads. */
/** A scripted chat answer whose usage is `totalTokens` (`prompt` of them the prompt's), after `delayMs`: what a budgeted request settles to. */
export function answerUsing(totalTokens: number, delayMs = 0, prompt = Math.floor(totalTokens / 2)): ScriptedResponse {
  return {
    delayMs,
    body: {
      id: 'chatcmpl-usage',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: prompt, completion_tokens: totalTokens - prompt, total_tokens: totalTokens },
    },
  };
}

export function chatCompletion(body: any, name: string): ScriptedResponse {
  if (!Array.isArray(body.messages)) return missing('messages');
  const messages: any[] = body.messages;
  const lastUser = [...messages].reverse().find((m) => m?.role === 'user');
  const content = `[${name}] echo: ${textOf(lastUser?.content)}`;
  const pieces = splitWords(content);
  const promptTokens = messages.reduce((n: number, m) => n + countWords(textOf(m?.content)), 0);
  const usage = chatUsage(promptTokens, pieces.length);
  const id = `chatcmpl-${randomId(29)}`;
  const created = Math.floor(Date.now() / 1000);
  const base = { id, created, model: body.model, service_tier: 'default', system_fingerprint: FINGERPRINT };

  if (body.stream !== true) {
    return {
      body: {
        ...base,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content, refusal: null, annotations: [] },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage,
      },
    };
  }

  const includeUsage = body.stream_options?.include_usage === true;
  // With include_usage, OpenAI sends `usage: null` on every chunk and the totals on an extra final chunk.
  const chunk = (delta: object, finish: string | null) => ({
    ...base,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const events: object[] = [
    chunk({ role: 'assistant', content: '', refusal: null }, null),
    ...pieces.map((p) => chunk({ content: p }, null)),
    chunk({}, 'stop'),
  ];
  if (includeUsage) events.push({ ...base, object: 'chat.completion.chunk', choices: [], usage });
  return { sse: events.map((e) => JSON.stringify(e)) };
}

function textCompletion(body: any, name: string): ScriptedResponse {
  if (body.prompt === undefined) return missing('prompt');
  const prompts = normalizePrompts(body.prompt);
  const texts = prompts.map((p) => `[${name}] echo: ${p}`);
  const pieces = texts.map(splitWords);
  const promptTokens = prompts.reduce((n, p) => n + countWords(p), 0);
  const completionTokens = pieces.reduce((n, p) => n + p.length, 0);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const base = { id: `cmpl-${randomId(29)}`, object: 'text_completion', created: Math.floor(Date.now() / 1000), model: body.model, system_fingerprint: FINGERPRINT };

  if (body.stream !== true) {
    return {
      body: {
        ...base,
        choices: texts.map((text, index) => ({ text, index, logprobs: null, finish_reason: 'stop' })),
        usage,
      },
    };
  }

  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (text: string, index: number, finish: string | null) => ({
    ...base,
    choices: [{ text, index, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const events: object[] = pieces.flatMap((ps, index) => [...ps.map((p) => chunk(p, index, null)), chunk('', index, 'stop')]);
  if (includeUsage) events.push({ ...base, choices: [], usage });
  return { sse: events.map((e) => JSON.stringify(e)) };
}

function embeddings(body: any): ScriptedResponse {
  const input: unknown = body.input;
  if (input === undefined || input === null) return missing('input');
  const dims = body.dimensions ?? DEFAULT_EMBEDDING_DIMS;
  if (!Number.isInteger(dims) || dims < 1) {
    return errorReply(400, `Invalid value for 'dimensions': expected a positive integer.`, 'invalid_request_error', 'dimensions', 'invalid_value');
  }
  const base64 = body.encoding_format === 'base64';
  // A string or a flat token array is one input; any other array is one input per element.
  const items: unknown[] =
    typeof input === 'string' || (Array.isArray(input) && input.every((x) => typeof x === 'number'))
      ? [input]
      : Array.isArray(input)
        ? input
        : [input];
  const promptTokens = items.reduce<number>((n, it) => n + (Array.isArray(it) ? it.length : countWords(String(it))), 0);
  return {
    body: {
      object: 'list',
      data: items.map((it, index) => {
        const text = typeof it === 'string' ? it : JSON.stringify(it);
        const vec = body.model === WORDS_EMBEDDING_MODEL ? wordVector(text, body.dimensions ?? WORDS_DIMS) : embed(text, dims);
        return { object: 'embedding', index, embedding: base64 ? float32Base64(vec) : vec };
      }),
      model: body.model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    },
  };
}

// ---------------------------------------------------------------------------------------
// Helpers

function chatUsage(prompt: number, completion: number) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

/** Text of a message content: a string, or the text parts of a content-part array. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .filter((p) => p?.type === 'text' && typeof p.text === 'string')
      .map((p) => p.text as string)
      .join(' ');
  }
  return '';
}

/** Word-sized stream deltas, each carrying its leading whitespace, so they concatenate back exactly. */
function splitWords(text: string): string[] {
  return text.split(/(?=\s)/).filter((s) => s.length > 0);
}

/** The legacy prompt may be a string, strings, a token array or token arrays. */
function normalizePrompts(prompt: unknown): string[] {
  if (!Array.isArray(prompt)) return [String(prompt)];
  if (prompt.every((x) => typeof x === 'number')) return [prompt.join(' ')];
  return prompt.map((p) => (Array.isArray(p) ? p.join(' ') : String(p)));
}

/** Deterministic unit vector derived from sha256 of the input. */
function embed(key: string, dims: number): number[] {
  const raw: number[] = [];
  for (let block = 0; raw.length < dims; block++) {
    const h = createHash('sha256').update(`${block}:${key}`).digest();
    for (let i = 0; i < h.length && raw.length < dims; i += 4) raw.push((h.readUInt32LE(i) / 0xffffffff) * 2 - 1);
  }
  const norm = Math.hypot(...raw) || 1;
  // Rounded to float32 so the float and base64 encodings carry identical values.
  return raw.map((v) => Math.fround(v / norm));
}

/**
 * The test embedding model: the text's words, lower-cased, stop words dropped, crudely
 * stemmed (a trailing -ing, -ed, -es or -s cut from longer words), each adding ±1 to the
 * dimension its SHA-256 picks; scaled to unit length. Word order and punctuation do not
 * count, so the cosine of two texts is that of their word counts (unless two words share
 * a dimension): tests compute it with this same function. A text of stop words only has
 * the zero vector, which no cosine can use.
 */
export function wordVector(text: string, dims = WORDS_DIMS): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().split(/[^a-z0-9]+/)) {
    if (word === '' || STOP_WORDS.has(word)) continue;
    const h = createHash('sha256').update(stem(word)).digest();
    v[h.readUInt32BE(0) % dims]! += (h[4]! & 1) === 0 ? 1 : -1;
  }
  const norm = Math.hypot(...v);
  return norm === 0 ? v : v.map((x) => Math.fround(x / norm));
}

function stem(word: string): string {
  const suffix = ['ing', 'ed', 'es', 's'].find((s) => word.length > s.length + 2 && word.endsWith(s));
  return suffix === undefined ? word : word.slice(0, -suffix.length);
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomId(len: number): string {
  return Array.from(randomBytes(len), (b) => ALNUM[b % ALNUM.length]).join('');
}
