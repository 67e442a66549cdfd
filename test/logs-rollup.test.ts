// The hourly rollup of request logs on Postgres (store/log-rollup.ts): what
// the writer adds equals the raw rows' aggregates; the group routes answer
// from it (whole hours, raw rows at the window's edges) as SQLite answers
// from rows, percentiles as bucket estimates; filters it cannot answer read
// the rows; retention removes its old hours.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deleteLogsBefore } from '../src/logs/retention.js';
import type { LogRecord } from '../src/store/log-record.js';
import { bucketOf, BUCKET_NAMES, crossUpRows, HOUR_MS, LATENCY_BOUNDS, latencyEstimate, MEASURE_NAMES, rollUpRows } from '../src/store/log-rollup.js';
import { GROUP_BY, GROUP_COLUMNS, type GroupBy, type GroupPage, type LogFilter, type LogScope } from '../src/store/logs.js';
import type { Store } from '../src/store/store.js';
import { twoStores, type TwoStores } from './support/log-stores.js';
import { logRecord } from './support/logs.js';
import { random } from './support/random.js';

const BASE = Date.UTC(2026, 5, 10, 4);
const HOURS = 6;
const ALL: LogScope = { full: 'any', own: [], userId: null, hideMetadata: [] };
const PAGE = { limit: 1000, after: undefined };
const PERCENTILES = new Set(['p50_latency', 'p95_latency', 'p99_latency']);

