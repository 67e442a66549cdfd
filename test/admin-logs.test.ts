// /v1/logs, /v1/logs/:id, /v1/logs/groups/:groupBy and
// /v1/analytics/groups/:groupBy over HTTP, on SQLite and on Postgres, against
// a seeded mix of logs (written through the repository: the request path is
// not wired yet). Every filter and every groupBy and column is checked
// against numbers this file computes itself; percentiles on latencies
// 1..100 are 95 and 99; refusals name their parameter; data visibility
// settings, archived workspaces and workspace isolation decide what each key
// sees; a restart keeps the logs.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CheckResult, HookResult, HookResults } from '../src/guardrails/results.js';
import { forLog } from '../src/guardrails/log-form.js';
import { READ_TIMEOUT } from '../src/store/db.js';
import type { LogRecord } from '../src/store/log-record.js';
import { latencyEstimate } from '../src/store/log-rollup.js';
import { GROUP_BY, GROUP_COLUMNS, type GroupBy } from '../src/store/logs.js';
import { engines } from './support/engines.js';
import { random } from './support/random.js';
import { as, createWorkspace, email, expect, expectError, seedKey, type Json } from './support/identity.js';
import { logRecord } from './support/logs.js';
import { useGateway } from './support/use-gateway.js';

const LOG_SCOPES = ['logs.list', 'logs.view', 'analytics.view'];
const BASE_MS = Date.UTC(2026, 5, 1);
const MINUTE = 60_000;

const FIELD: Record<Exclude<GroupBy, 'hook_status' | 'guardrail_check'>, keyof LogRecord> = {
  ai_service: 'provider',
  model: 'model',
  status_code: 'status',
  api_key: 'apiKeyId',
  config: 'configId',
  workspace: 'workspaceId',
  provider: 'virtualKeyId',
  prompt: 'promptId',
};

type Outcome = 'passed' | 'failed' | 'errored';
const AT = '2026-11-26T10:00:00.000Z';
const check = (id: string, outcome: Outcome): CheckResult => ({
  id,
  verdict: outcome === 'passed',
  explanation: `${id} ${outcome}`,
  data: outcome === 'passed' ? null : { count: 3 },
  error: outcome === 'errored' ? { message: 'no text' } : null,
  fail_on_error: false,
  transformed: false,
  execution_time: 0.0123,
  created_at: AT,
});
const hook = (verdict: boolean, deny: boolean, checks: CheckResult[], async = false): HookResult => ({
  id: 'h',
  type: 'guardrail',
  verdict,
  deny: deny && !verdict,
  async,
  transformed: false,
  feedback: null,
  execution_time: 0.0456,
  created_at: AT,
  checks,
});
/** Hook results as the engine gives them, each with the status and check outcomes it should be filed under. */
const HOOKS: { results: HookResults | null; status: string | null; checks: Record<string, Outcome> }[] = [
  { results: null, status: null, checks: {} },
  { results: { before_request_hooks: [hook(true, true, [check('default.regexMatch', 'passed')])], after_request_hooks: [] }, status: 'passed', checks: { 'default.regexMatch': 'passed' } },
  {
    // A check failing in one hook and passing in another failed in the request.
    results: {
      before_request_hooks: [hook(true, false, [check('default.regexMatch', 'passed')])],
      after_request_hooks: [hook(false, false, [check('default.regexMatch', 'failed'), check('default.wordCount', 'passed')])],
    },
    status: 'failed',
    checks: { 'default.regexMatch': 'failed', 'default.wordCount': 'passed' },
  },
  { results: { before_request_hooks: [hook(false, true, [check('default.wordCount', 'failed')])], after_request_hooks: [] }, status: 'denied', checks: { 'default.wordCount': 'failed' } },
  // Denied by another check: a guardrail_check filter beside hook_status must still tell the two apart.
  { results: { before_request_hooks: [hook(false, true, [check('default.regexMatch', 'failed')])], after_request_hooks: [] }, status: 'denied', checks: { 'default.regexMatch': 'failed' } },
  // An async hook's deny refused nothing.
  { results: { before_request_hooks: [], after_request_hooks: [hook(false, true, [check('default.contains', 'failed')], true)] }, status: 'failed', checks: { 'default.contains': 'failed' } },
  // An errored check without failOnError fails nothing.
  { results: { before_request_hooks: [hook(true, true, [check('default.contains', 'errored'), check('default.regexMatch', 'passed')])], after_request_hooks: [] }, status: 'passed', checks: { 'default.contains': 'errored', 'default.regexMatch': 'passed' } },
];
const LOGGED = new Map(HOOKS.map((h) => [h, h.results === null ? null : forLog(h.results)]));
const hooksOf = (r: LogRecord) => HOOKS.find((h) => LOGGED.get(h)?.results === r.hooks?.results)!;

