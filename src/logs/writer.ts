/**
 * The request thread's end of the log write path: entries are gathered
 * (SEND_EVERY, SEND_AFTER_MS below) and sent as one packed batch (entry.ts) to
 * the log writer thread (writer-thread.ts), which makes records and writes
 * them through its LogQueue: batches, spill to disk, replay, flush on close.
 *
 * Back-pressure: the writer thread counts the entries it has taken in a
 * shared counter; when more than maxInFlight are sent and not taken, the
 * request thread waits for it (Atomics.wait, at most a second per turn)
 * rather than let memory grow. The writer thread's own queue is bounded and
 * spills to disk, so it falls behind only when it cannot even spill.
 *
 * If the thread dies (a bug: every error it expects is handled), the
 * entries it had not written are counted as dropped, said, and a new thread
 * is started; its spill files are replayed by the new one. Entries made
 * meanwhile wait for it, up to maxInFlight; more are counted as dropped.
 */
import { Worker } from 'node:worker_threads';
import type { DbSettings } from '../store/open.js';
import { EntryBatch, type LogEntry, type PackedBatch } from './entry.js';
import type { LogQueueStats } from './queue.js';

/** The queue stats the writer thread publishes, in this order, in a shared Float64Array. */
export const STAT_SLOTS = ['depth', 'flushed', 'spilled', 'replayed', 'dropped', 'storeDown'] as const satisfies readonly (keyof LogQueueStats)[];

export interface WriterData extends DbSettings {
  /** Int32Array[1]: entries the thread has taken. */
  taken: SharedArrayBuffer;
  /** Float64Array of STAT_SLOTS. */
  stats: SharedArrayBuffer;
}

export type ToWriter = { type: 'batch'; batch: PackedBatch } | { type: 'close'; timeoutMs: number };

/** [provider, model, input tokens, output tokens, cost USD] summed over a batch. */
export type UsageRow = [string, string, number, number, number];

export type FromWriter = { type: 'usage'; rows: UsageRow[] } | { type: 'error'; message: string; err: unknown } | { type: 'closed' };

export interface LogWriterOptions extends DbSettings {
  onError: (err: unknown, message: string) => void;
  onUsage: (provider: string, model: string, input: number, output: number, costUsd: number) => void;
  /** Entries sent and not yet taken before the request thread waits (default 20,000). */
  maxInFlight?: number;
}

const RESTART_DELAY_MS = 1000;
/**
 * A batch goes when it has this many entries, or this long after its first.
 * Each message wakes the writer thread, which on another core costs more
 * than making the message; entries waiting a few ms still die young.
 */
const SEND_EVERY = 256;
const SEND_AFTER_MS = 10;

export class LogWriter {
  /** Null between a thread's death and its successor's start. */
  private worker: Worker | null = null;
  /** Shared with the thread, reused by its successor (reset when one dies). */
  private readonly taken = new Int32Array(new SharedArrayBuffer(4));
  private readonly shared = new Float64Array(new SharedArrayBuffer(8 * STAT_SLOTS.length));
  /** Entries sent to the current thread. */
  private sent = 0;
  /** Counters of threads that died, so they never go back. */
  private readonly past = { flushed: 0, spilled: 0, replayed: 0, dropped: 0 };
  private batch = new EntryBatch();
  private timer: NodeJS.Timeout | null = null;
  private closing: Promise<void> | null = null;
  private readonly maxInFlight: number;
  /** Entries dropped since the last thread died, because maxInFlight were already waiting for its successor. */
  private lostWhileDown = 0;

  constructor(private readonly o: LogWriterOptions) {
    this.maxInFlight = o.maxInFlight ?? 20_000;
    this.spawn();
  }

  write(e: LogEntry): void {
    if (this.closing !== null) return this.drop(1, 'a request log arrived after the log writer closed; dropped');
    if (this.worker === null && this.batch.count >= this.maxInFlight) {
      // No thread to take them (one is being replaced): memory stays bounded, the loss is counted and said once.
      this.past.dropped++;
      this.lostWhileDown++;
      return;
    }
    this.batch.add(e);
    if (this.batch.count >= SEND_EVERY) this.send();
    else if (this.timer === null) this.timer = setTimeout(this.send, SEND_AFTER_MS);
  }

