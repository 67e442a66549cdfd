// Black-box routing tests: the real gateway in front of named mock upstreams,
// driven by inline configs in x-gateway-config. Each test asserts on what the
// upstreams received and on the contract's routing headers.
// Retries and timeouts: routing-retry.test.ts; circuit breaker: routing-circuit.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { MAX_MATCH_CHARS } from '../src/shared/linear-regex.js';
import { ADMIN_KEY, type TestGateway } from './support/gateway.js';
import {
  answeredBy,
  assertEnvelope,
  assertRouted,
  CHAT_BODY,
  chat,
  counts,
  target,
  useRouting,
  type Json,
  type Upstream,
} from './support/routing.js';

let gw: TestGateway;
let U: Record<'A' | 'B' | 'C', Upstream>;
let A: Upstream, B: Upstream, C: Upstream;
useRouting(['A', 'B', 'C'], (g, u) => {
  gw = g;
  U = u;
  ({ A, B, C } = u);
});

const fallback = (targets: Json[], extra: Json = {}): Json => ({ strategy: { mode: 'fallback' }, targets, ...extra });
const loadbalance = (targets: Json[], extra: Json = {}): Json => ({ strategy: { mode: 'loadbalance' }, targets, ...extra });

/** A port nothing listens on: a connection there is refused. */
async function closedPort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** Sends n identical requests, `width` at a time; returns who answered each. */
async function spread(config: Json, n: number, width = 25): Promise<{ by: string | undefined; index: string | null; status: number }[]> {
  const out: { by: string | undefined; index: string | null; status: number }[] = [];
  for (let i = 0; i < n; i += width) {
    const batch = await Promise.all(Array.from({ length: Math.min(width, n - i) }, () => chat(gw, config)));
    for (const r of batch) out.push({ by: answeredBy(r), index: r.headers.get('x-gateway-last-used-option-index'), status: r.status });
  }
  return out;
}

/** Binomial bounds: expected share p of n, within 5 standard deviations (flake odds ~1e-6). */
function assertShare(observed: number, n: number, p: number, label: string): void {
  const mean = n * p;
  const tol = 5 * Math.sqrt(n * p * (1 - p));
  assert.ok(Math.abs(observed - mean) <= tol, `${label}: ${observed} of ${n}, expected ${mean} ± ${tol.toFixed(1)}`);
}

describe('single target and headers-only routing', () => {
  it('no config: x-gateway-provider + x-gateway-custom-host + Authorization reach that upstream', async () => {
    const r = await chat(gw, null, {
      headers: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': B.url, authorization: `Bearer ${B.key}` },
    });
    assertRouted(r, { status: 200, retries: 0, provider: 'openai', by: 'B' });
    assert.deepEqual(counts(U), { A: 0, B: 1, C: 0 });
    const seen = B.requests[0]!;
    assert.equal(seen.path, '/v1/chat/completions');
    assert.equal(seen.headers.authorization, `Bearer ${B.key}`);
    assert.deepEqual(seen.json, CHAT_BODY);
  });

  it('no config: a wrong Authorization is passed on and the provider 401 comes back unchanged', async () => {
    const r = await chat(gw, null, {
      headers: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': B.url, authorization: 'Bearer sk-wrong-key-000000' },
    });
    assert.equal(r.status, 401);
    assert.equal(r.json.error.code, 'invalid_api_key');
    assert.equal(B.requests.length, 1);
  });

  it('a provider config without strategy sends to that provider with its api_key', async () => {
    const r = await chat(gw, target(C));
    assertRouted(r, { status: 200, index: 'config', retries: 0, provider: 'openai', by: 'C' });
    assert.deepEqual(counts(U), { A: 0, B: 0, C: 1 });
    assert.equal(C.requests[0]!.headers.authorization, `Bearer ${C.key}`);
  });

  it('mode single uses its target, whose key wins over a client Authorization', async () => {
    const r = await chat(gw, { strategy: { mode: 'single' }, targets: [target(A)] }, { headers: { authorization: 'Bearer sk-client' } });
    assertRouted(r, { status: 200, index: 'config.targets[0]', retries: 0, provider: 'openai', by: 'A' });
    assert.deepEqual(counts(U), { A: 1, B: 0, C: 0 });
    assert.equal(A.requests[0]!.headers.authorization, `Bearer ${A.key}`);
  });

  it('x-gateway-trace-id is echoed when sent and generated (unique) when absent', async () => {
    const sent = await chat(gw, target(A), { headers: { 'x-gateway-trace-id': 'trace-routing-1' } });
    assert.equal(sent.headers.get('x-gateway-trace-id'), 'trace-routing-1');
    const failedOver = await chat(gw, fallback([target(A), target(B)]), { headers: { 'x-gateway-trace-id': 'trace-routing-2' } });
    assert.equal(failedOver.headers.get('x-gateway-trace-id'), 'trace-routing-2');
    const one = (await chat(gw, target(A))).headers.get('x-gateway-trace-id');
    const two = (await chat(gw, target(A))).headers.get('x-gateway-trace-id');
    assert.ok(one && two && one !== two, `generated ids differ: ${one} ${two}`);
  });
});

