/**
 * Request logs: batch writes from the log queue, reads for /v1/logs and the
 * group routes, and deletion by age. Writes are idempotent (the id is the
 * key, `ON CONFLICT DO NOTHING`), so a batch written twice (a replay after a
 * partial write) leaves one row per record.
 *
 * Who sees which rows is a LogScope the management layer computes from the
 * caller and the workspaces' settings; every read here applies it.
 */
import type { Db, SqlValue } from './db.js';
import { PAIR_FACT_NAMES } from './log-pairs.js';
import { statementsWithin } from './statements-within.js';
import { dropDaysBefore, prepareDays } from './log-partitions.js';
import { addToRollup, BUCKET_NAMES, COLUMN_DIMS, CROSS, BUCKET_SQL, deleteRollupBefore, type DimFilter, HOUR_MS, hoursHolding, MEASURE_NAMES, percentileOf, RAW_MEASURES, type RolledLog } from './log-rollup.js';
import { CHECK_OUTCOMES, type CheckOutcome, type HookStatus, type LogRecord } from './log-record.js';
import { fromJson, toJson, type Page, type PageRequest } from './page.js';

export interface LogFilter {
  /** Unix ms, inclusive. */
  fromMs?: number;
  toMs?: number;
  provider?: string;
  model?: string;
  traceId?: string;
  apiKeyId?: string;
  promptId?: string;
  configId?: string;
  workspaceId?: string;
  /** Exact statuses and classes (4 = 400..499); a row matches any of them. */
  status?: { exact: readonly number[]; classes: readonly number[] };
  /** Every pair must match. */
  metadata?: readonly (readonly [string, string])[];
  /** What the request's hooks came to: any of these. */
  hookStatus?: readonly HookStatus[];
  /** The request ran this check (`default.regexMatch`). */
  guardrailCheck?: string;
}

/** What a caller may read. Archived workspaces are left out of the lists by whoever builds the scope. */
export interface LogScope {
  /** Workspaces whose logs are visible in full; 'any': every workspace. */
  full: 'any' | readonly string[];
  /** Workspaces where only the logs of userId's keys are visible. */
  own: readonly string[];
  userId: string | null;
  /** Workspaces whose logs are read without metadata; metadata filters match nothing there. */
  hideMetadata: readonly string[];
}

/** A log as lists show it: no headers or bodies (those are for a single log, scope logs.view). */
export type LogSummary = Omit<LogRecord, 'requestHeaders' | 'requestBody' | 'responseBody' | 'hooks'>;

/** groupBy of the group routes → the column it groups by (log-rollup.ts COLUMN_DIMS). `provider` is the stored provider (virtual key) used; `ai_service` the vendor. */
export const GROUP_BY = {
  ...COLUMN_DIMS,
  /** One group per check: a request counts in each check it ran (hook_checks), with the check's outcomes. */
  guardrail_check: 'c.key',
} as const;
export type GroupBy = keyof typeof GROUP_BY;

/**
 * Opt-in columns of a group. Latency percentiles are nearest-rank: the
 * smallest latency such that at least p% of the group's requests took no
 * longer, i.e. the ceil(p·N/100)-th of the N latencies in ascending order
 * (the same as Postgres's percentile_disc). Rates are percentages of the
 * group's requests: success = status 2xx, cache hit = HIT or SEMANTIC HIT.
 * Errors are statuses of 400 and above. Averages leave out requests whose
 * tokens are unknown.
 */
const COLUMN_SQL = {
  cost: 'COALESCE(SUM(cost_usd), 0)',
  total_tokens: 'CAST(COALESCE(SUM(total_tokens), 0) AS BIGINT)',
  avg_tokens: 'CAST(AVG(total_tokens) AS DOUBLE PRECISION)',
  avg_input_tokens: 'CAST(AVG(prompt_tokens) AS DOUBLE PRECISION)',
  avg_output_tokens: 'CAST(AVG(completion_tokens) AS DOUBLE PRECISION)',
  avg_latency: 'CAST(AVG(latency_ms) AS DOUBLE PRECISION)',
  // SQLite's, from ranked rows (Postgres's: PERCENTILE_DISC). rn is the row's rank by latency within its group, n the group's
  // size; integer division: (p·n + 99) / 100 = ceil(p·n / 100).
  p50_latency: 'MAX(CASE WHEN rn = (50 * n + 99) / 100 THEN latency_ms END)',
  p95_latency: 'MAX(CASE WHEN rn = (95 * n + 99) / 100 THEN latency_ms END)',
  p99_latency: 'MAX(CASE WHEN rn = (99 * n + 99) / 100 THEN latency_ms END)',
  success_rate: 'CAST(100.0 * SUM(CASE WHEN status >= 200 AND status < 300 THEN 1 ELSE 0 END) / COUNT(*) AS DOUBLE PRECISION)',
  error_count: 'CAST(SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END) AS BIGINT)',
  cache_hit_rate: "CAST(100.0 * SUM(CASE WHEN cache_status IN ('HIT', 'SEMANTIC HIT') THEN 1 ELSE 0 END) / COUNT(*) AS DOUBLE PRECISION)",
  last_seen: 'MAX(created_at_ms)',
  first_seen: 'MIN(created_at_ms)',
} as const;
export type GroupColumn = keyof typeof COLUMN_SQL;
export const GROUP_COLUMNS = Object.keys(COLUMN_SQL) as GroupColumn[];

