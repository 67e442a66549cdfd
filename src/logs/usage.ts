/**
 * An answer's token usage as the provider reported it: the `usage` object in
 * a JSON answer, or in the last events of a stream, which every stream ends
 * with where the gateway could ask for it (providers/shared/stream-usage.ts).
 * An answer without one has its tokens counted (token-count.ts, build.ts).
 */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Counted by the gateway: the answer reported no usage. */
  estimated: boolean;
}

/**
 * The usage reported in `text` (a JSON answer or a stream's tail): OpenAI's
 * prompt/completion tokens, or the input/output tokens of the Responses API
 * and of Anthropic's Messages API (whose cache reads and writes are input
 * too); null when there is none, or only the nulls of a stream's chunks.
 */
export function readUsage(text: string): TokenUsage | null {
  const u = lastUsage(text);
  if (u === null) return null;
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : 0);
  const has = (k: string): boolean => typeof u[k] === 'number';
  let prompt: number;
  let completion: number;
  if (has('prompt_tokens') || has('completion_tokens')) {
    prompt = n(u.prompt_tokens);
    completion = n(u.completion_tokens);
  } else if (has('input_tokens') || has('output_tokens')) {
    prompt = n(u.input_tokens) + n(u.cache_creation_input_tokens) + n(u.cache_read_input_tokens);
    completion = n(u.output_tokens);
  } else if (has('total_tokens')) {
    prompt = 0;
    completion = 0;
  } else {
    return null;
  }
  const total = has('total_tokens') ? n(u.total_tokens) : prompt + completion;
  return { promptTokens: prompt, completionTokens: completion, totalTokens: total, estimated: false };
}

/**
 * The last `"usage": {…}` object in `text` (an answer, or the final event of
 * a stream sent with stream_options.include_usage), parsed; null when there
 * is none. Inside a JSON string a quote is escaped, so `"usage"` followed by
 * a colon is a key; the last such key is the answer's.
 */
export function lastUsage(text: string): Record<string, unknown> | null {
  for (let at = text.lastIndexOf('"usage"'); at !== -1; at = at === 0 ? -1 : text.lastIndexOf('"usage"', at - 1)) {
    const key = /^"usage"\s*:\s*(\{)?/.exec(text.slice(at, at + 64));
    if (key === null) continue; // a string value "usage", not the key
    if (key[1] === undefined) return null; // usage: null (stream chunks before the last)
    const start = at + key[0].length - 1;
    const end = objectEnd(text, start);
    if (end === -1) return null;
    try {
      return JSON.parse(text.slice(start, end + 1)) as Record<string, unknown>;
    } catch {
      return null;
    }
  }
  return null;
}

/** Index of the `}` closing the object opened at `start`, skipping strings; -1 when it does not close. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c /* \ */) i++;
    } else if (c === 0x7b /* { */) depth++;
    else if (c === 0x7d /* } */ && --depth === 0) return i;
  }
  return -1;
}
