// Lists and groups filtered on a rolled-up column (provider, model, status,
// config, prompt) read only the hours the rollup holds the value in
// (store/log-rollup.ts hoursHolding): on Postgres the answer must be what
// SQLite reads from every row (the plain query), a value no log has answers
// empty without reading a log, and a value in some hours is found and
// counted exactly. Metadata filters with a window read only its days' pairs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Db, SqlValue } from '../src/store/db.js';
import type { LogRecord } from '../src/store/log-record.js';
import { HOUR_MS, hoursHolding, latencyEstimate, MAX_HOUR_RUNS } from '../src/store/log-rollup.js';
import { GROUP_COLUMNS, LogRepo, type GroupBy, type LogFilter, type LogScope } from '../src/store/logs.js';
import type { Store } from '../src/store/store.js';
import { twoStores, type TwoStores } from './support/log-stores.js';
import { logRecord } from './support/logs.js';
import { random } from './support/random.js';

const BASE = Date.UTC(2026, 5, 10, 4);
const HOURS = 8;
const ALL: LogScope = { full: 'any', own: [], userId: null, hideMetadata: [] };
const PAGE = { limit: 1000, after: undefined };
/** The hours (from BASE) the rare model's logs are in: 1-2 one run, 5 another. */
const RARE_HOURS = [1, 2, 5];

function generate(): LogRecord[] {
  const rnd = random(11);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const common = Array.from({ length: 500 }, () =>
    logRecord({
      createdAtMs: BASE + Math.floor(rnd() * HOURS * HOUR_MS),
      workspaceId: pick(['ws-a', 'ws-b']),
      provider: pick(['openai', 'anthropic', null]),
      model: pick(['gpt-4o', 'claude-3', null]),
      status: pick([200, 200, 429, 500]),
      latencyMs: Math.floor(rnd() * 5000),
      configId: pick([null, 'cfg-1']),
      promptId: pick([null, 'prompt-1']),
      metadata: pick<Record<string, string> | null>([null, { env: 'prod' }, { env: 'staging', user: 'u-1' }]),
    }),
  );
  // The rare model: a few logs in RARE_HOURS only, one workspace, a status no other log has.
  const rare = RARE_HOURS.flatMap((h, i) =>
    [0, 1].map((j) =>
      logRecord({ createdAtMs: BASE + h * HOUR_MS + (i * 2 + j) * 60_000, workspaceId: 'ws-b', provider: 'mistral', model: 'rare-model', status: j === 0 ? 503 : 200, latencyMs: 10 + i, metadata: { env: 'prod' } }),
    ),
  );
  return [...common, ...rare];
}