export interface Group {
  /** The grouped value (a status code is a number); null groups the requests without one. */
  key: string | number | null;
  requests: number;
  /** The requested columns; last_seen and first_seen in Unix ms; null where nothing was measured. */
  values: Partial<Record<GroupColumn, number | null>>;
  /** guardrail_check groups: of the group's requests, in how many the check passed, failed, errored. */
  outcomes?: Record<CheckOutcome, number>;
}


export interface GroupPage {
  data: Group[];
  hasMore: boolean;
  /** Groups in all pages. */
  total: number;
}

const COLUMNS = [
  'id',
  'created_at_ms',
  'trace_id',
  'span_id',
  'parent_span_id',
  'span_name',
  'workspace_id',
  'api_key_id',
  'user_id',
  'config_id',
  'virtual_key_id',
  'integration_id',
  'prompt_id',
  'provider',
  'model',
  'endpoint',
  'method',
  'path',
  'status',
  'latency_ms',
  'upstream_ttfb_ms',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'tokens_estimated',
  'cost_usd',
  'cache_status',
  'retry_count',
  'last_used_option_index',
  'metadata',
  'error',
  'request_headers',
  'request_body',
  'response_body',
  'log_format',
  'hook_results',
  'hook_status',
  'hook_checks',
  'prompt_version',
] as const;

const SUMMARY_COLUMNS = COLUMNS.filter((c) => c !== 'request_headers' && c !== 'request_body' && c !== 'response_body' && c !== 'hook_results' && c !== 'hook_status' && c !== 'hook_checks').join(', ');

type Row = Record<(typeof COLUMNS)[number], SqlValue>;

/** Postgres TEXT refuses NUL characters; one in a body must not make the whole batch unwritable. */
function text(s: string | null): string | null {
  return s !== null && s.includes('\0') ? s.replaceAll('\0', '\uFFFD') : s;
}

function int(n: number | null): number | null {
  return n === null ? null : Math.round(n);
}

/** A record's values in COLUMNS order. */
function values(r: LogRecord): SqlValue[] {
  return [
    r.id,
    Math.round(r.createdAtMs),
    text(r.traceId),
    text(r.spanId),
    text(r.parentSpanId),
    text(r.spanName),
    r.workspaceId,
    r.apiKeyId,
    r.userId,
    r.configId,
    r.virtualKeyId,
    r.integrationId,
    r.promptId,
    text(r.provider),
    text(r.model),
    r.endpoint,
    r.method,
    text(r.path),
    int(r.status),
    int(r.latencyMs),
    int(r.upstreamTtfbMs),
    int(r.promptTokens),
    int(r.completionTokens),
    int(r.totalTokens),
    r.tokensEstimated ? 1 : 0,
    r.costUsd !== null && Number.isFinite(r.costUsd) ? r.costUsd : null,
    r.cacheStatus,
    int(r.retryCount),
    text(r.lastUsedOptionIndex),
    text(toJson(r.metadata)),
    text(toJson(r.error)),
    text(toJson(r.requestHeaders)),
    text(r.requestBody),
    text(r.responseBody),
    r.logFormat,
    r.hooks === null ? null : text(r.hooks.results),
    r.hooks?.status ?? null,
    r.hooks === null ? null : text(JSON.stringify(r.hooks.checks)),
    int(r.promptVersion),
  ];
}

const at = Object.fromEntries(COLUMNS.map((c, i) => [c, i])) as Record<(typeof COLUMNS)[number], number>;

/** A record's share of the hourly rollup, from its values as written (`v`: rounded, cleaned). */
function rolled(r: LogRecord, v: readonly SqlValue[]): RolledLog {
  const get = (c: (typeof COLUMNS)[number]): SqlValue => v[at[c]]!;
  return {
    createdAtMs: get('created_at_ms') as number,
    workspaceId: get('workspace_id') as string,
    dims: Object.fromEntries(Object.entries(COLUMN_DIMS).map(([dim, column]) => [dim, get(column)])) as RolledLog['dims'],
    checks: r.hooks?.checks ?? null,
    status: get('status') as number,
    latencyMs: get('latency_ms') as number,
    costUsd: get('cost_usd') as number | null,
    totalTokens: get('total_tokens') as number | null,
    promptTokens: get('prompt_tokens') as number | null,
    completionTokens: get('completion_tokens') as number | null,
    cacheStatus: get('cache_status') as string | null,
  };
}