/** The groups a row counts in. */
function keysOf(r: LogRecord, by: GroupBy): string[] {
  if (by === 'hook_status') return [String(hooksOf(r).status)];
  if (by === 'guardrail_check') return Object.keys(hooksOf(r).checks);
  return [String(r[FIELD[by]])];
}

const mean = (xs: number[]): number | null => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);
/** Nearest rank: the ceil(p·n/100)-th smallest. */
const percentile = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.ceil((p * xs.length) / 100) - 1]!;
const known = (xs: (number | null)[]): number[] => xs.filter((x): x is number => x !== null);

/**
 * What the group routes should answer for these rows, computed here;
 * `estimated`: percentiles as Postgres's hourly rollup estimates them.
 */
function expectedGroups(rows: LogRecord[], by: GroupBy, estimated = false): Map<string, Record<string, number | null>> {
  const groups = new Map<string, LogRecord[]>();
  for (const r of rows) for (const k of keysOf(r, by)) groups.set(k, [...(groups.get(k) ?? []), r]);
  const out = new Map<string, Record<string, number | null>>();
  for (const [k, g] of groups) {
    const n = g.length;
    const lat = g.map((r) => r.latencyMs);
    const pct = (p: number): number => (estimated ? latencyEstimate(percentile(lat, p), Math.max(...lat)) : percentile(lat, p));
    out.set(k, {
      requests: n,
      cost: g.reduce((a, r) => a + (r.costUsd ?? 0), 0),
      total_tokens: g.reduce((a, r) => a + (r.totalTokens ?? 0), 0),
      avg_tokens: mean(known(g.map((r) => r.totalTokens))),
      avg_input_tokens: mean(known(g.map((r) => r.promptTokens))),
      avg_output_tokens: mean(known(g.map((r) => r.completionTokens))),
      avg_latency: mean(lat),
      p50_latency: pct(50),
      p95_latency: pct(95),
      p99_latency: pct(99),
      success_rate: (100 * g.filter((r) => r.status >= 200 && r.status < 300).length) / n,
      error_count: g.filter((r) => r.status >= 400).length,
      cache_hit_rate: (100 * g.filter((r) => r.cacheStatus === 'HIT' || r.cacheStatus === 'SEMANTIC HIT').length) / n,
      last_seen: Math.floor(Math.max(...g.map((r) => r.createdAtMs)) / 1000),
      first_seen: Math.floor(Math.min(...g.map((r) => r.createdAtMs)) / 1000),
    });
  }
  return out;
}

function close(actual: unknown, wanted: number | null, what: string): void {
  if (wanted === null) return assert.equal(actual, null, what);
  assert.equal(typeof actual, 'number', `${what}: ${String(actual)}`);
  assert.ok(Math.abs((actual as number) - wanted) <= 1e-9 * Math.max(1, Math.abs(wanted)), `${what}: ${String(actual)} != ${wanted}`);
}

