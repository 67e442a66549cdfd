/**
 * Log retention: logs older than GATEWAY_LOG_RETENTION_DAYS are deleted, a
 * batch per statement so no single statement holds the table for long, at
 * start and then hourly. 0 days keeps logs forever. Several processes on one
 * database may delete at once: a row goes once, whoever deletes it.
 */
import type { LogRepo } from '../store/logs.js';

export const RETENTION_INTERVAL_MS = 60 * 60 * 1000;
export const DELETE_BATCH = 5000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Deletes every log created before cutoffMs, batch rows at a time; resolves to how many went. */
export async function deleteLogsBefore(logs: LogRepo, cutoffMs: number, batch = DELETE_BATCH): Promise<number> {
  let deleted = 0;
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
    if (this.days === 0) return;
    const tick = (): void => void this.run().catch(() => {});
    tick();
    this.timer = setInterval(tick, intervalMs).unref();
  }

  /** One pass, after any pass under way; resolves to the logs deleted. Failures also go to onError. */
  run(): Promise<number> {
    const pass = this.last.then(() => (this.days === 0 ? 0 : deleteLogsBefore(this.logs, this.now() - this.days * DAY_MS)));
    this.last = pass.catch(this.onError);
    return pass;
  }

  /** Stops the timer and waits for a pass under way, so the store can close under it. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.last;
  }
}
