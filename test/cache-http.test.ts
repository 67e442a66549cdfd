// The simple cache over HTTP, on both store engines and both cache homes
// (process memory, Redis): miss then hit with one upstream call, exact match
// on the normalised body (key order ignored, any other change a miss),
// metadata ignored, namespaces and workspaces partition, force refresh,
// only successful answers stored, streamed answers replayed byte for byte,
// max_age on the gateway's manual clock, DISABLED without a cache config;
// two gateway processes sharing Redis share the cache, and a gateway whose
// Redis is away misses and still serves.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engines } from './support/engines.js';
import { type TestGateway } from './support/gateway.js';
import { assertEnvelope } from './support/http.js';
import { startMockAnthropic, type MockAnthropic } from './support/mock-anthropic.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { createWorkspace, workspaceKey } from './support/tenants.js';
import { useGateway, useGatewayPair } from './support/use-gateway.js';

const OPENAI_KEY = 'sk-mock-openai-0123456789';
const ANTHROPIC_KEY = 'sk-ant-mock-0123456789';
const CHAT = '/v1/chat/completions';
const STATUS = 'x-gateway-cache-status';
const CACHE = (over: Record<string, unknown> = {}): string => JSON.stringify({ cache: { mode: 'simple', max_age: 600, ...over } });
const QUESTION = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'what is two plus two' }] };

function chatOf(gw: () => TestGateway, openai: () => MockOpenAI) {
  return (opts: { headers?: Record<string, string>; body?: unknown; config?: string | null } = {}): Promise<Response> => {
    const config = opts.config === undefined ? CACHE() : opts.config;
    return gw().call('/chat/completions', {
      headers: {
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': openai().url,
        authorization: `Bearer ${OPENAI_KEY}`,
        ...(config === null ? {} : { 'x-gateway-config': config }),
        ...opts.headers,
      },
      body: opts.body ?? QUESTION,
    });
  };
}

const upstreamCalls = (openai: MockOpenAI): number => openai.requests.filter((r) => r.path.startsWith(CHAT)).length;

