// Log retention on both engines: logs older than the retention age go, in
// batches, with their metadata and guardrail checks; newer ones stay; 0 days keeps everything.
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteLogsBefore, LogRetention } from '../src/logs/retention.js';
import { readSettings } from '../src/settings.js';
import { dayPartitions } from '../src/store/log-partitions.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';
import { engines } from './support/engines.js';
import { logRecord } from './support/logs.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 6, 1);
const unexpected = (e: unknown): never => assert.fail(`retention failed: ${String(e)}`);

describe('GATEWAY_LOG_RETENTION_DAYS', () => {
  it('defaults to 30; 0 keeps forever; anything else is refused', () => {
    assert.equal(readSettings({}).logRetentionDays, 30);
    assert.equal(readSettings({ GATEWAY_LOG_RETENTION_DAYS: '0' }).logRetentionDays, 0);
    assert.equal(readSettings({ GATEWAY_LOG_RETENTION_DAYS: '7' }).logRetentionDays, 7);
    assert.throws(() => readSettings({ GATEWAY_LOG_RETENTION_DAYS: '-1' }), /GATEWAY_LOG_RETENTION_DAYS/);
    assert.throws(() => readSettings({ GATEWAY_LOG_RETENTION_DAYS: 'week' }), /GATEWAY_LOG_RETENTION_DAYS/);
  });
});

for (const engine of engines()) {
  describe(`log retention (${engine.name})`, { timeout: 60_000 }, () => {
    let store: Store;
    let dir: string;
    const count = async (table: string): Promise<number> => Number((await store.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n);
    const remaining = async (): Promise<{ logs: number; metadata: number }> => {
      const logs = await count('request_logs');
      return { logs, metadata: await count('log_metadata') };
    };
    const hooks = { results: '{"before_request_hooks":[],"after_request_hooks":[]}', status: 'passed' as const, checks: { 'default.notNull': 'passed' as const } };

    beforeEach(async () => {
      const env = await engine.fresh();
      dir = env.GATEWAY_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'switchyard-retention-'));
      store = await openStore({ dataDir: dir, databaseUrl: env.DATABASE_URL });
      await store.migrate();
      const old = Array.from({ length: 23 }, (_, i) => logRecord({ workspaceId: 'ws', createdAtMs: NOW - 30 * DAY - 1 - i * 3_600_000, metadata: { k: 'v' }, hooks }));
      const recent = Array.from({ length: 5 }, (_, i) => logRecord({ workspaceId: 'ws', createdAtMs: NOW - 30 * DAY + i * DAY, metadata: { k: 'v' }, hooks }));
      await store.logs.insert([...old, ...recent]);
    });
    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    after(() => engine.cleanup());

    it('deletes in batches everything before the cutoff, metadata included', async () => {
      assert.equal(await deleteLogsBefore(store.logs, NOW - 30 * DAY, 7), 23);
      assert.deepEqual(await remaining(), { logs: 5, metadata: 5 });
      assert.equal(await deleteLogsBefore(store.logs, NOW - 30 * DAY, 7), 0);
    });

    it('the sweep deletes logs older than its days, and nothing with 0 days', async () => {
      assert.equal(await new LogRetention(store.logs, 0, () => NOW, unexpected).run(), 0);
      assert.deepEqual(await remaining(), { logs: 28, metadata: 28 });
      const sweep = new LogRetention(store.logs, 30, () => NOW, unexpected);
      assert.equal(await sweep.run(), 23);
      await sweep.stop();
      assert.deepEqual(await remaining(), { logs: 5, metadata: 5 });
      assert.equal(await new LogRetention(store.logs, 27, () => NOW, unexpected).run(), 3);
    });

    it('start() sweeps at once and on its timer; stop() waits for a pass under way', async () => {
      const sweep = new LogRetention(store.logs, 30, () => NOW, unexpected);
      sweep.start(60_000);
      await sweep.stop();
      assert.deepEqual(await remaining(), { logs: 5, metadata: 5 });
    });
  });
}

