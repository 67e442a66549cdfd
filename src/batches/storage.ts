/**
 * Where the bytes of the gateway's files live: a folder (GATEWAY_FILES_DIR,
 * by default `files` in the data dir), which every process of one database
 * must share. Every file is first complete on local disk (an upload
 * streamed to a temp file, a batch's output written line by line), then put
 * in storage under its id: nothing is held whole in memory.
 */
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

export interface FileStorage {
  /** Local folder for files being written, before put(). */
  readonly scratch: string;
  /** Moves the complete local file at `path` into storage as `id` (the local file is gone after). */
  put(id: string, path: string, bytes: number): Promise<void>;
  /** The file's bytes from `start`; rejects when it is not stored. */
  read(id: string, start?: number): Promise<Readable>;
  delete(id: string): Promise<void>;
}

export class DiskStorage implements FileStorage {
  readonly scratch: string;
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
    this.scratch = join(this.dir, 'incoming');
  }

  async init(): Promise<void> {
    await mkdir(this.scratch, { recursive: true, mode: 0o700 });
  }

  async put(id: string, path: string): Promise<void> {
    await rename(path, join(this.dir, id));
  }

  async read(id: string, start = 0): Promise<Readable> {
    // Opened first, so a missing file is a rejection here rather than an error event later.
    const fh = await open(join(this.dir, id), 'r');
    return fh.createReadStream({ start, autoClose: true });
  }

  async delete(id: string): Promise<void> {
    await rm(join(this.dir, id), { force: true });
  }
}

/** A scratch file's path: unique per call. */
export function scratchPath(storage: FileStorage, name: string): string {
  return join(storage.scratch, `${name}.${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2)}`);
}
