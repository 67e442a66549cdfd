/** What the rate-limit and usage-limit policy tables share: listing by status and filters, and a workspace's active policies. */
import type { Db } from './db.js';
import { listPage, type Page, type PageRequest } from './page.js';

/** One page of a policy table: `statuses` any of, each defined filter an exact column match. */
export function listPolicies<Row, T>(
  db: Db,
  table: string,
  statuses: readonly string[],
  filters: readonly (readonly [column: string, value: string | undefined])[],
  page: PageRequest,
  map: (row: Row) => T,
): Promise<Page<T>> {
  const where = [`status IN (${statuses.map(() => '?').join(', ')})`];
  const params: string[] = [...statuses];
  for (const [column, value] of filters) {
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    params.push(value);
  }
  return listPage(db, table, where, params, page, map);
}

/** Every active policy of a workspace: what requests made in it are checked against. */
export async function activePolicies<Row, T>(db: Db, table: string, workspaceId: string, map: (row: Row) => T): Promise<T[]> {
  const rows = await db.all<Row>(`SELECT * FROM ${table} WHERE workspace_id = ? AND status = 'active' ORDER BY id`, [workspaceId]);
  return rows.map(map);
}
