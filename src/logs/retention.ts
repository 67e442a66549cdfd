/**
 * Log retention: logs older than GATEWAY_LOG_RETENTION_DAYS go, at start and
 * then hourly. On Postgres, where logs are partitioned by day
 * (store/log-partitions.ts), the sweep also creates the days ahead (even
 * with retention off: inserts need them), drops whole days past the
 * retention, and deletes rows only in the day the cutoff falls in; on SQLite
 * it deletes rows. Rows are deleted a batch per statement so no single
 * statement holds the table for long. 0 days keeps logs forever. Several
 * processes on one database may sweep at once: a row or a day goes once,
 * whoever removes it.
 */
import { DAY_MS } from '../store/log-partitions.js';
import type { LogRepo } from '../store/logs.js';

export const RETENTION_INTERVAL_MS = 60 * 60 * 1000;
export const DELETE_BATCH = 5000;

/**
 * Removes every log created before cutoffMs: whole days where it can, then
 * batch rows at a time; resolves to how many went. The hourly rollup's hours
 * wholly before the cutoff go too (the hour the cutoff falls in stays until
 * the next sweep: it still counts logs kept).
 */
export async function deleteLogsBefore(logs: LogRepo, cutoffMs: number, batch = DELETE_BATCH): Promise<number> {
  await logs.deleteRollupBefore(cutoffMs);
  let deleted = await logs.dropDaysBefore(cutoffMs);
  for (;;) {
    const n = await logs.deleteBefore(cutoffMs, batch);
    deleted += n;
    if (n < batch) return deleted;
  }
}

/** The retention sweep of one gateway process; passes never overlap. */
export class LogRetention {
  private timer: NodeJS.Timeout | undefined;
  private last: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly logs: LogRepo,
    /** 0: keep forever. */
    private readonly days: number,
    /** Wall clock in ms (tests move it). */
    private readonly now: () => number,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(intervalMs = RETENTION_INTERVAL_MS): void {
    const tick = (): void => void this.run().catch(() => {});
    tick();
    this.timer = setInterval(tick, intervalMs).unref();
  }

  /** One pass, after any pass under way: the days ahead, then the logs past retention; resolves to the logs deleted. Failures also go to onError. */
  run(): Promise<number> {
    const pass = this.last.then(async () => {
      const now = this.now();
      await this.logs.prepareDays(now);
      return this.days === 0 ? 0 : deleteLogsBefore(this.logs, now - this.days * DAY_MS);
    });
    this.last = pass.catch(this.onError);
    return pass;
  }

  /** Stops the timer and waits for a pass under way, so the store can close under it. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.last;
  }
}
