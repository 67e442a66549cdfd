// The log write queue: enqueue never writes on the caller's turn; batches of
// at most batchSize go in one insert; a store that is away sends records to
// the spill file, and a store that comes back gets them replayed once;
// close() leaves everything in the store; memory stays bounded with the
// overflow on disk; a record the store refuses alone is dropped without
// blocking the rest. Then the same on both real engines (a table renamed
// away is a store that cannot write), with replays that are idempotent.
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LogQueue, storeSink, type LogSink } from '../src/logs/queue.js';
import type { LogRecord } from '../src/store/log-record.js';
import { SpillFiles } from '../src/logs/spill.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';
import { engines } from './support/engines.js';
import { logRecord } from './support/logs.js';

async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function records(n: number, over: Partial<LogRecord> = {}): LogRecord[] {
  return Array.from({ length: n }, (_, i) => logRecord({ workspaceId: 'ws-1', metadata: { i: String(i), env: 'test' }, ...over }));
}

/** A store in memory: up or away on demand; refuses records whose model is 'poison' (a data error). */
class FakeSink implements LogSink {
  rows = new Map<string, LogRecord>();
  batches: number[] = [];
  up = true;

  async insert(batch: readonly LogRecord[]): Promise<void> {
    await sleep(1);
    if (!this.up) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    if (batch.some((r) => r.model === 'poison')) throw Object.assign(new Error('invalid input'), { code: '22P02' });
    this.batches.push(batch.length);
    for (const r of batch) if (!this.rows.has(r.id)) this.rows.set(r.id, r);
  }

  isDataError(e: unknown): boolean {
    return (e as { code?: string }).code === '22P02';
  }
}

function spillFiles(dir: string): string[] {
  return readdirSync(dir);
}