describe('log reads narrowed to the hours the rollup holds a value in', { timeout: 60_000 }, () => {
  let pg: Store;
  let lite: Store;
  let stores: TwoStores;
  const logs = generate();

  before(async () => {
    stores = await twoStores();
    ({ pg, lite } = stores);
    for (let i = 0; i < logs.length; i += 100) await pg.logs.insert(logs.slice(i, i + 100));
    await lite.logs.insert(logs);
  });
  after(() => stores.close());

  /** The list and a group on both engines: Postgres (narrowed) must answer as SQLite (every row). */
  async function same(filter: LogFilter, by: GroupBy = 'status_code'): Promise<number> {
    const what = JSON.stringify(filter);
    const got = await pg.logs.list(filter, ALL, PAGE);
    const want = await lite.logs.list(filter, ALL, PAGE);
    assert.deepEqual(
      got.data.map((r) => r.id),
      want.data.map((r) => r.id),
      `list ${what}`,
    );
    const g = await pg.logs.groups(by, GROUP_COLUMNS, filter, ALL, PAGE);
    const w = await lite.logs.groups(by, GROUP_COLUMNS, filter, ALL, PAGE);
    assert.equal(g.total, w.total, `groups ${by} ${what} total`);
    // Costs are float sums, added in another order by each engine.
    const shown = (p: typeof g): unknown[] => p.data.map((x) => [x.key, x.requests, Math.round(Number(x.values.cost) * 1e9), x.values.error_count, x.values.first_seen, x.values.last_seen]);
    assert.deepEqual(shown(g), shown(w), `groups ${by} ${what}`);
    // Percentiles: exact from rows, or (vendor, model and status filters: the cross rollup) the upper bound of the exact value's bucket.
    g.data.forEach((x, i) => {
      const [got, exact] = [x.values.p95_latency, w.data[i]!.values.p95_latency];
      if (got === exact) return;
      assert.ok(typeof got === 'number' && typeof exact === 'number' && got > exact && got <= latencyEstimate(exact, Infinity), `groups ${by} ${what} p95 ${got} for ${exact}`);
    });
    return want.data.length;
  }

  it('a value in some hours is found and counted exactly', async () => {
    assert.equal(await same({ model: 'rare-model' }), RARE_HOURS.length * 2);
    assert.equal(await same({ model: 'rare-model', status: { exact: [503], classes: [] } }, 'model'), RARE_HOURS.length);
    assert.equal(await same({ provider: 'mistral', fromMs: BASE + 2 * HOUR_MS + 1 }), 4);
    assert.equal(await same({ model: 'rare-model', metadata: [['env', 'prod']], fromMs: BASE + HOUR_MS, toMs: BASE + 2 * HOUR_MS + 150_000 }, 'ai_service'), 3);
    const groups = await pg.logs.groups('status_code', [], { model: 'rare-model' }, ALL, PAGE);
    assert.deepEqual(
      groups.data.map((g) => [g.key, g.requests]),
      [
        [200, 3],
        [503, 3],
      ],
    );
  });

  it('the hours are the runs of whole hours holding every filtered value', async () => {
    const h = (n: number): number => BASE + n * HOUR_MS;
    assert.deepEqual(await hoursHolding(pg.db, [{ dim: 'model', values: ['rare-model'] }], undefined, undefined, undefined), [
      [h(1), h(3)],
      [h(5), h(6)],
    ]);
    // Both values in the same hours; a status class; a window that starts inside an hour keeps that hour.
    assert.deepEqual(
      await hoursHolding(pg.db, [{ dim: 'model', values: ['rare-model'] }, { dim: 'status_code', values: [], classes: [5] }], 'ws-b', h(2) + 1, undefined),
      [
        [h(2), h(3)],
        [h(5), h(6)],
      ],
    );
    assert.deepEqual(await hoursHolding(pg.db, [{ dim: 'model', values: ['rare-model'] }], 'ws-a', undefined, undefined), []);
    assert.deepEqual(await hoursHolding(pg.db, [{ dim: 'model', values: ['rare-model'] }, { dim: 'ai_service', values: ['openai'] }], undefined, h(5), h(5) + 1), [[h(5), h(6)]]);
  });

  it('a value no log has answers empty without reading a log', async () => {
    const seen: string[] = [];
    // Reads run in a transaction of their own (bounded by statement_timeout): the statements in it are recorded.
    const recording = (over: Db): Db => ({
      ...over,
      engine: over.engine,
      all: <T>(sql: string, params?: readonly SqlValue[]) => (seen.push(sql), over.all<T>(sql, params)),
      get: <T>(sql: string, params?: readonly SqlValue[]) => (seen.push(sql), over.get<T>(sql, params)),
      transaction: (fn) => pg.db.transaction((tx) => fn(recording(tx))),
    });
    const db = recording(pg.db);
    const repo = new LogRepo(db, db);
    assert.deepEqual(await repo.list({ model: 'no-such-model' }, ALL, PAGE), { data: [], hasMore: false });
    assert.deepEqual(await repo.groups('status_code', GROUP_COLUMNS, { configId: 'no-such-config' }, ALL, PAGE), { data: [], hasMore: false, total: 0 });
    assert.ok(seen.length === 2 && seen.every((s) => !s.includes('request_logs')), seen.join('\n'));
    for (const filter of [{ model: 'no-such-model' }, { model: 'rare-model', workspaceId: 'ws-a' }, { promptId: 'prompt-1', status: { exact: [503], classes: [] } }] satisfies LogFilter[]) {
      assert.equal(await same(filter), 0);
    }
  });

  it('answers as the plain query for random filters (property)', async () => {
    const rnd = random(5);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const groupBys: GroupBy[] = ['model', 'status_code', 'ai_service', 'config', 'workspace', 'api_key'];
    for (let i = 0; i < 60; i++) {
      const from = pick([undefined, BASE + Math.floor(rnd() * HOURS * HOUR_MS)]);
      const filter: LogFilter = {
        model: pick([undefined, 'gpt-4o', 'claude-3', 'rare-model', 'none']),
        provider: pick([undefined, undefined, 'openai', 'mistral']),
        status: pick([undefined, undefined, { exact: [429], classes: [] }, { exact: [], classes: [5] }, { exact: [200, 503], classes: [4] }]),
        configId: pick([undefined, undefined, 'cfg-1']),
        promptId: pick([undefined, undefined, undefined, 'prompt-1']),
        workspaceId: pick([undefined, undefined, 'ws-a', 'ws-b']),
        fromMs: from,
        toMs: pick([undefined, (from ?? BASE) + Math.floor(rnd() * 3 * HOUR_MS)]),
        metadata: pick([undefined, undefined, undefined, [['env', 'prod']] as const]),
      };
      await same(filter, pick(groupBys));
    }
  });

  it('a value in more than MAX_HOUR_RUNS runs of hours reads rows unrestricted', async () => {
    // Every other hour, before the other logs: runs that do not join up.
    const spread = Array.from({ length: MAX_HOUR_RUNS + 1 }, (_, i) => logRecord({ createdAtMs: BASE - (2 * i + 2) * HOUR_MS, workspaceId: 'ws-c', model: 'spread-model' }));
    await pg.logs.insert(spread);
    await lite.logs.insert(spread);
    assert.equal(await hoursHolding(pg.db, [{ dim: 'model', values: ['spread-model'] }], undefined, undefined, undefined), null);
    const runs = await hoursHolding(pg.db, [{ dim: 'model', values: ['spread-model'] }], undefined, BASE - 10 * HOUR_MS, undefined);
    assert.equal(runs?.length, 5);
    assert.equal(await same({ model: 'spread-model' }), spread.length);
    assert.equal(await same({ model: 'spread-model', fromMs: BASE - 10 * HOUR_MS }), 5);
  });
});
