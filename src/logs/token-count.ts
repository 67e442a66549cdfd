/**
 * Tokens the gateway counts itself, for an answer that reported no usage (a
 * provider that gives none, a stream cut short, an error after part of the
 * answer): the request's messages, prompt or input, and the answer's text
 * (a JSON answer's, or a stream's deltas joined).
 *
 * The tokenizer is gpt-tokenizer (pure JavaScript BPE, no native build):
 * o200k_base for OpenAI's models from gpt-4o on, cl100k_base for the rest,
 * which for other vendors' models is an approximation. An encoding is loaded
 * on first use (a few hundred milliseconds and some MB, once per process),
 * so a gateway whose answers all carry usage never loads one. Chat messages
 * cost OpenAI's framing (3 tokens each, 3 for the reply); images and audio
 * parts are not counted. Texts past LONG characters are counted on their
 * start and scaled, so one huge answer cannot hold the event loop long.
 *
 * BPE merges within one pre-tokenizer piece (a run of letters, of spaces, of
 * symbols) cost the square of its length: 100 k letters without a space took
 * 12 s. So a text is counted in slices of at most PIECE characters
 * (inPieces), cut before a space that follows a non-space, where one is
 * near: such a space always starts a piece, so the count is exact for text
 * with spaces, and only a run longer than PIECE is cut inside.
 */
import type { Endpoint } from '../shared/endpoint.js';
import type { TokenUsage } from './usage.js';

type Encoding = 'o200k_base' | 'cl100k_base';
type Count = (text: string) => number;

/** OpenAI's chat framing: tokens per message, and priming the reply. */
const PER_MESSAGE = 3;
const REPLY = 3;
const LONG = 100_000;
const PIECE = 256;
/** Special-token text (`<|endoftext|>`) in a prompt is plain text here, not an error. */
const PLAIN = { disallowedSpecial: new Set<string>() };

const encodings = new Map<Encoding, Promise<Count>>();

function counter(encoding: Encoding): Promise<Count> {
  let loading = encodings.get(encoding);
  if (loading === undefined) {
    const module = encoding === 'o200k_base' ? import('gpt-tokenizer/encoding/o200k_base') : import('gpt-tokenizer/encoding/cl100k_base');
    loading = module.then((m): Count => {
      const tokens = (slice: string): number => m.countTokens(slice, PLAIN);
      return (text) => (text.length <= LONG ? inPieces(text, tokens) : Math.round((inPieces(text.slice(0, LONG), tokens) * text.length) / LONG));
    });
    encodings.set(encoding, loading);
  }
  return loading;
}

/** `count` summed over slices of `text` of at most PIECE characters, each cut before a space that follows a non-space where there is one. */
export function inPieces(text: string, count: Count): number {
  if (text.length <= PIECE) return count(text);
  let n = 0;
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + PIECE);
    if (end < text.length) {
      let cut = end;
      while (cut > start + 1 && !(text.charCodeAt(cut) === SPACE && !isWhite(text.charCodeAt(cut - 1)))) cut--;
      if (cut > start + 1) end = cut;
    }
    n += count(text.slice(start, end));
    start = end;
  }
  return n;
}

const SPACE = 0x20;
function isWhite(c: number): boolean {
  return c === SPACE || (c >= 0x09 && c <= 0x0d);
}

/** o200k_base for gpt-4o, gpt-4.1, gpt-4.5, gpt-5, the o-series and gpt-oss (a vendor prefix such as `openai/` aside). */
export function encodingFor(model: unknown): Encoding {
  if (typeof model !== 'string') return 'cl100k_base';
  const name = model.slice(model.lastIndexOf('/') + 1);
  return /^(gpt-4o|chatgpt-4o|gpt-4\.[15]|gpt-5|o\d|gpt-oss)/.test(name) ? 'o200k_base' : 'cl100k_base';
}

/**
 * The counted usage of a request and its answer's text (JSON or SSE); null
 * when neither has anything countable.
 */
export async function countUsage(endpoint: Endpoint, request: Record<string, unknown> | null, answer: string | null): Promise<TokenUsage | null> {
  const output = answer === null ? '' : answerText(answer);
  const countsPrompt = request !== null && hasPrompt(request);
  if (!countsPrompt && output === '') return null;
  const count = await counter(encodingFor(request?.model));
  const prompt = countsPrompt ? promptTokens(request, count) : 0;
  // An embedding has no output tokens, whatever its answer holds.
  const completion = endpoint === 'embeddings' || output === '' ? 0 : count(output);
  return { promptTokens: prompt, completionTokens: completion, totalTokens: prompt + completion, estimated: true };
}