describe('log queue', { timeout: 30_000 }, () => {
  let dir: string;
  let sink: FakeSink;
  let queue: LogQueue;
  const errors: string[] = [];

  function make(over: Partial<ConstructorParameters<typeof LogQueue>[0]> = {}): LogQueue {
    return new LogQueue({
      sink,
      spill: new SpillFiles(dir, 20),
      flushIntervalMs: 10,
      retryMinMs: 20,
      retryMaxMs: 50,
      onError: (_e, m) => errors.push(m),
      ...over,
    });
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-spill-'));
    sink = new FakeSink();
    errors.length = 0;
  });
  afterEach(async () => {
    await queue?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes nothing on the caller’s turn, then batches of at most batchSize', async () => {
    queue = make({ batchSize: 500, flushIntervalMs: 60_000 });
    queue.start();
    const all = records(1200);
    for (const r of all) queue.enqueue(r);
    assert.equal(sink.batches.length, 0, 'no write during enqueue');
    assert.equal(queue.stats().depth, 1200);
    // A full batch is written at once, not at the (here: one minute) timer.
    await until(() => sink.rows.size === 1200, 'all rows');
    assert.deepEqual(sink.batches, [500, 500, 200]);
    assert.deepEqual(queue.stats(), { depth: 0, bytes: 0, flushed: 1200, spilled: 0, replayed: 0, dropped: 0, storeDown: false });
  });

  it('writes a partial batch at the timer', async () => {
    queue = make({ flushIntervalMs: 20 });
    queue.start();
    for (const r of records(3)) queue.enqueue(r);
    await until(() => sink.rows.size === 3, 'three rows');
    assert.deepEqual(sink.batches, [3]);
  });

  it('arms no timer while nothing waits: an idle writer thread is never woken', async (t) => {
    let armed = 0;
    const real = globalThis.setTimeout;
    t.mock.method(globalThis, 'setTimeout', (...args: Parameters<typeof setTimeout>) => {
      armed++;
      return real(...args);
    });
    const interval = t.mock.method(globalThis, 'setInterval');
    queue = make({ flushIntervalMs: 20 });
    queue.start();
    await sleep(60);
    assert.equal(armed, 0, 'no timer for an empty queue');
    for (const r of records(3)) queue.enqueue(r);
    assert.equal(armed, 1, 'one timer for the batch, not one per record');
    await until(() => sink.rows.size === 3, 'three rows');
    const afterWrite = armed;
    await sleep(60);
    assert.equal(armed, afterWrite, 'none once the queue is empty again');
    assert.equal(interval.mock.callCount(), 0);
  });

  it('spills while the store is away and replays once it is back', async () => {
    queue = make();
    queue.start();
    sink.up = false;
    const all = records(50);
    for (const r of all) queue.enqueue(r);
    await until(() => queue.stats().spilled === 50, 'spilled');
    assert.equal(queue.stats().storeDown, true);
    assert.equal(sink.rows.size, 0);
    assert.ok(spillFiles(dir).length > 0, 'a spill file on disk');
    assert.deepEqual(errors, ['log store unreachable: request logs go to the spill file until it is back'], 'told once');
    // More while it is away: straight to disk.
    for (const r of records(10)) queue.enqueue(r);
    await until(() => queue.stats().spilled === 60, 'spilled more');

    sink.up = true;
    await until(() => !queue.stats().storeDown, 'the store back');
    assert.equal(sink.rows.size, 60);
    const s = queue.stats();
    assert.equal(s.replayed, 60);
    assert.equal(s.storeDown, false);
    assert.equal(s.dropped, 0);
    for (const r of all) assert.deepEqual(sink.rows.get(r.id), r, 'a spilled record comes back whole');
    await until(() => spillFiles(dir).length === 0, 'spill files deleted');
    // Back to direct writes.
    for (const r of records(5)) queue.enqueue(r);
    await until(() => sink.rows.size === 65, 'direct write');
    assert.equal(queue.stats().flushed, 5);
  });

  it('close() writes everything in memory', async () => {
    queue = make({ flushIntervalMs: 60_000 });
    queue.start();
    for (const r of records(7)) queue.enqueue(r);
    assert.equal(sink.rows.size, 0);
    await queue.close();
    assert.equal(sink.rows.size, 7);
    assert.equal(queue.stats().depth, 0);
  });

  it('close() also replays what was spilled when the store is back, without waiting for the retry', async () => {
    queue = make({ retryMinMs: 60_000, retryMaxMs: 60_000 });
    queue.start();
    sink.up = false;
    for (const r of records(7)) queue.enqueue(r);
    await until(() => queue.stats().spilled === 7, 'spilled');
    sink.up = true; // back just before shutdown, long before the next retry
    for (const r of records(3)) queue.enqueue(r);
    await queue.close();
    assert.equal(sink.rows.size, 10);
    assert.equal(queue.stats().storeDown, false);
    assert.deepEqual(spillFiles(dir), []);
  });

  it('close() with the store away leaves records on disk for the next start', async () => {
    queue = make({ flushIntervalMs: 60_000 });
    queue.start();
    sink.up = false;
    const all = records(20);
    for (const r of all) queue.enqueue(r);
    await queue.close();
    assert.equal(queue.stats().spilled, 20);
    // Enqueued after close: written to disk at once, not lost.
    const late = logRecord({ workspaceId: 'ws-1' });
    queue.enqueue(late);
    assert.equal(queue.stats().spilled, 21);

    sink.up = true;
    queue = make();
    queue.start();
    await until(() => sink.rows.size === 21, 'replayed at start');
    assert.ok(sink.rows.has(late.id));
    await until(() => spillFiles(dir).length === 0, 'spill files deleted');
  });

  /** The fake store, answering nothing until release(): a store that cannot keep up. */
  function held(): { slow: LogSink; release: () => void } {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow: LogSink = {
      insert: async (batch) => {
        await gate;
        await sink.insert(batch);
      },
      isDataError: () => false,
    };
    return { slow, release };
  }

  it('keeps memory bounded: the overflow goes to disk while the store is slow, then into the store', async () => {
    const { slow, release } = held();
    queue = make({ sink: slow, maxDepth: 100, batchSize: 50 });
    queue.start();
    // Enqueued a turn at a time, as batches of entries reach the writer: the overflow drains between them.
    for (let i = 0; i < 4; i++) {
      for (const r of records(50)) queue.enqueue(r);
      assert.ok(queue.stats().depth <= 200, `depth ${queue.stats().depth}: memory and overflow are bounded`);
      await until(() => queue.stats().depth <= 100, 'overflow spilled');
    }
    release();
    await until(() => sink.rows.size === 200, 'every record in the store');
    const s = queue.stats();
    assert.equal(s.flushed + s.replayed, 200);
    assert.equal(s.dropped, 0);
  });

  it('drops and counts what neither memory nor the overflow has room for: enqueue never waits for the disk', async () => {
    const { slow, release } = held();
    const spill = new SpillFiles(dir, 20);
    spill.appendSync = () => assert.fail('a synchronous append on the caller’s turn');
    queue = make({ sink: slow, spill, maxDepth: 100, batchSize: 50 });
    queue.start();
    for (const r of records(400)) queue.enqueue(r);
    const s = queue.stats();
    assert.ok(s.depth <= 200, `depth ${s.depth}: memory and overflow are bounded`);
    // Memory holds 100, the overflow 100 and one on its way to disk: the rest are counted, on the caller's turn.
    assert.equal(s.dropped, 400 - 201);
    assert.deepEqual(errors, ['request logs are being dropped (and counted): the log queue and its spill buffer were full (the store and the disk did not keep up)']);
    release();
    await until(() => queue.stats().depth === 0 && sink.rows.size + queue.stats().dropped === 400, 'the rest in the store');
    queue.enqueue(records(1)[0]!);
    assert.equal(errors.at(-1), `${s.dropped} request logs were dropped: the log queue and its spill buffer were full (the store and the disk did not keep up)`);
  });

  it('bounds a write in bytes as well as records, and counts the batch being written in stats().bytes until it is written', async () => {
    const { slow, release } = held();
    queue = make({ sink: slow, batchSize: 500, batchBytes: 3 * 1024 * 1024, flushIntervalMs: 60_000 });
    queue.start();
    const body = 'x'.repeat(1024 * 1024);
    for (const r of records(10, { requestBody: body })) queue.enqueue(r);
    const all = queue.stats().bytes;
    assert.ok(all >= 10 * body.length, `bytes ${all}: the bodies are counted`);
    // A batch of 1 MiB bodies is full at three of them (3 MiB and their fixed fields), without waiting for the timer.
    await sleep(20);
    assert.equal(queue.stats().bytes, all, 'the batch being written is still in memory, and counted');
    release();
    await until(() => sink.rows.size === 10, 'every record in the store');
    assert.deepEqual(sink.batches, [3, 3, 3, 1]);
    assert.equal(queue.stats().bytes, 0);
  });

  it('replays a spill file of large records in batches bounded in bytes like a write, counting the batch it holds in stats().bytes', async () => {
    const body = 'x'.repeat(1024 * 1024);
    new SpillFiles(dir).appendSync(records(10, { requestBody: body }));
    const { slow, release } = held();
    const published: number[] = [];
    queue = make({
      sink: slow,
      batchSize: 500,
      batchBytes: 3 * 1024 * 1024,
      flushIntervalMs: 60_000,
      onProgress: () => published.push(queue.stats().bytes),
    });
    queue.start();
    // The first replay batch is in the store's hands: three 1 MiB records (3 MiB with their fixed fields), not all ten.
    await until(() => queue.stats().bytes > 0, 'the replay holding a batch');
    const held1 = queue.stats().bytes;
    assert.ok(held1 >= 3 * body.length && held1 < 4 * body.length, `bytes ${held1}: one batch of three bodies`);
    assert.equal(published.at(-1), held1, 'published (onProgress) as soon as it is held, for the request thread');
    release();
    await until(() => sink.rows.size === 10, 'every record replayed');
    assert.deepEqual(sink.batches, [3, 3, 3, 1]);
    assert.ok(Math.max(...published) < 4 * body.length, `at most one batch counted at a time: ${Math.max(...published)}`);
    assert.equal(queue.stats().bytes, 0);
    assert.equal(published.at(-1), 0);
    assert.equal(queue.stats().replayed, 10);
  });

  it('drops only a record the store refuses alone; the rest of its batch is written', async () => {
    queue = make({ flushIntervalMs: 60_000 });
    queue.start();
    const all = records(5);
    all[2]!.model = 'poison';
    for (const r of all) queue.enqueue(r);
    await queue.close();
    assert.equal(sink.rows.size, 4);
    assert.ok(!sink.rows.has(all[2]!.id));
    assert.equal(queue.stats().dropped, 1);
    assert.equal(queue.stats().storeDown, false);
    assert.ok(errors.some((m) => m.includes(all[2]!.id)));
  });

  it('counts records the disk refuses as dropped', async () => {
    queue = make({ flushIntervalMs: 60_000 });
    queue.start();
    sink.up = false;
    rmSync(dir, { recursive: true, force: true }); // the spill directory is gone: appends fail
    for (const r of records(4)) queue.enqueue(r);
    await queue.close();
    assert.equal(queue.stats().dropped, 4);
    assert.equal(queue.stats().spilled, 0);
  });
});

