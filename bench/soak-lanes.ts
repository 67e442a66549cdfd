/**
 * The soak's mix (bench/soak.ts): the kinds of request ("lanes") a gateway
 * meets in a day, each with the outcomes it may have. Request i takes lane
 * SCHEDULE[i % SCHEDULE.length], so any stretch of the run holds the same mix.
 */
import type { Dispatcher, Pool } from 'undici';
import { CHAT_REQUEST, STREAM_DONE, STREAM_REQUEST } from './fixtures.js';
import { admin, BENCH_KEY } from './gateway-process.js';

export type LaneName = 'chat' | 'stream' | 'cancel' | 'cache' | 'upstream 500' | 'invalid' | 'unreachable' | 'rate limited' | 'over budget';

export interface Lane {
  name: LaneName;
  about: string;
  /** Outcomes that are right for this lane: an HTTP status, or `cancelled` (the client left mid-stream). */
  expected: readonly string[];
  /** Sends one request; resolves to its outcome, never rejects. */
  send(pool: Pool): Promise<string>;
}

/** Where the lanes send their requests. */
export interface LaneTargets {
  /** The mock upstream (bench/upstream.ts). */
  upstreamPort: number;
  /** A port nothing listens on. */
  closedPort: number;
}

const PATH = '/v1/chat/completions';
/** Distinct prompts of the cache lane: each is a miss once, then a hit for the rest of the run. */
const CACHED_PROMPTS = 64;
const CACHE_CONFIG = JSON.stringify({ cache: { mode: 'simple', max_age: 3600 } });

/** Lane per slot: 20 slots, so each slot is 5 % of the requests. */
export const SCHEDULE: readonly LaneName[] = [
  ...Array<LaneName>(7).fill('chat'),
  ...Array<LaneName>(4).fill('stream'),
  ...Array<LaneName>(3).fill('cache'),
  'cancel',
  'upstream 500',
  'invalid',
  'unreachable',
  'rate limited',
  'over budget',
];

/**
 * The policies the limited lanes run into, in the default workspace (where
 * the bench key acts): one request a minute for `rate limited`, one token
 * in all for `over budget` (its first request is refused already).
 */
export async function createPolicies(base: string): Promise<void> {
  await admin(base, '/v1/policies/rate-limits', {
    method: 'POST',
    body: { name: 'soak', conditions: [{ key: 'metadata.lane', value: 'rate limited' }], group_by: [{ key: 'metadata.lane' }], type: 'requests', unit: 'rpm', value: 1 },
  });
  await admin(base, '/v1/policies/usage-limits', {
    method: 'POST',
    body: { name: 'soak', conditions: [{ key: 'metadata.lane', value: 'over budget' }], group_by: [{ key: 'metadata.lane' }], type: 'tokens', credit_limit: 1 },
  });
}

function headers(lane: LaneName, host: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    authorization: 'Bearer sk-soak',
    'x-gateway-api-key': BENCH_KEY,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': host,
    'x-gateway-metadata': JSON.stringify({ lane }),
    ...extra,
  };
}

/** An outcome for a request that failed on the client's side: the error's code. */
function failure(err: unknown): string {
  return `error ${(err as { code?: string }).code ?? (err as Error).name}`;
}

/** Status of a whole answer, its body read and dropped; with the value of `header` after it when given. */
async function whole(pool: Pool, opts: Dispatcher.RequestOptions, header?: string): Promise<string> {
  try {
    const res = await pool.request(opts);
    await res.body.dump({ limit: Infinity });
    return header === undefined ? String(res.statusCode) : `${res.statusCode} ${String(res.headers[header])}`;
  } catch (err) {
    return failure(err);
  }
}

/** A streamed answer read to its end: its status, or `cut` when a 200 does not end in [DONE]. */
async function stream(pool: Pool, opts: Dispatcher.RequestOptions): Promise<string> {
  try {
    const res = await pool.request(opts);
    const text = await res.body.text();
    return res.statusCode === 200 && !text.endsWith(STREAM_DONE) ? 'cut' : String(res.statusCode);
  } catch (err) {
    return failure(err);
  }
}

