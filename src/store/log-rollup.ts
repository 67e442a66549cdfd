/**
 * Hourly rollups of request logs on Postgres (migration 22): per UTC hour,
 * workspace and group dimension (each groupBy of the group routes), one row
 * per value with the request count, the sums the group columns are made
 * of, and latency histogram counts. The log writer adds each batch's sums
 * in the batch's transaction (LogRepo.insert), so the group routes read a
 * few hundred rows per hour instead of every log (bench/ANALYTICS.md:
 * 1.5-48 s over 10 M rows from the raw rows).
 *
 * Percentiles come from the histogram: bucket i holds the latencies in
 * (LATENCY_BOUNDS[i-1], LATENCY_BOUNDS[i]] ms, log-spaced 4 per doubling
 * (integers, so the first ones are 1 ms wide), the last bucket everything
 * above 2^20 ms. A percentile is answered with the upper bound of the bucket
 * its rank falls in, capped by the group's longest latency: never below
 * the exact nearest-rank value, at most 19 % above it.
 */
import { pgJson, type Db, type SqlValue } from './db.js';

export const HOUR_MS = 60 * 60 * 1000;

/** Upper bounds (ms, inclusive) of the latency buckets but the last: round(2^(i/4)) for i = 0..80, repeats dropped. */
export const LATENCY_BOUNDS: readonly number[] = (() => {
  const out: number[] = [];
  for (let i = 0; i <= 80; i++) {
    const b = Math.round(2 ** (i / 4));
    if (out.at(-1) !== b) out.push(b);
  }
  return out;
})();
export const BUCKETS = LATENCY_BOUNDS.length + 1;
const BUCKET_COLUMNS = Array.from({ length: BUCKETS }, (_, i) => `b${i}`);

/** The bucket holding a latency (whole ms). */
export function bucketOf(ms: number): number {
  let lo = 0;
  let hi = LATENCY_BOUNDS.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ms <= LATENCY_BOUNDS[mid]!) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** What a percentile whose exact value is `ms` is answered with from the rollup, in a group whose longest latency is `max`. */
export function latencyEstimate(ms: number, max: number): number {
  return upperBound(bucketOf(ms), max);
}

/** Bucket b's upper bound capped by the longest latency `max` (the last bucket has no bound of its own). */
function upperBound(b: number, max: number): number {
  return b < LATENCY_BOUNDS.length ? Math.min(LATENCY_BOUNDS[b]!, max) : max;
}

/** The nearest-rank p-th percentile estimated from bucket counts (bucket order) of n latencies, the longest `max`. */
export function percentileOf(counts: readonly number[], n: number, p: number, max: number): number | null {
  if (n === 0) return null;
  const rank = Math.ceil((p * n) / 100);
  let seen = 0;
  for (let b = 0; b < counts.length; b++) {
    seen += counts[b]!;
    if (seen >= rank) return upperBound(b, max);
  }
  return max;
}

/** A raw row's latency bucket in SQL: width_bucket counts the thresholds (bound + 1) at or below the latency, the bucket's index. */
export const BUCKET_SQL = `width_bucket(latency_ms, ARRAY[${LATENCY_BOUNDS.map((b) => b + 1).join(', ')}])`;

/**
 * The group routes' groupBy that are a column of the log (store/logs.ts
 * GROUP_BY adds guardrail_check) → that column: the rollup's dimensions,
 * with guardrail_check (a row per check a request ran, from hook_checks).
 */
export const COLUMN_DIMS = {
  ai_service: 'provider',
  model: 'model',
  status_code: 'status',
  api_key: 'api_key_id',
  config: 'config_id',
  workspace: 'workspace_id',
  provider: 'virtual_key_id',
  prompt: 'prompt_id',
  hook_status: 'hook_status',
} as const;

/**
 * A rollup row's measures, each with how it merges and what it sums over raw
 * rows (the backfill, and the raw edge hours of a group query), which must
 * carry `outcome` (a check's, or NULL) and `bucket` (BUCKET_SQL).
 */