for (const engine of engines()) {
  describe(`log queue on ${engine.name}`, { timeout: 60_000 }, () => {
    let store: Store;
    let dir: string;
    const count = async (): Promise<number> => (await store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM request_logs'))!.n;
    const metadataRows = async (): Promise<number> => (await store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM log_metadata'))!.n;

    beforeEach(async () => {
      const env = await engine.fresh();
      dir = env.GATEWAY_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'switchyard-spill-'));
      store = await openStore({ dataDir: dir, databaseUrl: env.DATABASE_URL });
      await store.migrate();
    });
    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    after(() => engine.cleanup());

    const queueOn = (): LogQueue =>
      new LogQueue({ sink: storeSink(store), spill: new SpillFiles(join(dir, 'log-spill'), 20), flushIntervalMs: 10, retryMinMs: 20, retryMaxMs: 50 });

    if (engine.name === 'sqlite') {
      it('keeps a page cache of 4 MiB per connection, not the 16 MiB better-sqlite3 builds in (what a log writer filled and kept)', async () => {
        assert.deepEqual(await store.db.get('PRAGMA cache_size'), { cache_size: -4096 });
      });
    }

    it('writes large batches with metadata in one go, and close() leaves every record stored', async () => {
      const queue = queueOn();
      queue.start();
      const all = records(1234);
      for (const r of all) queue.enqueue(r);
      await queue.close();
      assert.equal(await count(), 1234);
      assert.equal(await metadataRows(), 1234 * 2);
      const back = await store.logs.get(all[777]!.id, { full: 'any', own: [], userId: null, hideMetadata: [] });
      assert.deepEqual(back, all[777]);
    });

    it('spills while the table is away, replays when it is back, and writes each record once', async () => {
      const queue = queueOn();
      queue.start();
      await store.db.exec('ALTER TABLE request_logs RENAME TO request_logs_away');
      const all = records(300);
      for (const r of all) queue.enqueue(r);
      await until(() => queue.stats().spilled === 300, 'spilled');
      assert.equal(queue.stats().storeDown, true);
      await store.db.exec('ALTER TABLE request_logs_away RENAME TO request_logs');
      await until(() => queue.stats().replayed === 300, 'replayed');
      await queue.close();
      assert.equal(await count(), 300);
      assert.equal(await metadataRows(), 600);
      assert.equal(queue.stats().dropped, 0);
    });

    it('a replay after a partial write adds only what is missing', async () => {
      const all = records(200);
      await store.logs.insert(all.slice(0, 120)); // written before the process died
      const spill = new SpillFiles(join(dir, 'log-spill'), 20);
      await spill.append(all); // and all of it also on disk
      const queue = queueOn();
      queue.start();
      await until(async () => queue.stats().replayed === 200, 'replayed');
      await queue.close();
      assert.equal(await count(), 200);
      const ids = await store.db.all<{ id: string }>('SELECT id FROM request_logs');
      assert.deepEqual(new Set(ids.map((r) => r.id)), new Set(all.map((r) => r.id)));
      assert.equal(await metadataRows(), 400);
    });

    it('writes strings Postgres TEXT refuses (NUL, lone surrogates) and keeps a backslash before `ud800` as text', async () => {
      const queue = queueOn();
      queue.start();
      const metadata = { k: 'x\udc00', '\\': '\\\ud800' };
      const [r] = records(1, { model: 'a\ud800b', metadata, requestBody: 'literal \\ud800 and \\\\ud800', responseBody: 'a\u0000b' });
      queue.enqueue(r!);
      await queue.close();
      assert.equal(queue.stats().dropped, 0);
      const back = await store.logs.get(r!.id, { full: 'any', own: [], userId: null, hideMetadata: [] });
      // A lone surrogate becomes U+FFFD (SQLite's driver writes one per byte of its WTF-8 form).
      assert.equal(back?.model?.replace(/\uFFFD+/g, '\uFFFD'), 'a\uFFFDb');
      assert.deepEqual(back?.metadata, metadata, 'the metadata column is JSON text: escapes survive');
      assert.equal(back?.requestBody, 'literal \\ud800 and \\\\ud800');
      assert.equal(back?.responseBody, 'a\uFFFDb');
      const pairs = await store.db.all<{ key: string; value: string }>('SELECT key, value FROM log_metadata WHERE log_id = ? ORDER BY key', [r!.id]);
      assert.deepEqual(
        pairs.map((p) => [p.key, p.value.replace(/\uFFFD+/g, '\uFFFD')]),
        [
          ['\\', '\\\uFFFD'],
          ['k', 'x\uFFFD'],
        ],
      );
    });

    it('writes a body holding a NUL character', async () => {
      const queue = queueOn();
      queue.start();
      const [r] = records(1, { responseBody: 'a\u0000b' });
      queue.enqueue(r!);
      await queue.close();
      assert.equal(queue.stats().dropped, 0);
      assert.equal(await count(), 1);
    });
  });
}
