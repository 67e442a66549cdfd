/**
 * The log and analytics reads of a SQLite store, in a process of their own.
 * better-sqlite3 is synchronous: on the request thread a group over a large
 * log table stalls every request for as long as its scan takes. Here a read
 * runs on a read-only connection in a child process (sqlite-read-process.ts;
 * WAL lets it read while others write), and the caller waits for its answer
 * at most `timeoutMs`; past that it is answered READ_TIMEOUT and the process
 * is killed.
 *
 * A process, not a worker thread: SQLite cannot stop a running statement
 * from another thread and better-sqlite3 exposes no interrupt, so a thread
 * would go on scanning until its statement returned, and hold the gateway's
 * exit until then. SIGKILL stops the scan at once. `maxProcesses` bounds the
 * processes alive (a killed one counts until it has exited); reads that find
 * none free wait, within their own bound. A process with no read for
 * `idleMs` is closed: an idle gateway does not keep its memory.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readTimeout, type SqlValue } from './db.js';
import type { Engine } from './store.js';

export interface ToReader {
  id: number;
  method: 'all' | 'get';
  sql: string;
  params: readonly SqlValue[];
}
export type FromReader = { id: number; rows: unknown; error?: undefined } | { id: number; error: { message: string; code: string | undefined } };

export interface SqliteReadsOptions {
  /** How long a caller waits for a read, queued or running. */
  timeoutMs: number;
  /** Processes alive at once, those killed and not yet exited included. */
  maxProcesses?: number;
  idleMs?: number;
}

const MAX_PROCESSES = 2;
const READ_PROCESS = fileURLToPath(new URL('./sqlite-read-process.js', import.meta.url));
const IDLE_MS = 60_000;

interface Read {
  message: ToReader;
  resolve(rows: unknown): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
  /** The process it was sent to; null while it waits for one. */
  process: ChildProcess | null;
}

function onlyReads(): Promise<never> {
  return Promise.reject(new Error('SqliteReads only reads; writes go to the store connection'));
}

export class SqliteReads implements Engine {
  readonly engine = 'sqlite' as const;
  private readonly maxProcesses: number;
  /** The process new reads are sent to: it answers them in order. */
  private current: ChildProcess | null = null;
  /** Processes started and not yet exited: `current` and those killed. */
  private alive = 0;
  private readonly reads = new Map<number, Read>();
  private readonly waiting: Read[] = [];
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly dataDir: string,
    private readonly o: SqliteReadsOptions,
  ) {
    this.maxProcesses = o.maxProcesses ?? MAX_PROCESSES;
  }

  /** Processes alive: the one taking reads, and those killed and not yet exited. */
  get processes(): number {
    return this.alive;
  }

  all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.read('all', sql, params) as Promise<T[]>;
  }

  get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    return this.read('get', sql, params) as Promise<T | undefined>;
  }

  run(): Promise<number> {
    return onlyReads();
  }

  insertMany(): Promise<SqlValue[]> {
    return onlyReads();
  }

  exec(): Promise<void> {
    return onlyReads();
  }

  transaction<T>(): Promise<T> {
    return onlyReads();
  }

  /** Fails the reads waiting and kills the process: a scan it runs stops with it. */
  close(): void {
    this.closed = true;
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    for (const read of this.reads.values()) this.settle(read, new Error('the store was closed'));
    this.waiting.length = 0;
    this.current?.kill('SIGKILL');
    this.current = null;
  }

  private read(method: ToReader['method'], sql: string, params: readonly SqlValue[]): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the store was closed'));
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const read: Read = { message: { id, method, sql, params }, resolve, reject, process: null, timer: setTimeout(() => this.expire(read), this.o.timeoutMs) };
      this.reads.set(id, read);
      this.waiting.push(read);
      this.dispatch();
    });
  }

  /** Sends the waiting reads to the current process, starting one if none runs and a slot is free. */
  private dispatch(): void {
    if (this.waiting.length === 0 || this.closed) return;
    if (this.current === null) {
      if (this.alive >= this.maxProcesses) return; // a killed one's exit dispatches them
      this.current = this.spawn();
    }
    const child = this.current;
    const sending = this.waiting.splice(0);
    for (const read of sending) read.process = child;
    try {
      for (const read of sending) child.send(read.message);
    } catch (e) {
      // No channel (a fork that failed for want of file descriptors): its reads fail with it.
      child.kill('SIGKILL');
      this.orphan(child, e as Error);
    }
    this.idleTimer?.refresh();
  }

  private spawn(): ChildProcess {
    // No inherited node flags (a test runner's, an inspector's); stderr is the gateway's, for a crash's trace.
    const child = fork(READ_PROCESS, [this.dataDir], { execArgv: [], serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    // A gateway that was never closed does not stay alive for it.
    child.unref();
    child.channel?.unref();
    this.alive++;
    child.on('message', (m: FromReader) => {
      const read = this.reads.get(m.id);
      if (read === undefined || read.process !== child) return;
      if (m.error === undefined) this.settle(read, null, m.rows);
      else this.settle(read, Object.assign(new Error(m.error.message), { code: m.error.code }));
    });
    let gone = false;
    const exited = (): void => {
      if (gone) return;
      gone = true;
      this.alive--;
      this.orphan(child, new Error('the SQLite read process exited'));
      this.dispatch();
    };
    child.on('exit', exited);
    child.on('error', (err) => {
      // A fork that failed, or a channel that broke: the process is of no more use, and its reads fail.
      child.kill('SIGKILL');
      this.orphan(child, err);
      // A fork that failed never emits 'exit': its slot is given back here.
      if (child.pid === undefined) exited();
    });
    if (this.idleTimer === null) this.idleTimer = setTimeout(this.retire, this.o.idleMs ?? IDLE_MS).unref();
    return child;
  }

  /** A read past its bound: its process is busy with it (reads before it were answered or expired first), so it is killed. */
  private expire(read: Read): void {
    const p = read.process;
    this.settle(read, readTimeout(`the read did not finish within ${this.o.timeoutMs} ms`));
    if (p === null) {
      const at = this.waiting.indexOf(read);
      if (at !== -1) this.waiting.splice(at, 1);
      return;
    }
    this.end(p);
  }

  /** Kills `child`; the reads sent to it after the one it is running go to the next process. */
  private end(child: ChildProcess): void {
    if (this.current === child) this.current = null;
    child.kill('SIGKILL'); // SQLite cannot stop a statement otherwise
    for (const read of this.reads.values()) {
      if (read.process !== child) continue;
      read.process = null;
      this.waiting.push(read);
    }
    this.dispatch();
  }

  /** The reads a process held when it failed or exited are failed with it (a killed one holds none). */
  private orphan(child: ChildProcess, err: Error): void {
    if (this.current === child) this.current = null;
    for (const read of this.reads.values()) if (read.process === child) this.settle(read, err);
  }

  private settle(read: Read, err: Error | null, rows?: unknown): void {
    clearTimeout(read.timer);
    this.reads.delete(read.message.id);
    if (err === null) read.resolve(rows);
    else read.reject(err);
  }

  /** Closes the current process when no read came for idleMs. */
  private readonly retire = (): void => {
    const child = this.current;
    if (child === null || this.reads.size > 0) {
      if (child !== null) this.idleTimer!.refresh();
      else this.idleTimer = null;
      return;
    }
    this.current = null;
    this.idleTimer = null;
    child.disconnect(); // it exits
  };
}