/** A stream the client leaves after its first chunk, as a user closing the tab does. */
async function cancel(pool: Pool, opts: Dispatcher.RequestOptions): Promise<string> {
  const abort = new AbortController();
  try {
    const res = await pool.request({ ...opts, signal: abort.signal });
    if (res.statusCode !== 200) {
      await res.body.dump({ limit: Infinity });
      return String(res.statusCode);
    }
    for await (const _chunk of res.body) {
      abort.abort();
      break;
    }
    return 'cancelled';
  } catch (err) {
    return abort.signal.aborted ? 'cancelled' : failure(err);
  }
}

export function lanes(t: LaneTargets): Map<LaneName, Lane> {
  const upstream = `http://127.0.0.1:${t.upstreamPort}/v1`;
  const post = (lane: LaneName, body: string, host = upstream, extra?: Record<string, string>): Dispatcher.RequestOptions => ({
    method: 'POST',
    path: PATH,
    headers: headers(lane, host, extra),
    body,
  });
  const chat = post('chat', CHAT_REQUEST);
  const streamed = post('stream', STREAM_REQUEST);
  const cancelled = post('cancel', STREAM_REQUEST);
  const failing = post('upstream 500', CHAT_REQUEST, `http://127.0.0.1:${t.upstreamPort}/fail/v1`);
  const invalid = post('invalid', JSON.stringify({ model: 'gpt-4o-mini' }));
  const unreachable = post('unreachable', CHAT_REQUEST, `http://127.0.0.1:${t.closedPort}/v1`);
  const limited = post('rate limited', CHAT_REQUEST);
  const budget = post('over budget', CHAT_REQUEST);
  const cacheHeaders = headers('cache', upstream, { 'x-gateway-config': CACHE_CONFIG });
  /** The cache lane's requests so far: its k-th takes prompt k mod CACHED_PROMPTS. */
  let cached = 0;
  const cacheBodies = Array.from({ length: CACHED_PROMPTS }, (_, n) =>
    JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `Say hello to number ${n}.` }] }),
  );

  const all: Lane[] = [
    { name: 'chat', about: 'chat completion, JSON answer', expected: ['200'], send: (pool) => whole(pool, chat) },
    { name: 'stream', about: 'streamed chat completion read to [DONE]', expected: ['200'], send: (pool) => stream(pool, streamed) },
    { name: 'cancel', about: 'streamed chat completion the client aborts after the first chunk', expected: ['cancelled'], send: (pool) => cancel(pool, cancelled) },
    {
      name: 'cache',
      about: `config with the simple cache, one of ${CACHED_PROMPTS} prompts (a miss once each, then hits)`,
      expected: ['200 HIT', '200 MISS'],
      send: (pool) => whole(pool, { method: 'POST', path: PATH, headers: cacheHeaders, body: cacheBodies[cached++ % CACHED_PROMPTS] }, 'x-gateway-cache-status'),
    },
    { name: 'upstream 500', about: "the provider answers 500 (OpenAI's error), relayed", expected: ['500'], send: (pool) => whole(pool, failing) },
    { name: 'invalid', about: 'body without messages: 400 from the gateway', expected: ['400'], send: (pool) => whole(pool, invalid) },
    { name: 'unreachable', about: 'provider host with nothing listening: 502', expected: ['502'], send: (pool) => whole(pool, unreachable) },
    { name: 'rate limited', about: 'metadata under a 1 request/minute policy: 429 (200 once a minute)', expected: ['429', '200'], send: (pool) => whole(pool, limited) },
    { name: 'over budget', about: 'metadata under a 1-token usage limit: 412', expected: ['412', '200'], send: (pool) => whole(pool, budget) },
  ];
  return new Map(all.map((l) => [l.name, l]));
}
