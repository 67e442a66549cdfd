/**
 * The one SQL seam both engines sit behind. Repositories write portable SQL
 * once, with `?` placeholders (Postgres gets `$n`), INTEGER 0/1 for booleans,
 * TEXT holding JSON, BIGINT Unix seconds, and `ON CONFLICT` / `RETURNING`
 * (both engines have them). Engine-specific code stays in sqlite.ts and
 * postgres.ts.
 */
import { boundedMemo } from '../shared/memo.js';

export type SqlValue = string | number | null;

export interface Db {
  readonly engine: 'sqlite' | 'postgres';
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined>;
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
  /**
   * Inserts rows (values in `columns` order), skipping those whose key is
   * already stored (`ON CONFLICT DO NOTHING`); for batches, where a
   * statement per row or a parameter per value would cost more than the
   * insert: SQLite runs one cached single-row statement per row, Postgres
   * sends one statement with the rows as one JSON parameter. With
   * `returning` (a column) it resolves to that column's values of the rows
   * it inserted, so a caller can tell them from those skipped; else to [].
   */
  insertMany(table: string, columns: readonly string[], rows: readonly (readonly SqlValue[])[], returning?: string): Promise<SqlValue[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** fn's statements commit together or not at all; use the Db it is given, not this one. */
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
}

/** Whether an error is a unique-constraint violation, in either engine's words. */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  return err.code === '23505' || err.code === 'SQLITE_CONSTRAINT_UNIQUE' || err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Whether an error is a foreign-key violation (a row still referenced, or a reference to nothing). */
export function isForeignKeyViolation(e: unknown): boolean {
  const err = e as { code?: string };
  return err.code === '23503' || err.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** The code of a read stopped waiting at its bound before the database could stop it (SqliteReads, statementsWithin's turns). */
export const READ_TIMEOUT = 'SWITCHYARD_READ_TIMEOUT';

/** The error such a read rejects with, which isReadTimeout tells. */
export function readTimeout(message: string): Error {
  return Object.assign(new Error(message), { code: READ_TIMEOUT });
}

/**
 * Whether a read was stopped at its bound: on Postgres a statement cancelled
 * by statement_timeout (SQLSTATE 57014, statementsWithin), on SQLite a read
 * its thread did not answer in time.
 */
export function isReadTimeout(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return code === '57014' || code === READ_TIMEOUT;
}

/**
 * Whether the statement failed because of the values it was given (a value
 * the column refuses, a row too large for an index) rather than because the
 * database is away or its schema is not what the statement expects.
 */
export function isDataError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') return /^(22|23|54)[0-9A-Z]{3}$/.test(code) || /^SQLITE_(CONSTRAINT|TOOBIG|MISMATCH)/.test(code);
  // better-sqlite3 refuses a value it cannot bind before SQLite sees it.
  return e instanceof TypeError || e instanceof RangeError;
}

/** `INSERT INTO table (columns) <source> ON CONFLICT DO NOTHING [RETURNING column]`, the statement both engines' insertMany build. */
export function insertSql(table: string, columns: readonly string[], source: string, returning?: string): string {
  return `INSERT INTO ${table} (${columns.join(', ')}) ${source} ON CONFLICT DO NOTHING${returning === undefined ? '' : ` RETURNING ${returning}`}`;
}

/**
 * JSON for a Postgres json parameter. JSON.stringify writes a lone surrogate
 * as a \udXXX escape, which Postgres refuses: it becomes U+FFFD, as when the
 * driver encodes a string parameter as UTF-8.
 */
export function pgJson(value: unknown): string {
  const json = JSON.stringify(value);
  return json.includes('\\ud') ? json.replace(LONE_SURROGATE_ESCAPE, '$1\\ufffd') : json;
}
/** A \udXXX escape (after an even number of backslashes, so the backslash is not itself escaped). */
const LONE_SURROGATE_ESCAPE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/**
 * `?` → `$1, $2…` for Postgres, memoised. SQL here never holds a literal `?`.
 * Bounded: the log reads' SQL varies with a caller's filters (a subquery per
 * metadata pair, an `IN (?, …)` per list length).
 */
export const toPgPlaceholders = boundedMemo(1024, (sql) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
});
