/**
 * The log queue's overflow on disk: records the store cannot take now are
 * appended as JSON lines to a file of this process in GATEWAY_DATA_DIR, and
 * replayed into the store later.
 *
 * A replay first claims every pending file by renaming `*.jsonl` to
 * `*.replay` (later appends start a new file). This process's own appends
 * cannot be under way in a renamed file (asynchronous ones queue behind the
 * claim, synchronous ones finish before the rename's callback runs); for
 * another process's file it waits a moment for such an append to land. It
 * then reads the claimed files and deletes each once all its records are
 * written. A replay that fails leaves its files for the
 * next one; records written twice are one row, since the store skips ids it
 * has. Files left by a process that died are claimed like any other.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readdirSync, appendFileSync } from 'node:fs';
import { appendFile, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LogRecord } from '../store/log-record.js';

const PENDING = '.jsonl';
const CLAIMED = '.replay';
/** Long enough for another process's append under way when its file was renamed to land (an append is one batch of lines). */
const SETTLE_MS = 500;

export interface ReplayResult {
  /** Records handed to the store. */
  written: number;
  /** Lines that were not a record (a write cut short by a crash): lost. */
  unreadable: number;
}

export class SpillFiles {
  private readonly tag = `${process.pid}-${Date.now()}-${randomBytes(3).toString('hex')}`;
  private claims = 0;
  /** Appends and claims run one at a time, so a claim never renames a file under one of our appends. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly dir: string,
    private readonly settleMs = SETTLE_MS,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private current(): string {
    return join(this.dir, `${this.tag}${PENDING}`);
  }

  /** Appends records; rejects when the disk refuses them (full, gone). */
  append(records: readonly LogRecord[]): Promise<void> {
    const lines = toLines(records);
    const done = this.chain.then(() => appendFile(this.current(), lines, { mode: 0o600 }));
    this.chain = done.catch(() => {});
    return done;
  }

  /** The same, now, for callers that cannot wait (a record enqueued while the queue is closing, a full queue). */
  appendSync(records: readonly LogRecord[]): void {
    appendFileSync(this.current(), toLines(records), { mode: 0o600 });
  }

  /** Whether any records wait on disk (checked at start). */
  pending(): boolean {
    return spillPending(this.dir);
  }

  /**
   * Writes every record on disk through `write`, in batches that end at batchSize records or once they hold
   * batchBytes by `sizeOf` (at least one record): a replay holds no more than a write from memory does, however
   * large the spilled bodies. Rejects (leaving what is unwritten) when write does.
   */
  async replay(
    write: (batch: LogRecord[], bytes: number) => Promise<void>,
    batchSize: number,
    batchBytes = Infinity,
    sizeOf: (r: LogRecord) => number = () => 0,
  ): Promise<ReplayResult> {
    if (await this.claim()) await sleep(this.settleMs);
    const result: ReplayResult = { written: 0, unreadable: 0 };
    const files = (await readdir(this.dir)).filter((n) => n.endsWith(CLAIMED)).sort();
    for (const name of files) {
      const path = join(this.dir, name);
      let batch: LogRecord[] = [];
      let bytes = 0;
      try {
        const input = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
        for await (const line of input) {
          if (line === '') continue;
          try {
            const r = JSON.parse(line) as LogRecord;
            batch.push(r);
            bytes += sizeOf(r);
          } catch {
            result.unreadable++;
          }
          if (batch.length >= batchSize || bytes >= batchBytes) {
            await write(batch, bytes);
            result.written += batch.length;
            batch = [];
            bytes = 0;
          }
        }
      } catch (e) {
        // Another process replaying the same leftover file finished and deleted it first.
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw e;
      }
      if (batch.length > 0) {
        await write(batch, bytes);
        result.written += batch.length;
      }
      await unlink(path).catch(() => {});
    }
    return result;
  }

  /** Renames pending files to claimed ones; resolves to whether any was another process's. */
  private claim(): Promise<boolean> {
    const done = this.chain.then(async () => {
      let foreign = false;
      for (const name of await readdir(this.dir)) {
        if (!name.endsWith(PENDING)) continue;
        try {
          // A name of its own per claim: a claimed file not yet replayed is never overwritten.
          await rename(join(this.dir, name), join(this.dir, `${name.slice(0, -PENDING.length)}.${this.tag}-${this.claims++}${CLAIMED}`));
          foreign ||= name !== `${this.tag}${PENDING}`;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
      }
      return foreign;
    });
    this.chain = done.catch(() => {});
    return done;
  }
}

function toLines(records: readonly LogRecord[]): string {
  let s = '';
  for (const r of records) s += `${JSON.stringify(r)}\n`;
  return s;
}

/** Where the log writer spills, under the gateway's data directory. */
export function spillDir(dataDir: string): string {
  return join(dataDir, 'log-spill');
}

/** Whether records wait in the spill files under `dir` (a directory not made yet holds none). */
export function spillPending(dir: string): boolean {
  return existsSync(dir) && readdirSync(dir).some((n) => n.endsWith(PENDING) || n.endsWith(CLAIMED));
}
