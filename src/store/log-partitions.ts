/**
 * Postgres keeps request_logs and log_metadata partitioned by range of
 * created_at_ms, one partition per UTC day, so retention drops a day's
 * tables instead of deleting its rows one by one (a DROP is a catalog
 * change; millions of DELETEs are WAL, dead tuples and vacuum), and a time
 * filter reads only the days it names. Each table has a DEFAULT partition
 * so an insert never fails for want of a day (a clock far off, a spill
 * replayed after its day was dropped); the sweep creates the days ahead of
 * time, so it stays empty in practice. SQLite keeps its one table: nothing
 * here runs there.
 */
import type { Db } from './db.js';

export const DAY_MS = 24 * 60 * 60 * 1000;
/** Days created ahead of today: the sweep runs hourly, so a gateway down for under a week still finds its days on return. */
export const DAYS_AHEAD = 7;
/** The partitioned tables, each log's metadata pairs in the same day as the log. */
export const DAY_TABLES = ['request_logs', 'log_metadata'] as const;
type DayTable = (typeof DAY_TABLES)[number];

/**
 * Creating or dropping a partition takes a lock on the default partition (and
 * DROP one on the parent) that waits for running reads of all days; inserts
 * queue behind a waiting lock. Past this the statement gives up and the next
 * hourly sweep tries again (a week ahead leaves room), rather than stall the
 * log writer behind a long analytics query.
 */
const LOCK_TIMEOUT = '2s';
/** Arbitrary constant naming the partition lock: sweeps of several gateways on one database take turns. */
const PARTITION_LOCK = 0x5379_6c70;

export interface DayPartition {
  table: DayTable;
  name: string;
  /** The range [fromMs, toMs) of created_at_ms it holds. */
  fromMs: number;
  toMs: number;
}

/**
 * The partitioned tables' indexes, each built on every partition (and on new
 * ones as they are attached). Chosen from EXPLAIN of the log list and group
 * queries on 10 M rows (bench/analytics-scale.ts, bench/ANALYTICS.md): the
 * primary key (id, created_at_ms) serves lookups by id and the newest-first
 * list; a time filter prunes whole days.
 */
const LOG_INDEXES = `
  CREATE INDEX request_logs_created ON request_logs (created_at_ms);
  CREATE INDEX request_logs_workspace ON request_logs (workspace_id, id);
  CREATE INDEX request_logs_api_key ON request_logs (api_key_id, id);
  CREATE INDEX request_logs_trace ON request_logs (trace_id);
  CREATE INDEX request_logs_hook_status ON request_logs (hook_status, id) WHERE hook_status IS NOT NULL;
  CREATE INDEX log_metadata_pair ON log_metadata (key, value);
`;

/** The UTC midnight starting ms's day. */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** `request_logs_p20261126`: readable in psql, and sorted by day. */
function partitionName(table: DayTable, dayMs: number): string {
  return `${table}_p${new Date(dayMs).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

const BOUND = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/;

/** The day partitions of both tables (not the defaults), oldest first. */
export async function dayPartitions(db: Db): Promise<DayPartition[]> {
  const rows = await db.all<{ parent: DayTable; name: string; bound: string }>(
    `SELECT p.relname AS parent, c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE i.inhparent IN ('request_logs'::regclass, 'log_metadata'::regclass)`,
  );
  const out: DayPartition[] = [];
  for (const r of rows) {
    const m = BOUND.exec(r.bound);
    if (m !== null) out.push({ table: r.parent, name: r.name, fromMs: Number(m[1]), toMs: Number(m[2]) });
  }
  return out.sort((a, b) => a.fromMs - b.fromMs || a.name.localeCompare(b.name));
}

/**
 * Creates the partitions of the days in `days` (UTC midnights) that either
 * table lacks. Each is made as a table of its own, given the rows of its day
 * that the default partition holds, then attached: ATTACH locks the parent
 * only against other DDL (CREATE … PARTITION OF would block every read and
 * insert meanwhile), and it builds the parent's indexes on the new table.
 * Run in a transaction (`tx`); resolves to how many it created.
 */
export async function createDays(tx: Db, days: Iterable<number>): Promise<number> {
  await tx.get('SELECT pg_advisory_xact_lock(?)', [PARTITION_LOCK]);
  await tx.exec(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
  const have = new Set((await dayPartitions(tx)).map((p) => p.name));
  let created = 0;
  for (const day of new Set([...days].map(dayOf))) {
    for (const table of DAY_TABLES) {
      const name = partitionName(table, day);
      if (have.has(name)) continue;
      const range = `created_at_ms >= ${day} AND created_at_ms < ${day + DAY_MS}`;
      await tx.exec(`
        CREATE TABLE ${name} (LIKE ${table} INCLUDING DEFAULTS);
        WITH moved AS (DELETE FROM ${table}_default WHERE ${range} RETURNING *) INSERT INTO ${name} SELECT * FROM moved;
        ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM (${day}) TO (${day + DAY_MS});
      `);
      created++;
    }
  }
  return created;
}

/** Today and the DAYS_AHEAD days after it. */
function daysAhead(nowMs: number): number[] {
  return Array.from({ length: DAYS_AHEAD + 1 }, (_, i) => dayOf(nowMs) + i * DAY_MS);
}

/** Creates today's partitions and those of DAYS_AHEAD days after it, where missing (the sweep's first step). */
export function prepareDays(db: Db, nowMs: number): Promise<number> {
  return db.transaction((tx) => createDays(tx, daysAhead(nowMs)));
}

/**
 * Drops the day partitions wholly before cutoffMs, both tables' for a day in
 * one transaction; resolves to the logs they held (counted first: a day's
 * partition is read once, where deleting its rows would have written each).
 */
export async function dropDaysBefore(db: Db, cutoffMs: number): Promise<number> {
  const expired = (await dayPartitions(db)).filter((p) => p.toMs <= cutoffMs);
  let logs = 0;
  for (const day of new Set(expired.map((p) => p.fromMs))) {
    logs += await db.transaction(async (tx) => {
      await tx.get('SELECT pg_advisory_xact_lock(?)', [PARTITION_LOCK]);
      await tx.exec(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      let n = 0;
      for (const p of expired.filter((e) => e.fromMs === day)) {
        // Another gateway's sweep may have dropped it while this one waited for the lock.
        if ((await tx.get<{ r: string | null }>('SELECT to_regclass(?) AS r', [p.name]))?.r == null) continue;
        if (p.table === 'request_logs') n = Number((await tx.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${p.name}`))?.n ?? 0);
        await tx.exec(`DROP TABLE IF EXISTS ${p.name}`);
      }
      return n;
    });
  }
  return logs;
}

