/**
 * The log writer thread (started by writer.ts): makes records of the
 * request thread's entries and writes them through a LogQueue of its own,
 * on a database connection of its own, so none of that work (usage
 * parsing, redaction, pricing, SQL, the garbage of records waiting for
 * their batch) is done on the thread that serves requests. On a machine
 * with a second core the request thread does not pay for it at all.
 *
 * Reports to the request thread: entries taken and their size (shared
 * counters, by which it bounds what waits for this thread), the queue's stats (a shared array, read when /metrics is
 * scraped), tokens and cost per provider and model (messages, for the
 * metrics), errors (messages, for its logger).
 */
import { writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { isDataError } from '../store/db.js';
import type { LogRecord } from '../store/log-record.js';
import { LogRepo } from '../store/logs.js';
import { openDb } from '../store/open-db.js';
import { buildRecord } from './build.js';
import { unpack, type PackedBatch } from './entry.js';
import { LogQueue } from './queue.js';
import { SpillFiles, spillDir } from './spill.js';
import { STAT_SLOTS, TAKEN, type FromWriter, type ToWriter, type UsageRow, type WriterData } from './writer.js';

const port = parentPort!;
const data = workerData as WriterData;
const taken = new Int32Array(data.taken);
const stats = new Float64Array(data.stats);
/** Niceness of this thread: 10 (of 19), as for background work. */
const WRITER_NICE = 10;

// Named, so `top -H` shows it and a benchmark can pin it to a core of its own.
try {
  writeFileSync('/proc/thread-self/comm', 'sy-log-writer');
} catch {
  // Not Linux: the name is only a convenience.
}
// Below the request thread when they contend for a core (on Linux a thread's nice value is its own): a body slow to
// redact delays logs, not requests; if the writer then falls behind, logs are dropped and counted (writer.ts).
try {
  setPriority(WRITER_NICE);
} catch {
  // Not permitted, or not supported: the writer competes as an equal.
}

function send(m: FromWriter): void {
  port.postMessage(m);
}

function report(err: unknown, message: string): void {
  const e = err instanceof Error ? { message: err.message, stack: err.stack, code: (err as { code?: unknown }).code } : err;
  send({ type: 'error', message, err: e });
}

const db = await openDb(data);
const repo = new LogRepo(db, db);
const queue = new LogQueue({
  sink: { insert: (records) => repo.insert(records), isDataError },
  spill: new SpillFiles(spillDir(data.dataDir)),
  onError: report,
  onProgress: publish,
  // What it holds counts against the request thread's bound (writer.ts): it takes no more than that.
  maxBytes: data.maxBytes,
  // Entries arrive every 10 ms (writer.ts): written as they come, their records die young. Held for the
  // queue's default 100 ms they outlived young-generation collections here, and the old-generation
  // collections that followed ran on V8's helper threads, which this isolate shares with the request thread.
  flushIntervalMs: 10,
});

/** The queue's stats into the shared array the request thread reads. */
function publish(): void {
  const s = queue.stats();
  STAT_SLOTS.forEach((k, i) => (stats[i] = typeof s[k] === 'boolean' ? Number(s[k]) : s[k]));
}

/** Tokens and cost per provider and model, summed until sent (every USAGE_EVERY_MS: each message wakes the request thread). */
const sums = new Map<string, UsageRow>();
const USAGE_EVERY_MS = 100;
let usageTimer: NodeJS.Timeout | null = null;

function sendUsage(): void {
  usageTimer = null;
  if (sums.size === 0) return;
  send({ type: 'usage', rows: [...sums.values()] });
  sums.clear();
}

function addUsage(records: readonly LogRecord[]): void {
  for (const r of records) {
    if (r.provider === null || (r.totalTokens === null && r.costUsd === null)) continue;
    const model = r.model ?? 'none';
    const key = `${r.provider}\u0000${model}`;
    let s = sums.get(key);
    if (s === undefined) sums.set(key, (s = [r.provider, model, 0, 0, 0]));
    s[2] += r.promptTokens ?? 0;
    s[3] += r.completionTokens ?? 0;
    s[4] += r.costUsd ?? 0;
  }
  usageTimer ??= setTimeout(sendUsage, USAGE_EVERY_MS);
}

function taking(batch: PackedBatch): void {
  Atomics.add(taken, TAKEN.entries, batch.count);
  Atomics.add(taken, TAKEN.size, batch.size);
}

async function onBatch(m: ToWriter & { type: 'batch' }): Promise<void> {
  const records: LogRecord[] = [];
  const later: Promise<void>[] = [];
  for (const e of unpack(m.batch)) {
    try {
      const r = buildRecord(e);
      if (r instanceof Promise) later.push(r.then((x) => void records.push(x)));
      else records.push(r);
    } catch (err) {
      queue.drop(err, 1, 'a request log could not be made into a record; dropped');
    }
  }
  if (later.length > 0) await Promise.all(later);
  for (const r of records) queue.enqueue(r);
  addUsage(records);
  publish();
  taking(m.batch);
}

/** Batches are handled in order, one at a time (a batch whose answers are counted by the tokenizer waits for it). */
let chain: Promise<void> = Promise.resolve();
port.on('message', (m: ToWriter) => {
  if (m.type === 'batch') chain = chain.then(() => onBatch(m));
  else
    chain = chain
      .then(() => queue.close(m.timeoutMs))
      .then(async () => {
        if (usageTimer !== null) clearTimeout(usageTimer);
        sendUsage();
        publish();
        await db.close();
        send({ type: 'closed' });
        port.close();
      });
});
queue.start();
publish();