function toSummary(r: Row): LogSummary {
  return {
    id: r.id as string,
    createdAtMs: r.created_at_ms as number,
    traceId: r.trace_id as string,
    spanId: r.span_id as string | null,
    parentSpanId: r.parent_span_id as string | null,
    spanName: r.span_name as string | null,
    workspaceId: r.workspace_id as string,
    apiKeyId: r.api_key_id as string,
    userId: r.user_id as string | null,
    configId: r.config_id as string | null,
    virtualKeyId: r.virtual_key_id as string | null,
    integrationId: r.integration_id as string | null,
    promptId: r.prompt_id as string | null,
    promptVersion: r.prompt_version as number | null,
    provider: r.provider as string | null,
    model: r.model as string | null,
    endpoint: r.endpoint as LogRecord['endpoint'],
    method: r.method as string,
    path: r.path as string,
    status: r.status as number,
    latencyMs: r.latency_ms as number,
    upstreamTtfbMs: r.upstream_ttfb_ms as number | null,
    promptTokens: r.prompt_tokens as number | null,
    completionTokens: r.completion_tokens as number | null,
    totalTokens: r.total_tokens as number | null,
    tokensEstimated: r.tokens_estimated === 1,
    costUsd: r.cost_usd as number | null,
    cacheStatus: r.cache_status as LogRecord['cacheStatus'],
    retryCount: r.retry_count as number,
    lastUsedOptionIndex: r.last_used_option_index as string | null,
    metadata: fromJson(r.metadata as string | null),
    error: fromJson(r.error as string | null),
    logFormat: r.log_format as string,
  };
}

function toRecord(r: Row): LogRecord {
  return {
    ...toSummary(r),
    requestHeaders: fromJson(r.request_headers as string | null),
    requestBody: r.request_body as string | null,
    responseBody: r.response_body as string | null,
    hooks:
      r.hook_results === null
        ? null
        : { results: r.hook_results as string, status: r.hook_status as HookStatus, checks: (fromJson(r.hook_checks as string | null) ?? {}) as Record<string, CheckOutcome> },
  };
}

/** Postgres keeps each pair in its log's day (log-partitions.ts), so it also stores the log's time, and a copy of its log's columns (log-pairs.ts). */
const METADATA_COLUMNS = { sqlite: ['log_id', 'key', 'value'], postgres: ['log_id', 'key', 'value', 'created_at_ms', ...PAIR_FACT_NAMES] } as const;

/**
 * The rows a query reads a log's columns from: its row in request_logs, or
 * (Postgres groups filtered by metadata) its pair of the filter's first key,
 * which carries them (log-pairs.ts): one row per log either way.
 */
const ROWS = {
  logs: { from: 'request_logs', id: 'request_logs.id', createdAt: 'request_logs.created_at_ms' },
  pairs: { from: 'log_metadata p', id: 'p.log_id', createdAt: 'p.created_at_ms' },
} as const;
type LogRows = keyof typeof ROWS;

function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}

/**
 * A request's checks as rows of `c`: `c.key` the check id, `c.value` its
 * outcome, from its hook_checks JSON object (none when it ran no hooks).
 */
function checksOf(engine: Db['engine']): string {
  // Unqualified: the log's row or its pair (ROWS); neither json_each nor jsonb_each_text has a column of that name.
  return engine === 'postgres' ? 'jsonb_each_text(hook_checks::jsonb) AS c(key, value)' : 'json_each(hook_checks) AS c';
}

/**
 * WHERE clauses (trusted SQL with `?`) and their values for a filter within a
 * scope; `hours`: runs of hours [from, to) the matching logs lie in
 * (hoursHolding), a narrowing that selects the same rows through the
 * created_at_ms index and the day partitions. Read from `rows` (ROWS); from
 * pairs, the first metadata pair is the row's own key and value.
 */
