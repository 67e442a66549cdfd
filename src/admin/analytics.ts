/**
 * Grouped request counts and opt-in aggregates (spec 1.11.2):
 * GET /v1/analytics/groups/:groupBy (scope analytics.view), and the same
 * aggregates over log rows at GET /v1/logs/groups/:groupBy (logs.ts, scope
 * logs.list). `groupBy` is ai_service (the provider's name), model,
 * status_code, api_key, config, workspace, provider (the stored provider or
 * virtual key used), or prompt; and, beyond the spec, the guardrail
 * verdicts: hook_status (passed, failed, denied; requests without hooks in
 * the group without a value), and guardrail_check, one group per check id,
 * where a request counts in each check it ran and each group also gives in
 * how many of its requests the check `passed`, `failed` and `errored`. `columns` (comma-separated) adds aggregates
 * to the default request count (definitions in store/logs.ts). Filters as
 * for /v1/logs; paged with `limit` and `after` (the last group's value),
 * groups ordered by value, the group without one last.
 */
import { invalid, type Result } from '../shared/errors.js';
import { GROUP_BY, GROUP_COLUMNS, type Group, type GroupBy, type GroupColumn } from '../store/logs.js';
import { PAGE_QUERY, pageRequest, queryOf, reply } from './input.js';
import { LOG_FILTER_PARAMS, logFilter } from './log-filter.js';
import { logRead, logScope, type LogReader } from './log-access.js';
import { route, type Reply, type Route } from './router.js';

const GROUP_BYS = Object.keys(GROUP_BY) as GroupBy[];

function groupBy(raw: string): Result<GroupBy> {
  return GROUP_BYS.includes(raw as GroupBy)
    ? { ok: true, value: raw as GroupBy }
    : { ok: false, error: invalid(`groupBy: '${raw}' is not one of ${GROUP_BYS.join(', ')}`, 'groupBy') };
}

function columns(raw: string | null): Result<GroupColumn[]> {
  const names = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.find((n) => !GROUP_COLUMNS.includes(n as GroupColumn));
  if (unknown !== undefined) return { ok: false, error: invalid(`columns: '${unknown}' is not one of ${GROUP_COLUMNS.join(', ')}`, 'columns') };
  return { ok: true, value: [...new Set(names as GroupColumn[])] };
}

/** Stored times are ms; answers give Unix seconds like every gateway timestamp. */
const IN_MS: ReadonlySet<GroupColumn> = new Set(['last_seen', 'first_seen']);

function groupView(by: GroupBy, g: Group): Record<string, unknown> {
  const out: Record<string, unknown> = { object: 'analytics-group', [by]: g.key, requests: g.requests };
  for (const [c, v] of Object.entries(g.values) as [GroupColumn, number | null][]) out[c] = IN_MS.has(c) && v !== null ? Math.floor(v / 1000) : v;
  return g.outcomes === undefined ? out : { ...out, ...g.outcomes };
}

/** A group route: `scope` is the key scope it needs, `reader` whether it reads log rows or only aggregates. */
export function groupRoute(path: string, scope: string, reader: LogReader, description: string): Route {
  return route({
    method: 'GET',
    path,
    description,
    query: queryOf({ ...LOG_FILTER_PARAMS, columns: `comma-separated aggregates beside the request count: ${GROUP_COLUMNS.join(', ')}`, ...PAGE_QUERY.schema.properties }),
    scope,
    async handler({ caller, params, query }, deps): Promise<Result<Reply>> {
      const by = groupBy(params.groupBy!);
      if (!by.ok) return by;
      const cols = columns(query.get('columns'));
      if (!cols.ok) return cols;
      const filter = logFilter(query);
      if (!filter.ok) return filter;
      const page = pageRequest(query);
      if (!page.ok) return page;
      let after: string | number | undefined = page.value.after;
      if (after !== undefined && by.value === 'status_code') {
        if (!/^\d+$/.test(after)) return { ok: false, error: invalid('after: a status_code group is named by its status code', 'after') };
        after = Number(after);
      }
      const read = await logScope(deps.store, caller, reader, query.get('workspace_id') ?? undefined);
      if (!read.ok) return read;
      const answer = await logRead(() =>
        deps.store.logs.groups(by.value, cols.value, { ...filter.value, workspaceId: read.value.workspaceId }, read.value.scope, { limit: page.value.limit, after }),
      );
      if (!answer.ok) return answer;
      const groups = answer.value;
      const key = (g: Group | undefined): string | null => (g === undefined || g.key === null ? null : String(g.key));
      return reply(200, {
        object: 'list',
        total: groups.total,
        data: groups.data.map((g) => groupView(by.value, g)),
        has_more: groups.hasMore,
        first_id: key(groups.data[0]),
        last_id: key(groups.data.at(-1)),
      });
    },
  });
}

export const analyticsRoutes: Route[] = [
  groupRoute('/analytics/groups/:groupBy', 'analytics.view', 'analytics', 'Request counts and opt-in aggregates (cost, tokens, latency, success rate, …) grouped by groupBy.'),
];
