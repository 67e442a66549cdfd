/**
 * The request thread's end of the log write path: entries are gathered
 * (SEND_EVERY, SEND_AFTER_MS below) and sent as one packed batch (entry.ts) to
 * the log writer thread (writer-thread.ts), which makes records and writes
 * them through its LogQueue: batches, spill to disk, replay, flush on close.
 *
 * The request thread never waits for the writer: the writer thread counts
 * the entries (and their bodies' size) it has taken in shared counters, and
 * publishes the bytes its queue holds; while maxInFlight entries are handed
 * over and not yet taken, or those and the queue hold maxBytes of bodies
 * (GATEWAY_LOG_QUEUE_BYTES: the whole path's memory, bounded in bytes
 * because one 1 MiB body weighs as much as a thousand small ones), more are
 * dropped and counted (`dropped` in /metrics; said when it begins and when
 * it ends). Waiting there instead let one slow record (a body that was slow
 * to redact) stall every request. The writer thread's queue spills to disk
 * when the store is away or slow, so dropping means its CPU or the disk
 * cannot keep up.
 *
 * If the thread dies (a bug: every error it expects is handled), the
 * entries it had not written are counted as dropped, said, and a new thread
 * is started; its spill files are replayed by the new one. Entries made
 * meanwhile wait for it, within the same bounds.
 *
 * A thread starts with the first entry (or at once, for records an earlier
 * run spilled), and one with nothing to do for `idleMs` (its queue empty,
 * the store reachable) is closed, and the next entry starts another: an idle
 * gateway does not keep its isolate (some 17 MiB, more once the tokenizer
 * loaded).
 * Entries made while one closes wait for the next, within the same bounds.
 */
import { Worker } from 'node:worker_threads';
import { DEFAULT_LOG_QUEUE_BYTES } from '../settings.js';
import type { DbSettings } from '../store/open-db.js';
import { EntryBatch, unpack, type LogEntry, type PackedBatch } from './entry.js';
import type { LogQueueStats } from './queue.js';
import { Shedding } from './shedding.js';
import { spillDir, spillPending } from './spill.js';

/** Slots of WriterData.taken: entries, and the PackedBatch sizes of their batches. */
export const TAKEN = { entries: 0, size: 1 } as const;

/** The queue stats the writer thread publishes, in this order, in a shared Float64Array. */
export const STAT_SLOTS = ['depth', 'bytes', 'flushed', 'spilled', 'replayed', 'dropped', 'storeDown'] as const satisfies readonly (keyof LogQueueStats)[];
/** Read on every write: its slot found once. */
const BYTES_SLOT = STAT_SLOTS.indexOf('bytes');

export interface WriterData extends DbSettings {
  /** Int32Array of TAKEN slots: what the thread has taken, each wrapping past 2^31 (the request thread subtracts in the same wrap). */
  taken: SharedArrayBuffer;
  /** Float64Array of STAT_SLOTS. */
  stats: SharedArrayBuffer;
  /** LogWriterOptions.maxBytes: the queue's memory bound there too. */
  maxBytes: number;
}

export type ToWriter = { type: 'batch'; batch: PackedBatch } | { type: 'close'; timeoutMs: number };

/** [provider, model, input tokens, output tokens, cost USD] summed over a batch. */
export type UsageRow = [string, string, number, number, number];

export type FromWriter = { type: 'usage'; rows: UsageRow[] } | { type: 'error'; message: string; err: unknown } | { type: 'closed' };

export interface LogWriterOptions extends DbSettings {
  onError: (err: unknown, message: string) => void;
  onUsage: (provider: string, model: string, input: number, output: number, costUsd: number) => void;
  /** Entries handed over and not yet taken past which more are dropped (default 20,000). */
  maxInFlight?: number;
  /** Bodies (PackedBatch.size) handed over and not yet taken plus those in the writer's queue (its `bytes`), past which more are dropped (default GATEWAY_LOG_QUEUE_BYTES's). */
  maxBytes?: number;
  /** How long the thread may have nothing to do before it is closed (default IDLE_MS). */
  idleMs?: number;
}

/** Where the request path's log entries go: the writer thread (LogWriter), or a cluster's primary, which holds it (src/cluster). */
export interface LogSink {
  write(e: LogEntry): void;
  /** For /metrics. */
  stats(): LogQueueStats;
  /** Sends what is gathered; resolves once it has gone where it goes. */
  close(): Promise<void>;
}

const RESTART_DELAY_MS = 1000;
/**
 * A batch goes when it has this many entries, or this long after its first.
 * Each message wakes the writer thread, which on another core costs more
 * than making the message; entries waiting a few ms still die young.
 */
