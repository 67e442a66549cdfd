/**
 * Postgres engine, used when DATABASE_URL is set so several gateway processes
 * share one database. Besides the SQL seam it carries change notices between
 * processes over LISTEN/NOTIFY, so a key revoked on one gateway stops working
 * on all of them at once.
 */
import pg from 'pg';
import { decodeChange, encodeChange, type Changes } from './changes.js';
import { insertSql, pgJson, toPgPlaceholders, type Db, type SqlValue } from './db.js';

// BIGINT columns hold Unix seconds and counts, far inside Number's safe range;
// pg returns int8 as a string unless told otherwise. Per pool, not global.
const TYPES = new pg.TypeOverrides();
TYPES.setTypeParser(pg.types.builtins.INT8, Number);

const CHANNEL = 'switchyard_changes';
const RELISTEN_MS = 1000;

type Queryable = pg.Pool | pg.PoolClient;

function dbOver(q: Queryable): Db {
  return {
    engine: 'postgres',
    all: async <T>(sql: string, params: readonly SqlValue[] = []) => (await q.query(toPgPlaceholders(sql), params as SqlValue[])).rows as T[],
    get: async <T>(sql: string, params: readonly SqlValue[] = []) => (await q.query(toPgPlaceholders(sql), params as SqlValue[])).rows[0] as T | undefined,
    run: async (sql: string, params: readonly SqlValue[] = []) => (await q.query(toPgPlaceholders(sql), params as SqlValue[])).rowCount ?? 0,
    insertMany: async (table, columns, rows, returning) => {
      if (rows.length === 0) return [];
      const { rows: out } = await q.query<Record<string, SqlValue>>(insertManySql(table, columns, returning), [pgJson(rows), columns as string[]]);
      return returning === undefined ? [] : out.map((r) => r[returning]!);
    },
    exec: async (sql: string) => void (await q.query(sql)),
    transaction: () => Promise.reject(new Error('nested transactions are not supported')),
  };
}

/**
 * The rows arrive as one JSON array of arrays ($1) with the column names
 * ($2); each array becomes a row of the table's type, so every value is
 * converted as the column's own type would parse it. The driver's cost is
 * one JSON.stringify, not the encoding of a parameter per value.
 */
function insertManySql(table: string, columns: readonly string[], returning: string | undefined): string {
  return insertSql(
    table,
    columns,
    `SELECT ${columns.map((c) => `r.${c}`).join(', ')} FROM json_array_elements($1::json) AS e(v),
      json_populate_record(NULL::${table}, json_object($2::text[], ARRAY(SELECT x FROM json_array_elements_text(e.v) WITH ORDINALITY AS a(x, i) ORDER BY i))) AS r`,
    returning,
  );
}

/**
 * The URL with `-c jit=off` added to its libpq `options` (any it has are kept):
 * JIT compiles a plan's expressions once per partition it reads, which on the
 * day-partitioned request_logs (log-partitions.ts) cost 1-8 s per analytics
 * query that took 40 ms without it (bench/ANALYTICS.md); the gateway's other
 * statements are too short to gain from it. A startup parameter, so no
 * statement runs before it.
 */
function withoutJit(connectionString: string): string {
  let u: URL;
  try {
    u = new URL(connectionString);
  } catch {
    return connectionString;
  }
  const options = u.searchParams.get('options');
  u.searchParams.set('options', options === null || options === '' ? '-c jit=off' : `${options} -c jit=off`);
  return u.toString();
}

/** Without it a statement waited for a pooled connection as long as the pool stayed busy or the server silent: forever. */
const POOL_WAIT_MS = 10_000;

export class PostgresDb implements Db {
  readonly engine = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly over: Db;
  private listener: pg.Client | null = null;
  private closed = false;

  /**
   * `connectTimeoutMs`: how long a statement may wait for a connection, a new one's connect included (pg-pool's
   * connectionTimeoutMillis), so a writer gone silent fails fast; POOL_WAIT_MS unless set.
   */
  constructor(
    private readonly connectionString: string,
    opts: { connectTimeoutMs?: number } = {},
  ) {
    this.pool = new pg.Pool({ connectionString: withoutJit(connectionString), types: TYPES, connectionTimeoutMillis: opts.connectTimeoutMs ?? POOL_WAIT_MS });
    // An idle client losing its connection (server restart) emits here; without a
    // listener that would crash the process. The next query reconnects or fails visibly.
    this.pool.on('error', () => {});
    this.over = dbOver(this.pool);
  }

  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]> {
    return this.over.all<T>(sql, params);
  }

  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined> {
    return this.over.get<T>(sql, params);
  }

  run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return this.over.run(sql, params);
  }

  insertMany(table: string, columns: readonly string[], rows: readonly (readonly SqlValue[])[], returning?: string): Promise<SqlValue[]> {
    return this.over.insertMany(table, columns, rows, returning);
  }

  exec(sql: string): Promise<void> {
    return this.over.exec(sql);
  }

  async transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    // The pool listens for errors on idle clients only: a connection lost between this
    // transaction's statements would otherwise be an uncaught 'error' event, ending the
    // process. The statement then under way, or the next, fails with it instead.
    const lost = (): void => {};
    c.on('error', lost);
    try {
      await c.query('BEGIN');
      const out = await fn(dbOver(c));
      await c.query('COMMIT');
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      c.off('error', lost);
      c.release();
    }
  }

  /**
   * Carries change notices between processes. A dropped listening connection
   * is re-opened; notices missed meanwhile are covered by telling local caches
   * to drop everything once it is back.
   */
  connectChanges(changes: Changes): void {
    changes.broadcast = (c) => {
      this.pool.query('SELECT pg_notify($1, $2)', [CHANNEL, encodeChange(c)]).catch(() => {});
    };
    const listen = async (): Promise<void> => {
      if (this.closed) return;
      const client = new pg.Client({ connectionString: this.connectionString });
      let retried = false;
      const retry = (): void => {
        if (retried || this.closed) return;
        retried = true;
        setTimeout(() => void listen(), RELISTEN_MS).unref();
      };
      client.on('error', () => {});
      client.on('notification', (n) => {
        const change = n.payload === undefined ? null : decodeChange(n.payload);
        if (change !== null) changes.deliver(change);
      });
      client.on('end', () => {
        if (this.listener === client) this.listener = null;
        retry();
      });
      // Held before connecting, so a close() while it connects ends it too (else it would keep the process alive).
      this.listener = client;
      try {
        await client.connect();
        await client.query(`LISTEN ${CHANNEL}`);
        if (this.closed) {
          await client.end().catch(() => {});
          return;
        }
        changes.deliver({ kind: 'all', id: '*' });
      } catch {
        await client.end().catch(() => {});
        retry();
      }
    };
    void listen();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.listener?.end().catch(() => {});
    await this.pool.end();
  }
}