describe('loadbalance', () => {
  it('weights 3:1 split ~400 requests 75/25 (±5σ); weight 0 is never chosen', async () => {
    const n = 400;
    const results = await spread(loadbalance([target(A, { weight: 3 }), target(B, { weight: 1 }), target(C, { weight: 0 })]), n);
    assert.ok(results.every((r) => r.status === 200));
    const a = results.filter((r) => r.by === 'A').length;
    const b = results.filter((r) => r.by === 'B').length;
    assert.equal(a + b, n);
    assertShare(a, n, 0.75, 'A (weight 3)');
    assert.equal(C.requests.length, 0, 'weight 0 target never receives a request');
    assert.deepEqual(counts(U), { A: a, B: b, C: 0 });
    // The header names the answering target.
    for (const r of results) assert.equal(r.index, r.by === 'A' ? 'config.targets[0]' : 'config.targets[1]');
  });

  it('weights default to 1 (even split)', async () => {
    const n = 200;
    const results = await spread(loadbalance([target(A), target(B)]), n);
    assertShare(results.filter((r) => r.by === 'A').length, n, 0.5, 'A');
    assert.equal(A.requests.length + B.requests.length, n);
  });

  it('nested loadbalance: effective weights multiply (A 1/2, B 1/2·3/4, C 1/2·1/4)', async () => {
    const n = 400;
    const config = loadbalance([
      target(A, { weight: 1 }),
      loadbalance([target(B, { weight: 3 }), target(C, { weight: 1 })], { weight: 1 }),
    ]);
    const results = await spread(config, n);
    const by = (name: string) => results.filter((r) => r.by === name).length;
    // A flat draw over the leaves (1:3:1) would give A 20 %, B 60 %: outside these bounds.
    assertShare(by('A'), n, 0.5, 'A');
    assertShare(by('B'), n, 0.375, 'B');
    assertShare(by('C'), n, 0.125, 'C');
    const paths: Record<string, string> = { A: 'config.targets[0]', B: 'config.targets[1].targets[0]', C: 'config.targets[1].targets[1]' };
    for (const r of results) assert.equal(r.index, paths[r.by!]);
  });

  it('loadbalance does not fall back: the chosen target’s failure is returned', async () => {
    A.enqueue('/v1/chat/completions', { status: 500, body: { error: { message: 'A down', type: 'server_error', param: null, code: null } } });
    const r = await chat(gw, loadbalance([target(A, { weight: 1 }), target(B, { weight: 0 })]));
    assertRouted(r, { status: 500, index: 'config.targets[0]' });
    assert.equal(r.json.error.message, 'A down');
    assert.deepEqual(counts(U), { A: 1, B: 0, C: 0 });
  });
});