for (const engine of engines()) {
  describe(`request logs and analytics (${engine.name})`, { timeout: 120_000 }, () => {
    // The seeded logs are dated in the past: retention must not delete them under the test.
    const gw = useGateway(engine, { env: { GATEWAY_LOG_RETENTION_DAYS: '0' } });
    let wsA: Json;
    let wsB: Json;
    let wsArchived: Json;
    const users: Record<string, Json> = {};
    const keys: Record<string, string> = {};
    const keyIds: Record<string, string> = {};
    let rows: LogRecord[] = [];

    /** All pages of a list, following `after`. */
    async function all(path: string, secret?: string): Promise<Json[]> {
      const out: Json[] = [];
      let after: string | null = null;
      for (;;) {
        const sep = path.includes('?') ? '&' : '?';
        const page = await expect(gw.call(`${path}${sep}limit=100${after === null ? '' : `&after=${encodeURIComponent(after)}`}`, { headers: secret === undefined ? {} : as(secret) }), 200);
        out.push(...page.data);
        if (!page.has_more) return out;
        after = page.last_id;
      }
    }
    const ids = (list: Json[]): string[] => list.map((l) => l.id);
    /** Expected ids, newest first, of the rows matching a predicate. */
    const wanted = (pred: (r: LogRecord) => boolean): string[] =>
      rows
        .filter(pred)
        .map((r) => r.id)
        .sort()
        .reverse();
    const setSecurity = (ws: Json, security: Record<string, boolean | null>) =>
      expect(gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { settings: { security_settings: security } } }), 200);

    before(async () => {
      wsA = await createWorkspace(gw, 'logs a');
      wsB = await createWorkspace(gw, 'logs b');
      wsArchived = await createWorkspace(gw, 'logs archived');
      const user = async (name: string, role: string, seats: { id: string; role: string }[]) =>
        (users[name] = await expect(gw.call('/users', { body: { email: email(name), role, workspaces: seats } }), 201));
      await user('member', 'member', [
        { id: wsA.id, role: 'member' },
        { id: wsArchived.id, role: 'member' },
      ]);
      await user('manager', 'member', [{ id: wsA.id, role: 'manager' }]);
      await user('wsadmin', 'member', [{ id: wsA.id, role: 'admin' }]);
      await user('orgadmin', 'admin', []);
      const key = async (name: string, over: Parameters<typeof seedKey>[1]) => {
        const id = `key-${name}-${engine.name}`;
        keyIds[name] = id;
        keys[name] = await seedKey(gw, { id, scopes: LOG_SCOPES, ...over });
      };
      await key('member', { workspaceId: wsA.id, subType: 'user', userId: users.member.id });
      await key('manager', { workspaceId: wsA.id, subType: 'user', userId: users.manager.id });
      await key('wsadmin', { workspaceId: wsA.id, subType: 'user', userId: users.wsadmin.id });
      await key('serviceA', { workspaceId: wsA.id });
      await key('serviceB', { workspaceId: wsB.id });
      await key('serviceArchived', { workspaceId: wsArchived.id });
      await key('orgadmin', { type: 'organisation', subType: 'user', userId: users.orgadmin.id });
      await key('orgmember', { type: 'organisation', subType: 'user', userId: users.member.id });
      await key('orgservice', { type: 'organisation' });
      await key('listOnly', { type: 'organisation', scopes: ['logs.list'] });
      await key('none', { type: 'organisation', scopes: ['completions.write'] });

      const rnd = random(42);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
      // Latencies 1..100 in a shuffled order, all for one model: the percentile check.
      const latencies = Array.from({ length: 100 }, (_, i) => i + 1).sort(() => rnd() - 0.5);
      const made: LogRecord[] = [];
      for (let i = 0; i < 160; i++) {
        const ws = i < 120 ? wsA : i < 145 ? wsB : wsArchived;
        const keyName = ws === wsA ? pick(['member', 'member', 'manager', 'serviceA', 'wsadmin']) : ws === wsB ? 'serviceB' : 'serviceArchived';
        const status = pick([200, 200, 200, 200, 201, 400, 429, 500, 502]);
        const ok = status < 300;
        const promptTokens = ok ? 1 + Math.floor(rnd() * 500) : null;
        const completionTokens = ok ? Math.floor(rnd() * 300) : null;
        made.push(
          logRecord({
            createdAtMs: BASE_MS + i * MINUTE,
            workspaceId: ws.id,
            apiKeyId: keyIds[keyName]!,
            userId: keyName === 'member' ? users.member.id : keyName === 'manager' ? users.manager.id : keyName === 'wsadmin' ? users.wsadmin.id : null,
            traceId: `trace-${i % 40}`,
            provider: pick(['openai', 'openai', 'anthropic', null]),
            model: i < 100 ? 'p-model' : pick(['gpt-4o', 'claude-3', null]),
            status,
            latencyMs: i < 100 ? latencies[i]! : 1 + Math.floor(rnd() * 5000),
            promptTokens,
            completionTokens,
            totalTokens: promptTokens === null ? null : promptTokens + completionTokens!,
            costUsd: ok ? Math.round(rnd() * 1e6) / 1e6 : null,
            cacheStatus: pick(['HIT', 'SEMANTIC HIT', 'MISS', 'MISS', 'DISABLED', null] as const),
            configId: pick([null, 'cfg-1', 'cfg-2']),
            virtualKeyId: pick([null, 'vk-1', 'vk-2']),
            promptId: pick([null, null, 'prompt-1']),
            metadata: i % 3 === 0 ? null : { env: i % 3 === 1 ? 'prod' : 'dev', team: pick(['red', 'blue']) },
            error: ok ? null : { error: { message: `failed ${status}`, type: 'upstream_error' } },
            hooks: LOGGED.get(HOOKS[i % HOOKS.length]!)!,
          }),
        );
      }
      // Written in two batches, the way the queue writes them.
      await gw.store.logs.insert(made.slice(0, 70));
      await gw.store.logs.insert(made.slice(70));
      rows = made;
      await expect(gw.call(`/workspaces/${wsArchived.id}`, { method: 'PUT', body: { status: 'archived' } }), 200);
    });
    describe('GET /v1/logs', () => {
      it('lists every log newest first in pages of 20 by default, and pages without gaps or repeats', async () => {
        const first = await expect(gw.call('/logs'), 200);
        assert.equal(first.object, 'list');
        assert.equal(first.data.length, 20);
        assert.equal(first.has_more, true);
        const everything = wanted(() => true);
        assert.deepEqual(ids(first.data), everything.slice(0, 20));
        assert.equal(first.first_id, everything[0]);
        assert.equal(first.last_id, everything[19]);
        assert.deepEqual(ids(await all('/logs')), everything);
      });

      it('shows a log’s fields; bodies only on the single log', async () => {
        const r = rows.find((x) => x.metadata !== null && x.status >= 400 && x.workspaceId === wsA.id)!;
        const inList = (await all(`/logs?trace_id=${r.traceId}`)).find((l) => l.id === r.id);
        assert.deepEqual(inList, {
          object: 'log',
          id: r.id,
          created_at: Math.floor(r.createdAtMs / 1000),
          created_at_ms: r.createdAtMs,
          trace_id: r.traceId,
          span_id: null,
          parent_span_id: null,
          span_name: null,
          workspace_id: wsA.id,
          api_key_id: r.apiKeyId,
          config_id: r.configId,
          virtual_key_id: r.virtualKeyId,
          integration_id: null,
          prompt_id: r.promptId,
          prompt_version: r.promptVersion,
          provider: r.provider,
          model: r.model,
          endpoint: 'chat',
          method: 'POST',
          path: '/chat/completions',
          status: r.status,
          latency_ms: r.latencyMs,
          upstream_ttfb_ms: 50,
          prompt_tokens: null,
          completion_tokens: null,
          total_tokens: null,
          tokens_estimated: false,
          cost: null,
          cost_currency: 'USD',
          cache_status: r.cacheStatus,
          retry_count: 0,
          last_used_option_index: 'config',
          error: r.error,
          log_format: 'v1',
          metadata: r.metadata,
        });
        const one = await expect(gw.call(`/logs/${r.id}`), 200);
        assert.deepEqual(one.request, { headers: { 'content-type': 'application/json' }, body: JSON.parse(r.requestBody!) });
        assert.deepEqual(one.response, { body: JSON.parse(r.responseBody!) });
        // As the engine gave them, times to the microsecond.
        const results = hooksOf(r).results;
        assert.deepEqual(one.hook_results, results === null ? null : JSON.parse(JSON.stringify(results).replaceAll('0.0123', '0.012').replaceAll('0.0456', '0.046')));
        const { request: _req, response: _res, hook_results: _hooks, ...rest } = one;
        assert.deepEqual(rest, inList);
      });

      it('filters by provider, model, status (codes and classes), trace id, api key, config, workspace and metadata', async () => {
        const cases: [string, (r: LogRecord) => boolean][] = [
          ['provider=anthropic', (r) => r.provider === 'anthropic'],
          ['model=gpt-4o', (r) => r.model === 'gpt-4o'],
          ['status=429', (r) => r.status === 429],
          ['status=4xx', (r) => r.status >= 400 && r.status < 500],
          ['status=201,5XX', (r) => r.status === 201 || r.status >= 500],
          ['trace_id=trace-7', (r) => r.traceId === 'trace-7'],
          [`api_key_id=${keyIds.manager}`, (r) => r.apiKeyId === keyIds.manager],
          ['config_id=cfg-2', (r) => r.configId === 'cfg-2'],
          [`workspace_id=${wsB.id}`, (r) => r.workspaceId === wsB.id],
          [`workspace_id=${wsB.slug}`, (r) => r.workspaceId === wsB.id],
          ['metadata.env=prod', (r) => r.metadata?.env === 'prod'],
          ['metadata.env=prod&metadata.team=red', (r) => r.metadata?.env === 'prod' && r.metadata?.team === 'red'],
          [`metadata=${encodeURIComponent('{"env":"dev","team":"blue"}')}`, (r) => r.metadata?.env === 'dev' && r.metadata?.team === 'blue'],
          ['metadata.env=staging', () => false],
          ['provider=openai&status=2xx&metadata.team=blue', (r) => r.provider === 'openai' && r.status < 300 && r.metadata?.team === 'blue'],
        ];
        for (const [query, pred] of cases) {
          const expected = wanted(pred);
          assert.deepEqual(ids(await all(`/logs?${query}`)), expected, query);
          if (!query.startsWith('metadata.env=staging')) assert.ok(expected.length > 0, `${query} matches something`);
        }
      });

      it('filters by time: ISO 8601 or Unix seconds, both ends inclusive', async () => {
        const from = BASE_MS + 10 * MINUTE;
        const to = BASE_MS + 30 * MINUTE;
        const expected = wanted((r) => r.createdAtMs >= from && r.createdAtMs <= to);
        assert.equal(expected.length, 21);
        assert.deepEqual(ids(await all(`/logs?start_time=${new Date(from).toISOString()}&end_time=${new Date(to).toISOString()}`)), expected);
        assert.deepEqual(ids(await all(`/logs?start_time=${from / 1000}&end_time=${to / 1000}`)), expected);
        // An offset, its '+' unencoded in the query (it arrives as a space).
        const plus2 = new Date(from + 2 * 3_600_000).toISOString().slice(0, 19);
        assert.deepEqual(ids(await all(`/logs?start_time=${plus2}+02:00&end_time=${to / 1000}`)), expected);
        assert.deepEqual(ids(await all(`/logs?start_time=${to / 1000}`)), wanted((r) => r.createdAtMs >= to));
      });

      it('filters by guardrail verdicts: hook_status and guardrail_check', async () => {
        const cases: [string, (r: LogRecord) => boolean][] = [
          ['hook_status=denied', (r) => hooksOf(r).status === 'denied'],
          ['hook_status=failed', (r) => hooksOf(r).status === 'failed'],
          ['hook_status=passed,denied', (r) => hooksOf(r).status === 'passed' || hooksOf(r).status === 'denied'],
          ['guardrail_check=default.contains', (r) => 'default.contains' in hooksOf(r).checks],
          ['guardrail_check=default.wordCount&hook_status=denied&status=4xx', (r) => 'default.wordCount' in hooksOf(r).checks && hooksOf(r).status === 'denied' && r.status >= 400 && r.status < 500],
          ['guardrail_check=default.regexMatch&hook_status=denied', (r) => 'default.regexMatch' in hooksOf(r).checks && hooksOf(r).status === 'denied'],
        ];
        for (const [query, pred] of cases) {
          const expected = wanted(pred);
          assert.ok(expected.length > 0, `${query} matches something`);
          assert.deepEqual(ids(await all(`/logs?${query}`)), expected, query);
        }
        await expectError(gw.call('/logs?hook_status=passed,blocked'), 400, 'hook_status');
      });

      it('refuses bad filters and paging with a 400 naming the parameter', async () => {
        await expectError(gw.call('/logs?start_time=yesterday'), 400, 'start_time');
        await expectError(gw.call('/logs?end_time=2026-13-45T00:00:00Z'), 400, 'end_time');
        await expectError(gw.call(`/logs?start_time=${BASE_MS / 1000 + 60}&end_time=${BASE_MS / 1000}`), 400, 'end_time');
        await expectError(gw.call('/logs?status=abc'), 400, 'status');
        await expectError(gw.call('/logs?status=200,6xx'), 400, 'status');
        await expectError(gw.call('/logs?metadata.=x'), 400, 'metadata.');
        await expectError(gw.call('/logs?metadata=[1]'), 400, 'metadata');
        await expectError(gw.call('/logs?limit=0'), 400, 'limit');
        await expectError(gw.call('/logs?limit=101'), 400, 'limit');
        await expectError(gw.call('/logs?workspace_id=no-such-workspace'), 404, 'workspace_id');
      });

      it('needs a key (401) and the scopes logs.list, logs.view (403); an unknown log is 404', async () => {
        const res = await fetch(`${gw.v1}/logs`);
        assert.equal(res.status, 401);
        await res.arrayBuffer();
        await expectError(gw.call('/logs', { headers: as(keys.none!) }), 403, 'logs.list');
        const id = rows[0]!.id;
        await expect(gw.call(`/logs?limit=1`, { headers: as(keys.listOnly!) }), 200);
        await expectError(gw.call(`/logs/${id}`, { headers: as(keys.listOnly!) }), 403, 'logs.view');
        await expectError(gw.call('/logs/no-such-log'), 404);
      });

      it('a read stopped by the log query bound is a 504 query_timeout on every log and analytics route', async () => {
        const logs = gw.store.logs as unknown as Record<string, unknown>;
        // Postgres's statement_timeout, or SQLite's read process not answering in time (store/sqlite-reads.ts).
        const code = engine.name === 'postgres' ? '57014' : READ_TIMEOUT;
        const stopped = (): Promise<never> => Promise.reject(Object.assign(new Error('the read was stopped'), { code }));
        for (const method of ['list', 'get', 'groups']) logs[method] = stopped;
        try {
          for (const path of ['/logs', `/logs/${rows[0]!.id}`, '/logs/groups/model', '/analytics/groups/model']) {
            const body = await expectError(gw.call(path), 504);
            assert.equal(body.error.code, 'query_timeout', path);
            assert.match(body.error.message, /narrow its time window or add filters/, path);
          }
        } finally {
          for (const method of ['list', 'get', 'groups']) delete logs[method];
        }
        await expect(gw.call('/logs?limit=1'), 200);
      });
    });

    describe('group routes', () => {
      const paths = ['/analytics/groups', '/logs/groups'];

      it('answer every groupBy with every column, as computed here, on both routes', async () => {
        for (const path of paths) {
          for (const by of Object.keys(GROUP_BY) as GroupBy[]) {
            // Unfiltered, for a key that sees every workspace: on Postgres from the rollup.
            const expected = expectedGroups(rows, by, engine.name === 'postgres');
            const answer = await expect(gw.call(`${path}/${by}?columns=${GROUP_COLUMNS.join(',')}&limit=100`), 200);
            assert.equal(answer.object, 'list');
            assert.equal(answer.total, expected.size, `${path}/${by} total`);
            assert.equal(answer.has_more, false);
            assert.deepEqual(new Set(answer.data.map((g: Json) => String(g[by]))), new Set(expected.keys()), `${path}/${by} keys`);
            for (const g of answer.data) {
              assert.equal(g.object, 'analytics-group');
              const want = expected.get(String(g[by]))!;
              assert.equal(g.requests, want.requests);
              for (const c of GROUP_COLUMNS) close(g[c], want[c] ?? null, `${path}/${by}=${g[by]} ${c}`);
            }
          }
        }
      });

      it('count per check how often it passed, failed and errored', async () => {
        const answer = await expect(gw.call(`/analytics/groups/guardrail_check?workspace_id=${wsA.id}`), 200);
        const inA = rows.filter((r) => r.workspaceId === wsA.id);
        const counted = (id: string, o: Outcome) => inA.filter((r) => hooksOf(r).checks[id] === o).length;
        assert.deepEqual(
          answer.data,
          ['default.contains', 'default.regexMatch', 'default.wordCount'].map((id) => ({
            object: 'analytics-group',
            guardrail_check: id,
            requests: inA.filter((r) => id in hooksOf(r).checks).length,
            passed: counted(id, 'passed'),
            failed: counted(id, 'failed'),
            errored: counted(id, 'errored'),
          })),
        );
      });

      it("computes percentiles by nearest rank: latencies 1..100 give p50 50, p95 95 and p99 99 (from rows; from the Postgres rollups: their buckets' upper bounds)", async () => {
        const answer = await expect(gw.call('/analytics/groups/model?columns=p50_latency,p95_latency,p99_latency,avg_latency'), 200);
        const g = answer.data.find((x: Json) => x.model === 'p-model');
        // On Postgres 50 falls in the bucket (45, 54]; 95 and 99 in (91, 108], capped by the longest latency, 100.
        const [p50, p95, p99] = engine.name === 'postgres' ? [54, 100, 100] : [50, 95, 99];
        assert.deepEqual(g, { object: 'analytics-group', model: 'p-model', requests: 100, p50_latency: p50, p95_latency: p95, p99_latency: p99, avg_latency: 50.5 });
        // A model filter: on Postgres from the cross rollup (vendor × model × status), the same estimates.
        const filtered = await expect(gw.call('/analytics/groups/model?model=p-model&columns=p50_latency,p95_latency,p99_latency'), 200);
        assert.deepEqual(filtered.data, [{ object: 'analytics-group', model: 'p-model', requests: 100, p50_latency: p50, p95_latency: p95, p99_latency: p99 }]);
      });

      it('count requests only by default; filters narrow what is grouped', async () => {
        const answer = await expect(gw.call(`/analytics/groups/status_code?workspace_id=${wsB.id}&metadata.env=prod`), 200);
        const expected = expectedGroups(
          rows.filter((r) => r.workspaceId === wsB.id && r.metadata?.env === 'prod'),
          'status_code',
        );
        assert.deepEqual(
          answer.data,
          [...expected.entries()].map(([k, v]) => ({ object: 'analytics-group', status_code: Number(k), requests: v.requests })).sort((a, b) => a.status_code - b.status_code),
        );
        const from = BASE_MS + 100 * MINUTE;
        const timed = await expect(gw.call(`/logs/groups/workspace?start_time=${from / 1000}&columns=first_seen`), 200);
        const expectTimed = expectedGroups(
          rows.filter((r) => r.createdAtMs >= from),
          'workspace',
        );
        assert.deepEqual(
          Object.fromEntries(timed.data.map((g: Json) => [g.workspace, [g.requests, g.first_seen]])),
          Object.fromEntries([...expectTimed].map(([k, v]) => [k, [v.requests, v.first_seen]])),
        );
      });

      it('page by the group value, the group without a value last', async () => {
        const expected = expectedGroups(rows, 'config');
        const seen: Json[] = [];
        let after: string | null = null;
        for (;;) {
          const page: Json = await expect(gw.call(`/analytics/groups/config?limit=1${after === null ? '' : `&after=${after}`}`), 200);
          assert.equal(page.total, expected.size);
          seen.push(...page.data);
          if (!page.has_more) break;
          after = page.last_id;
        }
        assert.deepEqual(
          seen.map((g) => g.config),
          ['cfg-1', 'cfg-2', null],
        );
        const statuses = await expect(gw.call('/analytics/groups/status_code?limit=2&after=400'), 200);
        assert.deepEqual(
          statuses.data.map((g: Json) => g.status_code),
          [429, 500],
        );
        // Past the last group: no group to carry the count, which is still given.
        const past = await expect(gw.call('/analytics/groups/status_code?after=599'), 200);
        assert.deepEqual([past.data, past.total, past.has_more], [[], expectedGroups(rows, 'status_code').size, false]);
      });

      it('refuse an unknown groupBy, column or cursor with a 400 naming it, and keys without the scope', async () => {
        await expectError(gw.call('/analytics/groups/colour'), 400, 'groupBy');
        await expectError(gw.call('/analytics/groups/model?columns=cost,median_latency'), 400, 'columns');
        await expectError(gw.call('/analytics/groups/status_code?after=abc'), 400, 'after');
        await expectError(gw.call('/analytics/groups/model?status=7xx'), 400, 'status');
        await expectError(gw.call('/analytics/groups/model', { headers: as(keys.listOnly!) }), 403, 'analytics.view');
        await expectError(gw.call('/logs/groups/model', { headers: as(keys.none!) }), 403, 'logs.list');
      });
    });

    describe('who sees what', () => {
      const seen = async (secret: string, query = ''): Promise<string[]> => ids(await all(`/logs${query}`, secret));
      const counted = async (secret: string, path: string): Promise<number> =>
        (await expect(gw.call(`${path}/workspace?limit=100`, { headers: as(secret) }), 200)).data.reduce((a: number, g: Json) => a + g.requests, 0);

      it('a workspace key sees its own workspace only; naming another is 403', async () => {
        assert.deepEqual(await seen(keys.serviceB!), wanted((r) => r.workspaceId === wsB.id));
        assert.equal(await counted(keys.serviceB!, '/analytics/groups'), 25);
        await expectError(gw.call(`/logs?workspace_id=${wsA.id}`, { headers: as(keys.serviceB!) }), 403, 'workspace_id');
        const inA = rows.find((r) => r.workspaceId === wsA.id)!;
        await expectError(gw.call(`/logs/${inA.id}`, { headers: as(keys.serviceB!) }), 404);
      });

      it('archived workspaces: only owners and admins', async () => {
        const archived = wanted((r) => r.workspaceId === wsArchived.id);
        assert.equal(archived.length, 15);
        assert.deepEqual(await seen(keys.orgservice!, `?workspace_id=${wsArchived.id}`), archived);
        assert.deepEqual(await seen(keys.orgadmin!, `?workspace_id=${wsArchived.id}`), archived);
        assert.deepEqual(await seen(keys.serviceArchived!), [], 'the archived workspace’s own key');
        await expectError(gw.call(`/logs?workspace_id=${wsArchived.id}`, { headers: as(keys.orgmember!) }), 404, 'workspace_id');
        assert.ok(!(await seen(keys.orgmember!)).some((id) => archived.includes(id)), 'a member of the archived workspace');
      });

      it('members and managers see all of their workspace until data visibility says otherwise', async () => {
        const inA = wanted((r) => r.workspaceId === wsA.id);
        for (const k of ['member', 'manager', 'wsadmin', 'serviceA', 'orgmember']) assert.deepEqual(await seen(keys[k]!), inA, k);

        await setSecurity(wsA, { membersViewAllData: false });
        const memberOwn = wanted((r) => r.workspaceId === wsA.id && r.userId === users.member.id);
        assert.ok(memberOwn.length > 0 && memberOwn.length < inA.length);
        assert.deepEqual(await seen(keys.member!), memberOwn);
        assert.deepEqual(await seen(keys.orgmember!), memberOwn, 'the same user through an organisation key');
        assert.equal(await counted(keys.member!, '/analytics/groups'), memberOwn.length);
        assert.equal(await counted(keys.member!, '/logs/groups'), memberOwn.length);
        const other = rows.find((r) => r.workspaceId === wsA.id && r.userId !== users.member.id)!;
        await expectError(gw.call(`/logs/${other.id}`, { headers: as(keys.member!) }), 404);
        await expect(gw.call(`/logs/${memberOwn[0]}`, { headers: as(keys.member!) }), 200);
        assert.deepEqual(await seen(keys.manager!), inA, 'managers are not members');

        await setSecurity(wsA, { managersViewAllData: false });
        assert.deepEqual(await seen(keys.manager!), wanted((r) => r.workspaceId === wsA.id && r.userId === users.manager.id));
        for (const k of ['wsadmin', 'serviceA']) assert.deepEqual(await seen(keys[k]!), inA, `${k} still sees all`);
        assert.deepEqual(await seen(keys.orgadmin!, `?workspace_id=${wsA.id}`), inA, 'organisation admins still see all');

        // Organisation-wide: the workspace without an override is unaffected.
        await expect(gw.call('/organisation/settings', { method: 'PUT', body: { security_settings: { membersViewAllData: false } } }), 200);
        await setSecurity(wsA, { membersViewAllData: true, managersViewAllData: null });
        assert.deepEqual(await seen(keys.member!), inA, 'a workspace override wins over the organisation');
        assert.deepEqual(await seen(keys.manager!), inA);
        await expect(gw.call('/organisation/settings', { method: 'PUT', body: { security_settings: { membersViewAllData: true } } }), 200);
        await setSecurity(wsA, { membersViewAllData: null });
      });

      it('organisation admins lose log rows, or only metadata, where the settings say; analytics still count', async () => {
        const inA = wanted((r) => r.workspaceId === wsA.id);
        const everything = wanted(() => true);
        assert.deepEqual(await seen(keys.orgadmin!), everything);

        await setSecurity(wsA, { organisationAdminsViewLogs: false });
        assert.deepEqual(await seen(keys.orgadmin!), wanted((r) => r.workspaceId !== wsA.id));
        await expectError(gw.call(`/logs/${inA[0]}`, { headers: as(keys.orgadmin!) }), 404);
        assert.equal(await counted(keys.orgadmin!, '/logs/groups'), rows.length - inA.length);
        assert.equal(await counted(keys.orgadmin!, '/analytics/groups'), rows.length);
        assert.deepEqual(await seen(keys.orgservice!), everything, 'service keys are not organisation admins');
        await setSecurity(wsA, { organisationAdminsViewLogs: null });

        await setSecurity(wsB, { organisationAdminsViewLogMetadata: false });
        const listed = await all('/logs', keys.orgadmin!);
        assert.deepEqual(ids(listed), everything);
        for (const l of listed) assert.equal('metadata' in l, l.workspace_id !== wsB.id, `${l.workspace_id}: metadata shown`);
        const inB = rows.find((r) => r.workspaceId === wsB.id && r.metadata !== null)!;
        assert.ok(!('metadata' in (await expect(gw.call(`/logs/${inB.id}`, { headers: as(keys.orgadmin!) }), 200))));
        assert.deepEqual(
          ids(await all('/logs?metadata.env=prod', keys.orgadmin!)),
          wanted((r) => r.metadata?.env === 'prod' && r.workspaceId !== wsB.id),
          'hidden metadata matches no filter',
        );
        assert.deepEqual(ids(await all('/logs?metadata.env=prod', keys.serviceB!)), wanted((r) => r.metadata?.env === 'prod' && r.workspaceId === wsB.id));
        await setSecurity(wsB, { organisationAdminsViewLogMetadata: null });
      });
    });

    it('a restart keeps the logs', async () => {
      const before = await all('/logs');
      await gw.restart();
      assert.deepEqual(await all('/logs'), before);
      const one = await expect(gw.call(`/logs/${rows[5]!.id}`), 200);
      assert.equal(one.id, rows[5]!.id);
    });
  });
}