function conditions(
  engine: Db['engine'],
  filter: LogFilter,
  scope: LogScope,
  hours: readonly (readonly [number, number])[] | null = null,
  rows: LogRows = 'logs',
): { where: string[]; params: SqlValue[] } {
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (hours !== null && hours.length > 0) {
    where.push(`(${hours.map(() => '(created_at_ms >= ? AND created_at_ms < ?)').join(' OR ')})`);
    params.push(...hours.flat());
  }
  const visible: string[] = [];
  if (scope.full === 'any') visible.push('1 = 1');
  else if (scope.full.length > 0) {
    visible.push(`workspace_id IN (${placeholders(scope.full.length)})`);
    params.push(...scope.full);
  }
  if (scope.own.length > 0 && scope.userId !== null) {
    visible.push(`(workspace_id IN (${placeholders(scope.own.length)}) AND user_id = ?)`);
    params.push(...scope.own, scope.userId);
  }
  where.push(visible.length === 0 ? '1 = 0' : `(${visible.join(' OR ')})`);
  const eq = (column: string, value: string | undefined): void => {
    if (value === undefined) return;
    where.push(`${column} = ?`);
    params.push(value);
  };
  eq('workspace_id', filter.workspaceId);
  eq('provider', filter.provider);
  eq('model', filter.model);
  eq('trace_id', filter.traceId);
  eq('api_key_id', filter.apiKeyId);
  eq('prompt_id', filter.promptId);
  eq('config_id', filter.configId);
  const window = timeWindow('created_at_ms', filter);
  where.push(...window.where);
  params.push(...window.params);
  if (filter.status !== undefined) {
    const any: string[] = [];
    if (filter.status.exact.length > 0) {
      any.push(`status IN (${placeholders(filter.status.exact.length)})`);
      params.push(...filter.status.exact);
    }
    for (const c of filter.status.classes) {
      any.push('(status >= ? AND status < ?)');
      params.push(c * 100, c * 100 + 100);
    }
    where.push(`(${any.join(' OR ')})`);
  }
  if (filter.hookStatus !== undefined && filter.hookStatus.length > 0) {
    where.push(`hook_status IN (${placeholders(filter.hookStatus.length)})`);
    params.push(...filter.hookStatus);
  }
  if (filter.guardrailCheck !== undefined) {
    where.push(`EXISTS (SELECT 1 FROM ${checksOf(engine)} WHERE c.key = ?)`);
    params.push(filter.guardrailCheck);
  }
  if (filter.metadata !== undefined && filter.metadata.length > 0) {
    if (scope.hideMetadata.length > 0) {
      where.push(`workspace_id NOT IN (${placeholders(scope.hideMetadata.length)})`);
      params.push(...scope.hideMetadata);
    }
    const { id, createdAt } = ROWS[rows];
    filter.metadata.forEach(([key, value], i) => {
      if (rows === 'pairs' && i === 0) {
        // A log always has a workspace: a pair without one has no copy of its log (log-pairs.ts) and is left out.
        where.push('p.key = ? AND p.value = ? AND p.workspace_id IS NOT NULL');
        params.push(key, value);
        return;
      }
      // Qualified: a per-check group joins SQLite's json_each, which has an id of its own.
      // On Postgres the pair's time too, so each matching log is looked up in its own day's partition.
      // The window on the pairs too (they carry their log's time): only its days' pairs are read.
      const window = engine === 'postgres' ? timeWindow('m.created_at_ms', filter) : { where: [], params: [] };
      where.push(
        engine === 'postgres'
          ? `(${id}, ${createdAt}) IN (SELECT m.log_id, m.created_at_ms FROM log_metadata m WHERE m.key = ? AND m.value = ?${window.where.map((w) => ` AND ${w}`).join('')})`
          : `${id} IN (SELECT m.log_id FROM log_metadata m WHERE m.key = ? AND m.value = ?)`,
      );
      params.push(key, value, ...window.params);
    });
  }
  return { where, params };
}

/** The filter's time window on a column of log time (both ends inclusive). */
function timeWindow(column: string, filter: LogFilter): { where: string[]; params: SqlValue[] } {
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (filter.fromMs !== undefined) {
    where.push(`${column} >= ?`);
    params.push(filter.fromMs);
  }
  if (filter.toMs !== undefined) {
    where.push(`${column} <= ?`);
    params.push(filter.toMs);
  }
  return { where, params };
}

/** The filter's conditions on rolled-up dimensions (hoursHolding narrows a query by them). */
function dimFilters(filter: LogFilter): DimFilter[] {
  const dims: DimFilter[] = [];
  const eq = (dim: DimFilter['dim'], value: string | undefined): void => {
    if (value !== undefined) dims.push({ dim, values: [value] });
  };
  eq('ai_service', filter.provider);
  eq('model', filter.model);
  eq('config', filter.configId);
  eq('prompt', filter.promptId);
  if (filter.status !== undefined && filter.status.exact.length + filter.status.classes.length > 0) {
    dims.push({ dim: 'status_code', values: filter.status.exact.map(String), classes: filter.status.classes });
  }
  return dims;
}

/** The rows a group query reads: the logs (or pairs, ROWS), or for guardrail_check a row per check each ran. */
function fromOf(engine: Db['engine'], groupBy: GroupBy, rows: LogRows = 'logs'): string {
  // A request is in the group of each check it ran: a row per check, `c.key` its id and `c.value` its outcome.
  return groupBy === 'guardrail_check' ? `${ROWS[rows].from} CROSS JOIN ${checksOf(engine)}` : ROWS[rows].from;
}

const PERCENTILES = { p50_latency: 50, p95_latency: 95, p99_latency: 99 } as const;

/**
 * Postgres's percentiles from rows: percentile_disc is the same nearest rank,
 * and its calls over one ORDER BY share one sort per group, where ranking
 * sorted every row of the query and ran two window passes over them before
 * grouping (bench/ANALYTICS.md).
 */
const PERCENTILE_DISC: Record<keyof typeof PERCENTILES, string> = {
  p50_latency: 'percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_ms)',
  p95_latency: 'percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms)',
  p99_latency: 'percentile_disc(0.99) WITHIN GROUP (ORDER BY latency_ms)',
};

