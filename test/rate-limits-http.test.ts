// Rate-limit policies enforced on the request path, over HTTP, on both store
// engines and both counter homes (process memory, Redis): exact request
// limits with 429 + Retry-After and nothing sent upstream, groups, conditions,
// archived, changed and fail-closed policies, token limits charged from each answer's
// usage (JSON, streams whether or not they asked for it, translated answers), the quota
// headers; across two gateway processes sharing Redis under concurrent load;
// and Redis unreachable: requests still served, /health degraded, metrics.
// Windows are the gateway's manual clock (gw.clock), so nothing waits.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engines } from './support/engines.js';
import type { TestGateway } from './support/gateway.js';
import { assertEnvelope, freePort, readEvents } from './support/http.js';
import { startMockAnthropic, type MockAnthropic } from './support/mock-anthropic.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { connect, scriptCalls } from './support/redis.js';
import { createWorkspace, expectJson, workspaceKey } from './support/tenants.js';
import { useGateway, useGatewayPair } from './support/use-gateway.js';

const OPENAI_KEY = 'sk-mock-openai-0123456789';
const ANTHROPIC_KEY = 'sk-ant-mock-0123456789';
const MINUTE = 60_000;
const H = {
  limit: (t: 'requests' | 'tokens') => `x-gateway-ratelimit-limit-${t}`,
  remaining: (t: 'requests' | 'tokens') => `x-gateway-ratelimit-remaining-${t}`,
  reset: (t: 'requests' | 'tokens') => `x-gateway-ratelimit-reset-${t}`,
};
/** A prompt of 40 words: answers of the mock cost about 80 tokens. */
const LONG = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');

/** Seconds until the minute window of `now` ends (the Retry-After and reset the gateway must answer). */
const secondsLeft = (now: number): number => Math.ceil((Math.floor(now / MINUTE) * MINUTE + MINUTE - now) / 1000);

interface Tenant {
  workspaceId: string;
  /** A workspace key with completions.write. */
  secret: string;
}

function client(gw: () => TestGateway, openai: () => MockOpenAI) {
  const routed = (): Record<string, string> => ({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai().url, authorization: `Bearer ${OPENAI_KEY}` });
  return {
    async tenant(name: string): Promise<Tenant> {
      const workspaceId = await createWorkspace(gw(), `${name} ${Math.random().toString(36).slice(2, 8)}`);
      return { workspaceId, secret: await workspaceKey(gw(), workspaceId, ['completions.write']) };
    },
    async policy(workspaceId: string, over: Record<string, unknown>): Promise<string> {
      const res = await gw().call('/policies/rate-limits', {
        body: { name: 'test', conditions: [{ key: 'workspace_id', value: workspaceId }], group_by: [{ key: 'workspace_id' }], type: 'requests', unit: 'rpm', value: 1, workspace_id: workspaceId, ...over },
      });
      return (await expectJson<{ id: string }>(res, 201)).id;
    },
    chat(secret: string, opts: { headers?: Record<string, string>; body?: Record<string, unknown> } = {}): Promise<Response> {
      return gw().call('/chat/completions', {
        headers: { 'x-gateway-api-key': secret, ...routed(), ...opts.headers },
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...opts.body },
      });
    },
    call(secret: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<Response> {
      return gw().call(path, { ...init, headers: { 'x-gateway-api-key': secret, ...routed() } });
    },
  };
}

/** The quota headers of one type as numbers, or null when absent (all three or none). */
function quota(res: Response, type: 'requests' | 'tokens'): { limit: number; remaining: number; reset: number } | null {
  const values = [H.limit(type), H.remaining(type), H.reset(type)].map((h) => res.headers.get(h));
  if (values.every((v) => v === null)) return null;
  assert.ok(values.every((v) => v !== null), `all of the ${type} quota headers or none: ${values.join(', ')}`);
  const [limit, remaining, reset] = values.map(Number) as [number, number, number];
  return { limit, remaining, reset };
}

