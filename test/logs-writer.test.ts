// The log writer thread on both real engines: entries handed over on the
// request thread are records in the store after close(), their tokens and
// cost come back for the metrics, and a thread that dies is replaced (what it
// held counted as dropped, later entries written by its successor).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, beforeEach, describe, it, mock } from 'node:test';
import { Worker } from 'node:worker_threads';
import { closeWorker, LogWriter } from '../src/logs/writer.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';
import { engines } from './support/engines.js';
import { logEntry } from './support/logs.js';

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('closing a writer thread', () => {
  it('terminates a thread that never answers the close (its timeout and a grace), so neither close() nor a retired thread waits forever', async () => {
    // A thread that ignores every message, as one stuck in a write would.
    const w = new Worker('setInterval(() => {}, 1000);', { eval: true });
    await new Promise((r) => w.once('online', r));
    const started = Date.now();
    await closeWorker(w, 50);
    const took = Date.now() - started;
    assert.ok(took >= 5000 && took < 15_000, `closed after ${took} ms`);
  });
});

for (const engine of engines()) {
  describe(`log writer thread on ${engine.name}`, { timeout: 60_000 }, () => {
    let store: Store;
    let dir: string;
    let env: Record<string, string>;
    const errors: string[] = [];
    const usage = { input: 0, output: 0, cost: 0 };
    const count = async (): Promise<number> => Number((await store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM request_logs'))!.n);
    const writerOn = (maxInFlight?: number): LogWriter =>
      new LogWriter({
        maxInFlight,
        dataDir: dir,
        databaseUrl: env.DATABASE_URL,
        onError: (_err, message) => errors.push(message),
        onUsage: (_provider, _model, input, output, cost) => {
          usage.input += input;
          usage.output += output;
          usage.cost += cost;
        },
      });

    beforeEach(async () => {
      env = await engine.fresh();
      dir = env.GATEWAY_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'switchyard-writer-'));
      store = await openStore({ dataDir: dir, databaseUrl: env.DATABASE_URL });
      await store.migrate();
      errors.length = 0;
      Object.assign(usage, { input: 0, output: 0, cost: 0 });
    });
    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    after(() => engine.cleanup());

    it('closes a thread given nothing to do, starts another for the next entry, and loses none across it', async () => {
      const named = (task: string): string => {
        try {
          return readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim();
        } catch {
          return ''; // a thread that ended between the listing and the read
        }
      };
      const writers = (): number => readdirSync('/proc/self/task').filter((t) => named(t) === 'sy-log-writer').length;
      const writer = new LogWriter({ idleMs: 300, dataDir: dir, databaseUrl: env.DATABASE_URL, onError: (_err, message) => errors.push(message), onUsage: () => {} });
      for (let i = 0; i < 10; i++) writer.write(logEntry({ traceId: `before-${i}` }));
      await until('the first entries written', async () => (await count()) === 10);
      await until('the idle thread closed', () => writers() === 0);
      assert.equal(writer.stats().flushed, 10, 'its counters kept');
      for (let i = 0; i < 5; i++) writer.write(logEntry({ traceId: `after-${i}` }));
      // Written: a thread was started for them (one that comes and goes between two polls is not looked for).
      await until('the new entries written', async () => (await count()) === 15);
      // Entries that arrive while a thread closes wait for the next one.
      await until('closed again', () => writers() === 0);
      for (let i = 0; i < 3; i++) writer.write(logEntry({ traceId: `late-${i}` }));
      await writer.close();
      assert.equal(await count(), 18);
      assert.deepEqual(writer.stats(), { ...writer.stats(), flushed: 18, dropped: 0, depth: 0 });
      assert.deepEqual(errors, []);
    });

    it('every entry is a record in the store after close(), with its tokens and cost reported back', async () => {
      const writer = writerOn();
      // More than one batch's worth, sent at once, and a remainder close() sends.
      for (let i = 0; i < 300; i++) writer.write(logEntry({ traceId: `t-${i}` }));
      await writer.close();
      assert.equal(await count(), 300);
      const s = writer.stats();
      assert.deepEqual({ ...s }, { depth: 0, bytes: 0, flushed: 300, spilled: 0, replayed: 0, dropped: 0, storeDown: false });
      assert.equal(usage.input, 300 * 10);
      assert.equal(usage.output, 300 * 5);
      assert.ok(usage.cost > 0);
      const one = await store.db.get<{ trace_id: string; total_tokens: number; request_body: string }>("SELECT * FROM request_logs WHERE trace_id = 't-7'");
      assert.equal(Number(one!.total_tokens), 15);
      assert.match(one!.request_body, /"api_key":"\[REDACTED\]"/);
      assert.deepEqual(errors, []);
      writer.write(logEntry());
      assert.equal(writer.stats().dropped, 1, 'an entry after close is counted, not lost silently');
    });

    it('a thread that dies is said, counted and replaced; later entries are written by the new one', async () => {
      const writer = writerOn();
      for (let i = 0; i < 3; i++) writer.write(logEntry({ traceId: `before-${i}` }));
      await until('the first entries written', () => writer.stats().flushed === 3);
      await (writer as unknown as { worker: Worker }).worker.terminate();
      await until('the death reported', () => errors.some((m) => m.includes('log writer thread exited')));
      assert.match(errors.find((m) => m.includes('exited'))!, /: 0 request logs it held are lost/);
      // Written while no thread runs: they wait for the next one.
      for (let i = 0; i < 2; i++) writer.write(logEntry({ traceId: `after-${i}` }));
      await until('the new thread writing', () => writer.stats().flushed === 5);
      await writer.close();
      assert.equal(await count(), 5);
      const s = writer.stats();
      assert.equal(s.flushed, 5, 'counters of the dead thread are kept');
      assert.equal(s.dropped, 0);
    });

    it('while a dead thread is replaced, at most maxInFlight entries wait for the next; more are counted as dropped and said once', async () => {
      const writer = writerOn(10);
      // The first entry starts the thread.
      writer.write(logEntry({ traceId: 'first' }));
      await until('the first entry written', () => writer.stats().flushed === 1);
      await (writer as unknown as { worker: Worker }).worker.terminate();
      await until('the death reported', () => errors.some((m) => m.includes('log writer thread exited')));
      for (let i = 0; i < 25; i++) writer.write(logEntry({ traceId: `waiting-${i}` }));
      assert.equal(writer.stats().dropped, 15);
      await until('the new thread writing', () => writer.stats().flushed === 11);
      await writer.close();
      assert.equal(await count(), 11);
      assert.equal(errors.filter((m) => m === '15 request logs were dropped: the log writer thread fell behind').length, 1);
    });

    it('a writer that is behind costs the request thread nothing: past maxInFlight entries (or their bytes) more are dropped and counted, never waited for', async () => {
      const wait = mock.method(Atomics, 'wait');
      try {
        const writer = writerOn(10);
        // One turn of the request thread: the writer thread takes nothing meanwhile.
        for (let i = 0; i < 1000; i++) writer.write(logEntry({ traceId: `burst-${i}` }));
        assert.equal(wait.mock.callCount(), 0, 'the request thread waited for the writer');
        assert.equal(writer.stats().dropped, 990);
        await until('the ten written', () => writer.stats().flushed === 10);
        writer.write(logEntry({ traceId: 'after' }));
        await writer.close();
        assert.equal(await count(), 11);
        assert.deepEqual(
          errors.filter((m) => m.includes('dropped')),
          ['request logs are being dropped (and counted): the log writer thread fell behind', '990 request logs were dropped: the log writer thread fell behind'],
        );

        const bytes = new LogWriter({ maxBytes: 3 * 1024 * 1024, dataDir: dir, databaseUrl: env.DATABASE_URL, onError: () => {}, onUsage: () => {} });
        const body = Buffer.alloc(1024 * 1024, 'a');
        for (let i = 0; i < 100; i++) bytes.write(logEntry({ traceId: `big-${i}`, requestBody: body, requestBytes: body.length }));
        assert.equal(wait.mock.callCount(), 0);
        assert.equal(bytes.stats().dropped, 97, 'three bodies of 1 MiB are handed over, then 3 MiB wait');
        await bytes.close();
      } finally {
        wait.mock.restore();
      }
    });

    it('what the writer thread still holds in its queue counts against maxBytes: past it, entries are dropped and counted', async () => {
      const maxBytes = 100 * 1024;
      const writer = new LogWriter({ maxBytes, dataDir: dir, databaseUrl: env.DATABASE_URL, onError: () => {}, onUsage: () => {} });
      // The store takes no write while this transaction holds its lock (SQLite's write lock, a table lock on
      // Postgres): what the writer thread takes stays in its queue, as it would behind a slow store.
      let unlock!: () => void;
      let locked!: () => void;
      const gate = new Promise<void>((r) => (unlock = r));
      const isLocked = new Promise<void>((r) => (locked = r));
      const holding = store.db.transaction(async (tx) => {
        if (engine.name === 'postgres') await tx.run('LOCK TABLE request_logs IN ACCESS EXCLUSIVE MODE');
        locked();
        await gate;
      });
      let sent = 0;
      let dropped = 0;
      try {
        await isLocked;
        // Entries without bodies weigh nothing handed over (PackedBatch.size 0) but a record's 1 KiB of fixed fields
        // in the thread's queue: the request thread is behind only by the bytes the thread publishes. Sent in waves
        // until the queue (its blocked write, and the records behind it) holds maxBytes.
        await until('the thread\'s queue holding maxBytes', () => {
          if (writer.stats().bytes >= maxBytes) return true;
          for (let i = 0; i < 20; i++, sent++) writer.write(logEntry({ traceId: `held-${sent}`, requestBody: null, requestBytes: 0, answerHead: null }));
          return false;
        });
        dropped = writer.stats().dropped;
        writer.write(logEntry({ traceId: 'dropped' }));
        assert.equal(writer.stats().dropped, dropped + 1, 'dropped on the request thread, for the bytes the writer thread holds');
      } finally {
        unlock();
        await holding;
      }
      await until('the queue written', () => writer.stats().bytes === 0 && writer.stats().depth === 0);
      writer.write(logEntry({ traceId: 'taken' }));
      await writer.close();
      const s = writer.stats();
      assert.equal(s.dropped, dropped + 1, 'taken once the queue was written');
      // Every entry is a row or counted as dropped (the queue's own overflow may have dropped some meanwhile).
      assert.equal(await count(), sent + 2 - s.dropped);
    });
  });
}
