/** The query of a list that pages by cursor: the management API's and the files' and batches'. */
import { invalid, type Result } from '../shared/errors.js';
import type { PageRequest } from '../store/page.js';

/** `limit` 1..100 (default 20) and `after` (contract: lists where the spec is silent). */
export function pageRequest(query: URLSearchParams): Result<PageRequest> {
  const rawLimit = query.get('limit');
  let limit = 20;
  if (rawLimit !== null) {
    limit = Number(rawLimit);
    if (!/^\d+$/.test(rawLimit) || limit < 1 || limit > 100) return { ok: false, error: invalid('limit: must be an integer between 1 and 100', 'limit') };
  }
  const after = query.get('after') ?? undefined;
  return { ok: true, value: { limit, after: after === '' ? undefined : after } };
}
