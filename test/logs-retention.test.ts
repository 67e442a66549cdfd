// Log retention on both engines: logs older than the retention age go, in
// batches, with their metadata and guardrail checks; newer ones stay; 0 days keeps everything.
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteLogsBefore, LogRetention } from '../src/logs/retention.js';
import { readSettings } from '../src/settings.js';
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