/** The group columns but percentiles from summed rollup measures (log-rollup.ts), as COLUMN_SQL makes them from rows. */
const ROLLED_SQL: Record<Exclude<GroupColumn, keyof typeof PERCENTILES>, string> = {
  cost: 'COALESCE(SUM(cost_usd), 0)',
  total_tokens: 'CAST(SUM(total_tokens) AS BIGINT)',
  avg_tokens: 'CAST(SUM(total_tokens) AS DOUBLE PRECISION) / CAST(NULLIF(SUM(total_tokens_n), 0) AS DOUBLE PRECISION)',
  avg_input_tokens: 'CAST(SUM(prompt_tokens) AS DOUBLE PRECISION) / CAST(NULLIF(SUM(prompt_tokens_n), 0) AS DOUBLE PRECISION)',
  avg_output_tokens: 'CAST(SUM(completion_tokens) AS DOUBLE PRECISION) / CAST(NULLIF(SUM(completion_tokens_n), 0) AS DOUBLE PRECISION)',
  avg_latency: 'CAST(SUM(latency_sum) AS DOUBLE PRECISION) / CAST(SUM(requests) AS DOUBLE PRECISION)',
  success_rate: 'CAST(100.0 * SUM(ok) / SUM(requests) AS DOUBLE PRECISION)',
  error_count: 'CAST(SUM(errors) AS BIGINT)',
  cache_hit_rate: 'CAST(100.0 * SUM(cache_hits) / SUM(requests) AS DOUBLE PRECISION)',
  last_seen: 'MAX(last_ms)',
  first_seen: 'MIN(first_ms)',
};

/** A percentile of a rolled-up group, from its bucket counts. */
function estimate(r: Record<string, SqlValue>, p: number): number | null {
  return percentileOf(
    BUCKET_NAMES.map((b) => Number(r[b])),
    Number(r.requests),
    p,
    Number(r.latency_max),
  );
}

/** Whole hours [fromMs, toMs) a group query reads from a rollup (`cross`: the cross rollup, log-rollup.ts); undefined: unbounded. */
interface RollupWindow {
  fromMs: number | undefined;
  toMs: number | undefined;
  cross: boolean;
}

/** The filters both rollups answer: their rows are per hour and workspace. */
const ROLLED_FILTERS: ReadonlySet<string> = new Set(['fromMs', 'toMs', 'workspaceId']);
/** The filters the cross rollup answers besides: its rows are per vendor, model and status too. */
const CROSS_FILTERS: ReadonlySet<string> = new Set(['provider', 'model', 'status']);
/** The groupings the cross rollup answers, each its value in a cross rollup row. */
const CROSS_KEYS: Partial<Record<GroupBy, string>> = {
  ai_service: 'CASE WHEN has_provider THEN provider END',
  model: 'CASE WHEN has_model THEN model END',
  status_code: 'status',
  workspace: 'workspace_id',
};

/**
 * The whole hours of the filter's window when a rollup can answer it: the
 * single-dimension one for time and workspace filters, the cross one with
 * vendor, model or status filters too, grouped by one of those or the
 * workspace. Null when the query must read log rows: another filter, a scope
 * limited to a user's own keys (the rollups have no user), or a window
 * without a whole hour in it (few rows to read anyway).
 */
function rollupWindow(groupBy: GroupBy, filter: LogFilter, scope: LogScope): RollupWindow | null {
  const used = Object.entries(filter).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0));
  const others = used.filter(([k]) => !ROLLED_FILTERS.has(k));
  const cross = others.length > 0;
  if (cross && (others.some(([k]) => !CROSS_FILTERS.has(k)) || CROSS_KEYS[groupBy] === undefined)) return null;
  if (scope.own.length > 0 && scope.userId !== null) return null;
  const fromMs = filter.fromMs === undefined ? undefined : Math.ceil(filter.fromMs / HOUR_MS) * HOUR_MS;
  // toMs is inclusive: the hour ending at toMs + 1 is whole.
  const toMs = filter.toMs === undefined ? undefined : Math.floor((filter.toMs + 1) / HOUR_MS) * HOUR_MS;
  if (fromMs !== undefined && toMs !== undefined && fromMs >= toMs) return null;
  return { fromMs, toMs, cross };
}

/** Rows of a workspace whose metadata the scope hides are read without it. */
function hidden<T extends { workspaceId: string; metadata: Record<string, string> | null }>(scope: LogScope, row: T): T {
  return scope.hideMetadata.includes(row.workspaceId) ? { ...row, metadata: null } : row;
}

/**
 * How long one read of the logs API and analytics may run on Postgres: a
 * group from rows over a long window with a filter no rollup holds scans every
 * log in it (about 1 s per 2.3 M logs, bench/ANALYTICS.md), and a caller must
 * not hold the server's cores and a pooled connection for minutes with one.
 */
export const LOG_READ_TIMEOUT_MS = 30_000;

