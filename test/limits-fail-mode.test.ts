// Rate-limit and usage-limit policies while Redis goes away and comes back,
// over HTTP on both store engines, with a TCP proxy in front of Redis that the
// test closes and opens again: a policy that fails open admits requests
// uncounted, one that fails closed refuses them (429 or 412, Retry-After, the
// message says the limit cannot be checked now, nothing sent upstream);
// /health says degraded and the metrics count both outcomes by policy kind;
// once Redis is back both kinds count again from where they were.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engines } from './support/engines.js';
import { assertEnvelope, freePort, until } from './support/http.js';
import { answerUsing, startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { RedisProxy } from './support/redis.js';
import { createWorkspace, expectJson, workspaceKey } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const OPENAI_KEY = 'sk-mock-openai-0123456789';
/** A chat answer using 20 tokens: what each admitted budget request settles to. */
const USES_20 = answerUsing(20);

type Kind = 'rate' | 'usage';
type Mode = 'open' | 'closed';

for (const engine of engines()) {
  describe(`limits while Redis goes away and comes back (${engine.name})`, { timeout: 60_000 }, () => {
    let openai: MockOpenAI;
    let proxy: RedisProxy;
    /** A workspace per kind and fail mode, each with one policy and one key. */
    const secrets = {} as Record<`${Kind}-${Mode}`, string>;

    before(async () => {
      openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
      proxy = new RedisProxy(await freePort());
      await proxy.start();
    });
    // Redis through the proxy, which the test closes and opens again.
    const gw = useGateway(engine, { redis: true, env: () => ({ REDIS_URL: proxy.url }) });

    before(async () => {
      for (const mode of ['open', 'closed'] as const) {
        const rateWs = await createWorkspace(gw, `rate ${mode}`);
        // Two requests a minute (the gateway's clock stands still: one window throughout).
        await expectJson(await gw.call('/policies/rate-limits', { body: { ...match(rateWs), type: 'requests', unit: 'rpm', value: 2, fail_mode: mode } }), 201);
        secrets[`rate-${mode}`] = await workspaceKey(gw, rateWs, ['completions.write']);
        const usageWs = await createWorkspace(gw, `usage ${mode}`);
        // Each request reserves 20 tokens (8 estimated for the prompt, max_tokens 12) and uses 20: three fit.
        await expectJson(await gw.call('/policies/usage-limits', { body: { ...match(usageWs), type: 'tokens', credit_limit: 60, fail_mode: mode } }), 201);
        secrets[`usage-${mode}`] = await workspaceKey(gw, usageWs, ['completions.write']);
      }
    });
    after(async () => {
      await proxy.stop();
      await openai.close();
    });

    const match = (ws: string) => ({ conditions: [{ key: 'workspace_id', value: ws }], group_by: [{ key: 'workspace_id' }], workspace_id: ws });
    const chat = (secret: string): Promise<Response> =>
      gw.call('/chat/completions', {
        headers: { 'x-gateway-api-key': secret, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url, authorization: `Bearer ${OPENAI_KEY}` },
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 12 },
      });
    /** A request that must be answered; returns its remaining-requests quota header (null: none). */
    const admitted = async (kind: Kind, mode: Mode): Promise<string | null> => {
      openai.enqueue('/v1/chat/completions', USES_20);
      const res = await chat(secrets[`${kind}-${mode}`]);
      assert.equal(res.status, 200, `${kind} ${mode}: ${await res.clone().text()}`);
      await res.arrayBuffer();
      return res.headers.get('x-gateway-ratelimit-remaining-requests');
    };
    /** A request that must be refused before reaching the provider; its error. */
    const refused = async (kind: Kind, mode: Mode): Promise<{ res: Response; error: Awaited<ReturnType<typeof assertEnvelope>> }> => {
      const sent = openai.requests.length;
      const res = await chat(secrets[`${kind}-${mode}`]);
      const error = await assertEnvelope(res, kind === 'rate' ? 429 : 412);
      assert.equal(openai.requests.length, sent, 'nothing sent upstream');
      return { res, error };
    };
    const health = async (): Promise<string> => ((await (await fetch(`${gw.url}/health`)).json()) as { status: string }).status;
    const uncounted = async (): Promise<Record<string, number>> => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      const out: Record<string, number> = {};
      for (const m of text.matchAll(/^switchyard_limits_uncounted_total\{kind="(\w+)",outcome="(\w+)"\} (\d+)$/gm)) out[`${m[1]} ${m[2]}`] = Number(m[3]);
      return out;
    };

    it('open admits uncounted and closed refuses while Redis is away; both count again once it is back', async () => {
      // Redis up: every policy counts, whatever its fail mode.
      assert.equal(await admitted('rate', 'open'), '1');
      assert.equal(await admitted('rate', 'closed'), '1');
      await admitted('usage', 'open');
      await admitted('usage', 'closed');
      assert.deepEqual(await uncounted(), {});

      await proxy.stop();
      await until('/health degraded', async () => (await health()) === 'degraded');

      // Fail open: more requests than either limit has room for, all answered, none counted.
      for (let i = 0; i < 3; i++) assert.equal(await admitted('rate', 'open'), null, 'no quota is known');
      for (let i = 0; i < 4; i++) await admitted('usage', 'open');
      // Fail closed: refused, saying the limit cannot be checked now, with a Retry-After.
      const rate = await refused('rate', 'closed');
      assert.equal(rate.error.code, 'rate_limit_unavailable');
      assert.match(rate.error.message, /^rate limits cannot be checked now and policy [0-9a-f-]{36} fails closed; retry after 2 s$/);
      assert.equal(rate.res.headers.get('retry-after'), '2');
      const usage = await refused('usage', 'closed');
      assert.equal(usage.error.code, 'usage_limit_unavailable');
      assert.match(usage.error.message, /^usage limits cannot be checked now and policy [0-9a-f-]{36} fails closed; retry after 2 s$/);
      assert.equal(usage.res.headers.get('retry-after'), '2');

      assert.deepEqual(await uncounted(), { 'rate_limit admitted': 3, 'rate_limit refused': 1, 'usage_limit admitted': 4, 'usage_limit refused': 1 });
      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      assert.match(metrics, /^switchyard_redis_up 0$/m);

      await proxy.start();
      await until('/health ok', async () => (await health()) === 'ok');

      // Counting again from where each was before Redis went away: what it admitted uncounted is not there.
      for (const mode of ['open', 'closed'] as const) {
        assert.equal(await admitted('rate', mode), '0', `rate ${mode}`);
        assert.equal((await refused('rate', mode)).error.code, 'rate_limit_exceeded');
        await admitted('usage', mode);
        await admitted('usage', mode);
        const exhausted = await refused('usage', mode);
        assert.equal(exhausted.error.code, 'usage_limit_exceeded');
        assert.match(exhausted.error.message, /exhausted/);
      }
      assert.deepEqual(await uncounted(), { 'rate_limit admitted': 3, 'rate_limit refused': 1, 'usage_limit admitted': 4, 'usage_limit refused': 1 });
    });
  });
}