for (const engine of engines()) {
  for (const backend of ['memory', 'redis'] as const) {
    describe(`simple cache (${engine.name}, ${backend})`, { timeout: 60_000 }, () => {
      const gw = useGateway(engine, { redis: backend === 'redis' });
      let openai: MockOpenAI;
      let anthropic: MockAnthropic;
      const chat = chatOf(() => gw, () => openai);

      before(async () => {
        openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
        anthropic = await startMockAnthropic({ apiKey: ANTHROPIC_KEY });
      });
      after(async () => {
        await Promise.all([openai.close(), anthropic.close()]);
      });
      beforeEach(() => {
        openai.reset();
        anthropic.reset();
      });

      it('answers a repeat from the cache: MISS then HIT, one upstream call, same body, gateway headers', async () => {
        const body = { ...QUESTION, messages: [{ role: 'user', content: `repeat ${backend}` }] };
        const first = await chat({ body });
        assert.equal(first.status, 200);
        assert.equal(first.headers.get(STATUS), 'MISS');
        const firstText = await first.text();
        const second = await chat({ body });
        assert.equal(second.status, 200);
        assert.equal(second.headers.get(STATUS), 'HIT');
        assert.equal(await second.text(), firstText);
        assert.equal(upstreamCalls(openai), 1);
        assert.match(second.headers.get('content-type') ?? '', /application\/json/);
        assert.equal(second.headers.get('x-gateway-provider'), 'openai');
        assert.equal(second.headers.get('x-gateway-last-used-option-index'), 'config');
        assert.equal(second.headers.get('x-gateway-retry-attempt-count'), '0');
        const trace = second.headers.get('x-gateway-trace-id');
        assert.ok(trace !== null && trace !== first.headers.get('x-gateway-trace-id'), 'a hit has a trace id of its own');
      });

      it('matches the normalised body: key order ignored, any other change a miss', async () => {
        const content = `normalised ${backend}`;
        await (await chat({ body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content }], temperature: 0 } })).text();
        const reordered = await chat({ body: { temperature: 0, messages: [{ content, role: 'user' }], model: 'gpt-4o-mini' } });
        assert.equal(reordered.headers.get(STATUS), 'HIT');
        await reordered.text();
        const other = await chat({ body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content }], temperature: 1 } });
        assert.equal(other.headers.get(STATUS), 'MISS');
        await other.text();
        assert.equal(upstreamCalls(openai), 2);
      });

      it('ignores metadata and unrelated headers', async () => {
        const body = { ...QUESTION, messages: [{ role: 'user', content: `metadata ${backend}` }] };
        await (await chat({ body, headers: { 'x-gateway-metadata': JSON.stringify({ _user: 'ann' }) } })).text();
        const res = await chat({ body, headers: { 'x-gateway-metadata': JSON.stringify({ _user: 'bob' }), 'x-request-id': 'other' } });
        assert.equal(res.headers.get(STATUS), 'HIT');
        await res.text();
        assert.equal(upstreamCalls(openai), 1);
      });

      it('partitions by x-gateway-cache-namespace', async () => {
        const body = { ...QUESTION, messages: [{ role: 'user', content: `namespace ${backend}` }] };
        const a1 = await chat({ body, headers: { 'x-gateway-cache-namespace': 'user-a' } });
        assert.equal(a1.headers.get(STATUS), 'MISS');
        await a1.text();
        const b1 = await chat({ body, headers: { 'x-gateway-cache-namespace': 'user-b' } });
        assert.equal(b1.headers.get(STATUS), 'MISS');
        await b1.text();
        const plain = await chat({ body });
        assert.equal(plain.headers.get(STATUS), 'MISS', 'no namespace is a partition of its own');
        await plain.text();
        const a2 = await chat({ body, headers: { 'x-gateway-cache-namespace': 'user-a', 'x-gateway-metadata': JSON.stringify({ k: 'v' }) } });
        assert.equal(a2.headers.get(STATUS), 'HIT');
        await a2.text();
        assert.equal(upstreamCalls(openai), 3);
      });

      it('keeps workspaces apart', async () => {
        const body = { ...QUESTION, messages: [{ role: 'user', content: `workspace ${backend}` }] };
        await (await chat({ body })).text();
        const ws = await createWorkspace(gw, `cache ${backend} ${Math.random().toString(36).slice(2, 8)}`);
        const secret = await workspaceKey(gw, ws, ['completions.write']);
        const other = await chat({ body, headers: { 'x-gateway-api-key': secret } });
        assert.equal(other.status, 200);
        assert.equal(other.headers.get(STATUS), 'MISS');
        await other.text();
        assert.equal(upstreamCalls(openai), 2);
      });

      it('force refresh calls the provider and stores the new answer', async () => {
        const body = { ...QUESTION, messages: [{ role: 'user', content: `refresh ${backend}` }] };
        await (await chat({ body })).text();
        openai.enqueue(CHAT, { body: { id: 'chatcmpl-fresh', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'fresh' }, finish_reason: 'stop' }] } });
        const refreshed = await chat({ body, headers: { 'x-gateway-cache-force-refresh': 'true' } });
        assert.equal(refreshed.status, 200);
        assert.equal(refreshed.headers.get(STATUS), 'REFRESH');
        assert.equal(((await refreshed.json()) as { id: string }).id, 'chatcmpl-fresh');
        const next = await chat({ body });
        assert.equal(next.headers.get(STATUS), 'HIT');
        assert.equal(((await next.json()) as { id: string }).id, 'chatcmpl-fresh', 'the refreshed answer replaced the old one');
        assert.equal(upstreamCalls(openai), 2);
      });

      it('refuses a force-refresh value other than true or false, naming the header', async () => {
        const res = await chat({ headers: { 'x-gateway-cache-force-refresh': 'yes' } });
        const e = await assertEnvelope(res, 400);
        assert.equal(e.param, 'x-gateway-cache-force-refresh');
        assert.equal(upstreamCalls(openai), 0);
      });

      it('does not store error answers', async () => {
        const body = { ...QUESTION, messages: [{ role: 'user', content: `error ${backend}` }] };
        openai.enqueue(CHAT, { status: 500, body: { error: { message: 'boom', type: 'server_error', param: null, code: null } } });
        const failed = await chat({ body });
        assert.equal(failed.status, 500);
        assert.equal(failed.headers.get(STATUS), 'MISS');
        await failed.text();
        const retried = await chat({ body });
        assert.equal(retried.status, 200);
        assert.equal(retried.headers.get(STATUS), 'MISS');
        await retried.text();
        assert.equal(upstreamCalls(openai), 2);
      });

      it('replays a streamed answer as the same SSE bytes', async () => {
        const body = { ...QUESTION, stream: true, messages: [{ role: 'user', content: `stream ${backend}` }] };
        const first = await chat({ body });
        assert.equal(first.headers.get(STATUS), 'MISS');
        const sent = await first.text();
        assert.match(sent, /^data: /);
        assert.match(sent, /data: \[DONE\]/);
        const hit = await chat({ body });
        assert.equal(hit.headers.get(STATUS), 'HIT');
        assert.match(hit.headers.get('content-type') ?? '', /text\/event-stream/);
        assert.equal(await hit.text(), sent);
        assert.equal(upstreamCalls(openai), 1);
        const whole = await chat({ body: { ...body, stream: false } });
        assert.equal(whole.headers.get(STATUS), 'MISS', 'a stream and a whole answer are different requests');
        await whole.text();
      });

      it('expires entries after max_age seconds', async () => {
        const body = { ...QUESTION, messages: [{ role: 'user', content: `expiry ${backend}` }] };
        const config = CACHE({ max_age: 60 });
        await (await chat({ body, config })).text();
        gw.clock.advance(59_000);
        const fresh = await chat({ body, config });
        assert.equal(fresh.headers.get(STATUS), 'HIT');
        await fresh.text();
        gw.clock.advance(1_000);
        const expired = await chat({ body, config });
        assert.equal(expired.headers.get(STATUS), 'MISS');
        await expired.text();
        assert.equal(upstreamCalls(openai), 2);
      });

      it('answers DISABLED without a cache in the config, and stores nothing', async () => {
        const body = { ...QUESTION, messages: [{ role: 'user', content: `disabled ${backend}` }] };
        for (let i = 0; i < 2; i++) {
          const res = await chat({ body, config: null, headers: { 'x-gateway-cache-force-refresh': 'true' } });
          assert.equal(res.status, 200);
          assert.equal(res.headers.get(STATUS), 'DISABLED');
          await res.text();
        }
        assert.equal(upstreamCalls(openai), 2);
      });

      it('caches translated answers as the client received them (Anthropic, JSON and stream)', async () => {
        const headers = { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': anthropic.url, authorization: `Bearer ${ANTHROPIC_KEY}` };
        for (const stream of [false, true]) {
          const body = { model: 'claude-3-5-haiku-latest', max_tokens: 100, stream, messages: [{ role: 'user', content: `translated ${backend}` }] };
          const miss = await chat({ headers, body });
          assert.equal(miss.status, 200, await miss.clone().text());
          assert.equal(miss.headers.get(STATUS), 'MISS');
          const sent = await miss.text();
          assert.ok(stream ? sent.startsWith('data: ') : JSON.parse(sent).object === 'chat.completion');
          const hit = await chat({ headers, body });
          assert.equal(hit.headers.get(STATUS), 'HIT');
          assert.equal(hit.headers.get('x-gateway-provider'), 'anthropic');
          assert.match(hit.headers.get('content-type') ?? '', stream ? /text\/event-stream/ : /application\/json/);
          assert.equal(await hit.text(), sent);
        }
        assert.equal(anthropic.requests.length, 2);
      });

      it('caches under a saved config and its cache settings', async () => {
        const saved = await gw.call('/configs', { body: { name: `cache ${backend}`, config: { cache: { mode: 'simple' } } } });
        assert.equal(saved.status, 201, await saved.clone().text());
        const { id } = (await saved.json()) as { id: string };
        const body = { ...QUESTION, messages: [{ role: 'user', content: `saved ${backend}` }] };
        const statuses: (string | null)[] = [];
        for (let i = 0; i < 2; i++) {
          const res = await chat({ body, config: id });
          statuses.push(res.headers.get(STATUS));
          await res.text();
        }
        assert.deepEqual(statuses, ['MISS', 'HIT']);
        assert.equal(upstreamCalls(openai), 1);
      });
    });
  }

  describe(`simple cache shared by two gateway processes through Redis (${engine.name})`, { timeout: 60_000 }, () => {
    const gws = useGatewayPair(engine);
    let openai: MockOpenAI;

    before(async () => {
      openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
    });
    after(async () => {
      await openai.close();
    });

    it("one process's miss is the other's hit, streamed or not", async () => {
      for (const stream of [false, true]) {
        const body = { ...QUESTION, stream, messages: [{ role: 'user', content: `shared ${stream}` }] };
        const miss = await chatOf(() => gws[0]!, () => openai)({ body });
        assert.equal(miss.headers.get(STATUS), 'MISS');
        const sent = await miss.text();
        const hit = await chatOf(() => gws[1]!, () => openai)({ body });
        assert.equal(hit.headers.get(STATUS), 'HIT');
        assert.equal(await hit.text(), sent);
      }
      assert.equal(upstreamCalls(openai), 2);
    });
  });

  describe(`simple cache while Redis is unreachable (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine, { redis: 'unreachable' });
    let openai: MockOpenAI;

    before(async () => {
      openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
    });
    after(async () => {
      await openai.close();
    });

    it('misses and still serves every request', async () => {
      const chat = chatOf(() => gw, () => openai);
      for (let i = 0; i < 2; i++) {
        const res = await chat();
        assert.equal(res.status, 200);
        assert.equal(res.headers.get(STATUS), 'MISS');
        await res.text();
      }
      assert.equal(upstreamCalls(openai), 2);
      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      assert.match(metrics, /switchyard_redis_errors_total\{component="cache"\} [1-9]/);
    });
  });
}
