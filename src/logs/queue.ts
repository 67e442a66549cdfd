/**
 * The write path of request logs, off the request's critical path.
 *
 * `enqueue` only pushes onto an array. A background pump writes batches (up
 * to batchSize records or batchBytes, one transaction) flushIntervalMs after
 * the first record of a batch arrives, or at once when a full batch is
 * waiting. Nothing wakes an idle queue: its timer runs only while records
 * wait in memory or on disk. Memory is bounded (maxDepth records and
 * maxBytes, estimated): what does not fit waits in a second bounded buffer
 * for an asynchronous append to the spill file; when that is full too (the
 * disk cannot keep up) the record is dropped and counted: enqueue never
 * waits for the disk, so whoever enqueues is never held up by it (a
 * synchronous append here once stalled the log writer thread, and through
 * it every request). Records are also dropped (and counted) when the disk
 * refuses them, or the store refuses one alone (below).
 *
 * When a write fails for any reason but the values in it (the database is
 * away, its schema is gone), the store is "down": the pump sends batches to
 * the spill file instead, and tries to replay the spill file into the store
 * every retry interval (doubling up to a cap); the first replay that
 * succeeds brings the store back. A write refused for its values is written
 * one record at a time and any record refused alone is dropped, so one bad
 * record cannot block the rest. Spilled records from an earlier run are
 * replayed at start. A replay reads batches bounded like a write's (batchSize
 * records or batchBytes) and counts the one it holds in stats().bytes. Writes are idempotent by id, so a record written twice
 * (a replay after a partial write) is one row.
 *
 * `close()` stops the timer, writes everything in memory (to the
 * store, or the spill file when the store is away), replays the spill file
 * when the store is up, and resolves; a record enqueued before close() is in
 * the store afterwards whenever the store is up.
 */
import { isDataError } from '../store/db.js';
import type { LogRecord } from '../store/log-record.js';
import type { Store } from '../store/store.js';
import { Shedding } from './shedding.js';
import type { SpillFiles } from './spill.js';

export interface LogSink {
  /** Writes records in one transaction; ids already stored are skipped. */
  insert(records: readonly LogRecord[]): Promise<void>;
  /** Whether insert failed because of the records' values, not because the store cannot write now. */
  isDataError(e: unknown): boolean;
}

export function storeSink(store: Store): LogSink {
  return { insert: (records) => store.logs.insert(records), isDataError };
}

/** For /metrics: counters since start, depth now. */
export interface LogQueueStats {
  /** Records in memory, waiting for the store or the spill file. */
  depth: number;
  /** Their estimated size, the batch being written or replayed from the spill file included: what the log path holds in memory (writer.ts bounds it). */
  bytes: number;
  /** Records written to the store directly. */
  flushed: number;
  /** Records written to the spill file. */
  spilled: number;
  /** Spilled records written to the store later. */
  replayed: number;
  /** Records lost: no room in memory or the overflow (or, from LogWriter, the writer thread too far behind), the disk refused them, the store refused them alone, or a spill line was unreadable. */
  dropped: number;
  /** The last write found the store away; records go to disk until a replay succeeds. */
  storeDown: boolean;
}

export interface LogQueueOptions {
  sink: LogSink;
  spill: SpillFiles;
  batchSize?: number;
  /** A batch ends at batchSize records or once it holds this many estimated bytes: one write never holds much more. */
  batchBytes?: number;
  flushIntervalMs?: number;
  /** Records in memory before the overflow spills to disk. */
  maxDepth?: number;
  /** Estimated bytes in memory before the overflow spills to disk. */
  maxBytes?: number;
  /** First wait before retrying a store that was away; doubles up to retryMaxMs. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** Told once when the store goes away, and of lost records. */
  onError?: (err: unknown, message: string) => void;
  /** Told after records were written, spilled, replayed or dropped (stats() changed). */
  onProgress?: () => void;
}

const DEFAULTS = {
  batchSize: 500,
  batchBytes: 4 * 1024 * 1024,
  flushIntervalMs: 100,
  maxDepth: 10_000,
  maxBytes: 64 * 1024 * 1024,
  retryMinMs: 250,
  retryMaxMs: 10_000,
};

/** A record's fixed fields and JSON take about this much; bodies are counted by length. */
const RECORD_OVERHEAD_BYTES = 1024;

function size(r: LogRecord): number {
  return RECORD_OVERHEAD_BYTES + (r.requestBody?.length ?? 0) + (r.responseBody?.length ?? 0);
}

/** A bounded FIFO of records with their estimated size. */
class Bounded {
  items: LogRecord[] = [];
  bytes = 0;

  constructor(
    private readonly maxDepth: number,
    private readonly maxBytes: number,
  ) {}

  offer(r: LogRecord, bytes: number): boolean {
    if (this.items.length >= this.maxDepth || (this.items.length > 0 && this.bytes + bytes > this.maxBytes)) return false;
    this.items.push(r);
    this.bytes += bytes;
    return true;
  }

