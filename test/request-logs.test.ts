// Request logs written by the request path, on both store engines: after a
// mix of requests (success, provider error, retry, fallback, cache miss and
// hit, streams with and without the client asking for usage, a translated
// provider, a gateway error, an integration with a pricing multiplier), each
// appears exactly once with the right fields, and the group routes return the
// aggregates this file computes from what the clients saw. Bodies are logged
// redacted by default and not at all for a workspace that turned them off.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { engines } from './support/engines.js';
import { ADMIN_KEY, type TestGateway } from './support/gateway.js';
import { startMockAnthropic, type MockAnthropic } from './support/mock-anthropic.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { createWorkspace, expectJson, workspaceKey } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const OPENAI_KEY = 'sk-mock-openai-0123456789abcdef';
const ANTHROPIC_KEY = 'sk-ant-mock-0123456789';
const MODEL = 'gpt-4o-mini';
const CATALOG = JSON.parse(readFileSync(fileURLToPath(new URL('../../src/catalog/models.json', import.meta.url)), 'utf8')) as {
  providers: Record<string, Record<string, { pricing: { input: number; output: number } }>>;
};

type Json = Record<string, any>;

/** USD from the catalog's per-million prices, computed here rather than by the gateway's code. */
function priced(provider: string, model: string, prompt: number, completion: number): number {
  const p = CATALOG.providers[provider]![model]!.pricing;
  return (prompt * p.input + completion * p.output) / 1_000_000;
}

/** The `usage` a client saw: in a JSON answer, or in the last usage-bearing event of a stream. */
function usageOf(text: string): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  if (!text.startsWith('data:')) return JSON.parse(text).usage;
  const events = text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
  return events.filter((e) => e.usage != null).at(-1).usage;
}

/** Polls GET /v1/logs?trace_id= until `n` logs are there (the queue writes every 100 ms), then returns them. */
async function logsOf(gw: TestGateway, traceId: string, n = 1, key?: string): Promise<Json[]> {
  for (let i = 0; ; i++) {
    const page = await expectJson(await gw.call(`/logs?trace_id=${encodeURIComponent(traceId)}`, key === undefined ? {} : { headers: { 'x-gateway-api-key': key } }), 200);
    if (page.data.length >= n || i === 100) return page.data;
    await new Promise((r) => setTimeout(r, 50));
  }
}