export class LogRepo {
  /** Answers the reads of the logs API and analytics (a replica, or db itself), each within readTimeoutMs on Postgres. */
  private readonly reader: Db;

  /** Writes and retention go to db. */
  constructor(
    private readonly db: Db,
    reader: Db,
    readTimeoutMs = LOG_READ_TIMEOUT_MS,
  ) {
    this.reader = reader.engine === 'postgres' ? statementsWithin(reader, readTimeoutMs) : reader;
  }

  /** Writes records in one transaction; records already stored (same id) are skipped. */
  async insert(records: readonly LogRecord[]): Promise<void> {
    if (records.length === 0) return;
    const rows = records.map(values);
    const pg = this.db.engine === 'postgres';
    const pairs: SqlValue[][] = [];
    records.forEach((r, i) => {
      if (r.metadata === null) return;
      const facts = pg ? [rows[i]![at.created_at_ms]!, ...PAIR_FACT_NAMES.map((c) => rows[i]![at[c]]!)] : [];
      for (const key in r.metadata) {
        const v = r.metadata[key];
        if (typeof v === 'string') pairs.push([r.id, text(key), text(v), ...facts]);
      }
    });
    await this.db.transaction(async (tx) => {
      // Postgres rolls up the logs it inserted, not those of a batch replayed (already stored, already counted).
      const inserted = await tx.insertMany('request_logs', COLUMNS, rows, pg ? 'id' : undefined);
      if (pairs.length > 0) await tx.insertMany('log_metadata', METADATA_COLUMNS[this.db.engine], pairs);
      if (inserted.length > 0) {
        const added = new Set(inserted);
        // Last in the transaction: the current hour's rollup rows are shared by every writer, so they are locked the shortest time.
        await addToRollup(
          tx,
          // Each id once: a batch holding one twice stores one row (the second is a conflict), so counts one.
          records.flatMap((r, i) => (added.delete(r.id) ? [rolled(r, rows[i]!)] : [])),
        );
      }
    });
  }

  /** One log with headers and bodies, if the scope shows it. */
  async get(id: string, scope: LogScope): Promise<LogRecord | null> {
    const { where, params } = conditions(this.reader.engine, {}, scope);
    const row = await this.reader.get<Row>(`SELECT * FROM request_logs WHERE id = ? AND ${where.join(' AND ')}`, [id, ...params]);
    return row === undefined ? null : hidden(scope, toRecord(row));
  }

  /** Newest first (ids are time-ordered), `after` the last id of the previous page. */
  async list(filter: LogFilter, scope: LogScope, page: PageRequest): Promise<Page<LogSummary>> {
    const hours = await this.hours(filter);
    if (hours !== null && hours.length === 0) return { data: [], hasMore: false };
    const { where, params } = conditions(this.reader.engine, filter, scope, hours);
    if (page.after !== undefined) {
      where.push('id < ?');
      params.push(page.after);
    }
    const rows = await this.reader.all<Row>(`SELECT ${SUMMARY_COLUMNS} FROM request_logs WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`, [...params, page.limit + 1]);
    const hasMore = rows.length > page.limit;
    if (hasMore) rows.pop();
    return { data: rows.map((r) => hidden(scope, toSummary(r))), hasMore };
  }

  /**
   * On Postgres, the runs of hours that can hold the logs of a filter on
   * rolled-up columns (hoursHolding): [] when none can, null when there is no
   * such filter or the runs are too many to narrow a query by.
   */
  private hours(filter: LogFilter): Promise<[number, number][] | null> {
    const dims = this.reader.engine === 'postgres' ? dimFilters(filter) : [];
    return dims.length === 0 ? Promise.resolve(null) : hoursHolding(this.reader, dims, filter.workspaceId, filter.fromMs, filter.toMs);
  }

