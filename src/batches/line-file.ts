/**
 * A JSONL file being written on local disk, one line at a time with the
 * stream's backpressure respected: a batch's output, or the records of a
 * provider's job, are made here before they are stored, never held whole.
 */
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';

export class LineFile {
  private readonly out: WriteStream;
  private count = 0;
  /**
   * The stream's first error, answered by the next write or end. Always listened for: a write still
   * in flight when the file is discarded fails once the stream is destroyed, and an 'error' event
   * nobody listens to would end the process.
   */
  private failed: Error | null = null;

  constructor(readonly path: string) {
    this.out = createWriteStream(path, { mode: 0o600 });
    this.out.on('error', (e) => (this.failed ??= e));
  }

  get lines(): number {
    return this.count;
  }

  async write(line: string): Promise<void> {
    if (this.failed !== null) throw this.failed;
    this.count++;
    if (!this.out.write(`${line}\n`)) await once(this.out, 'drain');
  }

  /** Flushes to disk; the number of lines written. */
  async end(): Promise<number> {
    if (this.failed !== null) throw this.failed;
    this.out.end();
    await once(this.out, 'finish');
    return this.count;
  }

  /** Removes what is left on disk (the file once moved into storage is no longer there). */
  async discard(): Promise<void> {
    this.out.destroy();
    await rm(this.path, { force: true });
  }
}