for (const engine of engines()) {
  describe(`request logs from the request path (${engine.name})`, { timeout: 120_000 }, () => {
    const gw = useGateway(engine);
    let openai: MockOpenAI;
    let broken: MockOpenAI;
    let anthropic: MockAnthropic;
    /** What each request's client saw, by trace id. */
    const sent: { traceId: string; status: number; provider: string | null; model: string | null; usage: Json | null; cost: number | null }[] = [];

    const direct = (traceId: string, extra: Record<string, string> = {}) => ({
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': openai.url,
      authorization: `Bearer ${OPENAI_KEY}`,
      'x-gateway-trace-id': traceId,
      ...extra,
    });
    const question = (content = 'what is two plus two', over: Json = {}) => ({ model: MODEL, messages: [{ role: 'user', content }], ...over });

    /** Sends a chat request, reads the whole answer, notes what the client saw. */
    async function chat(headers: Record<string, string>, body: Json, provider: string | null = 'openai', multiplier = 1): Promise<{ status: number; text: string; res: Response }> {
      const res = await gw.call('/chat/completions', { headers, body });
      const text = await res.text();
      const ok = res.status === 200;
      const usage = ok ? usageOf(text) ?? null : null;
      const model = body.model as string;
      sent.push({
        traceId: headers['x-gateway-trace-id']!,
        status: res.status,
        provider,
        model: provider === null ? null : model,
        usage,
        cost: usage === null || provider === null ? null : priced(provider, model, usage.prompt_tokens, usage.completion_tokens) * multiplier,
      });
      return { status: res.status, text, res };
    }

    before(async () => {
      [openai, broken, anthropic] = await Promise.all([startMockOpenAI({ apiKey: OPENAI_KEY }), startMockOpenAI({ apiKey: OPENAI_KEY, name: 'broken' }), startMockAnthropic({ apiKey: ANTHROPIC_KEY })]);
    });
    after(async () => {
      await Promise.all([openai?.close(), broken?.close(), anthropic?.close()]);
    });

    it('a plain success: ids, span headers, metadata, tokens from usage, cost from the catalog, bodies, latency', async () => {
      const traceId = `ok-${randomUUID()}`;
      const r = await chat(
        direct(traceId, {
          'x-gateway-span-id': 'span-1',
          'x-gateway-parent-span-id': 'parent-1',
          'x-gateway-span-name': 'answer question',
          'x-gateway-metadata': JSON.stringify({ team: 'search', _user: 'u-1' }),
        }),
        question(),
      );
      assert.equal(r.status, 200);
      const [log, ...more] = await logsOf(gw, traceId);
      assert.equal(more.length, 0, 'logged once');
      const want = sent.at(-1)!;
      assert.equal(log!.status, 200);
      assert.equal(log!.provider, 'openai');
      assert.equal(log!.model, MODEL);
      assert.equal(log!.endpoint, 'chat');
      assert.equal(log!.method, 'POST');
      assert.equal(log!.path, '/chat/completions');
      assert.equal(log!.span_id, 'span-1');
      assert.equal(log!.parent_span_id, 'parent-1');
      assert.equal(log!.span_name, 'answer question');
      assert.deepEqual(log!.metadata, { team: 'search', _user: 'u-1' });
      assert.equal(log!.prompt_tokens, want.usage!.prompt_tokens);
      assert.equal(log!.completion_tokens, want.usage!.completion_tokens);
      assert.equal(log!.total_tokens, want.usage!.total_tokens);
      assert.equal(log!.tokens_estimated, false);
      assert.ok(Math.abs(log!.cost - want.cost!) < 1e-12, `cost ${log!.cost} vs ${want.cost}`);
      assert.equal(log!.cache_status, 'DISABLED');
      assert.equal(log!.retry_count, 0);
      assert.equal(log!.last_used_option_index, 'config');
      assert.equal(log!.error, null);
      assert.equal(log!.log_format, 'v1');
      assert.equal(log!.workspace_id.length > 0, true);
      assert.ok(log!.latency_ms >= 0 && log!.upstream_ttfb_ms >= 0 && log!.upstream_ttfb_ms <= log!.latency_ms + 1);
      assert.ok(Math.abs(log!.created_at_ms - Date.now()) < 60_000);

      const detail = await expectJson(await gw.call(`/logs/${log!.id}`), 200);
      assert.deepEqual(detail.request.body, question());
      assert.deepEqual(detail.response.body, JSON.parse(r.text));
      assert.equal(detail.request.headers['x-gateway-provider'], 'openai');
      assert.equal(detail.request.headers.authorization, undefined, 'no credentials in logged headers');
      assert.ok(!JSON.stringify(detail).includes(OPENAI_KEY));
    });

    it('a provider error: its status and error body, no tokens or cost', async () => {
      const traceId = `err-${randomUUID()}`;
      const error = { error: { message: 'The server had an error', type: 'server_error', param: null, code: null } };
      openai.enqueue('/v1/chat/completions', { status: 500, body: error });
      const r = await chat(direct(traceId), question('error please'));
      assert.equal(r.status, 500);
      const [log] = await logsOf(gw, traceId);
      assert.equal(log!.status, 500);
      assert.deepEqual(log!.error, error);
      assert.equal(log!.total_tokens, null);
      assert.equal(log!.cost, null);
    });

    it('a retry and a fallback: retry count and the target path that answered', async () => {
      const retried = `retry-${randomUUID()}`;
      openai.enqueue('/v1/chat/completions', { status: 503, body: { error: { message: 'busy', type: 'server_error' } } });
      const config = JSON.stringify({ provider: 'openai', custom_host: openai.url, api_key: OPENAI_KEY, retry: { attempts: 2 } });
      assert.equal((await chat({ 'x-gateway-config': config, 'x-gateway-trace-id': retried }, question('retry me'))).status, 200);
      const [r] = await logsOf(gw, retried);
      assert.equal(r!.retry_count, 1);
      assert.equal(r!.status, 200);

      const fellBack = `fallback-${randomUUID()}`;
      broken.enqueue('/v1/chat/completions', { status: 502, body: { error: { message: 'down', type: 'server_error' } } });
      const fallback = JSON.stringify({
        strategy: { mode: 'fallback' },
        targets: [
          { provider: 'openai', custom_host: broken.url, api_key: OPENAI_KEY },
          { provider: 'openai', custom_host: openai.url, api_key: OPENAI_KEY },
        ],
      });
      assert.equal((await chat({ 'x-gateway-config': fallback, 'x-gateway-trace-id': fellBack }, question('fall back'))).status, 200);
      const [f] = await logsOf(gw, fellBack);
      assert.equal(f!.last_used_option_index, 'config.targets[1]');
      assert.equal(f!.status, 200);
      assert.ok(f!.total_tokens > 0);
    });

    it('a cache miss then a hit: statuses, the hit costs nothing and keeps the tokens', async () => {
      const config = JSON.stringify({ cache: { mode: 'simple' } });
      const body = question(`cache ${randomUUID()}`);
      const miss = `miss-${randomUUID()}`;
      const hit = `hit-${randomUUID()}`;
      await chat(direct(miss, { 'x-gateway-config': config }), body);
      await logsOf(gw, miss);
      const r = await chat(direct(hit, { 'x-gateway-config': config }), body);
      assert.equal(r.res.headers.get('x-gateway-cache-status'), 'HIT');
      sent.at(-1)!.cost = 0;
      const [m] = await logsOf(gw, miss);
      const [h] = await logsOf(gw, hit);
      assert.equal(m!.cache_status, 'MISS');
      assert.equal(h!.cache_status, 'HIT');
      assert.equal(h!.cost, 0);
      assert.equal(h!.total_tokens, m!.total_tokens);
      assert.equal(h!.provider, 'openai');
    });

    it('streams: usage logged whether or not the client asked for it', async () => {
      const asked = `stream-asked-${randomUUID()}`;
      const r1 = await chat(direct(asked), question('stream with usage', { stream: true, stream_options: { include_usage: true } }));
      assert.equal(r1.status, 200);
      const [a] = await logsOf(gw, asked);
      assert.equal(a!.total_tokens, sent.at(-1)!.usage!.total_tokens);

      const silent = `stream-silent-${randomUUID()}`;
      const res = await gw.call('/chat/completions', { headers: direct(silent), body: question('stream without usage', { stream: true }) });
      const text = await res.text();
      assert.ok(!text.includes('"usage"'), 'the client that did not ask sees no usage');
      const [s] = await logsOf(gw, silent);
      assert.ok(s!.total_tokens > 0, 'usage logged anyway');
      assert.equal(s!.prompt_tokens + s!.completion_tokens, s!.total_tokens);
      const detail = await expectJson(await gw.call(`/logs/${s!.id}`), 200);
      assert.equal(typeof detail.response.body, 'string', 'the stream is logged as its SSE text');
      assert.ok(detail.response.body.startsWith('data: '));
      // The analytics below count this request with the tokens the log holds.
      sent.push({ traceId: silent, status: 200, provider: 'openai', model: MODEL, usage: { prompt_tokens: s!.prompt_tokens, completion_tokens: s!.completion_tokens, total_tokens: s!.total_tokens }, cost: priced('openai', MODEL, s!.prompt_tokens, s!.completion_tokens) });
    });

    it('an answer without usage: tokens counted by the gateway and marked estimated', async () => {
      // openai-compatible is not asked for stream usage (it may not take the option), and the mock then sends none.
      const traceId = `estimated-${randomUUID()}`;
      const res = await gw.call('/chat/completions', {
        headers: { ...direct(traceId), 'x-gateway-provider': 'openai-compatible' },
        body: question('count my tokens please', { stream: true }),
      });
      assert.equal(res.status, 200);
      assert.ok(!(await res.text()).includes('"usage"'));
      const [log] = await logsOf(gw, traceId);
      assert.equal(log!.tokens_estimated, true);
      assert.ok(log!.prompt_tokens > 0 && log!.completion_tokens > 0);
      assert.equal(log!.total_tokens, log!.prompt_tokens + log!.completion_tokens);
      // Counted in the analytics below with the tokens the log holds; the catalog has no price for openai-compatible.
      sent.push({ traceId, status: 200, provider: 'openai-compatible', model: MODEL, usage: { prompt_tokens: log!.prompt_tokens, completion_tokens: log!.completion_tokens, total_tokens: log!.total_tokens }, cost: null });
    });

    it('a client that leaves mid-stream: logged as sent, error client_closed, tokens counted from what passed', async () => {
      const traceId = `left-${randomUUID()}`;
      const chunk = (content: string) => JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: MODEL, choices: [{ index: 0, delta: { content }, finish_reason: null }] });
      openai.enqueue('/v1/chat/completions', { sse: [chunk('Hello'), chunk(' there'), chunk(' and more')], chunkDelayMs: 500 });
      const abort = new AbortController();
      const res = await fetch(`${gw.v1}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY, ...direct(traceId) },
        body: JSON.stringify(question('leave early', { stream: true })),
        signal: abort.signal,
      });
      const reader = res.body!.getReader();
      await reader.read();
      abort.abort();
      await reader.read().catch(() => {});
      const [log] = await logsOf(gw, traceId);
      assert.equal(log!.status, 200);
      assert.equal(log!.error.error.code, 'client_closed');
      assert.equal(log!.tokens_estimated, true);
      assert.ok(log!.completion_tokens > 0);
      sent.push({ traceId, status: 200, provider: 'openai', model: MODEL, usage: { prompt_tokens: log!.prompt_tokens, completion_tokens: log!.completion_tokens, total_tokens: log!.total_tokens }, cost: priced('openai', MODEL, log!.prompt_tokens, log!.completion_tokens) });
    });

    it('a translated provider (Anthropic), whole and streamed', async () => {
      const model = 'claude-3-5-haiku-20241022';
      const headers = (traceId: string) => ({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': anthropic.url, authorization: `Bearer ${ANTHROPIC_KEY}`, 'x-gateway-trace-id': traceId });
      const whole = `anthropic-${randomUUID()}`;
      assert.equal((await chat(headers(whole), { model, max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] }, 'anthropic')).status, 200);
      const [w] = await logsOf(gw, whole);
      assert.equal(w!.provider, 'anthropic');
      assert.equal(w!.total_tokens, sent.at(-1)!.usage!.total_tokens);
      assert.ok(Math.abs(w!.cost - sent.at(-1)!.cost!) < 1e-12);

      const streamed = `anthropic-stream-${randomUUID()}`;
      assert.equal((await chat(headers(streamed), { model, max_tokens: 64, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hello' }] }, 'anthropic')).status, 200);
      const [s] = await logsOf(gw, streamed);
      assert.equal(s!.total_tokens, sent.at(-1)!.usage!.total_tokens);
    });

    it('a gateway error: logged with the envelope the client got', async () => {
      const traceId = `bad-${randomUUID()}`;
      const res = await gw.call('/chat/completions', { headers: direct(traceId), body: '{"model": ' });
      assert.equal(res.status, 400);
      const envelope = await res.json();
      sent.push({ traceId, status: 400, provider: null, model: null, usage: null, cost: null });
      const [log] = await logsOf(gw, traceId);
      assert.equal(log!.status, 400);
      assert.deepEqual(log!.error, envelope);
      assert.equal(log!.provider, null);
    });

    it('an integration: its provider and integration ids, cost times its pricing multiplier', async () => {
      const integration = await expectJson(
        await gw.call('/integrations', {
          body: { name: 'Priced', ai_provider_id: 'openai', key: OPENAI_KEY, slug: `priced-${engine.name}`, workspace_id: 'default', configurations: { custom_host: openai.url }, pricing_adjustments: { multiplier: 2.5 } },
        }),
        201,
      );
      const traceId = `integration-${randomUUID()}`;
      await chat({ 'x-gateway-provider': `@priced-${engine.name}`, 'x-gateway-trace-id': traceId }, question('priced'), 'openai', 2.5);
      const [log] = await logsOf(gw, traceId);
      assert.equal(log!.integration_id, integration.id);
      assert.ok(typeof log!.virtual_key_id === 'string');
      assert.ok(Math.abs(log!.cost - sent.at(-1)!.cost!) < 1e-12, `${log!.cost} vs ${sent.at(-1)!.cost}`);
    });

    it('secrets in bodies are redacted; a workspace with log_bodies off keeps no bodies', async () => {
      const traceId = `secret-${randomUUID()}`;
      const secret = 'sk-proj-abcdefghijklmnopqrstuvwxyz012345';
      await chat(direct(traceId), question(`my key is ${secret}`));
      const [log] = await logsOf(gw, traceId);
      const detail = await expectJson(await gw.call(`/logs/${log!.id}`), 200);
      assert.ok(!JSON.stringify(detail).includes(secret));
      assert.ok(JSON.stringify(detail.request.body).includes('my key is'));

      const ws = await createWorkspace(gw, `quiet-${engine.name}`);
      await expectJson(await gw.call(`/workspaces/${ws}`, { method: 'PUT', body: { settings: { log_bodies: false } } }), 200);
      const key = await workspaceKey(gw, ws, ['completions.write', 'logs.list', 'logs.view']);
      const quiet = `quiet-${randomUUID()}`;
      const res = await gw.call('/chat/completions', { headers: { ...direct(quiet), 'x-gateway-api-key': key }, body: question('keep this out of the log') });
      assert.equal(res.status, 200);
      await res.text();
      const [q] = await logsOf(gw, quiet, 1, key);
      assert.ok(q!.total_tokens > 0, 'tokens still logged');
      const qd = await expectJson(await gw.call(`/logs/${q!.id}`, { headers: { 'x-gateway-api-key': key } }), 200);
      assert.equal(qd.request.body, null);
      assert.equal(qd.response.body, null);
    });

    it('every request above appears once, and the group routes agree with what the clients saw', async () => {
      for (const s of sent) assert.equal((await logsOf(gw, s.traceId)).length, 1, s.traceId);
      const mine = sent.filter((s) => s.model === MODEL);
      const tokens = mine.reduce((n, s) => n + (s.usage?.total_tokens ?? 0), 0);
      const cost = mine.reduce((n, s) => n + (s.cost ?? 0), 0);
      // Every request of this workspace with this model went through this file; the quiet workspace's request is elsewhere.
      const groups = await expectJson(await gw.call(`/analytics/groups/model?workspace_id=default&columns=cost,total_tokens,error_count,success_rate`), 200);
      const g = groups.data.find((x: Json) => x.model === MODEL);
      const requests = sent.filter((s) => s.model === MODEL).length;
      assert.equal(g.requests, requests);
      assert.equal(g.total_tokens, tokens);
      assert.ok(Math.abs(g.cost - cost) < 1e-9, `${g.cost} vs ${cost}`);
      const errors = sent.filter((s) => s.model === MODEL && s.status >= 400).length;
      assert.equal(g.error_count, errors);
      assert.ok(Math.abs(g.success_rate - (100 * (requests - errors)) / requests) < 1e-9);

      const byStatus = await expectJson(await gw.call(`/logs/groups/status_code?workspace_id=default`), 200);
      const count = (status: number) => byStatus.data.find((x: Json) => x.status_code === status)?.requests ?? 0;
      assert.equal(count(500), sent.filter((s) => s.status === 500).length);
      assert.equal(count(400), sent.filter((s) => s.status === 400).length);
    });

    it('metrics count tokens, cost, cache statuses, fallbacks and the log queue', async () => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      const value = (line: RegExp): number => Number(text.split('\n').find((l) => line.test(l))?.split(' ').at(-1) ?? NaN);
      assert.ok(value(/^switchyard_tokens_total\{provider="openai",model="gpt-4o-mini",type="input"\}/) > 0);
      assert.ok(value(/^switchyard_cost_usd_total\{provider="openai",model="gpt-4o-mini"\}/) > 0);
      assert.equal(value(/^switchyard_cache_requests_total\{status="HIT"\}/), 1);
      assert.equal(value(/^switchyard_fallbacks_total\{provider="openai"\}/), 1);
      assert.equal(value(/^switchyard_log_records_total\{outcome="dropped"\}/), 0);
      assert.ok(value(/^switchyard_log_records_total\{outcome="flushed"\}/) >= sent.length);
      assert.equal(value(/^switchyard_log_queue_depth /), 0);
    });
  });
}
