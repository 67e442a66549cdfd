/**
 * SQLite engine: one file in GATEWAY_DATA_DIR, WAL mode so writes do not
 * block readers. better-sqlite3 is synchronous; statements are short indexed
 * lookups and the hot path reads through caches anyway.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { boundedMemo } from '../shared/memo.js';
import { insertSql, type Db, type SqlValue } from './db.js';

const BUSY_TIMEOUT_MS = 5000;
const BEGIN_WAIT_MS = 30_000;
/**
 * Prepared statements kept per connection. The log reads' SQL varies with
 * the caller's filters (an `IN (?, …)` per list length), so the cache is
 * bounded: past it the oldest is dropped and prepared again when next used.
 */
const MAX_STATEMENTS = 256;

export class SqliteDb implements Db {
  readonly engine = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly prepare = boundedMemo(MAX_STATEMENTS, (sql) => this.db.prepare(sql));
  /** While a transaction is open, other callers wait for it: its awaits must not interleave their statements. */
  private busy: Promise<void> | null = null;

  /** `readOnly`: a connection that only reads a file another has made (SqliteReads' process). */
  constructor(dataDir: string, { readOnly = false } = {}) {
    this.db = new Database(join(dataDir, 'switchyard.db'), { readonly: readOnly, fileMustExist: readOnly });
    // Another process holding the write lock is waited for, not an error.
    this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // better-sqlite3 builds SQLite with a 16 MiB page cache per connection; the log writer's (request rows of
    // bodies, written once) filled it and kept it as RSS. Its rows are appended to the B-trees' right edges and
    // reads of colder pages come from the OS's file cache: 4 MiB keeps the hot pages (docs/logs.md, memory).
    this.db.pragma('cache_size = -4096');
    if (readOnly) return;
    // Takes effect only in a new file. Request logs are ~1.5 kB rows written in
    // batches: 16 kB pages mean a quarter of the WAL frames, page splits and
    // checksums per row of 4 kB ones (~30% less CPU per log).
    this.db.pragma('page_size = 16384');
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
  }

  async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    while (this.busy !== null) await this.busy;
    return this.direct.all<T>(sql, params);
  }

  async get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    while (this.busy !== null) await this.busy;
    return this.direct.get<T>(sql, params);
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    while (this.busy !== null) await this.busy;
    return this.direct.run(sql, params);
  }

  async transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
    while (this.busy !== null) await this.busy;
    let release!: () => void;
    this.busy = new Promise((r) => (release = r));
    try {
      await this.begin();
    } catch (e) {
      this.busy = null;
      release();
      throw e;
    }
    try {
      const out = await fn(this.direct);
      this.db.exec('COMMIT');
      return out;
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw e;
    } finally {
      this.busy = null;
      release();
    }
  }

  /**
   * IMMEDIATE takes the write lock up front, so two processes migrating wait in
   * turn. The wait is asynchronous: SQLite's own busy wait would block this
   * thread, and with it whoever holds the lock when that is this process.
   */
  private async begin(): Promise<void> {
    const deadline = Date.now() + BEGIN_WAIT_MS;
    this.db.pragma('busy_timeout = 0');
    try {
      for (;;) {
        try {
          this.db.exec('BEGIN IMMEDIATE');
          return;
        } catch (e) {
          if ((e as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw e;
          await sleep(5);
        }
      }
    } finally {
      this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /** In a transaction of its own: a statement per row would otherwise commit per row. */
  insertMany(table: string, columns: readonly string[], rows: readonly (readonly SqlValue[])[], returning?: string): Promise<SqlValue[]> {
    return this.transaction((tx) => tx.insertMany(table, columns, rows, returning));
  }

  async exec(sql: string): Promise<void> {
    while (this.busy !== null) await this.busy;
    this.db.exec(sql);
  }

  close(): void {
    this.db.close();
  }

  /** Statements without the transaction gate: the transaction's own Db. */
  private readonly direct: Db = {
    engine: 'sqlite',
    all: async <T>(sql: string, params: readonly SqlValue[] = []) => this.prepare(sql).all(...params) as T[],
    get: async <T>(sql: string, params: readonly SqlValue[] = []) => this.prepare(sql).get(...params) as T | undefined,
    run: async (sql: string, params: readonly SqlValue[] = []) => this.prepare(sql).run(...params).changes,
    // A prepared single-row statement per row: as fast as multi-row statements, without building their parameter arrays.
    insertMany: async (table, columns, rows, returning) => {
      const statement = this.prepare(insertSql(table, columns, `VALUES (${columns.map(() => '?').join(', ')})`));
      const at = returning === undefined ? -1 : columns.indexOf(returning);
      const out: SqlValue[] = [];
      for (const row of rows) if (statement.run(...row).changes > 0 && at >= 0) out.push(row[at]!);
      return out;
    },
    exec: async (sql: string) => void this.db.exec(sql),
    transaction: (fn) => fn(this.direct),
  };
}
