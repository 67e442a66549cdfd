/** The query of a list that pages by cursor: the management API's and the files' and batches'. */
import { Type } from '@sinclair/typebox';
import { queryChecker } from '../shared/checker.js';
import type { Result } from '../shared/errors.js';
import { int } from '../shared/json-schema.js';
import type { PageRequest } from '../store/page.js';

/** `limit` 1..100 (default 20) and `after` (contract: lists where the spec is silent): the query of every `paged` route. */
export const PAGE_QUERY = queryChecker<{ limit?: number; after?: string }>(
  Type.Object({
    limit: Type.Optional({ ...int(1, 100), description: 'page size, default 20' }),
    after: Type.Optional(Type.String({ description: 'the last id of the previous page' })),
  }),
);

export function pageRequest(query: URLSearchParams): Result<PageRequest> {
  const q = PAGE_QUERY(query);
  if (!q.ok) return q;
  return { ok: true, value: { limit: q.value.limit ?? 20, after: q.value.after === '' ? undefined : q.value.after } };
}
