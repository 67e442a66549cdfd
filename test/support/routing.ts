/**
 * Shared pieces of the black-box routing tests: named mock upstreams, config
 * targets pointing at them, and a chat call that returns what a test asserts on.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before } from 'node:test';
import { startTestGateway, type TestGateway } from './gateway.js';
import { startMockOpenAI, type MockOpenAI } from './mock-openai.js';

export type Json = Record<string, unknown>;

export interface Upstream extends MockOpenAI {
  name: string;
  /** The provider key this upstream accepts (anything else gets OpenAI's 401). */
  key: string;
}

export async function startUpstreams<N extends string>(...names: N[]): Promise<Record<N, Upstream>> {
  const out = {} as Record<N, Upstream>;
  for (const name of names) {
    const key = `sk-${name}-0123456789`;
    out[name] = Object.assign(await startMockOpenAI({ name, apiKey: key }), { name, key });
  }
  return out;
}

/**
 * One gateway and named upstreams for a test file, the upstreams reset between
 * tests. `ready` receives them once started (node:test runs it in `before`).
 */
export function useRouting<N extends string>(names: N[], ready: (gw: TestGateway, U: Record<N, Upstream>) => void): void {
  let gw: TestGateway;
  let U: Record<N, Upstream>;
  before(async () => {
    gw = await startTestGateway();
    U = await startUpstreams(...names);
    ready(gw, U);
  });
  afterEach(() => {
    for (const u of Object.values<Upstream>(U)) u.reset();
  });
  after(async () => {
    await gw.stop();
    await Promise.all(Object.values<Upstream>(U).map((u) => u.close()));
  });
}

/** A config target for an upstream, with its own credential. */
export function target(u: Upstream, extra: Json = {}): Json {
  return { provider: 'openai', custom_host: u.url, api_key: u.key, ...extra };
}

export const CHAT_BODY: Json = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

export interface Reply {
  status: number;
  headers: Headers;
  json: any;
  /** Wall time of the whole call (ms). */
  ms: number;
}

/** POST to a model endpoint (chat by default) with an inline config (or none). */
export async function chat(
  gw: TestGateway,
  config: Json | null,
  opts: { headers?: Record<string, string>; body?: unknown; path?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (config !== null) headers['x-gateway-config'] = JSON.stringify(config);
  const started = performance.now();
  const res = await gw.call(opts.path ?? '/chat/completions', { headers, body: opts.body ?? CHAT_BODY });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, json, ms: performance.now() - started };
}

/** Requests each upstream received, e.g. {A: 1, B: 1, C: 0}. */
export function counts<N extends string>(ups: Record<N, Upstream>): Record<N, number> {
  const out = {} as Record<N, number>;
  for (const n of Object.keys(ups) as N[]) out[n] = ups[n].requests.length;
  return out;
}

/** A scripted chat answer that answeredBy() attributes to `u` (scripted replies skip the mock's echo). */
export function answer(u: Upstream, extra: Json = {}): Json {
  return {
    ...extra,
    body: { object: 'chat.completion', model: 'scripted', choices: [{ index: 0, message: { role: 'assistant', content: `[${u.name}] echo: scripted` }, finish_reason: 'stop' }] },
  };
}

/** Which upstream wrote a chat answer: the mock echoes `[<name>] echo: …`. */
export function answeredBy(r: Reply): string | undefined {
  const content: unknown = r.json?.choices?.[0]?.message?.content;
  return typeof content === 'string' ? /^\[([^\]]+)\]/.exec(content)?.[1] : undefined;
}

/** The routing headers of the contract, checked together. */
export function assertRouted(
  r: Reply,
  want: { status: number; index?: string; retries?: number; provider?: string | null; by?: string },
): void {
  const got: Json = { status: r.status };
  const exp: Json = { status: want.status };
  if (want.index !== undefined) {
    got.index = r.headers.get('x-gateway-last-used-option-index');
    exp.index = want.index;
  }
  if (want.retries !== undefined) {
    got.retries = r.headers.get('x-gateway-retry-attempt-count');
    exp.retries = String(want.retries);
  }
  if (want.provider !== undefined) {
    got.provider = r.headers.get('x-gateway-provider');
    exp.provider = want.provider;
  }
  if (want.by !== undefined) {
    got.by = answeredBy(r);
    exp.by = want.by;
  }
  assert.deepEqual(got, exp, `response: ${JSON.stringify(r.json).slice(0, 300)}`);
  assert.ok(r.headers.get('x-gateway-trace-id'), 'x-gateway-trace-id is set');
}

/** The contract's error envelope, with optional expectations on its fields. */
export function assertEnvelope(r: Reply, status: number, fields: { code?: string; param?: string | null; type?: string } = {}): void {
  assert.equal(r.status, status, `response: ${JSON.stringify(r.json).slice(0, 300)}`);
  assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  const e = r.json?.error;
  assert.ok(e !== undefined && typeof e === 'object', 'body is {"error": {...}}');
  assert.deepEqual(Object.keys(e).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(typeof e.message, 'string');
  assert.ok(e.message.length > 0);
  for (const [k, v] of Object.entries(fields)) assert.equal(e[k], v, `error.${k}`);
}

/** Gaps (ms) between successive request arrivals at one upstream. */
export function gaps(u: Upstream): number[] {
  return u.requests.slice(1).map((r, i) => r.at - u.requests[i]!.at);
}
