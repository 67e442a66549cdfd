// SQLite's log and analytics reads run in a read process (sqlite-reads.ts):
// the request thread's event loop goes on while a scan runs, a read past
// its bound is answered READ_TIMEOUT and its process killed mid-scan, the
// reads behind it are answered by the next process, and no more than
// maxProcesses are alive at once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isReadTimeout, type Db } from './db.js';
import { SqliteReads } from './sqlite-reads.js';
import { SqliteDb } from './sqlite.js';

/** A read that takes about a second of CPU here and returns one row. */
const SLOW = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT COUNT(*) AS n FROM c`;

describe('SqliteReads', { timeout: 60_000 }, () => {
  let dir: string;
  let db: SqliteDb;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-sqlite-reads-'));
    db = new SqliteDb(dir);
    await db.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');`);
  });
  after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers as the writing connection does, sees its commits, and refuses to write', async () => {
    const reads = new SqliteReads(dir, { timeoutMs: 10_000 });
    try {
      assert.deepEqual(await reads.all('SELECT id, name FROM t ORDER BY id'), await db.all('SELECT id, name FROM t ORDER BY id'));
      assert.deepEqual(await reads.get('SELECT name FROM t WHERE id = ?', [2]), { name: 'b' });
      assert.equal(await reads.get('SELECT name FROM t WHERE id = ?', [9]), undefined);
      await db.run(`INSERT INTO t VALUES (3, 'c')`);
      assert.deepEqual(await reads.get('SELECT COUNT(*) AS n FROM t'), { n: 3 });
      await assert.rejects(reads.all('SELECT nope FROM t'), (e: { code?: string; message?: string }) => e.code === 'SQLITE_ERROR' && /nope/.test(e.message ?? ''));
      await assert.rejects((reads as Db).run('DELETE FROM t'), /only reads/);
      // The process's own connection is read-only, whatever SQL it is sent.
      await assert.rejects(reads.all('DELETE FROM t RETURNING id'), (e: { code?: string }) => e.code === 'SQLITE_READONLY');
      assert.deepEqual(await reads.get('SELECT COUNT(*) AS n FROM t'), { n: 3 });
    } finally {
      await reads.close();
    }
  });

  it('leaves the event loop free while a long read runs (the same read on the connection blocks it)', async () => {
    const reads = new SqliteReads(dir, { timeoutMs: 30_000 });
    try {
      await reads.get('SELECT 1'); // the process started
      const ticksDuring = async (read: () => Promise<unknown>): Promise<number> => {
        let ticks = 0;
        const interval = setInterval(() => ticks++, 5);
        await read();
        clearInterval(interval);
        return ticks;
      };
      const apart = await ticksDuring(() => reads.get(SLOW));
      const inline = await ticksDuring(() => db.get(SLOW));
      assert.ok(inline <= 1, `the inline read let ${inline} ticks run: the query is too short to tell`);
      assert.ok(apart >= 10, `only ${apart} ticks ran during the read in its process`);
    } finally {
      await reads.close();
    }
  });

  it('answers a read past its bound READ_TIMEOUT and kills its process mid-scan', async () => {
    // Bounds of seconds, not less: a read after the kill starts a process, which a loaded machine (CI) takes its time over.
    const reads = new SqliteReads(dir, { timeoutMs: 2000 });
    // A scan of about a minute: a thread could not be stopped before it returned.
    const minute = SLOW.replace('3000000', '200000000');
    try {
      await assert.rejects(reads.get(minute), (e: unknown) => isReadTimeout(e));
      const deadline = Date.now() + 10_000;
      while (reads.processes > 0 && Date.now() < deadline) await sleep(10);
      assert.equal(reads.processes, 0, 'the process scanning was not stopped');
      assert.deepEqual(await reads.get('SELECT COUNT(*) AS n FROM t'), { n: 3 });
    } finally {
      await reads.close();
    }
  });

  it('answers the reads behind an expired one on the next process, started once the killed one has exited (maxProcesses)', async () => {
    const reads = new SqliteReads(dir, { timeoutMs: 3000, maxProcesses: 1 });
    let most = 0;
    const sample = setInterval(() => (most = Math.max(most, reads.processes)), 1);
    try {
      const slow = reads.get(SLOW.replace('3000000', '200000000'));
      await sleep(1500); // the process runs the slow read by now; the next read has 1.5 s after its kill
      const behind = reads.get<{ n: number }>('SELECT COUNT(*) AS n FROM t');
      await assert.rejects(slow, (e: unknown) => isReadTimeout(e));
      assert.deepEqual(await behind, { n: 3 });
      assert.equal(most, 1);
    } finally {
      clearInterval(sample);
      await reads.close();
    }
  });

  it('closes a process left without reads for idleMs, and starts one for the next read', async () => {
    const reads = new SqliteReads(dir, { timeoutMs: 10_000, idleMs: 50 });
    try {
      await reads.get('SELECT 1');
      assert.equal(reads.processes, 1);
      const deadline = Date.now() + 10_000;
      while (reads.processes > 0 && Date.now() < deadline) await sleep(20);
      assert.equal(reads.processes, 0);
      assert.deepEqual(await reads.get('SELECT 2 AS two'), { two: 2 });
    } finally {
      await reads.close();
    }
  });

  it('a fork that fails fails its reads and gives its slot back', async () => {
    const reads = new SqliteReads(dir, { timeoutMs: 10_000, maxProcesses: 1 });
    const node = process.execPath;
    try {
      process.execPath = join(dir, 'no-such-node');
      await assert.rejects(reads.get('SELECT 1'), (e: { code?: string }) => e.code === 'ENOENT');
      process.execPath = node;
      assert.equal(reads.processes, 0);
      assert.deepEqual(await reads.get('SELECT 1 AS one'), { one: 1 });
    } finally {
      process.execPath = node;
      reads.close();
    }
  });

  it('fails its reads once closed', async () => {
    const reads = new SqliteReads(dir, { timeoutMs: 10_000 });
    const pending = assert.rejects(reads.get(SLOW), /closed/);
    await sleep(20);
    await reads.close();
    await pending;
    await assert.rejects(reads.get('SELECT 1'), /closed/);
  });
});
