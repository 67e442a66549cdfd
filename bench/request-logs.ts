/**
 * Whether a gateway really logged what it served: its log queue's outcomes
 * from /metrics after the load, and the rows its SQLite store holds once it
 * has stopped (stopping writes what was still queued).
 */
import { SqliteDb } from '../src/store/sqlite.js';
import { metricValue, scrape } from './metrics-text.js';

export interface LogQueueOutcomes {
  /** Records lost; must be 0. Undefined when the gateway does not expose them (request logs off). */
  dropped?: number;
  /** Records the store did not take in time, written to the spill file instead (replayed later). */
  spilled?: number;
}

export async function logQueueOutcomes(base: string): Promise<LogQueueOutcomes> {
  const text = await scrape(base);
  const outcome = (o: string): number | undefined => metricValue(text, `switchyard_log_records_total{outcome="${o}"}`);
  return { dropped: outcome('dropped'), spilled: outcome('spilled') };
}

/** Rows of request_logs in the gateway's SQLite store in `dataDir`; call once the gateway has exited. */
export async function storedLogRows(dataDir: string): Promise<number> {
  const db = new SqliteDb(dataDir);
  try {
    return (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM request_logs'))?.n ?? 0;
  } finally {
    db.close();
  }
}
