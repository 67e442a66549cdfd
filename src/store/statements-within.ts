/**
 * The log and analytics reads of a Postgres store, bounded in time and in
 * number (LogRepo's reader). Apart from postgres.ts so that a SQLite gateway,
 * whose LogRepo imports this, does not load the pg driver (some 3 MiB of heap).
 */
import { readTimeout, type Db } from './db.js';

/**
 * Log and analytics reads running at once on one pool (statementsWithin). They share the pool (10 connections)
 * with every other statement unless a replica takes them: without a cap, ten slow group queries of one caller
 * held every connection, and the request path's reads (a key, a config) waited behind them.
 */
export const READS_AT_ONCE = 4;

/**
 * `db` whose reads (all, get) each run in a transaction of their own bounded
 * by `ms` of statement_timeout (SET LOCAL, so the connection goes back to the
 * pool unbounded): the log and analytics reads a caller starts stop there,
 * instead of holding a connection and the server's cores for as long as a
 * scan of the whole table takes. At most `atOnce` run at a time; the others
 * wait their turn within the same `ms` (its rest bounds their statement).
 * Writes are left as they are.
 */
export function statementsWithin(db: Db, ms: number, atOnce = READS_AT_ONCE): Db {
  let running = 0;
  const waiting: Array<() => void> = [];
  const turn = (): Promise<number> => {
    const asked = performance.now();
    if (running < atOnce) {
      running++;
      return Promise.resolve(0);
    }
    return new Promise((resolve, reject) => {
      const go = (): void => {
        clearTimeout(timer);
        running++;
        resolve(performance.now() - asked);
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(go), 1);
        reject(readTimeout(`no turn among the ${atOnce} log reads at once within ${ms} ms`));
      }, ms);
      waiting.push(go);
    });
  };
  const done = (): void => {
    running--;
    waiting.shift()?.();
  };
  const bounded = async <T>(read: (tx: Db) => Promise<T>): Promise<T> => {
    const waited = await turn();
    try {
      return await db.transaction(async (tx) => {
        await tx.exec(`SET LOCAL statement_timeout = ${Math.max(1, Math.round(ms - waited))}`);
        return read(tx);
      });
    } finally {
      done();
    }
  };
  return {
    engine: db.engine,
    all: (sql, params) => bounded((tx) => tx.all(sql, params)),
    get: (sql, params) => bounded((tx) => tx.get(sql, params)),
    run: (sql, params) => db.run(sql, params),
    insertMany: (table, columns, rows, returning) => db.insertMany(table, columns, rows, returning),
    exec: (sql) => db.exec(sql),
    transaction: (fn) => db.transaction(fn),
  };
}