describe('fallback', () => {
  const err = (status: number, message: string) => ({ status, body: { error: { message, type: 'server_error', param: null, code: null } } });

  it('tries targets in order: A fails 500, B answers; each receives exactly one request', async () => {
    A.enqueue('/v1/chat/completions', { ...err(500, 'A broke'), headers: { 'x-from': 'A' } });
    const r = await chat(gw, fallback([target(A), target(B), target(C)]));
    assertRouted(r, { status: 200, index: 'config.targets[1]', retries: 0, provider: 'openai', by: 'B' });
    assert.equal(r.headers.get('x-from'), null, 'nothing of the failed answer reaches the client');
    assert.deepEqual(counts(U), { A: 1, B: 1, C: 0 });
    // Same client body to each, each with its own key.
    assert.deepEqual(A.requests[0]!.json, CHAT_BODY);
    assert.deepEqual(B.requests[0]!.json, CHAT_BODY);
    assert.equal(B.requests[0]!.headers.authorization, `Bearer ${B.key}`);
  });

  it('a streamed answer comes from the target that succeeded', async () => {
    A.enqueue('/v1/chat/completions', err(503, 'A busy'));
    const r = await chat(gw, fallback([target(A), target(B)]), { body: { ...CHAT_BODY, stream: true } });
    assertRouted(r, { status: 200, index: 'config.targets[1]' });
    assert.match(r.headers.get('content-type') ?? '', /text\/event-stream/);
    assert.equal(typeof r.json, 'string');
    assert.match(r.json, /\[B\]/);
    assert.match(r.json, /data: \[DONE\]\n\n$/);
    assert.equal(B.requests[0]!.json.stream, true);
  });

  it('the first success ends the walk', async () => {
    const r = await chat(gw, fallback([target(A), target(B)]));
    assertRouted(r, { status: 200, index: 'config.targets[0]', by: 'A' });
    assert.deepEqual(counts(U), { A: 1, B: 0, C: 0 });
  });

  it('by default any non-2xx moves on, a 400 and a 401 too', async () => {
    A.enqueue('/v1/chat/completions', err(400, 'bad for A'));
    B.enqueue('/v1/chat/completions', err(401, 'B rejects'));
    const r = await chat(gw, fallback([target(A), target(B), target(C)]));
    assertRouted(r, { status: 200, index: 'config.targets[2]', by: 'C' });
    assert.deepEqual(counts(U), { A: 1, B: 1, C: 1 });
  });

  it('strategy.on_status_codes narrows it: a 400 not listed is returned as-is, B untouched', async () => {
    A.enqueue('/v1/chat/completions', { ...err(400, 'A says no'), headers: { 'x-from': 'A' } });
    const r = await chat(gw, fallback([target(A), target(B)], { strategy: { mode: 'fallback', on_status_codes: [429, 503] } }));
    assertRouted(r, { status: 400, index: 'config.targets[0]', provider: 'openai' });
    assert.deepEqual(r.json, { error: { message: 'A says no', type: 'server_error', param: null, code: null } });
    assert.equal(r.headers.get('x-from'), 'A');
    assert.deepEqual(counts(U), { A: 1, B: 0, C: 0 });
  });

  it('strategy.on_status_codes: a listed status still moves on', async () => {
    A.enqueue('/v1/chat/completions', err(503, 'A overloaded'));
    const r = await chat(gw, fallback([target(A), target(B)], { strategy: { mode: 'fallback', on_status_codes: [429, 503] } }));
    assertRouted(r, { status: 200, index: 'config.targets[1]', by: 'B' });
    assert.deepEqual(counts(U), { A: 1, B: 1, C: 0 });
  });

  it('a network error (connection dropped) moves on', async () => {
    A.enqueue('/v1/chat/completions', { destroy: true });
    const r = await chat(gw, fallback([target(A), target(B)]));
    assertRouted(r, { status: 200, index: 'config.targets[1]', by: 'B' });
    assert.deepEqual(counts(U), { A: 1, B: 1, C: 0 });
  });

  it('a refused connection (closed port) moves on', async () => {
    const port = await closedPort();
    const dead = { provider: 'openai', custom_host: `http://127.0.0.1:${port}/v1`, api_key: 'sk-dead' };
    const r = await chat(gw, fallback([dead, target(C)]));
    assertRouted(r, { status: 200, index: 'config.targets[1]', by: 'C' });
    assert.deepEqual(counts(U), { A: 0, B: 0, C: 1 });
  });

  it('all fail: the last failure is returned unchanged', async () => {
    A.enqueue('/v1/chat/completions', err(500, 'A broke'));
    B.enqueue('/v1/chat/completions', err(503, 'B busy'));
    C.enqueue('/v1/chat/completions', { ...err(502, 'C last'), headers: { 'x-from': 'C' } });
    const r = await chat(gw, fallback([target(A), target(B), target(C)]));
    assertRouted(r, { status: 502, index: 'config.targets[2]', retries: 0, provider: 'openai' });
    assert.equal(r.json.error.message, 'C last');
    assert.equal(r.headers.get('x-from'), 'C');
    assert.deepEqual(counts(U), { A: 1, B: 1, C: 1 });
  });

  it('all fail with the last one unreachable: a 502 envelope from the gateway', async () => {
    A.enqueue('/v1/chat/completions', err(500, 'A broke'));
    const port = await closedPort();
    const r = await chat(gw, fallback([target(A), { provider: 'openai', custom_host: `http://127.0.0.1:${port}/v1`, api_key: 'k' }]));
    assertEnvelope(r, 502);
    assert.equal(r.headers.get('x-gateway-last-used-option-index'), 'config.targets[1]');
    assert.equal(A.requests.length, 1);
  });

  it('nested fallback inside loadbalance', async () => {
    A.enqueue('/v1/chat/completions', err(500, 'A broke'));
    const config = loadbalance([fallback([target(A), target(B)], { weight: 1 }), target(C, { weight: 0 })]);
    const r = await chat(gw, config);
    assertRouted(r, { status: 200, index: 'config.targets[0].targets[1]', by: 'B' });
    assert.deepEqual(counts(U), { A: 1, B: 1, C: 0 });
  });

  it('nested loadbalance inside fallback: a failed group moves to the next target', async () => {
    A.enqueue('/v1/chat/completions', err(502, 'A broke'));
    const config = fallback([loadbalance([target(A, { weight: 1 }), target(B, { weight: 0 })]), target(C)]);
    const r = await chat(gw, config);
    assertRouted(r, { status: 200, index: 'config.targets[1]', by: 'C' });
    assert.deepEqual(counts(U), { A: 1, B: 0, C: 1 });
  });
});