/** Logs over HOURS hours, three workspaces, values of every dimension (some missing), latencies up to past the last bucket. */
function generate(): LogRecord[] {
  const rnd = random(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  return Array.from({ length: 600 }, () => {
    const status = pick([200, 200, 200, 201, 400, 429, 500]);
    const tokens = rnd() < 0.1 ? null : Math.floor(rnd() * 500);
    const checks = pick<Record<string, 'passed' | 'failed' | 'errored'> | null>([null, { 'default.regexMatch': 'passed' }, { 'default.regexMatch': 'failed', 'default.wordCount': 'errored' }]);
    return logRecord({
      createdAtMs: BASE + Math.floor(rnd() * HOURS * HOUR_MS),
      workspaceId: pick(['ws-a', 'ws-b', 'ws-c']),
      userId: pick([null, 'user-1']),
      apiKeyId: pick(['key-1', 'key-2', 'key-3']),
      provider: pick(['openai', 'anthropic', null]),
      model: pick(['gpt-4o', 'claude-3', null]),
      status,
      latencyMs: rnd() < 0.02 ? 2_000_000 + Math.floor(rnd() * 1000) : Math.floor(rnd() ** 3 * 20_000),
      promptTokens: tokens,
      completionTokens: tokens === null ? null : 7,
      totalTokens: tokens === null ? null : tokens + 7,
      costUsd: rnd() < 0.2 ? null : Math.round(rnd() * 1e6) / 1e7,
      cacheStatus: pick(['HIT', 'SEMANTIC HIT', 'MISS', null] as const),
      configId: pick([null, 'cfg-1']),
      virtualKeyId: pick([null, 'vk-1', 'vk-2']),
      promptId: pick([null, 'prompt-1']),
      hooks: checks === null ? null : { results: '{}', status: Object.values(checks).includes('failed') ? 'failed' : 'passed', checks },
      metadata: pick<Record<string, string> | null>([null, null, { env: 'prod' }, { env: 'prod', user: 'u-1' }, { env: 'dev', user: 'u-2' }]),
    });
  });
}

/** The group keys a log counts in. */
function keysOf(r: LogRecord, by: GroupBy): string[] {
  if (by === 'guardrail_check') return Object.keys(r.hooks?.checks ?? {});
  const v = { ai_service: r.provider, model: r.model, status_code: r.status, api_key: r.apiKeyId, config: r.configId, workspace: r.workspaceId, provider: r.virtualKeyId, prompt: r.promptId, hook_status: r.hooks?.status ?? null }[by];
  return [String(v)];
}

/** Whether a log passes the filter's workspace, vendor, model and status conditions (those the rollups hold besides time). */
function inCross(r: LogRecord, f: LogFilter): boolean {
  const status = f.status === undefined || f.status.exact.includes(r.status) || f.status.classes.includes(Math.floor(r.status / 100));
  return (f.workspaceId ?? r.workspaceId) === r.workspaceId && (f.provider ?? r.provider) === r.provider && (f.model ?? r.model) === r.model && status;
}

function close(actual: unknown, wanted: unknown, what: string): void {
  if (typeof wanted !== 'number' || typeof actual !== 'number') return assert.equal(actual, wanted, what);
  assert.ok(Math.abs(actual - wanted) <= 1e-9 * Math.max(1, Math.abs(wanted)), `${what}: ${actual} != ${wanted}`);
}

describe('hourly log rollup (postgres)', { timeout: 60_000 }, () => {
  let pg: Store;
  let lite: Store;
  let stores: TwoStores;
  const logs = generate();
  /** A log written straight into request_logs, past the writer: only a query reading rows sees it. */
  const bypass = logRecord({
    ...{ workspaceId: 'ws-a', createdAtMs: BASE + 2 * HOUR_MS + 5, apiKeyId: 'key-1', model: 'gpt-4o', provider: 'openai', status: 200, latencyMs: 10 },
    ...{ promptTokens: null, completionTokens: null, totalTokens: null, costUsd: null, cacheStatus: null },
  });

  before(async () => {
    stores = await twoStores();
    ({ pg, lite } = stores);
    // Each batch after the first repeats half of the one before (a replay after a partial write): counted once.
    for (let i = 0; i < logs.length; i += 100) await pg.logs.insert(logs.slice(Math.max(0, i - 50), i + 100));
    await lite.logs.insert(logs);
  });
  after(() => stores.close());

  /** Both engines' answers to one group query: Postgres's must be SQLite's (rows), percentiles as bucket estimates where `rolled` (from the rollup). */
  async function same(by: GroupBy, filter: LogFilter, { scope = ALL, rolled = true, extra = [] as LogRecord[] } = {}): Promise<GroupPage> {
    const got = await pg.logs.groups(by, GROUP_COLUMNS, filter, scope, PAGE);
    const want = await lite.logs.groups(by, GROUP_COLUMNS, filter, scope, PAGE);
    const what = `${by} ${JSON.stringify(filter)}`;
    assert.equal(got.total, want.total, `${what} total`);
    const byKey = new Map(want.data.map((g) => [String(g.key), g]));
    assert.deepEqual(got.data.map((g) => String(g.key)).sort(), [...byKey.keys()].sort(), `${what} keys`);
    const visible = (r: LogRecord): boolean => scope.full === 'any' || scope.full.includes(r.workspaceId);
    const inWindow = [...logs, ...extra].filter((r) => visible(r) && (filter.fromMs === undefined || r.createdAtMs >= filter.fromMs) && (filter.toMs === undefined || r.createdAtMs <= filter.toMs));
    for (const g of got.data) {
      const w = byKey.get(String(g.key))!;
      assert.equal(g.requests, w.requests, `${what}=${g.key} requests`);
      assert.deepEqual(g.outcomes, w.outcomes, `${what}=${g.key} outcomes`);
      const max = Math.max(...inWindow.filter((r) => inCross(r, filter) && keysOf(r, by).includes(String(g.key))).map((r) => r.latencyMs));
      for (const c of GROUP_COLUMNS) {
        const exact = w.values[c];
        close(g.values[c], rolled && PERCENTILES.has(c) && typeof exact === 'number' ? latencyEstimate(exact, max) : exact, `${what}=${g.key} ${c}`);
      }
    }
    return got;
  }

  it('stores per hour, workspace and value (and per vendor, model and status together) the sums of the raw rows', async () => {
    // Each table emptied and refilled from the rows in SQL (as migrations 22 and 24 and the bench do) holds the same.
    const refill = async (table: string, order: string, fill: () => Promise<void>, min: number): Promise<void> => {
      const stored = await pg.db.all<Record<string, number | string | boolean>>(`SELECT * FROM ${table} ORDER BY ${order}`);
      await pg.db.exec(`DELETE FROM ${table}`);
      await fill();
      const refilled = await pg.db.all<Record<string, number | string | boolean>>(`SELECT * FROM ${table} ORDER BY ${order}`);
      assert.ok(stored.length > min, `${table}: ${stored.length} rows`);
      assert.equal(refilled.length, stored.length);
      refilled.forEach((r, i) => {
        for (const c of Object.keys(r)) close(stored[i]![c], r[c], `${table} ${JSON.stringify(Object.values(r).slice(0, 7))} ${c}`);
      });
    };
    await refill('request_log_rollup', 'hour_ms, dim, workspace_id, has_value, value', () => rollUpRows(pg.db, 'TRUE'), HOURS * 3 * 10);
    await refill('request_log_cross', 'hour_ms, workspace_id, has_provider, provider, has_model, model, status', () => crossUpRows(pg.db, 'TRUE'), HOURS * 3 * 10);
    const crossed = Number((await pg.db.get<{ n: number }>('SELECT SUM(requests) AS n FROM request_log_cross'))!.n);
    assert.equal(crossed, logs.length);
    // Every log once per column dimension, and once per check it ran.
    const requests = Number((await pg.db.get<{ n: number }>(`SELECT SUM(requests) AS n FROM request_log_rollup WHERE dim = 'model'`))!.n);
    assert.equal(requests, logs.length);
    const checks = Number((await pg.db.get<{ n: number }>(`SELECT SUM(requests) AS n FROM request_log_rollup WHERE dim = 'guardrail_check'`))!.n);
    assert.equal(checks, logs.reduce((n, r) => n + Object.keys(r.hooks?.checks ?? {}).length, 0));
    // The histogram: every log in one bucket, those past the last bound (over 2^20 ms) in the last one.
    const sumOf = async (column: string): Promise<number> => Number((await pg.db.get<{ n: number }>(`SELECT SUM(${column}) AS n FROM request_log_rollup WHERE dim = 'model'`))!.n);
    assert.equal(await sumOf(BUCKET_NAMES.join(' + ')), logs.length);
    const over = logs.filter((r) => r.latencyMs > LATENCY_BOUNDS.at(-1)!).length;
    assert.ok(over > 0 && MEASURE_NAMES.includes(BUCKET_NAMES.at(-1)!));
    assert.equal(await sumOf(BUCKET_NAMES.at(-1)!), over);
  });

  it('groups from the rollup as from the rows: whole hours, edges of partial hours, a workspace, a list of workspaces', async () => {
    const filters: LogFilter[] = [
      {},
      { fromMs: BASE + HOUR_MS, toMs: BASE + 4 * HOUR_MS - 1 },
      { fromMs: BASE + HOUR_MS - 1_234_567 + HOUR_MS, toMs: BASE + 4 * HOUR_MS + 777_777 },
      { fromMs: BASE + 30 * 60_000 },
      { toMs: BASE + 3 * HOUR_MS + 1 },
      { workspaceId: 'ws-b', fromMs: BASE + 90 * 60_000 },
    ];
    for (const by of Object.keys(GROUP_BY) as GroupBy[]) for (const f of filters) await same(by, f);
    await same('model', {}, { scope: { full: ['ws-a', 'ws-c'], own: [], userId: null, hideMetadata: [] } });
  });

  it('groups filtered by vendor, model or status from the cross rollup as from the rows: grouped by another of them or the workspace', async () => {
    const filters: LogFilter[] = [
      { model: 'gpt-4o' },
      { provider: 'anthropic', fromMs: BASE + HOUR_MS - 1_234_567 + HOUR_MS, toMs: BASE + 4 * HOUR_MS + 777_777 },
      { status: { exact: [429], classes: [5] }, workspaceId: 'ws-b' },
      { model: 'claude-3', provider: 'openai', status: { exact: [], classes: [2] }, fromMs: BASE + 30 * 60_000 },
      { model: 'no-such-model' },
    ];
    for (const by of ['ai_service', 'model', 'status_code', 'workspace'] as const) for (const f of filters) await same(by, f);
    await same('status_code', { model: 'gpt-4o' }, { scope: { full: ['ws-a', 'ws-c'], own: [], userId: null, hideMetadata: [] } });
  });

  it('a percentile is the upper bound of its bucket, never below the exact value and at most 19 % above it', () => {
    for (let ms = 0; ms <= 100_000; ms++) {
      const e = latencyEstimate(ms, Number.MAX_SAFE_INTEGER);
      assert.ok(e >= ms && e <= Math.max(1, ms * 1.19), `${ms} → ${e}`);
    }
    assert.equal(bucketOf(LATENCY_BOUNDS.at(-1)! + 1), LATENCY_BOUNDS.length);
    assert.equal(latencyEstimate(5_000_000, 5_000_123), 5_000_123);
  });

  it('pages a rolled-up grouping by its value', async () => {
    const whole = await pg.logs.groups('api_key', [], {}, ALL, PAGE);
    const first = await pg.logs.groups('api_key', [], {}, ALL, { limit: 2, after: undefined });
    const rest = await pg.logs.groups('api_key', [], {}, ALL, { limit: 10, after: first.data.at(-1)!.key! });
    assert.deepEqual([...first.data, ...rest.data], whole.data);
    assert.deepEqual([first.hasMore, rest.hasMore, first.total, rest.total], [true, false, 3, 3]);
  });

  it('reads the rows where the rollup cannot answer: other filters, a user’s own keys', async () => {
    await pg.db.insertMany('request_logs', ['id', 'created_at_ms', 'trace_id', 'workspace_id', 'api_key_id', 'model', 'provider', 'endpoint', 'method', 'path', 'status', 'latency_ms', 'tokens_estimated', 'retry_count', 'log_format'], [
      [bypass.id, bypass.createdAtMs, bypass.traceId, 'ws-a', 'key-1', 'gpt-4o', 'openai', 'chat', 'POST', '/chat/completions', 200, 10, 0, 0, 'v1'],
    ]);
    await lite.logs.insert([bypass]);
    try {
      // Whole hours come from the rollup, which the log written past the writer is not in.
      const rolled = await pg.logs.groups('model', [], {}, ALL, PAGE);
      assert.equal(rolled.data.find((g) => g.key === 'gpt-4o')!.requests, logs.filter((r) => r.model === 'gpt-4o').length);
      // The same from the cross rollup: a model filter grouped by status.
      const crossed = await pg.logs.groups('status_code', [], { model: 'gpt-4o' }, ALL, PAGE);
      assert.equal(crossed.data.find((g) => g.key === 200)!.requests, logs.filter((r) => r.model === 'gpt-4o' && r.status === 200).length);
      // A key filter, a model filter grouped by key, a user's own keys: the rows, the extra log counted.
      const byKey = await same('status_code', { apiKeyId: 'key-1' }, { rolled: false, extra: [bypass] });
      assert.equal(byKey.data.find((g) => g.key === 200)!.requests, logs.filter((r) => r.apiKeyId === 'key-1' && r.status === 200).length + 1);
      await same('api_key', { model: 'gpt-4o' }, { rolled: false, extra: [bypass] });
      await same('model', {}, { scope: { full: [], own: ['ws-a'], userId: 'user-1', hideMetadata: [] }, rolled: false, extra: [bypass] });
    } finally {
      await pg.db.run('DELETE FROM request_logs WHERE id = ?', [bypass.id]);
      await lite.db.run('DELETE FROM request_logs WHERE id = ?', [bypass.id]);
    }
  });

  it("groups filtered by metadata (from the pairs on Postgres, which carry their log's columns) as from the rows", async () => {
    const prod: LogFilter = { metadata: [['env', 'prod']] };
    const filters: LogFilter[] = [
      prod,
      { metadata: [['env', 'prod'], ['user', 'u-1']] },
      { metadata: [['user', 'u-2']], model: 'gpt-4o', fromMs: BASE + HOUR_MS + 1 },
      { ...prod, status: { exact: [], classes: [2] }, guardrailCheck: 'default.regexMatch', apiKeyId: 'key-2' },
      { ...prod, provider: 'openai', configId: 'cfg-1', hookStatus: ['passed'], toMs: BASE + 4 * HOUR_MS },
      { metadata: [['env', 'none']] },
    ];
    for (const by of Object.keys(GROUP_BY) as GroupBy[]) for (const f of filters) await same(by, f, { rolled: false });
    await same('model', prod, { scope: { full: [], own: ['ws-a'], userId: 'user-1', hideMetadata: [] }, rolled: false });
    await same('model', prod, { scope: { full: 'any', own: [], userId: null, hideMetadata: ['ws-b'] }, rolled: false });
    const counted = (await pg.logs.groups('workspace', [], prod, ALL, PAGE)).data.reduce((n, g) => n + g.requests, 0);
    assert.equal(counted, logs.filter((r) => r.metadata?.env === 'prod').length);
  });

  it('a pair without a copy of its log (written by a gateway before migration 23) leaves its log out of groups filtered by metadata, not out of lists', async () => {
    const old = logRecord({ workspaceId: 'ws-a', createdAtMs: BASE + 5, apiKeyId: 'key-1', model: 'gpt-4o', status: 200, latencyMs: 10 });
    await pg.db.insertMany('request_logs', ['id', 'created_at_ms', 'trace_id', 'workspace_id', 'api_key_id', 'model', 'endpoint', 'method', 'path', 'status', 'latency_ms', 'tokens_estimated', 'retry_count', 'log_format'], [
      [old.id, old.createdAtMs, old.traceId, 'ws-a', 'key-1', 'gpt-4o', 'chat', 'POST', '/chat/completions', 200, 10, 0, 0, 'v1'],
    ]);
    await pg.db.insertMany('log_metadata', ['log_id', 'key', 'value', 'created_at_ms'], [[old.id, 'env', 'only-old', old.createdAtMs]]);
    try {
      const only: LogFilter = { metadata: [['env', 'only-old']] };
      assert.deepEqual((await pg.logs.list(only, ALL, PAGE)).data.map((l) => l.id), [old.id]);
      assert.deepEqual((await pg.logs.groups('model', [], only, ALL, PAGE)).data, []);
    } finally {
      await pg.db.run('DELETE FROM log_metadata WHERE log_id = ?', [old.id]);
      await pg.db.run('DELETE FROM request_logs WHERE id = ?', [old.id]);
    }
  });

  it("retention removes both rollups' hours wholly before the cutoff", async () => {
    const cutoff = BASE + 2 * HOUR_MS + 1;
    await deleteLogsBefore(pg.logs, cutoff);
    for (const table of ['request_log_rollup', 'request_log_cross']) {
      const hours = (await pg.db.all<{ h: number }>(`SELECT DISTINCT hour_ms AS h FROM ${table} ORDER BY h`)).map((r) => Number(r.h));
      assert.deepEqual(hours, Array.from({ length: HOURS - 2 }, (_, i) => BASE + (i + 2) * HOUR_MS), table);
    }
  });
});