  stats(): LogQueueStats {
    const now = (k: (typeof STAT_SLOTS)[number]): number => this.shared[STAT_SLOTS.indexOf(k)]!;
    return {
      depth: now('depth') + this.sent - Atomics.load(this.taken, 0) + this.batch.count,
      flushed: this.past.flushed + now('flushed'),
      spilled: this.past.spilled + now('spilled'),
      replayed: this.past.replayed + now('replayed'),
      dropped: this.past.dropped + now('dropped'),
      storeDown: now('storeDown') === 1,
    };
  }

  /** Sends what is gathered, and resolves once the thread has written everything (or spilled it, after timeoutMs). */
  close(timeoutMs = 10_000): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.send();
      const w = this.worker;
      if (w === null) {
        if (this.batch.count > 0) this.drop(this.batch.take().count, 'request logs waiting for a new log writer thread at close; dropped');
        return resolve();
      }
      w.ref();
      w.once('exit', () => resolve());
      w.on('message', (m: FromWriter) => {
        if (m.type === 'closed') void w.terminate();
      });
      w.postMessage({ type: 'close', timeoutMs } satisfies ToWriter);
      // The thread closes its queue within timeoutMs; past that, it is stuck.
      setTimeout(() => void w.terminate(), timeoutMs + 5000).unref();
    });
    return this.closing;
  }

  private readonly send = (): void => {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.batch.count === 0 || this.worker === null) return;
    const batch = this.batch.take();
    this.sent += batch.count;
    this.worker.postMessage({ type: 'batch', batch } satisfies ToWriter, [batch.bytes]);
    this.waitForRoom();
  };

  private waitForRoom(): void {
    if (this.sent - Atomics.load(this.taken, 0) <= this.maxInFlight) return;
    const until = performance.now() + 1000;
    let taken: number;
    while (this.sent - (taken = Atomics.load(this.taken, 0)) > this.maxInFlight / 2 && performance.now() < until) {
      Atomics.wait(this.taken, 0, taken, 50);
    }
  }

  private spawn(): void {
    if (this.lostWhileDown > 0) {
      this.o.onError(null, `${this.lostWhileDown} request logs dropped while no log writer thread ran (${this.maxInFlight} were waiting for one already)`);
      this.lostWhileDown = 0;
    }
    const data: WriterData = {
      dataDir: this.o.dataDir,
      databaseUrl: this.o.databaseUrl,
      taken: this.taken.buffer as SharedArrayBuffer,
      stats: this.shared.buffer as SharedArrayBuffer,
    };
    const w = new Worker(new URL('./writer-thread.js', import.meta.url), { workerData: data, name: 'log-writer' });
    // A gateway that was never closed does not stay alive for it; close() holds it.
    w.unref();
    w.on('message', (m: FromWriter) => {
      if (m.type === 'usage') for (const [provider, model, input, output, cost] of m.rows) this.o.onUsage(provider, model, input, output, cost);
      else if (m.type === 'error') this.o.onError(m.err, m.message);
    });
    w.on('error', (err) => this.o.onError(err, 'the log writer thread failed'));
    w.on('exit', (code) => (this.closing === null ? this.died(code) : undefined));
    this.worker = w;
    if (this.batch.count > 0 && this.timer === null) this.timer = setTimeout(this.send, SEND_AFTER_MS);
  }

  private died(code: number): void {
    const s = this.stats();
    const unwritten = s.depth - this.batch.count;
    this.past.flushed = s.flushed;
    this.past.spilled = s.spilled;
    this.past.replayed = s.replayed;
    this.past.dropped = s.dropped;
    this.shared.fill(0);
    Atomics.store(this.taken, 0, 0);
    this.sent = 0;
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