async function assertRefused(res: Response, now: number): Promise<string> {
  const e = await assertEnvelope(res, 429);
  assert.equal(e.type, 'rate_limit_error');
  assert.equal(e.code, 'rate_limit_exceeded');
  assert.equal(res.headers.get('retry-after'), String(secondsLeft(now)));
  return e.message;
}

for (const engine of engines()) {
  for (const backend of ['memory', 'redis'] as const) {
    describe(`rate limits on the request path (${engine.name}, ${backend})`, { timeout: 60_000 }, () => {
      const gw = useGateway(engine, { redis: backend === 'redis' });
      let openai: MockOpenAI;
      let anthropic: MockAnthropic;
      const c = client(
        () => gw,
        () => openai,
      );

      before(async () => {
        openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
        anthropic = await startMockAnthropic({ apiKey: ANTHROPIC_KEY });
      });
      afterEach(() => {
        openai.reset();
        anthropic.reset();
      });
      after(async () => {
        await Promise.all([openai.close(), anthropic.close()]);
      });

      it('N requests per minute: N answers, then 429 with Retry-After and nothing sent upstream; the next minute admits again', async () => {
        const t = await c.tenant('exact');
        await c.policy(t.workspaceId, { value: 3 });
        for (let i = 0; i < 3; i++) {
          const res = await c.chat(t.secret);
          assert.equal(res.status, 200, await res.clone().text());
          assert.deepEqual(quota(res, 'requests'), { limit: 3, remaining: 2 - i, reset: secondsLeft(gw.clock.now) });
          assert.equal(quota(res, 'tokens'), null);
          await res.arrayBuffer();
        }
        for (let i = 0; i < 2; i++) {
          const res = await c.chat(t.secret);
          assert.deepEqual(quota(res, 'requests'), { limit: 3, remaining: 0, reset: secondsLeft(gw.clock.now) });
          assert.match(await assertRefused(res, gw.clock.now), /rate limit of 3 requests reached \(policy [0-9a-f-]{36}\)/);
          assert.ok(res.headers.get('x-gateway-trace-id'));
        }
        assert.equal(openai.requests.length, 3, 'refused requests never reach the provider');

        gw.clock.advance(secondsLeft(gw.clock.now) * 1000);
        const next = await c.chat(t.secret);
        assert.equal(next.status, 200);
        assert.equal(quota(next, 'requests')?.remaining, 2);
        assert.equal(openai.requests.length, 4);
      });

      it('counts per group: each api key has its own N; the proxy and errors count and carry the quota', async () => {
        const t = await c.tenant('per-key');
        const other = await workspaceKey(gw, t.workspaceId, ['completions.write']);
        await c.policy(t.workspaceId, { conditions: [{ key: 'api_key', value: '*' }], group_by: [{ key: 'api_key' }], value: 2 });
        // An upstream error is an answer too: counted, with the quota headers.
        openai.enqueue('/v1/chat/completions', { status: 500, body: { error: { message: 'boom', type: 'server_error', param: null, code: null } } });
        const failed = await c.chat(t.secret);
        assert.equal(failed.status, 500);
        assert.deepEqual(quota(failed, 'requests'), { limit: 2, remaining: 1, reset: secondsLeft(gw.clock.now) });
        await failed.arrayBuffer();
        const proxied = await c.call(t.secret, '/anything/here');
        assert.equal(proxied.status, 200);
        assert.equal(quota(proxied, 'requests')?.remaining, 0);
        await proxied.arrayBuffer();
        await assertRefused(await c.call(t.secret, '/anything/here'), gw.clock.now);
        const theirs = await c.chat(other);
        assert.equal(theirs.status, 200, 'another key counts in a group of its own');
        assert.equal(quota(theirs, 'requests')?.remaining, 1);
        assert.equal(openai.requests.length, 3);
      });

      it('answers the gateway makes after admission carry the quota too: a body it rejects, a provider it cannot reach, a cache hit', async () => {
        const t = await c.tenant('own-answers');
        await c.policy(t.workspaceId, { value: 10 });
        const expect = (res: Response, remaining: number): void =>
          assert.deepEqual(quota(res, 'requests'), { limit: 10, remaining, reset: secondsLeft(gw.clock.now) }, `status ${res.status}`);
        const rejected = await c.chat(t.secret, { body: { messages: 'not a list' } });
        assert.equal(rejected.status, 400);
        expect(rejected, 9);
        await rejected.arrayBuffer();
        const unreachable = await c.chat(t.secret, { headers: { 'x-gateway-custom-host': `http://127.0.0.1:${await freePort()}/v1` } });
        assert.ok(unreachable.status >= 500, `status ${unreachable.status}`);
        expect(unreachable, 8);
        await unreachable.arrayBuffer();
        const cached = { 'x-gateway-config': JSON.stringify({ cache: { mode: 'simple', max_age: 600 } }) };
        await (await c.chat(t.secret, { headers: cached })).arrayBuffer();
        const hit = await c.chat(t.secret, { headers: cached });
        assert.equal(hit.headers.get('x-gateway-cache-status'), 'HIT');
        expect(hit, 6);
        await hit.arrayBuffer();
      });

      it('a policy that fails closed counts like any other while its counters answer', async () => {
        const t = await c.tenant('closed');
        await c.policy(t.workspaceId, { value: 2, fail_mode: 'closed' });
        assert.equal(quota(await c.chat(t.secret), 'requests')?.remaining, 1);
        assert.equal(quota(await c.chat(t.secret), 'requests')?.remaining, 0);
        await assertRefused(await c.chat(t.secret), gw.clock.now);
        assert.equal(openai.requests.length, 2);
      });

      it('a fractional limit admits whole requests: 1.5 per minute is 1', async () => {
        const t = await c.tenant('fraction');
        await c.policy(t.workspaceId, { value: 1.5 });
        const res = await c.chat(t.secret);
        assert.equal(res.status, 200);
        assert.deepEqual(quota(res, 'requests'), { limit: 1.5, remaining: 0, reset: secondsLeft(gw.clock.now) });
        assert.match(await assertRefused(await c.chat(t.secret), gw.clock.now), /rate limit of 1.5 requests reached/);
      });

      it('policies of other workspaces, and policies whose conditions do not match, do not apply', async () => {
        const t = await c.tenant('conditions');
        const elsewhere = await c.tenant('elsewhere');
        await c.policy(elsewhere.workspaceId, { value: 1 });
        await c.policy(t.workspaceId, { conditions: [{ key: 'endpoint_type', value: 'embed' }], value: 1 });
        await c.policy(t.workspaceId, { conditions: [{ key: 'metadata.team', value: 'red' }], group_by: [{ key: 'metadata.team' }], value: 1 });
        for (let i = 0; i < 3; i++) {
          const res = await c.chat(t.secret);
          assert.equal(res.status, 200);
          assert.equal(quota(res, 'requests'), null, 'no applying policy: no quota headers');
          await res.arrayBuffer();
          const blue = await c.chat(t.secret, { headers: { 'x-gateway-metadata': JSON.stringify({ team: 'blue' }) } });
          assert.equal(blue.status, 200);
          await blue.arrayBuffer();
        }
        const red = { headers: { 'x-gateway-metadata': JSON.stringify({ team: 'red' }) } };
        assert.equal((await c.chat(t.secret, red)).status, 200);
        await assertRefused(await c.chat(t.secret, red), gw.clock.now);
        const embed = { method: 'POST', body: { model: 'text-embedding-3-small', input: 'hello' } };
        assert.equal((await c.call(t.secret, '/embeddings', embed)).status, 200);
        await assertRefused(await c.call(t.secret, '/embeddings', embed), gw.clock.now);
      });

      it('an archived policy is not enforced; restored, it counts on from where it was', async () => {
        const t = await c.tenant('archived');
        const id = await c.policy(t.workspaceId, { value: 1 });
        assert.equal((await c.chat(t.secret)).status, 200);
        await assertRefused(await c.chat(t.secret), gw.clock.now);
        await expectJson(await gw.call(`/policies/rate-limits/${id}`, { method: 'PUT', body: { status: 'archived' } }), 200);
        for (let i = 0; i < 3; i++) {
          const res = await c.chat(t.secret);
          assert.equal(res.status, 200);
          assert.equal(quota(res, 'requests'), null);
        }
        await expectJson(await gw.call(`/policies/rate-limits/${id}`, { method: 'PUT', body: { status: 'active' } }), 200);
        await assertRefused(await c.chat(t.secret), gw.clock.now);
      });

      it('a policy created, updated or deleted takes effect on the next request', async () => {
        const t = await c.tenant('changes');
        const first = await c.chat(t.secret); // the workspace's policies (none) are now cached
        assert.equal(quota(first, 'requests'), null);
        const id = await c.policy(t.workspaceId, { value: 2 });
        assert.equal(quota(await c.chat(t.secret), 'requests')?.remaining, 1);
        assert.equal(quota(await c.chat(t.secret), 'requests')?.remaining, 0);
        await assertRefused(await c.chat(t.secret), gw.clock.now);
        await expectJson(await gw.call(`/policies/rate-limits/${id}`, { method: 'PUT', body: { value: 4 } }), 200);
        const raised = await c.chat(t.secret);
        assert.equal(raised.status, 200);
        assert.deepEqual(quota(raised, 'requests'), { limit: 4, remaining: 1, reset: secondsLeft(gw.clock.now) });
        await expectJson(await gw.call(`/policies/rate-limits/${id}`, { method: 'DELETE' }), 200);
        for (let i = 0; i < 3; i++) {
          const res = await c.chat(t.secret);
          assert.equal(res.status, 200);
          assert.equal(quota(res, 'requests'), null);
        }
      });

      it('token limits: each answer’s usage is charged (JSON, embeddings, streams with and without include_usage); over it, 429', async () => {
        const t = await c.tenant('tokens');
        const LIMIT = 300;
        await c.policy(t.workspaceId, { type: 'tokens', value: LIMIT, conditions: [{ key: 'api_key', value: '*' }], group_by: [{ key: 'api_key' }] });
        let used = 0;
        const expectRemaining = (res: Response): void => {
          assert.deepEqual(quota(res, 'tokens'), { limit: LIMIT, remaining: LIMIT - used, reset: secondsLeft(gw.clock.now) });
          assert.equal(quota(res, 'requests'), null);
        };
        const long = { body: { messages: [{ role: 'user', content: LONG }] } };

        const json = await c.chat(t.secret, long);
        expectRemaining(json);
        const usage = ((await json.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
        assert.ok(usage > 40);
        used += usage;

        const streamed = await c.chat(t.secret, { body: { ...long.body, stream: true, stream_options: { include_usage: true } } });
        expectRemaining(streamed);
        const events = await readEvents(streamed);
        assert.equal(events.at(-1)?.data, '[DONE]');
        const streamedUsage = (JSON.parse(events.at(-2)!.data) as { usage: { total_tokens: number } }).usage.total_tokens;
        used += streamedUsage;

        // A client that did not ask for usage is charged all the same: the gateway asked, and strips it from the stream.
        const bare = await c.chat(t.secret, { body: { ...long.body, stream: true } });
        expectRemaining(bare);
        assert.ok((await readEvents(bare)).every((e) => !e.data.includes('usage')));
        used += streamedUsage;

        // A large answer (its usage well past the first 8 KiB): only the tail is kept, and it is enough.
        const input = Array.from({ length: 200 }, (_, i) => `text ${i}`);
        const embedded = await c.call(t.secret, '/embeddings', { method: 'POST', body: { model: 'text-embedding-3-small', input } });
        expectRemaining(embedded);
        const text = await embedded.text();
        assert.ok(text.length > 32 * 1024, `${text.length} bytes`);
        used += (JSON.parse(text) as { usage: { total_tokens: number } }).usage.total_tokens;

        while (used < LIMIT) {
          const res = await c.chat(t.secret, long);
          expectRemaining(res);
          used += ((await res.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
        }
        const sent = openai.requests.length;
        const refused = await c.chat(t.secret);
        assert.deepEqual(quota(refused, 'tokens')?.remaining, 0);
        assert.match(await assertRefused(refused, gw.clock.now), new RegExp(`rate limit of ${LIMIT} tokens reached`));
        assert.equal(openai.requests.length, sent);
      });

      it('token limits charge translated answers too (Anthropic, JSON and stream)', async () => {
        const t = await c.tenant('translated');
        await c.policy(t.workspaceId, { type: 'tokens', value: 10_000 });
        const headers = { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': anthropic.url, authorization: `Bearer ${ANTHROPIC_KEY}` };
        const body = { model: 'claude-3-5-haiku-latest', max_tokens: 100, messages: [{ role: 'user', content: LONG }] };
        const first = await c.chat(t.secret, { headers, body });
        assert.equal(first.status, 200, await first.clone().text());
        assert.equal(quota(first, 'tokens')?.remaining, 10_000);
        const used = ((await first.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
        assert.ok(used > 40);

        const streamed = await c.chat(t.secret, { headers, body: { ...body, stream: true, stream_options: { include_usage: true } } });
        assert.equal(streamed.status, 200);
        assert.equal(quota(streamed, 'tokens')?.remaining, 10_000 - used);
        const events = await readEvents(streamed);
        const streamedUsage = (JSON.parse(events.at(-2)!.data) as { usage: { total_tokens: number } }).usage.total_tokens;

        const last = await c.chat(t.secret, { headers, body });
        assert.equal(quota(last, 'tokens')?.remaining, 10_000 - used - streamedUsage);
      });

      it(`a restart keeps the policies enforced; ${backend === 'redis' ? 'Redis keeps the count' : 'the count starts afresh in memory'}`, async () => {
        const t = await c.tenant('restart');
        await c.policy(t.workspaceId, { value: 1 });
        assert.equal((await c.chat(t.secret)).status, 200);
        const now = gw.clock.now;
        await gw.restart();
        gw.clock.now = now;
        if (backend === 'memory') assert.equal((await c.chat(t.secret)).status, 200);
        await assertRefused(await c.chat(t.secret), gw.clock.now);
      });
    });
  }

  describe(`rate limits across two gateway processes sharing Redis (${engine.name})`, { timeout: 60_000 }, () => {
    const gws = useGatewayPair(engine);
    let openai: MockOpenAI;

    before(async () => {
      openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
    });
    after(async () => {
      await openai.close();
    });

    it('3N concurrent requests split across both processes: exactly N succeed and reach the provider', async () => {
      const N = 7;
      const c0 = client(
        () => gws[0]!,
        () => openai,
      );
      const t = await c0.tenant('shared');
      await c0.policy(t.workspaceId, { value: N });
      const clients = gws.map((g) =>
        client(
          () => g,
          () => openai,
        ),
      );
      const answers = await Promise.all(
        Array.from({ length: 3 * N }, async (_, i) => {
          const res = await clients[i % 2]!.chat(t.secret);
          await res.arrayBuffer();
          return res;
        }),
      );
      const statuses = answers.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 200).length, N, statuses.join(','));
      assert.equal(statuses.filter((s) => s === 429).length, 2 * N);
      assert.equal(openai.requests.length, N);
      for (const r of answers.filter((a) => a.status === 429)) assert.equal(r.headers.get('retry-after'), String(secondsLeft(gws[0]!.clock.now)));
      // The admitted ones saw every remaining count from N-1 down to 0 exactly once.
      const remaining = answers.filter((a) => a.status === 200).map((a) => quota(a, 'requests')!.remaining);
      assert.deepEqual(
        remaining.sort((a, b) => a - b),
        Array.from({ length: N }, (_, i) => i),
      );
    });
  });

  describe(`a high rate limit in Redis, checked from leases (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine, { redis: true });
    const prefix = gw.redisPrefix;
    let openai: MockOpenAI;

    before(async () => {
      openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
    });
    after(async () => {
      await openai.close();
    });

    it('answers count down one by one, Redis is asked once per lease, and a stopped gateway gives back what it did not use', async () => {
      const redis = connect();
      try {
        const c = client(
          () => gw,
          () => openai,
        );
        const t = await c.tenant('leased');
        await c.policy(t.workspaceId, { value: 1_000_000 });
        const before = await scriptCalls(redis);
        const n = 200;
        for (let i = 1; i <= n; i++) {
          const res = await c.chat(t.secret);
          await res.arrayBuffer();
          assert.equal(res.status, 200);
          assert.equal(quota(res, 'requests')!.remaining, 1_000_000 - i);
        }
        const calls = (await scriptCalls(redis)) - before;
        // Other suites may share the server: the bound is loose, the per-request path would be n.
        assert.ok(calls < n / 2, `${calls} script calls for ${n} requests`);
        const counted = async (): Promise<number> => {
          const keys = await redis.keys(`${prefix}rate:*`);
          return (await Promise.all(keys.map((k) => redis.get(k)))).reduce((sum, v) => sum + Number(v), 0);
        };
        assert.ok((await counted()) > n, 'units counted ahead of use');
        await gw.stop();
        assert.equal(await counted(), n);
      } finally {
        redis.disconnect();
      }
    });
  });

  describe(`rate limits while Redis is unreachable (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine, { redis: 'unreachable' });
    let openai: MockOpenAI;

    before(async () => {
      openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
    });
    after(async () => {
      await openai.close();
    });

    it('fails open: requests are served uncounted, /health says degraded, the metrics say Redis is down', async () => {
      const c = client(
        () => gw,
        () => openai,
      );
      const t = await c.tenant('redis-down');
      await c.policy(t.workspaceId, { value: 1 });
      for (let i = 0; i < 3; i++) {
        const res = await c.chat(t.secret);
        assert.equal(res.status, 200, await res.clone().text());
        assert.equal(quota(res, 'requests'), null, 'no quota is known');
      }
      assert.equal(openai.requests.length, 3);
      assert.deepEqual(await expectJson(await fetch(`${gw.url}/health`), 200), { status: 'degraded' });
      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      assert.match(metrics, /^switchyard_redis_up 0$/m);
      const errors = /^switchyard_redis_errors_total\{component="rate_limit"\} (\d+)$/m.exec(metrics);
      assert.ok(errors !== null && Number(errors[1]) >= 3, metrics);
    });
  });
}

describe('health and metrics of the shared state', () => {
  const withRedis = useGateway({ redis: true });
  const without = useGateway();

  it('Redis up: /health ok and switchyard_redis_up 1; without REDIS_URL no Redis gauge', async () => {
    assert.deepEqual(await expectJson(await fetch(`${withRedis.url}/health`), 200), { status: 'ok' });
    assert.match(await (await fetch(`${withRedis.url}/metrics`)).text(), /^switchyard_redis_up 1$/m);
    assert.deepEqual(await expectJson(await fetch(`${without.url}/health`), 200), { status: 'ok' });
    assert.doesNotMatch(await (await fetch(`${without.url}/metrics`)).text(), /switchyard_redis_up/);
  });
});
