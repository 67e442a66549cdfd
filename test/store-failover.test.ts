/** The writer HA mode's Db (store/failover.ts) over fake engines: which errors mean "the writer is away", and what then answers. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Db } from '../src/store/db.js';
import { FailoverDb, isConnectionError, WriterUnavailable } from '../src/store/failover.js';
import type { Engine } from '../src/store/store.js';

/** An engine whose every call answers `name` or throws what `fail` holds; it counts its calls. */
function fake(name: string) {
  const state = { fail: null as unknown, calls: 0 };
  const answer = async <T>(): Promise<T> => {
    state.calls++;
    if (state.fail !== null) throw state.fail;
    return name as T;
  };
  const db: Engine = {
    engine: 'postgres',
    all: answer,
    get: answer,
    run: answer,
    insertMany: answer,
    exec: answer,
    transaction: <T>(fn: (tx: Db) => Promise<T>) => answer<void>().then(() => fn(db)),
    close: () => {},
  };
  return { db, state };
}
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('FailoverDb', () => {
  it('tells a server away from a statement refused', () => {
    for (const e of [refused, { code: '08006' }, { code: '57P01' }, new Error('Connection terminated unexpectedly'), new Error('timeout exceeded when trying to connect')]) {
      assert.ok(isConnectionError(e), JSON.stringify(e));
    }
    for (const e of [{ code: '23505' }, { code: '42P01' }, new Error('syntax error'), null, undefined]) assert.ok(!isConnectionError(e), JSON.stringify(e));
  });

  it('writer up: everything goes to it; a statement error is rethrown as it is and marks nothing', async () => {
    const writer = fake('writer');
    const reader = fake('reader');
    const db = new FailoverDb(writer.db, reader.db, () => 0);
    assert.equal(await db.get('SELECT 1'), 'writer');
    writer.state.fail = Object.assign(new Error('duplicate key'), { code: '23505' });
    await assert.rejects(db.run('INSERT'), /duplicate key/);
    await assert.rejects(db.all('SELECT'), /duplicate key/);
    writer.state.fail = null;
    assert.equal(await db.run('INSERT'), 'writer');
    assert.equal(reader.state.calls, 0);
  });

  it('writer away: reads from the reader, writes refused without trying it, until a second has passed', async () => {
    let now = 0;
    const writer = fake('writer');
    const reader = fake('reader');
    const db = new FailoverDb(writer.db, reader.db, () => now);
    writer.state.fail = refused;
    assert.equal(await db.all('SELECT'), 'reader');
    const tried = writer.state.calls;
    await assert.rejects(db.run('UPDATE'), WriterUnavailable);
    await assert.rejects(db.transaction(async () => 1), WriterUnavailable);
    assert.equal(await db.get('SELECT'), 'reader');
    assert.equal(writer.state.calls, tried, 'the writer is not tried again within the second');
    writer.state.fail = null;
    now = 1000;
    assert.equal(await db.run('UPDATE'), 'writer');
    assert.equal(await db.get('SELECT'), 'writer');
  });

  it('writer away and no reader: reads and writes are WriterUnavailable, with the cause', async () => {
    const writer = fake('writer');
    const db = new FailoverDb(writer.db, null, () => 0);
    writer.state.fail = refused;
    const e = await db.get('SELECT').catch((err: unknown) => err);
    assert.ok(e instanceof WriterUnavailable);
    assert.equal((e as Error).cause, refused);
    await assert.rejects(db.get('SELECT'), WriterUnavailable);
    await assert.rejects(db.insertMany('t', ['a'], [['x']]), WriterUnavailable);
  });
});
