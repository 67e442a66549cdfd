/**
 * A worker's request logs go to its primary, whose one log writer thread
 * writes every worker's (logs/writer.ts): entries are packed as for that
 * thread (logs/entry.ts) and sent as one IPC message per SEND_EVERY entries
 * or SEND_AFTER_MS, so the cost per request is the packing, not a message.
 * One writer, not one per worker: SQLite lets one connection write at a time,
 * and writers of several processes would wait on its lock (busy_timeout)
 * instead of batching; the writer's queue, spill files and usage metrics stay
 * one. The request path never waits: past MAX_IN_FLIGHT entries (or
 * GATEWAY_LOG_QUEUE_BYTES of bodies, as the writer's own bound) handed to the channel and not yet sent, entries are
 * dropped and counted, as the writer does when its thread falls behind.
 */
import { EntryBatch, type LogEntry } from '../logs/entry.js';
import type { LogQueueStats } from '../logs/queue.js';
import { Shedding } from '../logs/shedding.js';
import { SEND_AFTER_MS, SEND_EVERY, type LogSink } from '../logs/writer.js';
import type { PrimaryLink } from './link.js';

const MAX_IN_FLIGHT = 20_000;

export class LogForwarder implements LogSink {
  private batch = new EntryBatch();
  private timer: NodeJS.Timeout | null = null;
  /** Entries and their size handed to the channel, not yet sent. */
  private inFlight = 0;
  private inFlightSize = 0;
  private readonly sending = new Set<Promise<boolean>>();
  private dropped = 0;
  private closed = false;
  private readonly shedding: Shedding;

  constructor(
    private readonly link: PrimaryLink,
    onError: (message: string) => void,
    /** Bodies held on their way to the primary (GATEWAY_LOG_QUEUE_BYTES). */
    private readonly maxBytes: number,
  ) {
    this.shedding = new Shedding(onError, 'the IPC channel to the primary fell behind');
  }

  write(e: LogEntry): void {
    if (this.closed || this.inFlight + this.batch.count >= MAX_IN_FLIGHT || this.inFlightSize + this.batch.size >= this.maxBytes) {
      this.dropped++;
      return this.shedding.drop();
    }
    this.shedding.end();
    this.batch.add(e);
    if (this.batch.count >= SEND_EVERY) this.send();
    else if (this.timer === null) this.timer = setTimeout(this.send, SEND_AFTER_MS);
  }

  /** This worker's part only: the writer's queue is the primary's (docs/workers.md). */
  stats(): LogQueueStats {
    return { depth: this.batch.count + this.inFlight, bytes: this.batch.size + this.inFlightSize, flushed: 0, spilled: 0, replayed: 0, dropped: this.dropped, storeDown: false };
  }

  /** Sends what is left, then `logs-end`: the primary, reading the channel in order, then has every batch. */
  async close(): Promise<void> {
    this.send();
    this.closed = true;
    await Promise.all(this.sending);
    await this.link.send({ sy: 'logs-end' });
  }

  private readonly send = (): void => {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.batch.count === 0) return;
    const batch = this.batch.take();
    this.inFlight += batch.count;
    this.inFlightSize += batch.size;
    const sent = this.link.send({ sy: 'logs', batch }).then((ok) => {
      this.inFlight -= batch.count;
      this.inFlightSize -= batch.size;
      this.sending.delete(sent);
      if (!ok) this.dropped += batch.count;
      return ok;
    });
    this.sending.add(sent);
  };
}
