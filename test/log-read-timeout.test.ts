// The log and analytics reads on Postgres each run within a statement
// timeout (store/statements-within.ts, LogRepo's reader), so a
// caller's scan of every log cannot hold the server and a pooled connection
// for minutes; the bound is SET LOCAL, gone with the read's transaction; and
// a read stopped by it is answered 504 query_timeout (admin/log-access.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { logRead } from '../src/admin/log-access.js';
import { isReadTimeout, type Db, type SqlValue } from '../src/store/db.js';
import { LOG_READ_TIMEOUT_MS, LogRepo, type LogScope } from '../src/store/logs.js';
import { PostgresDb } from '../src/store/postgres.js';
import { statementsWithin } from '../src/store/statements-within.js';
import { PG_URL } from './support/engines.js';
import { twoStores, type TwoStores } from './support/log-stores.js';
import { logRecord } from './support/logs.js';

const ALL: LogScope = { full: 'any', own: [], userId: null, hideMetadata: [] };

describe('log reads within a statement timeout (postgres)', { timeout: 60_000 }, () => {
  let stores: TwoStores;
  before(async () => {
    stores = await twoStores();
    await stores.pg.logs.insert([logRecord({ workspaceId: 'ws-a', model: 'gpt-4o', metadata: { env: 'prod' } })]);
  });
  after(() => stores.close());

  it('stops a read past the bound, and leaves the pooled connections unbounded', async () => {
    const started = Date.now();
    const err = await statementsWithin(stores.pg.db, 100)
      .get('SELECT pg_sleep(3)')
      .then(
        () => assert.fail('the read was not stopped'),
        (e: unknown) => e,
      );
    assert.ok(isReadTimeout(err), String(err));
    assert.ok(Date.now() - started < 2500, `stopped after ${Date.now() - started} ms`);
    // Several at once: they take several of the pool's connections, none left with the bound.
    const settings = await Promise.all(Array.from({ length: 4 }, () => stores.pg.db.get<{ statement_timeout: string }>('SHOW statement_timeout')));
    assert.deepEqual(
      settings.map((s) => s?.statement_timeout),
      ['0', '0', '0', '0'],
    );
  });

  it("bounds every read of the log repository (its own statements and a slow reader's), not its writes", async () => {
    // A reader whose reads each sleep 300 ms first, in the read's own transaction.
    const slow = (over: Db): Db => ({
      ...over,
      engine: 'postgres',
      all: async <T>(sql: string, params?: readonly SqlValue[]) => (await over.get('SELECT pg_sleep(0.3)'), over.all<T>(sql, params)),
      get: async <T>(sql: string, params?: readonly SqlValue[]) => (await over.get('SELECT pg_sleep(0.3)'), over.get<T>(sql, params)),
      transaction: (fn) => stores.pg.db.transaction((tx) => fn(slow(tx))),
    });
    const repo = new LogRepo(stores.pg.db, slow(stores.pg.db), 100);
    const page = { limit: 10, after: undefined };
    for (const read of [() => repo.list({}, ALL, page), () => repo.get('nope', ALL), () => repo.groups('model', [], { metadata: [['env', 'prod']] }, ALL, page)]) {
      await assert.rejects(read(), (e: unknown) => isReadTimeout(e));
    }
    await repo.insert([logRecord({ workspaceId: 'ws-a', model: 'written' })]);
    // The default bound lets the same reads through.
    const patient = new LogRepo(stores.pg.db, slow(stores.pg.db));
    assert.equal((await patient.list({}, ALL, page)).data.length, 2);
    assert.equal(LOG_READ_TIMEOUT_MS, 30_000);
  });

  it('runs at most atOnce reads at a time: the next waits its turn within the bound, and its statement gets what is left', async () => {
    let running = 0;
    let most = 0;
    const bounds: number[] = [];
    const ends: Array<() => void> = [];
    // A pool whose reads end when the test says.
    const pool: Db = {
      ...stores.pg.db,
      engine: 'postgres',
      transaction: async <T>(fn: (tx: Db) => Promise<T>): Promise<T> => {
        most = Math.max(most, ++running);
        try {
          return await fn({
            ...pool,
            exec: async (sql: string) => void bounds.push(Number(/statement_timeout = (\d+)/.exec(sql)![1])),
            get: () => new Promise((resolve) => ends.push(() => resolve(undefined as never))),
          });
        } finally {
          running--;
        }
      },
    };
    const reads = statementsWithin(pool, 600, 2);
    const first = reads.get('SELECT 1');
    const second = reads.get('SELECT 2');
    const third = reads.get('SELECT 3');
    await sleep(150);
    assert.equal(running, 2);
    ends.shift()!(); // the first ends: the third takes its turn
    await first;
    await sleep(20);
    assert.equal(running, 2);
    assert.ok(bounds[2]! <= 600 - 150 && bounds[2]! > 300, `the third read's bound: ${bounds[2]} ms`);
    // Both turns are held: a fourth waits its whole bound, and is stopped like a statement.
    await assert.rejects(reads.get('SELECT 4'), (e: unknown) => isReadTimeout(e));
    for (const end of ends.splice(0)) end();
    await Promise.all([second, third]);
    assert.equal(most, 2);
  });

  it('a statement waits for a pooled connection at most connectTimeoutMs, not for as long as the pool stays busy', async () => {
    const db = new PostgresDb(PG_URL, { connectTimeoutMs: 300 });
    const release: Array<() => void> = [];
    try {
      // pg's pool holds 10 connections: ten open transactions take them all.
      const held = Array.from({ length: 10 }, () => db.transaction(() => new Promise<void>((resolve) => release.push(resolve))));
      while (release.length < 10) await sleep(10);
      await assert.rejects(db.get('SELECT 1'), /timeout/);
      for (const r of release) r();
      await Promise.all(held);
      assert.deepEqual(await db.get('SELECT 1 AS one'), { one: 1 });
    } finally {
      for (const r of release) r();
      await db.close();
    }
  });

  it('a read stopped by the bound is answered 504 query_timeout; any other failure is thrown on', async () => {
    const stopped = await logRead(() => statementsWithin(stores.pg.db, 50).get('SELECT pg_sleep(2)'));
    assert.equal(stopped.ok, false);
    if (stopped.ok) return;
    assert.deepEqual([stopped.error.status, stopped.error.code], [504, 'query_timeout']);
    assert.match(stopped.error.message, /did not finish within 30 s/);
    await assert.rejects(
      logRead(() => stores.pg.db.get('SELECT * FROM no_such_table')),
      /no_such_table/,
    );
    assert.deepEqual(await logRead(async () => 7), { ok: true, value: 7 });
  });
});
