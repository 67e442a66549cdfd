/**
 * The primary's end of its workers' request logs (log-forwarder.ts): each
 * batch goes to the one log writer. A batch that is not one (a bug, a worker
 * of another build) is dropped and counted with the writer's drops
 * (switchyard_log_records_total{outcome="dropped"}), said once per
 * WARN_EVERY: thrown in the primary's message handler, it would end the
 * whole cluster.
 */
import { isPackedBatch } from '../logs/entry.js';
import type { LogQueueStats } from '../logs/queue.js';
import { SEND_EVERY, type LogWriter } from '../logs/writer.js';

export const WARN_EVERY = 1000;

export class LogIntake {
  private dropped = 0;
  private malformed = 0;

  constructor(
    private readonly writer: Pick<LogWriter, 'writeBatch' | 'stats'>,
    private readonly warn: (message: string) => void,
  ) {}

  take(batch: unknown): void {
    try {
      if (!isPackedBatch(batch)) throw new Error('not a packed batch of entries');
      this.writer.writeBatch(batch);
    } catch (err) {
      const n = lost(batch);
      this.dropped += n;
      if (this.malformed++ % WARN_EVERY === 0) {
        this.warn(`a worker's log batch could not be taken (${(err as Error).message}): ${n} entries dropped (${this.malformed} such batches so far; said once per ${WARN_EVERY})`);
      }
    }
  }

  /** The writer's, with the entries of the batches dropped here. */
  stats(): LogQueueStats {
    const s = this.writer.stats();
    return { ...s, dropped: s.dropped + this.dropped };
  }
}

/** The entries a bad batch says it holds, when that is a count a worker sends (at most SEND_EVERY); else at least one was lost. */
function lost(batch: unknown): number {
  const count = (batch as { count?: unknown } | null)?.count;
  return typeof count === 'number' && Number.isSafeInteger(count) && count > 0 && count <= SEND_EVERY ? count : 1;
}