describe('log retention on day partitions (postgres)', { timeout: 60_000 }, () => {
  const engine = engines().find((e) => e.name === 'postgres')!;
  let store: Store;
  // 06:00 UTC: the cutoff, 30 days earlier, falls inside a day, whose earlier rows go and later ones stay.
  const now = Date.UTC(2026, 6, 1, 6);
  const cutoff = now - 30 * DAY;
  const count = async (sql: string): Promise<number> => Number((await store.db.get<{ n: number }>(sql))!.n);
  const days = async (): Promise<string[]> => [...new Set((await dayPartitions(store.db)).map((p) => new Date(p.fromMs).toISOString().slice(0, 10)))];

  beforeEach(async () => {
    const env = await engine.fresh();
    store = await openStore({ dataDir: '', databaseUrl: env.DATABASE_URL });
    await store.migrate();
  });
  afterEach(() => store.close());
  after(() => engine.cleanup());

  it('creates the days ahead; drops whole days past retention, deletes rows only in the cutoff day and the default partition', async () => {
    // Sweeps over the past weeks made each day's partitions ahead of it.
    for (let t = now - 40 * DAY; t <= now; t += 7 * DAY) await store.logs.prepareDays(t);
    assert.equal(await store.logs.prepareDays(now), 10, 'the 5 days the last weekly sweep had not reached, both tables');
    assert.equal(await store.logs.prepareDays(now), 0, 'a second sweep the same day creates nothing');
    const made = await days();
    assert.equal(made[0], '2026-05-22');
    assert.ok(made.includes('2026-07-08') && !made.includes('2026-07-09'), 'today and 7 days ahead');
    const hour = 3_600_000;
    const at = [
      ...Array.from({ length: 8 }, (_, i) => now - 38 * DAY + i * DAY), // 8 whole days past retention
      cutoff - 3 * hour, // the cutoff day, before the cutoff
      cutoff + 3 * hour, // the cutoff day, after it
      ...Array.from({ length: 30 }, (_, i) => now - 29 * DAY + i * DAY), // younger days
      Date.UTC(2020, 0, 1), // no partition of its own: the default partition, past retention
      Date.UTC(2030, 0, 1), // the default partition, in the future
    ];
    await store.logs.insert(at.map((createdAtMs) => logRecord({ workspaceId: 'ws', createdAtMs, metadata: { k: 'v' } })));
    assert.equal(await count('SELECT COUNT(*) AS n FROM request_logs_default'), 2);
    assert.equal(await count('SELECT COUNT(*) AS n FROM log_metadata_default'), 2);

    const sweep = new LogRetention(store.logs, 30, () => now, unexpected);
    assert.equal(await sweep.run(), 10, '8 dropped days, 1 row of the cutoff day, 1 of the default partition');
    await sweep.stop();
    const left = await days();
    assert.equal(left[0], new Date(cutoff).toISOString().slice(0, 10), 'the cutoff day is kept, every day before it dropped');
    assert.ok(!left.includes('2026-05-31'));
    assert.equal(await count(`SELECT COUNT(*) AS n FROM request_logs WHERE created_at_ms < ${cutoff}`), 0);
    assert.equal(await count('SELECT COUNT(*) AS n FROM request_logs'), 32);
    assert.equal(await count('SELECT COUNT(*) AS n FROM log_metadata'), 32, 'metadata goes with its logs, kept with the kept ones');
    assert.equal(await count('SELECT COUNT(*) AS n FROM request_logs_default'), 1);
    assert.equal(await new LogRetention(store.logs, 30, () => now, unexpected).run(), 0);
  });

  it('a day created after rows of it reached the default partition takes them over', async () => {
    const later = now + 20 * DAY;
    const rec = logRecord({ workspaceId: 'ws', createdAtMs: later, metadata: { k: 'v' } });
    await store.logs.insert([rec]);
    assert.equal(await count('SELECT COUNT(*) AS n FROM request_logs_default'), 1);
    await store.logs.prepareDays(later - 2 * DAY);
    assert.equal(await count('SELECT COUNT(*) AS n FROM request_logs_default'), 0);
    assert.equal(await count('SELECT COUNT(*) AS n FROM log_metadata_default'), 0);
    const where = await store.db.get<{ t: string }>('SELECT tableoid::regclass::text AS t FROM request_logs WHERE id = ?', [rec.id]);
    assert.match(where!.t, /request_logs_p20260721$/);
    const all = { full: 'any' as const, own: [], userId: null, hideMetadata: [] };
    assert.equal((await store.logs.get(rec.id, all))?.id, rec.id);
    const page = await store.logs.list({ metadata: [['k', 'v']] }, all, { limit: 10, after: undefined });
    assert.deepEqual(page.data.map((l) => l.id), [rec.id]);
  });

  it('with retention 0 the sweep still creates the days ahead, and removes nothing', async () => {
    const far = Date.UTC(2031, 0, 1);
    await store.logs.insert([logRecord({ workspaceId: 'ws', createdAtMs: Date.UTC(2020, 0, 1) })]);
    assert.equal(await new LogRetention(store.logs, 0, () => far, unexpected).run(), 0);
    assert.deepEqual((await days()).slice(-8), ['2031-01-01', '2031-01-02', '2031-01-03', '2031-01-04', '2031-01-05', '2031-01-06', '2031-01-07', '2031-01-08']);
    assert.equal(await count('SELECT COUNT(*) AS n FROM request_logs'), 1);
  });
});