const MEASURES: readonly { name: string; type: string; merge: 'sum' | 'min' | 'max'; raw: string }[] = [
  { name: 'requests', type: 'BIGINT', merge: 'sum', raw: 'COUNT(*)' },
  { name: 'cost_usd', type: 'DOUBLE PRECISION', merge: 'sum', raw: 'COALESCE(SUM(cost_usd), 0)' },
  { name: 'total_tokens', type: 'BIGINT', merge: 'sum', raw: 'COALESCE(SUM(total_tokens), 0)' },
  { name: 'total_tokens_n', type: 'BIGINT', merge: 'sum', raw: 'COUNT(total_tokens)' },
  { name: 'prompt_tokens', type: 'BIGINT', merge: 'sum', raw: 'COALESCE(SUM(prompt_tokens), 0)' },
  { name: 'prompt_tokens_n', type: 'BIGINT', merge: 'sum', raw: 'COUNT(prompt_tokens)' },
  { name: 'completion_tokens', type: 'BIGINT', merge: 'sum', raw: 'COALESCE(SUM(completion_tokens), 0)' },
  { name: 'completion_tokens_n', type: 'BIGINT', merge: 'sum', raw: 'COUNT(completion_tokens)' },
  { name: 'latency_sum', type: 'BIGINT', merge: 'sum', raw: 'SUM(latency_ms)' },
  { name: 'latency_max', type: 'BIGINT', merge: 'max', raw: 'MAX(latency_ms)' },
  { name: 'ok', type: 'BIGINT', merge: 'sum', raw: 'COUNT(*) FILTER (WHERE status >= 200 AND status < 300)' },
  { name: 'errors', type: 'BIGINT', merge: 'sum', raw: 'COUNT(*) FILTER (WHERE status >= 400)' },
  { name: 'cache_hits', type: 'BIGINT', merge: 'sum', raw: "COUNT(*) FILTER (WHERE cache_status IN ('HIT', 'SEMANTIC HIT'))" },
  { name: 'first_ms', type: 'BIGINT', merge: 'min', raw: 'MIN(created_at_ms)' },
  { name: 'last_ms', type: 'BIGINT', merge: 'max', raw: 'MAX(created_at_ms)' },
  // A guardrail_check row's outcomes of its check; 0 in other dimensions (`outcome` is NULL there).
  { name: 'passed', type: 'BIGINT', merge: 'sum', raw: "COUNT(*) FILTER (WHERE outcome = 'passed')" },
  { name: 'failed', type: 'BIGINT', merge: 'sum', raw: "COUNT(*) FILTER (WHERE outcome = 'failed')" },
  { name: 'errored', type: 'BIGINT', merge: 'sum', raw: "COUNT(*) FILTER (WHERE outcome = 'errored')" },
  // `bucket`: BUCKET_SQL of the row.
  ...BUCKET_COLUMNS.map((b, i) => ({ name: b, type: 'INTEGER', merge: 'sum' as const, raw: `COUNT(*) FILTER (WHERE bucket = ${i})` })),
];
export const MEASURE_NAMES = MEASURES.map((m) => m.name);
/** What each measure sums over raw rows, in MEASURE_NAMES order. */
export const RAW_MEASURES = MEASURES.map((m) => m.raw).join(', ');
export const BUCKET_NAMES: readonly string[] = BUCKET_COLUMNS;

/** A rollup table: its name and key columns with their types (the measures follow). */
interface Rollup {
  table: string;
  key: readonly (readonly [string, string])[];
}

/**
 * The single-dimension rollup's key: a NULL value (the group without one) is
 * `has_value` false and value '' (a key's columns cannot be NULL). The
 * dimension first: a group query reads one dimension's range of hours.
 */
const SINGLE: Rollup = {
  table: 'request_log_rollup',
  key: [['dim', 'TEXT'], ['hour_ms', 'BIGINT'], ['workspace_id', 'TEXT'], ['has_value', 'BOOLEAN'], ['value', 'TEXT']],
};

/**
 * The cross rollup (migration 24): per UTC hour and workspace, one row per
 * vendor, model and status seen together, with the same measures. A group
 * filtered on some of those columns and grouped by another (one model's
 * requests by status) reads a few hundred rows an hour from it; from the
 * single-dimension rows it could not, and from the logs it read every log of
 * its window (1 s for 7 days of 10 M logs, bench/ANALYTICS.md). A missing
 * vendor or model is has_* false and '' (key columns cannot be NULL).
 */
export const CROSS: Rollup = {
  table: 'request_log_cross',
  key: [['hour_ms', 'BIGINT'], ['workspace_id', 'TEXT'], ['has_provider', 'BOOLEAN'], ['provider', 'TEXT'], ['has_model', 'BOOLEAN'], ['model', 'TEXT'], ['status', 'INTEGER']],
};