  /** The first records, up to n of them or until they hold maxBytes (at least one). */
  take(n: number, maxBytes = Infinity): LogRecord[] {
    let count = 0;
    let bytes = 0;
    while (count < this.items.length && count < n && bytes < maxBytes) bytes += size(this.items[count++]!);
    const out = count === this.items.length ? this.items : this.items.slice(0, count);
    this.items = count === this.items.length ? [] : this.items.slice(count);
    this.bytes -= bytes;
    return out;
  }
}

export class LogQueue {
  private readonly o: Required<Omit<LogQueueOptions, 'onError' | 'onProgress'>> & Pick<LogQueueOptions, 'onError' | 'onProgress'>;
  private readonly memory: Bounded;
  /** Records the memory buffer had no room for, waiting for an append to the spill file. */
  private readonly overflow: Bounded;
  private counts = { flushed: 0, spilled: 0, replayed: 0, dropped: 0 };
  /** Bytes of records taken from the buffers and not yet written or spilled. */
  private writing = 0;
  private down = false;
  private retryMs: number;
  private nextTryAt = 0;
  /** Records may wait in spill files. */
  private spillPending = false;
  /** Records were spilled since the last replay began: they may be in a file that replay did not claim. */
  private spilledSinceReplay = false;
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (Date.now() time). */
  private timerAt = 0;
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private kicked = false;
  private spilling: Promise<void> | null = null;
  private closed = false;
  private readonly shedding: Shedding;

  constructor(options: LogQueueOptions) {
    this.o = { ...DEFAULTS, ...options };
    this.shedding = new Shedding((m) => this.o.onError?.(null, m), 'the log queue and its spill buffer were full (the store and the disk did not keep up)');
    this.memory = new Bounded(this.o.maxDepth, this.o.maxBytes);
    this.overflow = new Bounded(this.o.maxDepth, this.o.maxBytes);
    this.retryMs = this.o.retryMinMs;
  }

  /** Replays records an earlier run left on disk. */
  start(): void {
    this.spillPending = this.o.spill.pending();
    if (this.spillPending) void this.pump();
  }

  /** Synchronous, no I/O (but after close()); a record neither memory buffer has room for is dropped and counted. */
  enqueue(record: LogRecord): void {
    if (this.closed) return this.spillNow([record]);
    const bytes = size(record);
    if (this.memory.offer(record, bytes)) {
      if (this.memory.items.length >= this.o.batchSize || this.memory.bytes >= this.o.batchBytes) this.kick();
      else this.schedule();
    } else if (this.overflow.offer(record, bytes)) {
      void this.drainOverflow();
    } else {
      this.counts.dropped++;
      this.shedding.drop();
      return this.o.onProgress?.();
    }
    this.shedding.end();
  }

  stats(): LogQueueStats {
    const bytes = this.memory.bytes + this.overflow.bytes + this.writing;
    return { depth: this.memory.items.length + this.overflow.items.length, bytes, ...this.counts, storeDown: this.down };
  }

  /**
   * Writes everything in memory and replays the spill file if the store is up.
   * After timeoutMs, what is still in memory is appended to the spill file
   * at once (replayed at the next start) and close resolves.
   */
  async close(timeoutMs = 10_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.shedding.end();
    clearTimeout(this.timer);
    this.timer = undefined;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
    const flush = (async () => {
      await this.pumping;
      // Closing: a store that was away gets one more try now, not after its backoff.
      this.nextTryAt = 0;
      await this.pump();
      await this.drainOverflow();
      if (this.spillPending && !this.down) await this.pump();
    })();
    flush.catch(() => {});
    try {
      if ((await Promise.race([flush, late])) === 'late') this.spillNow([...this.memory.take(Infinity), ...this.overflow.take(Infinity)]);
    } finally {
      clearTimeout(timer);
    }
  }

  private kick(): void {
    if (this.kicked) return;
    this.kicked = true;
    // Not now: a synchronous engine (SQLite) would write on the request's path.
    setImmediate(() => {
      this.kicked = false;
      void this.pump();
    });
  }

  /** One pump at a time; a call while one runs makes it go round once more. */
  private pump(): Promise<void> {
    if (this.pumping !== null) {
      this.pumpAgain = true;
      return this.pumping;
    }
    this.pumping = (async () => {
      do {
        this.pumpAgain = false;
        await this.work();
      } while (this.pumpAgain);
    })().finally(() => {
      this.pumping = null;
      this.schedule();
    });
    return this.pumping;
  }