/**
 * Migration 20 on Postgres: the unpartitioned tables' rows are copied into
 * partitioned ones in the migration's transaction, then the old tables
 * dropped. A copy, not an ATTACH of the old table as one big partition:
 * the old log_metadata has no created_at_ms to partition by, and retention
 * would then delete that partition's rows one by one for a whole retention
 * period, the very cost this removes. The copy takes time in proportion to
 * the table (bench/ANALYTICS.md measures it) while the old tables are locked:
 * the log writers spill meanwhile (logs/spill.ts) and replay afterwards.
 * Indexes are built after the copy, once per partition, which is faster than
 * maintaining them row by row.
 */
export async function partitionLogTables(tx: Db, nowMs = Date.now()): Promise<void> {
  await tx.exec(`
    ALTER TABLE request_logs RENAME TO request_logs_unpartitioned;
    ALTER TABLE request_logs_unpartitioned RENAME CONSTRAINT request_logs_pkey TO request_logs_unpartitioned_pkey;
    ALTER TABLE log_metadata RENAME TO log_metadata_unpartitioned;
    ALTER TABLE log_metadata_unpartitioned RENAME CONSTRAINT log_metadata_pkey TO log_metadata_unpartitioned_pkey;
    CREATE TABLE request_logs (LIKE request_logs_unpartitioned INCLUDING DEFAULTS, PRIMARY KEY (id, created_at_ms)) PARTITION BY RANGE (created_at_ms);
    CREATE TABLE request_logs_default PARTITION OF request_logs DEFAULT;
    CREATE TABLE log_metadata (
      log_id TEXT NOT NULL,
      key TEXT NOT NULL,
      value TEXT NOT NULL,
      created_at_ms BIGINT NOT NULL,
      PRIMARY KEY (log_id, created_at_ms, key)
    ) PARTITION BY RANGE (created_at_ms);
    CREATE TABLE log_metadata_default PARTITION OF log_metadata DEFAULT;
  `);
  // The days that hold logs (read from the old created_at index, dropped after), and the week ahead.
  const days = await tx.all<{ day: number }>(`SELECT DISTINCT created_at_ms / ${DAY_MS} * ${DAY_MS} AS day FROM request_logs_unpartitioned`);
  await createDays(tx, [...days.map((d) => Number(d.day)), ...daysAhead(nowMs)]);
  await tx.exec(`
    INSERT INTO request_logs SELECT * FROM request_logs_unpartitioned;
    INSERT INTO log_metadata (log_id, key, value, created_at_ms)
      SELECT m.log_id, m.key, m.value, l.created_at_ms FROM log_metadata_unpartitioned m JOIN request_logs_unpartitioned l ON l.id = m.log_id;
    DROP TABLE log_metadata_unpartitioned;
    DROP TABLE request_logs_unpartitioned;
    ${LOG_INDEXES}
  `);
}