/** Migration 24's table; fillfactor as the single rollup's. */
export const CROSS_TABLE_SQL = `
  CREATE TABLE ${CROSS.table} (
    ${CROSS.key.map(([name, type]) => `${name} ${type} NOT NULL`).join(',\n    ')},
    ${MEASURES.map((m) => `${m.name} ${m.type} NOT NULL DEFAULT 0`).join(',\n    ')},
    PRIMARY KEY (${CROSS.key.map(([name]) => name).join(', ')})
  ) WITH (fillfactor = 70);
`;

/** Migration 22's table. Fillfactor below 100: the current hour's rows are updated every batch, and room on their page keeps those updates HOT. */
export const ROLLUP_TABLE_SQL = `
  CREATE TABLE request_log_rollup (
    hour_ms BIGINT NOT NULL,
    dim TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    has_value BOOLEAN NOT NULL,
    value TEXT NOT NULL,
    ${MEASURES.map((m) => `${m.name} ${m.type} NOT NULL DEFAULT 0`).join(',\n    ')},
    PRIMARY KEY (${SINGLE.key.map(([name]) => name).join(', ')})
  ) WITH (fillfactor = 70);
`;

/**
 * The rollup rows (measures summed per key) of the request_logs rows that
 * `where` (trusted SQL over request_logs, no parameters) selects: one pass
 * over them for the column dimensions (GROUPING SETS), one for the checks.
 * Merged into what is stored, so rows already rolled up must not be selected.
 */
export async function rollUpRows(db: Db, where: string): Promise<void> {
  // The workspace last: every grouping set holds workspace_id, so only where no other column is grouped is it the dimension.
  const dims = (Object.entries(COLUMN_DIMS) as [keyof typeof COLUMN_DIMS, string][]).sort(([a], [b]) => Number(a === 'workspace') - Number(b === 'workspace'));
  const hour = `created_at_ms / ${HOUR_MS} * ${HOUR_MS}`;
  const pick = (f: (dim: string, column: string) => string): string => `CASE ${dims.map(([d, c]) => `WHEN GROUPING(${c}) = 0 THEN ${f(d, c)}`).join(' ')} END`;
  await db.exec(`
    ${upsert(SINGLE, `SELECT ${pick((d) => `'${d}'`)}, ${hour}, workspace_id, ${pick((_, c) => `${c} IS NOT NULL`)}, ${pick((_, c) => `COALESCE(CAST(${c} AS TEXT), '')`)}, ${RAW_MEASURES}
      FROM (SELECT *, CAST(NULL AS TEXT) AS outcome, ${BUCKET_SQL} AS bucket FROM request_logs WHERE ${where}) l
     GROUP BY GROUPING SETS (${dims.map(([, c]) => (c === 'workspace_id' ? `(${hour}, workspace_id)` : `(${hour}, workspace_id, ${c})`)).join(', ')})`)};
    ${upsert(SINGLE, `SELECT 'guardrail_check', ${hour}, workspace_id, TRUE, c.key, ${RAW_MEASURES}
      FROM (SELECT l.*, c.value AS outcome, c.key, ${BUCKET_SQL} AS bucket FROM request_logs l CROSS JOIN jsonb_each_text(l.hook_checks::jsonb) AS c(key, value)
             WHERE l.hook_checks IS NOT NULL AND ${where}) c
     GROUP BY ${hour}, workspace_id, c.key`)};
  `);
}

/** rollUpRows for the cross rollup (migration 24): one pass over the rows `where` selects. */
export async function crossUpRows(db: Db, where: string): Promise<void> {
  const hour = `created_at_ms / ${HOUR_MS} * ${HOUR_MS}`;
  await db.exec(
    upsert(
      CROSS,
      `SELECT ${hour}, workspace_id, provider IS NOT NULL, COALESCE(provider, ''), model IS NOT NULL, COALESCE(model, ''), status, ${RAW_MEASURES}
      FROM (SELECT *, CAST(NULL AS TEXT) AS outcome, ${BUCKET_SQL} AS bucket FROM request_logs WHERE ${where}) l
     GROUP BY ${hour}, workspace_id, provider, model, status`,
    ),
  );
}

/** INSERT of a rollup's rows (its key then measures, from `source`) that adds to the stored ones. */
function upsert(rollup: Rollup, source: string): string {
  const merge = (m: (typeof MEASURES)[number]): string =>
    m.merge === 'sum' ? `${m.name} = r.${m.name} + EXCLUDED.${m.name}` : `${m.name} = ${m.merge === 'min' ? 'LEAST' : 'GREATEST'}(r.${m.name}, EXCLUDED.${m.name})`;
  const key = rollup.key.map(([name]) => name).join(', ');
  return `INSERT INTO ${rollup.table} AS r (${key}, ${MEASURE_NAMES.join(', ')}) ${source}
    ON CONFLICT (${key}) DO UPDATE SET ${MEASURES.map(merge).join(', ')}`;
}