export const SEND_EVERY = 256;
export const SEND_AFTER_MS = 10;
/** Or once its bodies weigh this much: large bodies leave the request thread's memory at once. */
const SEND_BYTES = 1024 * 1024;
/** How long a closing thread may take to write what it holds (or spill it) before close() resolves. */
const CLOSE_TIMEOUT_MS = 10_000;
/** A thread given nothing for this long is closed (its start, on the next entry, takes some 50 ms off the request path). */
export const IDLE_MS = 60_000;

export class LogWriter implements LogSink {
  /** Null between a thread's death and its successor's start. */
  private worker: Worker | null = null;
  /** Shared with the thread, reused by its successor (reset when one dies). */
  private readonly taken = new Int32Array(new SharedArrayBuffer(4 * Object.keys(TAKEN).length));
  private readonly shared = new Float64Array(new SharedArrayBuffer(8 * STAT_SLOTS.length));
  /** Entries and their size sent to the current thread, in the shared counters' 32-bit wrap. */
  private sent = 0;
  private sentSize = 0;
  /** Counters of threads that died, so they never go back. */
  private readonly past = { flushed: 0, spilled: 0, replayed: 0, dropped: 0 };
  private batch = new EntryBatch();
  private timer: NodeJS.Timeout | null = null;
  private closing: Promise<void> | null = null;
  /** The thread was closed for want of work: the next entry starts one. */
  private idle = false;
  /** A thread closing for want of work, until it has exited. */
  private retiring: Promise<void> | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly maxInFlight: number;
  private readonly maxBytes: number;
  private readonly shedding: Shedding;

  constructor(private readonly o: LogWriterOptions) {
    this.maxInFlight = o.maxInFlight ?? 20_000;
    this.maxBytes = o.maxBytes ?? DEFAULT_LOG_QUEUE_BYTES;
    this.shedding = new Shedding((m) => o.onError(null, m), 'the log writer thread fell behind');
    // A thread now only for records an earlier run left on disk; else the first entry starts it.
    if (spillPending(spillDir(o.dataDir))) this.spawn();
    else this.idle = true;
  }

  write(e: LogEntry): void {
    if (this.closing !== null) return this.drop(1, 'a request log arrived after the log writer closed; dropped');
    if (this.behind()) {
      // Memory stays bounded and the request goes on.
      this.past.dropped++;
      return this.shedding.drop();
    }
    this.shedding.end();
    this.batch.add(e);
    if (this.idle) this.wake();
    if (this.batch.count >= SEND_EVERY || this.batch.size >= SEND_BYTES) this.send();
    else if (this.timer === null) this.timer = setTimeout(this.send, SEND_AFTER_MS);
  }

  /**
   * A batch a cluster worker packed (cluster/log-forwarder.ts), within the same
   * bounds as write. What this process gathered goes first, then the batch as it came.
   */
  writeBatch(batch: PackedBatch): void {
    if (this.closing !== null) return this.drop(batch.count, 'request logs arrived from a worker after the log writer closed; dropped');
    if (this.behind()) {
      this.past.dropped += batch.count;
      return this.shedding.drop();
    }
    this.shedding.end();
    if (this.idle) this.wake();
    this.send();
    // Between threads (one died or retired, the next not started): its entries wait with this process's own.
    if (this.worker === null) for (const e of unpack(batch)) this.batch.add(e);
    else this.post(batch);
  }

  stats(): LogQueueStats {
    const now = (k: (typeof STAT_SLOTS)[number]): number => this.shared[STAT_SLOTS.indexOf(k)]!;
    return {
      depth: now('depth') + this.untaken(TAKEN.entries, this.sent) + this.batch.count,
      bytes: now('bytes') + this.untaken(TAKEN.size, this.sentSize) + this.batch.size,
      flushed: this.past.flushed + now('flushed'),
      spilled: this.past.spilled + now('spilled'),
      replayed: this.past.replayed + now('replayed'),
      dropped: this.past.dropped + now('dropped'),
      storeDown: now('storeDown') === 1,
    };
  }

  /** Sends what is gathered, and resolves once the thread has written everything (or spilled it, after timeoutMs). */
  close(timeoutMs = CLOSE_TIMEOUT_MS): Promise<void> {
    this.closing ??= this.closeThread(timeoutMs);
    return this.closing;
  }

  private async closeThread(timeoutMs: number): Promise<void> {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    if (this.retiring !== null) await this.retiring;
    // Closed for want of work: entries that came since get a thread to write them.
    if (this.idle && this.batch.count > 0) this.wake();
    this.send();
    this.shedding.end();
    const w = this.worker;
    if (w === null) {
      if (this.batch.count > 0) this.drop(this.batch.take().count, 'request logs waiting for a new log writer thread at close; dropped');
      return;
    }
    w.ref();
    await closeWorker(w, timeoutMs);
  }

