/**
 * Writer high-availability mode (DB_WRITER_HA): the Db the store uses when the
 * Postgres writer may go away (a failover, a restart). While it is away, reads
 * go to the read replica (or fail as the writer's absence when there is none)
 * and writes fail at once with WriterUnavailable, which the server answers as
 * a 503; the request path keeps serving from its caches and the log writer
 * thread spills (logs/spill.ts). After a connection failure the writer is
 * tried again RETRY_MS later, so an outage costs one failed connect a second,
 * not one per query.
 */
import type { Db, SqlValue } from './db.js';
import type { Engine } from './store.js';

const RETRY_MS = 1000;

/** A write (or a read with no replica to go to) while the writer is unreachable. */
export class WriterUnavailable extends Error {
  constructor(cause?: unknown) {
    super('the database writer is unreachable: management changes are refused until it is back', { cause });
  }
}

// Node's socket errors, and SQLSTATE class 08 (connection exception) and 57P01-03 (the server shutting down or starting).
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'EAI_AGAIN']);

/** Whether an error says the server is away, not that the statement was wrong. */
export function isConnectionError(e: unknown): boolean {
  const { code, message } = (e ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || code.startsWith('08') || /^57P0[123]$/.test(code))) return true;
  // pg's own words for a connection lost mid-query or not made in time.
  return typeof message === 'string' && /^Connection terminated|timeout exceeded when trying to connect/.test(message);
}

export class FailoverDb implements Engine {
  readonly engine = 'postgres' as const;
  private retryAt = 0;

  constructor(
    readonly writer: Engine,
    private readonly reader: Db | null,
    private readonly now: () => number = Date.now,
  ) {}

  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]> {
    return this.read((db) => db.all<T>(sql, params));
  }

  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined> {
    return this.read((db) => db.get<T>(sql, params));
  }

  run(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return this.write((db) => db.run(sql, params));
  }

  insertMany(table: string, columns: readonly string[], rows: readonly (readonly SqlValue[])[], returning?: string): Promise<SqlValue[]> {
    return this.write((db) => db.insertMany(table, columns, rows, returning));
  }

  exec(sql: string): Promise<void> {
    return this.write((db) => db.exec(sql));
  }

  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
    return this.write((db) => db.transaction(fn));
  }

  /** Closes the writer; the reader is the store's to close. */
  close(): void | Promise<void> {
    return this.writer.close();
  }

  private async read<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    if (this.now() >= this.retryAt) {
      try {
        return await fn(this.writer);
      } catch (e) {
        if (!isConnectionError(e)) throw e;
        this.retryAt = this.now() + RETRY_MS;
        if (this.reader === null) throw new WriterUnavailable(e);
      }
    }
    if (this.reader === null) throw new WriterUnavailable();
    return fn(this.reader);
  }

  private async write<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    if (this.now() < this.retryAt) throw new WriterUnavailable();
    try {
      return await fn(this.writer);
    } catch (e) {
      if (!isConnectionError(e)) throw e;
      this.retryAt = this.now() + RETRY_MS;
      throw new WriterUnavailable(e);
    }
  }
}