describe('conditional', () => {
  /** `then` → A, default → B; C is a decoy named but never chosen. */
  const conditional = (query: Json): Json => ({
    strategy: { mode: 'conditional', conditions: [{ query, then: 'yes' }], default: 'no' },
    targets: [target(A, { name: 'yes' }), target(B, { name: 'no' }), target(C, { name: 'other' })],
  });

  const body = (extra: Json = {}): Json => ({ ...CHAT_BODY, ...extra });
  type Case = { name: string; query: Json; metadata?: Json; body?: Json; path?: string; match: boolean };
  const cases: Case[] = [
    { name: 'metadata literal (implicit $eq) matches', query: { 'metadata.tier': 'pro' }, metadata: { tier: 'pro' }, match: true },
    { name: 'metadata literal differs', query: { 'metadata.tier': 'pro' }, metadata: { tier: 'free' }, match: false },
    { name: 'metadata missing', query: { 'metadata.tier': 'pro' }, match: false },
    { name: '$eq', query: { 'metadata.tier': { $eq: 'pro' } }, metadata: { tier: 'pro' }, match: true },
    { name: '$eq no', query: { 'metadata.tier': { $eq: 'pro' } }, metadata: { tier: 'PRO' }, match: false },
    { name: '$ne', query: { 'metadata.tier': { $ne: 'free' } }, metadata: { tier: 'pro' }, match: true },
    { name: '$ne no', query: { 'metadata.tier': { $ne: 'free' } }, metadata: { tier: 'free' }, match: false },
    { name: '$in', query: { 'params.model': { $in: ['gpt-4o', 'gpt-4o-mini'] } }, match: true },
    { name: '$in no', query: { 'params.model': { $in: ['gpt-4o', 'o3'] } }, match: false },
    { name: '$nin', query: { 'params.model': { $nin: ['gpt-4o', 'o3'] } }, match: true },
    { name: '$nin no', query: { 'params.model': { $nin: ['gpt-4o-mini'] } }, match: false },
    { name: '$regex', query: { 'params.model': { $regex: '^gpt-4o' } }, match: true },
    { name: '$regex no', query: { 'params.model': { $regex: '^claude' } }, match: false },
    { name: '$gt', query: { 'params.max_tokens': { $gt: 100 } }, body: body({ max_tokens: 101 }), match: true },
    { name: '$gt no (equal)', query: { 'params.max_tokens': { $gt: 100 } }, body: body({ max_tokens: 100 }), match: false },
    { name: '$gte', query: { 'params.max_tokens': { $gte: 100 } }, body: body({ max_tokens: 100 }), match: true },
    { name: '$gte no', query: { 'params.max_tokens': { $gte: 100 } }, body: body({ max_tokens: 99 }), match: false },
    { name: '$lt', query: { 'params.temperature': { $lt: 0.5 } }, body: body({ temperature: 0.2 }), match: true },
    { name: '$lt no (equal)', query: { 'params.temperature': { $lt: 0.5 } }, body: body({ temperature: 0.5 }), match: false },
    { name: '$lte', query: { 'params.temperature': { $lte: 0.5 } }, body: body({ temperature: 0.5 }), match: true },
    { name: '$lte no', query: { 'params.temperature': { $lte: 0.5 } }, body: body({ temperature: 0.6 }), match: false },
    { name: 'number operator on a metadata string', query: { 'metadata.level': { $gte: 3 } }, metadata: { level: '10' }, match: true },
    { name: 'number operator on a metadata string, no', query: { 'metadata.level': { $gte: 3 } }, metadata: { level: '2' }, match: false },
    { name: '$exists true', query: { 'params.tools': { $exists: true } }, body: body({ tools: [{ type: 'function', function: { name: 'f' } }] }), match: true },
    { name: '$exists true, absent', query: { 'params.tools': { $exists: true } }, match: false },
    { name: '$exists false', query: { 'params.tools': { $exists: false } }, match: true },
    { name: 'range by two operators on one field', query: { 'params.max_tokens': { $gte: 10, $lt: 20 } }, body: body({ max_tokens: 15 }), match: true },
    { name: 'range by two operators, outside', query: { 'params.max_tokens': { $gte: 10, $lt: 20 } }, body: body({ max_tokens: 20 }), match: false },
    {
      name: 'params dot path with index',
      query: { 'params.messages[0].role': 'system', 'params.messages.1.content': 'hi' },
      body: body({ messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }] }),
      match: true,
    },
    { name: 'params dot path with index, no', query: { 'params.messages[0].role': 'system' }, match: false },
    { name: 'nested object field', query: { 'params.response_format.type': 'json_object' }, body: body({ response_format: { type: 'json_object' } }), match: true },
    { name: 'keys of one query are ANDed', query: { 'metadata.tier': 'pro', 'params.model': 'gpt-4o' }, metadata: { tier: 'pro' }, match: false },
    {
      name: '$and',
      query: { $and: [{ 'metadata.tier': 'pro' }, { 'params.model': { $regex: 'mini$' } }] },
      metadata: { tier: 'pro' },
      match: true,
    },
    { name: '$and no', query: { $and: [{ 'metadata.tier': 'pro' }, { 'params.model': 'o3' }] }, metadata: { tier: 'pro' }, match: false },
    { name: '$or', query: { $or: [{ 'metadata.tier': 'pro' }, { 'params.model': 'gpt-4o-mini' }] }, match: true },
    { name: '$or no', query: { $or: [{ 'metadata.tier': 'pro' }, { 'params.model': 'o3' }] }, metadata: { tier: 'free' }, match: false },
    { name: 'url.pathname literal', query: { 'url.pathname': '/v1/chat/completions' }, match: true },
    {
      name: 'url.pathname $regex on embeddings',
      query: { 'url.pathname': { $regex: '/embeddings$' } },
      path: '/embeddings',
      body: { model: 'text-embedding-3-small', input: 'hello' },
      match: true,
    },
    { name: 'url.pathname $regex, chat', query: { 'url.pathname': { $regex: '/embeddings$' } }, match: false },
  ];

  for (const c of cases) {
    it(`${c.name} → ${c.match ? 'then' : 'default'}`, async () => {
      const headers: Record<string, string> = {};
      if (c.metadata !== undefined) headers['x-gateway-metadata'] = JSON.stringify(c.metadata);
      const r = await chat(gw, conditional(c.query), { headers, body: c.body ?? CHAT_BODY, ...(c.path ? { path: c.path } : {}) });
      assertRouted(r, { status: 200, index: c.match ? 'config.targets[0]' : 'config.targets[1]', provider: 'openai' });
      assert.deepEqual(counts(U), { A: c.match ? 1 : 0, B: c.match ? 0 : 1, C: 0 });
    });
  }

  it('$regex ^(a+)+$ — hours of backtracking for RegExp — routes at once, on values at the cap and far over it', async () => {
    const evil = conditional({ 'params.model': { $regex: '^(a+)+$' } });
    const models: [string, boolean][] = [
      ['a'.repeat(10_000), false], // over MAX_MATCH_CHARS: never matched
      ['a'.repeat(MAX_MATCH_CHARS - 1) + 'b', false],
      ['a'.repeat(MAX_MATCH_CHARS), true],
    ];
    for (const [model, match] of models) {
      const r = await chat(gw, evil, { body: { ...CHAT_BODY, model } });
      assertRouted(r, { status: 200, index: match ? 'config.targets[0]' : 'config.targets[1]' });
      // The whole HTTP round trip; the match itself is well under a millisecond (conditions.test.ts).
      assert.ok(r.ms < 1000, `${model.length} characters took ${r.ms} ms`);
    }
  });

  it('a $regex RE2 cannot run (lookaround, backreferences) is a 400 naming the path, and nothing is called', async () => {
    const r = await chat(gw, conditional({ $or: [{ 'metadata.tier': 'x' }, { 'params.model': { $regex: '^(?!gpt)' } }] }));
    assertEnvelope(r, 400, { param: 'strategy.conditions[0].query' });
    assert.match(r.json.error.message, /^config\.strategy\.conditions\[0\]\.query: \$or\[1\]\.params\.model\.\$regex: not supported by the linear-time engine/);
    assert.deepEqual(counts(U), { A: 0, B: 0, C: 0 });
  });

  it('the first matching condition wins; no match takes the default', async () => {
    const config = {
      strategy: {
        mode: 'conditional',
        conditions: [
          { query: { 'metadata.tier': 'pro' }, then: 'a' },
          { query: { 'params.model': 'gpt-4o-mini' }, then: 'b' },
        ],
        default: 'c',
      },
      targets: [target(A, { name: 'a' }), target(B, { name: 'b' }), target(C, { name: 'c' })],
    };
    const pro = await chat(gw, config, { headers: { 'x-gateway-metadata': '{"tier":"pro"}' } });
    assertRouted(pro, { status: 200, index: 'config.targets[0]', by: 'A' });
    const mini = await chat(gw, config);
    assertRouted(mini, { status: 200, index: 'config.targets[1]', by: 'B' });
    const neither = await chat(gw, config, { body: { ...CHAT_BODY, model: 'o3' } });
    assertRouted(neither, { status: 200, index: 'config.targets[2]', by: 'C' });
    assert.deepEqual(counts(U), { A: 1, B: 1, C: 1 });
  });

  it('conditions look at the client’s params, not at a target’s override_params', async () => {
    const config = {
      strategy: { mode: 'conditional', conditions: [{ query: { 'params.model': 'o3' }, then: 'a' }], default: 'b' },
      targets: [target(A, { name: 'a' }), target(B, { name: 'b', override_params: { model: 'o3' } })],
    };
    const r = await chat(gw, config);
    assertRouted(r, { status: 200, index: 'config.targets[1]' });
    assert.equal(B.requests[0]!.json.model, 'o3');
  });

  it('a conditional target that is itself a fallback group', async () => {
    A.enqueue('/v1/chat/completions', { status: 500, body: { error: { message: 'A broke', type: 'server_error', param: null, code: null } } });
    const config = {
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tier': { $in: ['pro', 'enterprise'] } }, then: 'premium' }], default: 'basic' },
      targets: [
        { name: 'premium', strategy: { mode: 'fallback' }, targets: [target(A), target(B)] },
        target(C, { name: 'basic' }),
      ],
    };
    const pro = await chat(gw, config, { headers: { 'x-gateway-metadata': '{"tier":"enterprise","team":"x"}' } });
    assertRouted(pro, { status: 200, index: 'config.targets[0].targets[1]', by: 'B' });
    assert.deepEqual(counts(U), { A: 1, B: 1, C: 0 });
    const basic = await chat(gw, config, { headers: { 'x-gateway-metadata': '{"tier":"free"}' } });
    assertRouted(basic, { status: 200, index: 'config.targets[1]', by: 'C' });
    assert.deepEqual(counts(U), { A: 1, B: 1, C: 1 });
  });

  it('a conditional inside a fallback: a failed branch falls back', async () => {
    A.enqueue('/v1/chat/completions', { status: 503, body: { error: { message: 'A busy', type: 'server_error', param: null, code: null } } });
    const config = fallback([
      {
        strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tier': 'pro' }, then: 'a' }], default: 'b' },
        targets: [target(A, { name: 'a' }), target(B, { name: 'b' })],
      },
      target(C),
    ]);
    const r = await chat(gw, config, { headers: { 'x-gateway-metadata': '{"tier":"pro"}' } });
    assertRouted(r, { status: 200, index: 'config.targets[1]', by: 'C' });
    assert.deepEqual(counts(U), { A: 1, B: 0, C: 1 });
  });
});