function hasPrompt(body: Record<string, unknown>): boolean {
  return Array.isArray(body.messages) || body.prompt !== undefined || body.input !== undefined || typeof body.instructions === 'string';
}

/** Chat messages with their framing and the tools offered; else a completion's prompt, an embedding's or a response's input. */
function promptTokens(body: Record<string, unknown>, count: Count): number {
  if (Array.isArray(body.messages)) {
    let n = REPLY;
    for (const m of body.messages as Record<string, unknown>[]) n += PER_MESSAGE + partsTokens(m?.role, count) + partsTokens(m?.content, count) + callsTokens(m, count);
    for (const declared of [body.tools, body.functions]) if (Array.isArray(declared)) n += count(JSON.stringify(declared));
    return n;
  }
  const input = body.prompt ?? body.input;
  return partsTokens(input, count) + (typeof body.instructions === 'string' ? count(body.instructions) : 0);
}

function callsTokens(m: Record<string, unknown> | null | undefined, count: Count): number {
  if (m === null || typeof m !== 'object') return 0;
  let n = typeof m.name === 'string' ? count(m.name) + 1 : 0;
  const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as { function?: unknown }[]).map((c) => c?.function) : [m.function_call];
  for (const f of calls) {
    if (f !== null && typeof f === 'object') n += partsTokens((f as { name?: unknown }).name, count) + partsTokens((f as { arguments?: unknown }).arguments, count);
  }
  return n;
}

/**
 * Text wherever OpenAI's and the Responses API's inputs put it: a string, a
 * token id (one token), a list, a part's `text`, an item's `content`.
 */
function partsTokens(v: unknown, count: Count): number {
  if (typeof v === 'string') return count(v);
  if (typeof v === 'number') return 1;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + partsTokens(x, count), 0);
  if (v === null || typeof v !== 'object') return 0;
  const o = v as Record<string, unknown>;
  if (typeof o.text === 'string') return count(o.text);
  if (o.content !== undefined) return (typeof o.role === 'string' ? PER_MESSAGE : 0) + partsTokens(o.content, count);
  return 0;
}

/** The generated text of an answer: a JSON answer's, or a stream's deltas in order. */
export function answerText(answer: string): string {
  const start = answer.trimStart();
  if (start.startsWith('{')) {
    try {
      return outputOf(JSON.parse(start)).join('');
    } catch {
      return ''; // cut short (over the log's size) or not JSON: nothing readable
    }
  }
  const pieces: string[] = [];
  for (const line of answer.split(/\r\n|\r|\n/)) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(line.charCodeAt(5) === 0x20 ? 6 : 5);
    if (data === '[DONE]') continue;
    try {
      pieces.push(...outputOf(JSON.parse(data)));
    } catch {
      // an event cut short: the stream broke there
    }
  }
  return pieces.join('');
}

/** Texts of one chunk or answer: chat deltas and messages, completion texts, Responses output and stream deltas. */
function outputOf(x: unknown): string[] {
  if (x === null || typeof x !== 'object') return [];
  const o = x as Record<string, unknown>;
  const out: string[] = [];
  if (Array.isArray(o.choices)) {
    for (const c of o.choices as Record<string, unknown>[]) {
      if (typeof c?.text === 'string') out.push(c.text);
      for (const m of [c?.delta, c?.message]) if (m !== null && typeof m === 'object') out.push(...messageText(m as Record<string, unknown>));
    }
  }
  if (Array.isArray(o.output)) for (const item of o.output as Record<string, unknown>[]) out.push(...messageText(item ?? {}));
  if (typeof o.type === 'string' && o.type.endsWith('.delta') && typeof o.delta === 'string') out.push(o.delta);
  return out;
}

function messageText(m: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const k of ['content', 'reasoning_content', 'reasoning', 'refusal', 'arguments']) {
    const v = m[k];
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const p of v) if (typeof (p as { text?: unknown })?.text === 'string') out.push((p as { text: string }).text);
  }
  const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as { function?: unknown }[]).map((c) => c?.function) : [m.function_call];
  for (const f of calls) {
    if (f === null || typeof f !== 'object') continue;
    const { name, arguments: args } = f as { name?: unknown; arguments?: unknown };
    if (typeof name === 'string') out.push(name);
    if (typeof args === 'string') out.push(args);
  }
  return out;
}