  /**
   * Arms the flush timer while anything waits: records in memory (written
   * flushIntervalMs from now), or spilled records (replayed then, or when a
   * store that was away is next tried).
   */
  private schedule(): void {
    if (this.closed || this.pumping !== null) return;
    if (this.memory.items.length === 0 && !this.spillPending) return;
    const now = Date.now();
    const wait = this.memory.items.length === 0 && this.down ? Math.max(this.o.flushIntervalMs, this.nextTryAt - now) : this.o.flushIntervalMs;
    // Armed already, for no later: kept. (A record arriving while a store that is away waits for its retry is spilled at the next turn.)
    if (this.timer !== undefined) {
      if (this.timerAt <= now + wait) return;
      clearTimeout(this.timer);
    }
    this.timerAt = now + wait;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.pump();
    }, wait).unref();
  }

  private async work(): Promise<void> {
    while (this.memory.items.length > 0) {
      await this.holding(this.memory, async (batch) => {
        if (this.down || !(await this.write(batch))) await this.spill(batch);
        else this.counts.flushed += batch.length;
      });
      this.o.onProgress?.();
    }
    if (this.spillPending && (!this.down || Date.now() >= this.nextTryAt)) await this.replay();
  }

  /** Writes a batch; false when the store cannot write now (then the batch is not, or not wholly, written). */
  private async write(batch: readonly LogRecord[]): Promise<boolean> {
    try {
      await this.o.sink.insert(batch);
      return true;
    } catch (e) {
      if (!this.o.sink.isDataError(e)) return this.wentDown(e);
    }
    // The store refused a value in the batch: find the records it refuses alone.
    for (const r of batch) {
      try {
        await this.o.sink.insert([r]);
      } catch (e) {
        if (!this.o.sink.isDataError(e)) return this.wentDown(e);
        this.drop(e, 1, `request log ${r.id} refused by the store; dropped`);
      }
    }
    return true;
  }

  private wentDown(e: unknown): false {
    if (!this.down) this.o.onError?.(e, 'log store unreachable: request logs go to the spill file until it is back');
    this.down = true;
    this.nextTryAt = Date.now() + this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, this.o.retryMaxMs);
    return false;
  }

  private async replay(): Promise<void> {
    this.spilledSinceReplay = false;
    try {
      const r = await this.o.spill.replay(
        async (batch, bytes) => {
          // What a replay batch holds counts in stats().bytes while it is written, as a batch from memory does:
          // published now, so the request thread (writer.ts) takes that much less meanwhile.
          this.writing += bytes;
          this.o.onProgress?.();
          try {
            if (!(await this.write(batch))) throw new StoreDown();
          } finally {
            this.writing -= bytes;
          }
          this.counts.replayed += batch.length;
          this.o.onProgress?.();
        },
        this.o.batchSize,
        this.o.batchBytes,
        size,
      );
      if (r.unreadable > 0) {
        this.drop(null, r.unreadable, `${r.unreadable} unreadable lines in the log spill file; dropped`);
      }
      this.spillPending = this.spilledSinceReplay;
      this.down = false;
      this.retryMs = this.o.retryMinMs;
    } catch (e) {
      if (!(e instanceof StoreDown)) this.o.onError?.(e, 'replaying the log spill file failed');
      this.wentDown(e);
      // The batch it held is no longer counted.
      this.o.onProgress?.();
    }
  }

  private async spill(records: readonly LogRecord[]): Promise<void> {
    try {
      await this.o.spill.append(records);
      this.spilled(records.length);
    } catch (e) {
      this.lost(e, records.length);
    }
  }

  private spillNow(records: readonly LogRecord[]): void {
    if (records.length === 0) return;
    try {
      this.o.spill.appendSync(records);
      this.spilled(records.length);
    } catch (e) {
      this.lost(e, records.length);
    }
  }

  private spilled(n: number): void {
    this.counts.spilled += n;
    this.o.onProgress?.();
    this.spillPending = true;
    this.spilledSinceReplay = true;
    this.schedule(); // an overflow spilled outside a pump: replayed at the next turn of the timer
  }

  private lost(e: unknown, n: number): void {
    this.drop(e, n, `${n} request logs could not be written to the spill file; dropped`);
  }

  /** Counts records lost before they reached the queue (or in it), and says why. */
  drop(e: unknown, n: number, message: string): void {
    this.counts.dropped += n;
    this.o.onError?.(e, message);
    this.o.onProgress?.();
  }

  /** Appends the overflow to the spill file, one append at a time. */
  private drainOverflow(): Promise<void> {
    this.spilling ??= (async () => {
      while (this.overflow.items.length > 0) await this.holding(this.overflow, (b) => this.spill(b));
    })().finally(() => {
      this.spilling = null;
    });
    return this.spilling;
  }

  /** Takes a batch from `from` and runs `use` on it, its bytes still counted in stats() meanwhile (they are still in memory). */
  private async holding(from: Bounded, use: (batch: LogRecord[]) => Promise<void>): Promise<void> {
    const before = from.bytes;
    const batch = from.take(this.o.batchSize, this.o.batchBytes);
    const bytes = before - from.bytes;
    this.writing += bytes;
    try {
      await use(batch);
    } finally {
      this.writing -= bytes;
    }
  }
}

class StoreDown extends Error {}