  /**
   * Groups of the filtered logs by one column, ordered by the grouped value
   * (the group without a value last); `after` is the last value of the
   * previous page. On Postgres from the hourly rollup where the filters
   * allow (rollupWindow), else from the log rows.
   */
  async groups(
    groupBy: GroupBy,
    columns: readonly GroupColumn[],
    filter: LogFilter,
    scope: LogScope,
    page: { limit: number; after: string | number | undefined },
  ): Promise<GroupPage> {
    const perCheck = groupBy === 'guardrail_check';
    const window = this.reader.engine === 'postgres' ? rollupWindow(groupBy, filter, scope) : null;
    const hours = window === null ? await this.hours(filter) : null;
    if (hours !== null && hours.length === 0) return { data: [], hasMore: false, total: 0 };
    const { sql, params } = window === null ? this.rawGroups(groupBy, columns, filter, scope, hours) : this.rolledGroups(groupBy, columns, filter, scope, window);
    const outer: SqlValue[] = [...params];
    let cursor = '';
    if (page.after !== undefined) {
      cursor = 'WHERE (k > ? OR k IS NULL)';
      outer.push(page.after);
    }
    outer.push(page.limit + 1);
    // One pass over the rows: the groups are made once, then paged and counted
    // (a count of its own read every row again, a third of a group query's time).
    const rows = await this.reader.all<Record<string, SqlValue>>(
      `WITH g AS MATERIALIZED (${sql})
       SELECT g.*, (SELECT COUNT(*) FROM g) AS total FROM g ${cursor} ORDER BY CASE WHEN k IS NULL THEN 1 ELSE 0 END, k LIMIT ?`,
      outer,
    );
    // A page past the last group has no row to carry the count.
    const total =
      rows.length > 0
        ? Number(rows[0]!.total)
        : page.after === undefined
          ? 0
          : Number((await this.reader.get<{ total: number }>(`SELECT COUNT(*) AS total FROM (${sql}) g`, params))?.total ?? 0);
    const hasMore = rows.length > page.limit;
    if (hasMore) rows.pop();
    return {
      data: rows.map((r) => ({
        key: r.k as string | number | null,
        requests: Number(r.requests),
        values: Object.fromEntries(columns.map((c) => [c, window !== null && Object.hasOwn(PERCENTILES, c) ? estimate(r, PERCENTILES[c as keyof typeof PERCENTILES]) : (r[c] as number | null)])),
        ...(perCheck && { outcomes: Object.fromEntries(CHECK_OUTCOMES.map((o) => [o, Number(r[`outcome_${o}`])])) as Record<CheckOutcome, number> }),
      })),
      hasMore,
      total,
    };
  }

  /** The groups (k, requests, the columns, per-check outcomes) from every log row the filter selects. */
  private rawGroups(
    groupBy: GroupBy,
    columns: readonly GroupColumn[],
    filter: LogFilter,
    scope: LogScope,
    hours: readonly (readonly [number, number])[] | null,
  ): { sql: string; params: SqlValue[] } {
    const key = GROUP_BY[groupBy];
    const perCheck = groupBy === 'guardrail_check';
    const postgres = this.reader.engine === 'postgres';
    const rows: LogRows = postgres && filter.metadata !== undefined && filter.metadata.length > 0 ? 'pairs' : 'logs';
    const { where, params } = conditions(this.reader.engine, filter, scope, hours, rows);
    if (perCheck) where.push('hook_checks IS NOT NULL');
    const ranked = !postgres && columns.some((c) => Object.hasOwn(PERCENTILES, c));
    const window = ranked ? `, ROW_NUMBER() OVER (PARTITION BY ${key} ORDER BY latency_ms) AS rn, COUNT(*) OVER (PARTITION BY ${key}) AS n` : '';
    const inner = `SELECT ${key} AS k, latency_ms, cost_usd, total_tokens, prompt_tokens, completion_tokens, status, cache_status, created_at_ms${perCheck ? ', c.value AS outcome' : ''}${window}
      FROM ${fromOf(this.reader.engine, groupBy, rows)} WHERE ${where.join(' AND ')}`;
    const selected =
      columns.map((c) => `, ${postgres && Object.hasOwn(PERCENTILES, c) ? PERCENTILE_DISC[c as keyof typeof PERCENTILES] : COLUMN_SQL[c]} AS ${c}`).join('') +
      (perCheck ? CHECK_OUTCOMES.map((o) => `, CAST(SUM(CASE WHEN outcome = '${o}' THEN 1 ELSE 0 END) AS BIGINT) AS outcome_${o}`).join('') : '');
    return { sql: `SELECT k, COUNT(*) AS requests${selected} FROM (${inner}) t GROUP BY k`, params };
  }