/** One record's share of the rollup, from its stored values (rounded, cleaned as written). */
export interface RolledLog {
  createdAtMs: number;
  workspaceId: string;
  /** Each rolled-up column dimension's value. */
  dims: Record<keyof typeof COLUMN_DIMS, string | number | null>;
  /** Each check it ran → its outcome. */
  checks: Readonly<Record<string, string>> | null;
  status: number;
  latencyMs: number;
  costUsd: number | null;
  totalTokens: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  cacheStatus: string | null;
}

/** Sums in MEASURES order, keyed by the rollup key. */
type Sums = number[];
const INDEX = new Map(MEASURE_NAMES.map((n, i) => [n, i]));
const at = (name: string): number => INDEX.get(name)!;

function add(s: Sums, r: RolledLog, outcome: string | null): void {
  const sum = (name: string, v: number | null): void => {
    if (v !== null) s[at(name)]! += v;
  };
  sum('requests', 1);
  sum('cost_usd', r.costUsd);
  sum('total_tokens', r.totalTokens);
  sum('total_tokens_n', r.totalTokens === null ? 0 : 1);
  sum('prompt_tokens', r.promptTokens);
  sum('prompt_tokens_n', r.promptTokens === null ? 0 : 1);
  sum('completion_tokens', r.completionTokens);
  sum('completion_tokens_n', r.completionTokens === null ? 0 : 1);
  sum('latency_sum', r.latencyMs);
  s[at('latency_max')] = Math.max(s[at('latency_max')]!, r.latencyMs);
  sum('ok', r.status >= 200 && r.status < 300 ? 1 : 0);
  sum('errors', r.status >= 400 ? 1 : 0);
  sum('cache_hits', r.cacheStatus === 'HIT' || r.cacheStatus === 'SEMANTIC HIT' ? 1 : 0);
  s[at('first_ms')] = Math.min(s[at('first_ms')]!, r.createdAtMs);
  s[at('last_ms')] = Math.max(s[at('last_ms')]!, r.createdAtMs);
  if (outcome === 'passed' || outcome === 'failed' || outcome === 'errored') sum(outcome, 1);
  sum(`b${bucketOf(r.latencyMs)}`, 1);
}

function empty(): Sums {
  const s = MEASURES.map(() => 0);
  s[at('first_ms')] = Number.MAX_SAFE_INTEGER;
  s[at('latency_max')] = -1;
  s[at('last_ms')] = -1;
  return s;
}

/**
 * Adds the logs just written (in the same transaction) to the rollup: summed
 * here per key first, so a batch costs one statement of a row per hour,
 * workspace and value. Rows go in key order, so writers updating the same
 * keys at once lock them in the same order (no deadlock).
 */
export async function addToRollup(tx: Db, logs: readonly RolledLog[]): Promise<void> {
  const single = new RollupRows();
  const cross = new RollupRows();
  for (const r of logs) {
    const hour = Math.floor(r.createdAtMs / HOUR_MS) * HOUR_MS;
    for (const dim of Object.keys(COLUMN_DIMS) as (keyof typeof COLUMN_DIMS)[]) {
      const value = r.dims[dim];
      single.add([dim, hour, r.workspaceId, value !== null, value === null ? '' : String(value)], r, null);
    }
    if (r.checks !== null) for (const [check, outcome] of Object.entries(r.checks)) single.add(['guardrail_check', hour, r.workspaceId, true, check], r, outcome);
    const { ai_service: provider, model } = r.dims;
    cross.add([hour, r.workspaceId, provider !== null, provider ?? '', model !== null, model ?? '', r.status], r, null);
  }
  // The single rollup's rows first, then the cross rollup's, in every writer: locks are taken in one order.
  if (single.size > 0) await tx.run(ADD_SQL.single, [single.json()]);
  if (cross.size > 0) await tx.run(ADD_SQL.cross, [cross.json()]);
}

/** One batch's rows of a rollup, summed per key. */
class RollupRows {
  private readonly rows = new Map<string, { key: (SqlValue | boolean)[]; sums: Sums }>();

  get size(): number {
    return this.rows.size;
  }

  add(key: (SqlValue | boolean)[], r: RolledLog, outcome: string | null): void {
    const id = JSON.stringify(key);
    const row = this.rows.get(id) ?? { key, sums: empty() };
    this.rows.set(id, row);
    add(row.sums, r, outcome);
  }