describe('param edits seen by the upstream', () => {
  const messages = [
    { role: 'system', content: 'be brief', name: 'sys' },
    { role: 'user', content: 'hi', name: 'ann' },
  ];

  it('override_params replace the client value (top-level keys whole)', async () => {
    const r = await chat(gw, target(A, { override_params: { model: 'gpt-4.1', temperature: 0.1, response_format: { type: 'text' } } }), {
      body: { ...CHAT_BODY, temperature: 0.9, response_format: { type: 'json_schema', json_schema: { name: 's', schema: {} } } },
    });
    assertRouted(r, { status: 200, by: 'A' });
    const seen = A.requests[0]!.json;
    assert.equal(seen.model, 'gpt-4.1');
    assert.equal(seen.temperature, 0.1);
    assert.deepEqual(seen.response_format, { type: 'text' });
    assert.deepEqual(seen.messages, CHAT_BODY.messages);
  });

  it('default_params fill only what the client did not send', async () => {
    const config = target(A, { default_params: { temperature: 0.5, max_tokens: 7, user: 'default-user' } });
    await chat(gw, config, { body: { ...CHAT_BODY, temperature: 0.9 } });
    const seen = A.requests[0]!.json;
    assert.equal(seen.temperature, 0.9, 'client value kept');
    assert.equal(seen.max_tokens, 7, 'absent field filled');
    assert.equal(seen.user, 'default-user');
  });

  it('drop_params remove dot paths and array indices', async () => {
    const config = target(A, { drop_params: ['messages[0].name', 'user', 'response_format.json_schema.strict', 'not.there[3]'] });
    await chat(gw, config, {
      body: { ...CHAT_BODY, messages, user: 'u1', response_format: { type: 'json_schema', json_schema: { name: 's', strict: true, schema: {} } } },
    });
    const seen = A.requests[0]!.json;
    assert.deepEqual(seen.messages, [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi', name: 'ann' }]);
    assert.equal('user' in seen, false);
    assert.deepEqual(seen.response_format, { type: 'json_schema', json_schema: { name: 's', schema: {} } });
    assert.equal(seen.model, CHAT_BODY.model);
  });

  it('drop_params can drop a whole array element (messages.0)', async () => {
    await chat(gw, target(A, { drop_params: ['messages.0'] }), { body: { ...CHAT_BODY, messages } });
    assert.deepEqual(A.requests[0]!.json.messages, [messages[1]]);
  });

  it('edits are inherited from the parent config; a target’s own override wins; siblings do not share edits', async () => {
    A.enqueue('/v1/chat/completions', { status: 500, body: { error: { message: 'A broke', type: 'server_error', param: null, code: null } } });
    const config = fallback(
      [
        target(A, { override_params: { temperature: 0.3, max_tokens: 5 } }),
        target(B, { default_params: { seed: 42 } }),
      ],
      { override_params: { temperature: 0.1, top_p: 0.5 }, default_params: { seed: 1, n: 1 }, drop_params: ['user'] },
    );
    const r = await chat(gw, config, { body: { ...CHAT_BODY, temperature: 1.5, user: 'u1' } });
    assertRouted(r, { status: 200, index: 'config.targets[1]', by: 'B' });
    const a = A.requests[0]!.json;
    const b = B.requests[0]!.json;
    assert.deepEqual(
      { temperature: a.temperature, top_p: a.top_p, max_tokens: a.max_tokens, seed: a.seed, n: a.n, user: a.user },
      { temperature: 0.3, top_p: 0.5, max_tokens: 5, seed: 1, n: 1, user: undefined },
    );
    assert.deepEqual(
      { temperature: b.temperature, top_p: b.top_p, max_tokens: b.max_tokens, seed: b.seed, n: b.n, user: b.user },
      { temperature: 0.1, top_p: 0.5, max_tokens: undefined, seed: 42, n: 1, user: undefined },
    );
  });

  it('edits reach targets of nested groups', async () => {
    const config = loadbalance([fallback([target(A, { drop_params: ['messages[1].name'] })], { default_params: { max_tokens: 9 } })], {
      override_params: { model: 'gpt-4.1' },
      drop_params: ['messages[0].name'],
    });
    await chat(gw, config, { body: { ...CHAT_BODY, messages } });
    const seen = A.requests[0]!.json;
    assert.equal(seen.model, 'gpt-4.1');
    assert.equal(seen.max_tokens, 9);
    assert.deepEqual(seen.messages, [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }]);
  });
});

describe('forwarded headers', () => {
  const clientHeaders = { 'x-custom-a': 'alpha', 'x-custom-b': 'beta', 'x-tenant': 't1' };

  it('config forward_headers: the named client headers reach the upstream, others do not', async () => {
    const r = await chat(gw, target(A, { forward_headers: ['x-custom-a', 'X-Tenant'] }), { headers: clientHeaders });
    assertRouted(r, { status: 200, by: 'A' });
    const h = A.requests[0]!.headers;
    assert.equal(h['x-custom-a'], 'alpha');
    assert.equal(h['x-tenant'], 't1');
    assert.equal(h['x-custom-b'], undefined);
    assert.equal(h.authorization, `Bearer ${A.key}`);
    assert.equal(h['x-gateway-api-key'], undefined);
    assert.equal(h['x-gateway-config'], undefined, 'the config (with every target’s key) stays with the gateway');
  });

  it('without forward_headers, client headers do not reach the upstream', async () => {
    await chat(gw, target(A), { headers: clientHeaders });
    const h = A.requests[0]!.headers;
    for (const name of Object.keys(clientHeaders)) assert.equal(h[name], undefined, name);
  });

  it('x-gateway-forward-headers header works without a config', async () => {
    await chat(gw, null, {
      headers: {
        ...clientHeaders,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': A.url,
        authorization: `Bearer ${A.key}`,
        'x-gateway-forward-headers': 'x-custom-b, x-tenant',
      },
    });
    const h = A.requests[0]!.headers;
    assert.equal(h['x-custom-b'], 'beta');
    assert.equal(h['x-tenant'], 't1');
    assert.equal(h['x-custom-a'], undefined);
  });

  it('forward_headers are inherited by fallback targets', async () => {
    A.enqueue('/v1/chat/completions', { status: 500, body: { error: { message: 'x', type: 'server_error', param: null, code: null } } });
    await chat(gw, fallback([target(A), target(B)], { forward_headers: ['x-tenant'] }), { headers: clientHeaders });
    assert.equal(A.requests[0]!.headers['x-tenant'], 't1');
    assert.equal(B.requests[0]!.headers['x-tenant'], 't1');
    assert.equal(B.requests[0]!.headers['x-custom-a'], undefined);
  });

  it('the gateway key is never forwarded, even when named', async () => {
    await chat(gw, target(A, { forward_headers: ['x-gateway-api-key', 'x-custom-a'] }), {
      headers: { ...clientHeaders, 'x-gateway-forward-headers': 'x-gateway-api-key,x-gateway-config' },
    });
    const h = A.requests[0]!.headers;
    assert.equal(h['x-custom-a'], 'alpha');
    assert.equal(h['x-gateway-api-key'], undefined);
    assert.equal(h['x-gateway-config'], undefined);
    assert.ok(!JSON.stringify(h).includes(ADMIN_KEY), 'the gateway key appears in no upstream header');
  });
});

describe('invalid configs reach no upstream', () => {
  const none = () => assert.deepEqual(counts(U), { A: 0, B: 0, C: 0 });

  it('targets[1].retry.attempts: 6 → 400 naming the path', async () => {
    const r = await chat(gw, fallback([target(A), target(B, { retry: { attempts: 6 } })]));
    assertEnvelope(r, 400, { param: 'targets[1].retry.attempts' });
    assert.match(r.json.error.message, /targets\[1\]\.retry\.attempts/);
    none();
  });

  it('an unknown key in a nested target → 400 naming it', async () => {
    const r = await chat(gw, fallback([target(A), loadbalance([target(B, { wieght: 2 })])]));
    assertEnvelope(r, 400, { param: 'targets[1].targets[0].wieght' });
    none();
  });

  it('cb_config.cooldown_interval below 30000 → 400', async () => {
    const r = await chat(gw, fallback([target(A), target(B)], { cb_config: { failure_threshold: 1, cooldown_interval: 1000 } }));
    assertEnvelope(r, 400, { param: 'cb_config.cooldown_interval' });
    none();
  });

  it('conditional default naming no target → 400', async () => {
    const r = await chat(gw, {
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.x': '1' }, then: 'a' }], default: 'nope' },
      targets: [target(A, { name: 'a' })],
    });
    assertEnvelope(r, 400, { param: 'strategy.default' });
    none();
  });

  it('a conditional query with an unknown operator → 400', async () => {
    const r = await chat(gw, {
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.x': { $like: '1' } }, then: 'a' }], default: 'a' },
      targets: [target(A, { name: 'a' })],
    });
    assertEnvelope(r, 400);
    assert.match(r.json.error.message, /\$like/);
    none();
  });

  it('an x-gateway-config that is not JSON → 400', async () => {
    const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': '{"strategy":' }, body: CHAT_BODY });
    const r = { status: res.status, headers: res.headers, json: await res.json(), ms: 0 };
    assertEnvelope(r, 400, { param: 'x-gateway-config' });
    none();
  });
});
