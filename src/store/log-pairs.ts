/**
 * On Postgres each metadata pair (log_metadata) carries a copy of its log's
 * columns that group queries filter and sum (migration 23), so a group
 * filtered by metadata reads the matching pairs alone. Read through the
 * logs, such a group joined the pairs to every log of its window: a value
 * in 10 % of the logs of 7 days read all 2.3 M of them, 3 s on 10 M rows
 * (bench/ANALYTICS.md). Pairs are narrow and few; bodies stay in the log.
 * SQLite keeps pairs of (log_id, key, value): it serves sizes where reading
 * the rows is cheap.
 */
import type { Db } from './db.js';

/** The copied columns, as request_logs declares them (nullable here: a pair's copy is only ever written with its log). */
export const PAIR_FACTS = {
  workspace_id: 'TEXT',
  api_key_id: 'TEXT',
  user_id: 'TEXT',
  trace_id: 'TEXT',
  config_id: 'TEXT',
  virtual_key_id: 'TEXT',
  prompt_id: 'TEXT',
  provider: 'TEXT',
  model: 'TEXT',
  status: 'INTEGER',
  latency_ms: 'INTEGER',
  prompt_tokens: 'INTEGER',
  completion_tokens: 'INTEGER',
  total_tokens: 'INTEGER',
  cost_usd: 'DOUBLE PRECISION',
  cache_status: 'TEXT',
  hook_status: 'TEXT',
  hook_checks: 'TEXT',
} as const;
type PairFact = keyof typeof PAIR_FACTS;
export const PAIR_FACT_NAMES = Object.keys(PAIR_FACTS) as PairFact[];

/**
 * Migration 23 on Postgres: the columns, added on the partitioned table (so
 * on every day), then filled from the logs in the migration's transaction
 * (one pass over the pairs and their logs, time in proportion to them). Pairs
 * that a gateway of the previous version writes after this commits have no
 * copy: groups filtered by metadata leave their logs out (docs/logs.md).
 */
export async function addPairFacts(tx: Db): Promise<void> {
  const columns = PAIR_FACT_NAMES.join(', ');
  await tx.exec(`
    ALTER TABLE log_metadata ${PAIR_FACT_NAMES.map((c) => `ADD COLUMN ${c} ${PAIR_FACTS[c]}`).join(', ')};
    UPDATE log_metadata m SET (${columns}) = (${PAIR_FACT_NAMES.map((c) => `l.${c}`).join(', ')})
      FROM request_logs l WHERE l.id = m.log_id AND l.created_at_ms = m.created_at_ms;
  `);
}