  /**
   * The groups from the rollup rows of the window's whole hours, plus the log
   * rows of the partial hours at its ends (at most two hours' worth), summed
   * per group; percentiles as bucket counts (estimate() reads them).
   */
  private rolledGroups(groupBy: GroupBy, columns: readonly GroupColumn[], filter: LogFilter, scope: LogScope, hours: RollupWindow): { sql: string; params: SqlValue[] } {
    const perCheck = groupBy === 'guardrail_check';
    // The workspace filter and the scope's workspaces; rollupWindow has made sure the scope names no user.
    // The cross rollup's status column is the log's (an integer, never NULL), so the status filter reads as on a log.
    const rolled = conditions(this.reader.engine, { workspaceId: filter.workspaceId, ...(hours.cross && { status: filter.status }) }, scope);
    if (hours.cross) {
      for (const [column, value] of [['provider', filter.provider], ['model', filter.model]] as const) {
        if (value === undefined) continue;
        rolled.where.push(`has_${column} AND ${column} = ?`);
        rolled.params.push(value);
      }
    } else {
      rolled.where.push('dim = ?');
      rolled.params.push(groupBy);
    }
    if (hours.fromMs !== undefined) {
      rolled.where.push('hour_ms >= ?');
      rolled.params.push(hours.fromMs);
    }
    if (hours.toMs !== undefined) {
      rolled.where.push('hour_ms < ?');
      rolled.params.push(hours.toMs);
    }
    const value = 'CASE WHEN has_value THEN value END';
    const [table, k] = hours.cross ? [CROSS.table, CROSS_KEYS[groupBy]] : ['request_log_rollup', groupBy === 'status_code' ? `CAST(${value} AS INTEGER)` : value];
    const parts = [`SELECT ${k} AS k, ${MEASURE_NAMES.join(', ')} FROM ${table} WHERE ${rolled.where.join(' AND ')}`];
    const params = rolled.params;
    // The partial hours at the window's ends, each a condition with its value.
    const edges: [string, number][] = [];
    if (filter.fromMs !== undefined && hours.fromMs !== undefined && filter.fromMs < hours.fromMs) edges.push(['created_at_ms < ?', hours.fromMs]);
    if (filter.toMs !== undefined && hours.toMs !== undefined && hours.toMs <= filter.toMs) edges.push(['created_at_ms >= ?', hours.toMs]);
    if (edges.length > 0) {
      const raw = conditions(this.reader.engine, filter, scope);
      raw.where.push(`(${edges.map(([sql]) => sql).join(' OR ')})`);
      raw.params.push(...edges.map(([, ms]) => ms));
      if (perCheck) raw.where.push('hook_checks IS NOT NULL');
      parts.push(`SELECT k, ${RAW_MEASURES} FROM (
          SELECT ${GROUP_BY[groupBy]} AS k, request_logs.*, ${perCheck ? 'c.value' : 'CAST(NULL AS TEXT)'} AS outcome, ${BUCKET_SQL} AS bucket
            FROM ${fromOf(this.reader.engine, groupBy)} WHERE ${raw.where.join(' AND ')}) l
        GROUP BY k`);
      params.push(...raw.params);
    }
    const selected =
      columns.flatMap((c) => (Object.hasOwn(PERCENTILES, c) ? [] : [`, ${ROLLED_SQL[c as Exclude<GroupColumn, keyof typeof PERCENTILES>]} AS ${c}`])).join('') +
      (columns.some((c) => Object.hasOwn(PERCENTILES, c)) ? `, MAX(latency_max) AS latency_max${BUCKET_NAMES.map((b) => `, CAST(SUM(${b}) AS BIGINT) AS ${b}`).join('')}` : '') +
      (perCheck ? CHECK_OUTCOMES.map((o) => `, CAST(SUM(${o}) AS BIGINT) AS outcome_${o}`).join('') : '');
    return { sql: `SELECT k, CAST(SUM(requests) AS BIGINT) AS requests${selected} FROM (${parts.join(' UNION ALL ')}) p GROUP BY k`, params };
  }

  /**
   * Creates the days ahead of nowMs where logs are partitioned by day
   * (Postgres, log-partitions.ts); resolves to the partitions created.
   */
  prepareDays(nowMs: number): Promise<number> {
    return this.db.engine === 'postgres' ? prepareDays(this.db, nowMs) : Promise.resolve(0);
  }

  /** Drops the days wholly before cutoffMs where logs are partitioned by day (Postgres); resolves to the logs they held. */
  dropDaysBefore(cutoffMs: number): Promise<number> {
    return this.db.engine === 'postgres' ? dropDaysBefore(this.db, cutoffMs) : Promise.resolve(0);
  }

  /** Deletes the hourly rollup rows (Postgres) of the hours wholly before cutoffMs; resolves to how many. */
  deleteRollupBefore(cutoffMs: number): Promise<number> {
    return this.db.engine === 'postgres' ? deleteRollupBefore(this.db, cutoffMs) : Promise.resolve(0);
  }

  /**
   * Deletes up to `limit` logs created before cutoffMs, and their metadata;
   * resolves to how many. On Postgres only the day cutoffMs falls in (and the
   * default partition) still holds such logs once dropDaysBefore has run, and
   * the metadata goes in the same statement: partitions have no foreign keys
   * to cascade along.
   */
  async deleteBefore(cutoffMs: number, limit: number): Promise<number> {
    if (this.db.engine === 'sqlite') {
      return this.db.run('DELETE FROM request_logs WHERE id IN (SELECT id FROM request_logs WHERE created_at_ms < ? LIMIT ?)', [cutoffMs, limit]);
    }
    const row = await this.db.get<{ n: number }>(
      `WITH gone AS (
         DELETE FROM request_logs WHERE created_at_ms < ? AND (id, created_at_ms) IN (SELECT id, created_at_ms FROM request_logs WHERE created_at_ms < ? LIMIT ?)
         RETURNING id, created_at_ms
       ), pairs AS (
         DELETE FROM log_metadata m USING gone WHERE m.created_at_ms < ? AND m.log_id = gone.id AND m.created_at_ms = gone.created_at_ms
       )
       SELECT COUNT(*) AS n FROM gone`,
      [cutoffMs, cutoffMs, limit, cutoffMs],
    );
    return Number(row?.n ?? 0);
  }
}