  /** The rows in key order (so writers updating the same keys lock them in the same order), as the statement's parameter. */
  json(): string {
    return pgJson([...this.rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => [...r.key, ...r.sums]));
  }
}

/** addToRollup's statements, the same for every batch: one JSON parameter of row arrays, as Db.insertMany sends them (WITH ORDINALITY keeps the key order for the locks). */
const addSql = (rollup: Rollup): string =>
  upsert(
    rollup,
    `SELECT ${[...rollup.key.map(([, type]) => type), ...MEASURES.map((m) => m.type)].map((type, i) => `CAST(e.v->>${i} AS ${type})`).join(', ')}
      FROM json_array_elements(CAST(? AS json)) WITH ORDINALITY AS e(v, i) ORDER BY e.i`,
  );
const ADD_SQL = { single: addSql(SINGLE), cross: addSql(CROSS) };

/** Deletes both rollups' rows of hours wholly before cutoffMs; resolves to how many. */
export async function deleteRollupBefore(db: Db, cutoffMs: number): Promise<number> {
  const before = cutoffMs - HOUR_MS;
  return (await db.run(`DELETE FROM ${SINGLE.table} WHERE hour_ms <= ?`, [before])) + (await db.run(`DELETE FROM ${CROSS.table} WHERE hour_ms <= ?`, [before]));
}

/** A log filter's condition on one rolled-up dimension: the values it accepts, or status classes (4 = 400..499). */
export interface DimFilter {
  dim: keyof typeof COLUMN_DIMS;
  values: readonly string[];
  classes?: readonly number[];
}

/** More runs of hours than this and a list or group reads rows unrestricted: a value in that many hours is common enough to be found by walking. */
export const MAX_HOUR_RUNS = 48;

/**
 * The runs of hours [fromMs, toMs) that can hold logs matching every one of
 * `dims` (of `workspaceId` when given, within [fromMs, toMs] when given),
 * from the rollup: a log is counted in its hour's row of each dimension's
 * value, in the transaction that stores it, so no matching log lies outside
 * them (retention aside: its rollup rows go just before its rows).
 * Consecutive hours are one run. [] when no log can match; null when there
 * are more than MAX_HOUR_RUNS runs.
 */
export async function hoursHolding(
  db: Db,
  dims: readonly DimFilter[],
  workspaceId: string | undefined,
  fromMs: number | undefined,
  toMs: number | undefined,
): Promise<[number, number][] | null> {
  const where: string[] = [];
  const params: SqlValue[] = [];
  const any: string[] = [];
  for (const d of dims) {
    const match: string[] = [];
    if (d.values.length === 0 && (d.classes ?? []).length === 0) throw new Error(`hoursHolding: no value for ${d.dim}`);
    if (d.values.length > 0) {
      match.push(`value IN (${d.values.map(() => '?').join(', ')})`);
      params.push(d.dim, ...d.values);
    } else params.push(d.dim);
    // Status values are the three-digit code as text: a class is its first digit. (Not a cast to integer: Postgres may
    // evaluate it on another dimension's row of the same OR, and a model name does not cast.)
    for (const c of d.classes ?? []) {
      match.push('value LIKE ?');
      params.push(`${c}__`);
    }
    any.push(`(dim = ? AND has_value AND (${match.join(' OR ')}))`);
  }
  where.push(`(${any.join(' OR ')})`);
  if (workspaceId !== undefined) {
    where.push('workspace_id = ?');
    params.push(workspaceId);
  }
  if (fromMs !== undefined) {
    where.push('hour_ms >= ?');
    params.push(Math.floor(fromMs / HOUR_MS) * HOUR_MS);
  }
  if (toMs !== undefined) {
    where.push('hour_ms <= ?');
    params.push(toMs);
  }
  // An hour qualifies when every dimension has a matching value in it.
  const rows = await db.all<{ hour_ms: number | string }>(
    `SELECT hour_ms FROM request_log_rollup WHERE ${where.join(' AND ')} GROUP BY hour_ms HAVING COUNT(DISTINCT dim) = ? ORDER BY hour_ms`,
    [...params, new Set(dims.map((d) => d.dim)).size],
  );
  const runs: [number, number][] = [];
  for (const r of rows) {
    const h = Number(r.hour_ms);
    const last = runs.at(-1);
    if (last !== undefined && last[1] === h) last[1] = h + HOUR_MS;
    else if (runs.push([h, h + HOUR_MS]) > MAX_HOUR_RUNS) return null;
  }
  return runs;
}
