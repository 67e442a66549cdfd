/**
 * Cursor paging shared by every list: newest first, `after` is the last id of
 * the previous page. Ids are time-ordered UUIDs, so `id < after` is the next page.
 */
import type { Db, SqlValue } from './db.js';

export interface PageRequest {
  /** 1..100, checked by the caller. */
  limit: number;
  after: string | undefined;
}

/** A page by number, where the spec pages so (`current_page` 0-based, `page_size`): the `page`th run of `size`, newest first. */
export interface OffsetPage {
  page: number;
  size: number;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/**
 * One page of `SELECT * FROM table WHERE <where…>`. `where` holds trusted SQL
 * fragments with `?` placeholders; their values go in `params`.
 */
export async function listPage<Row, T>(
  db: Db,
  table: string,
  where: readonly string[],
  params: readonly SqlValue[],
  page: PageRequest,
  map: (row: Row) => T,
): Promise<Page<T>> {
  const clauses = [...where];
  const values = [...params];
  if (page.after !== undefined) {
    clauses.push('id < ?');
    values.push(page.after);
  }
  values.push(page.limit + 1);
  const sql = `SELECT * FROM ${table}${clauses.length > 0 ? ` WHERE ${clauses.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
  const rows = await db.all<Row>(sql, values);
  const hasMore = rows.length > page.limit;
  if (hasMore) rows.pop();
  return { data: rows.map(map), hasMore };
}

/** JSON column → value; null stays null. */
export function fromJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

export function toJson(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}