  private readonly send = (): void => {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.batch.count === 0 || this.worker === null) return;
    this.post(this.batch.take());
  };

  private post(batch: PackedBatch): void {
    this.sent = (this.sent + batch.count) | 0;
    this.sentSize = (this.sentSize + batch.size) | 0;
    this.worker!.postMessage({ type: 'batch', batch } satisfies ToWriter, [batch.bytes]);
    this.idleTimer?.refresh();
  }

  /** Starts a thread for entries that arrived after the last one was closed for want of work. */
  private wake(): void {
    if (this.retiring !== null) return; // its exit starts one
    this.idle = false;
    this.spawn();
  }

  /** Closes the thread if it has nothing to do; else looks again after another idleMs. */
  private readonly retire = (): void => {
    const w = this.worker;
    if (w === null || this.closing !== null || this.retiring !== null) return;
    const s = this.stats();
    if (s.depth > 0 || s.bytes > 0 || s.storeDown) {
      this.idleTimer?.refresh();
      return;
    }
    this.worker = null;
    this.idle = true;
    this.retiring = closeWorker(w, CLOSE_TIMEOUT_MS).then(() => {
      this.keepCounts();
      this.retiring = null;
      if (this.batch.count > 0 && this.closing === null) this.wake();
    });
  };

  /** Sent and not yet taken: the shared counter wraps past 2^31, and `sent` with it, so the difference stays right. */
  private untaken(slot: number, sent: number): number {
    return (sent - Atomics.load(this.taken, slot)) | 0;
  }

  /** Whether maxInFlight entries wait for the writer (a thread, or the next one), or the path holds maxBytes. */
  private behind(): boolean {
    const queued = this.shared[BYTES_SLOT]!;
    return (
      this.untaken(TAKEN.entries, this.sent) + this.batch.count >= this.maxInFlight ||
      this.untaken(TAKEN.size, this.sentSize) + this.batch.size + queued >= this.maxBytes
    );
  }

  private spawn(): void {
    const data: WriterData = {
      dataDir: this.o.dataDir,
      databaseUrl: this.o.databaseUrl,
      taken: this.taken.buffer as SharedArrayBuffer,
      stats: this.shared.buffer as SharedArrayBuffer,
      maxBytes: this.maxBytes,
    };
    const w = new Worker(new URL('./writer-thread.js', import.meta.url), { workerData: data, name: 'log-writer' });
    // A gateway that was never closed does not stay alive for it; close() holds it.
    w.unref();
    w.on('message', (m: FromWriter) => {
      if (m.type === 'usage') for (const [provider, model, input, output, cost] of m.rows) this.o.onUsage(provider, model, input, output, cost);
      else if (m.type === 'error') this.o.onError(m.err, m.message);
    });
    w.on('error', (err) => this.o.onError(err, 'the log writer thread failed'));
    w.on('exit', (code) => (this.closing === null && this.worker === w ? this.died(code) : undefined));
    this.worker = w;
    if (this.batch.count > 0 && this.timer === null) this.timer = setTimeout(this.send, SEND_AFTER_MS);
    if (this.idleTimer === null) this.idleTimer = setTimeout(this.retire, this.o.idleMs ?? IDLE_MS).unref();
    else this.idleTimer.refresh();
  }

  /** A thread's counters kept as the past (they never go back) and the shared ones reset for the next. */
  private keepCounts(): void {
    const s = this.stats();
    this.past.flushed = s.flushed;
    this.past.spilled = s.spilled;
    this.past.replayed = s.replayed;
    this.past.dropped = s.dropped;
    this.shared.fill(0);
    this.taken.fill(0);
    this.sent = 0;
    this.sentSize = 0;
  }

  private died(code: number): void {
    const unwritten = this.stats().depth - this.batch.count;
    this.keepCounts();
    this.worker = null;
    this.drop(unwritten, `the log writer thread exited (code ${code}): ${unwritten} request logs it held are lost; a new one starts in ${RESTART_DELAY_MS} ms`);
    setTimeout(() => {
      if (this.closing === null) this.spawn();
    }, RESTART_DELAY_MS).unref();
  }

  private drop(n: number, message: string): void {
    this.past.dropped += n;
    this.o.onError(null, message);
  }
}

/**
 * Asks `w` to write what it holds and close; resolves once it has exited. The thread closes its queue
 * within timeoutMs (spilling what the store did not take); past that and a grace, it is stuck and terminated.
 */
export function closeWorker(w: Worker, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const stuck = setTimeout(() => void w.terminate(), timeoutMs + 5000).unref();
    w.once('exit', () => {
      clearTimeout(stuck);
      resolve();
    });
    w.on('message', (m: FromWriter) => {
      if (m.type === 'closed') void w.terminate();
    });
    w.postMessage({ type: 'close', timeoutMs } satisfies ToWriter);
  });
}
