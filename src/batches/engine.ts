/**
 * The batch engine of one gateway process: it polls the store for batches
 * with work left whose lease is free or lapsed, takes the lease of a few
 * (one runner per batch in the whole deployment: the lease is a row update
 * only one process wins), and runs them (runner.ts). A process that dies
 * stops renewing; its leases lapse and another process's poll takes the
 * batches over. A process that stops gives its leases back at once.
 *
 * A batch a provider ran (a Bedrock job) is leased once its job ended
 * (`finalizing`): its output is collected under the lease (Collection), so
 * one process reads it, once, however many processes are asked for it.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { BatchRecord, BatchRepo } from '../store/batches.js';
import { BatchRunner, type RunnerDeps } from './runner.js';

/** Collects the output of a batch a provider ran (bedrock-batches.ts collect), under the lease `holder` has. */
export interface ProviderCollector {
  collect(b: BatchRecord, holder: string, signal: AbortSignal): Promise<void>;
}

export type EngineDeps = Omit<RunnerDeps, 'holder' | 'concurrency' | 'leaseMs' | 'repo'> & { collector: ProviderCollector };

export interface EngineSettings {
  /** Lines in flight at once, per batch. */
  concurrency: number;
  /** Batches this process runs at once. */
  maxRunning: number;
  pollMs: number;
  leaseMs: number;
}

export class BatchEngine {
  private readonly runners = new Map<string, { runner: BatchRunner | Collection; done: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private again = false;
  private closed = false;
  readonly holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;

  constructor(
    private readonly repo: BatchRepo,
    private readonly deps: EngineDeps,
    private readonly settings: EngineSettings,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.settings.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Looks for work now (a batch was created, or a runner ended). */
  wake(): void {
    if (this.closed) return;
    if (this.polling !== null) {
      this.again = true;
      return;
    }
    this.polling = this.poll()
      .catch(this.onError)
      .finally(() => {
        this.polling = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** A batch of this process was cancelled: its runner starts no more lines (another process's runner sees the row). */
  cancelled(id: string): void {
    const r = this.runners.get(id)?.runner;
    if (r instanceof BatchRunner) r.cancel();
  }

  /** Stops every runner (lines in flight finish and are recorded), gives the leases back. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    await this.polling;
    for (const { runner } of this.runners.values()) runner.close();
    await Promise.all([...this.runners.values()].map((r) => r.done));
  }

  private async poll(): Promise<void> {
    const free = this.settings.maxRunning - this.runners.size;
    if (free <= 0) return;
    const now = this.deps.now();
    for (const { id, provider } of await this.repo.claimable(now, free + this.runners.size)) {
      if (this.closed || this.runners.size >= this.settings.maxRunning) return;
      if (this.runners.has(id)) continue;
      if (!(await this.repo.takeLease(id, this.holder, now, now + this.settings.leaseMs))) continue;
      const runner = provider
        ? new Collection(id, this.repo, this.deps.collector, this.holder, this.settings.leaseMs, this.deps.now)
        : new BatchRunner(id, { ...this.deps, repo: this.repo, holder: this.holder, concurrency: this.settings.concurrency, leaseMs: this.settings.leaseMs });
      // A runner that failed is picked up by a later poll, not at once: a fault that persists does not spin.
      const done = runner
        .run()
        .then(
          () => {
            this.runners.delete(id);
            this.wake();
          },
          (err: unknown) => {
            this.runners.delete(id);
            this.onError(err);
          },
        );
      this.runners.set(id, { runner, done });
    }
  }
}

/** One provider-run batch's output collected under the lease, renewed meanwhile; stopping the process or losing the lease aborts it. */
class Collection {
  private readonly abort = new AbortController();
  private lost = false;

  constructor(
    private readonly id: string,
    private readonly repo: BatchRepo,
    private readonly collector: ProviderCollector,
    private readonly holder: string,
    private readonly leaseMs: number,
    private readonly now: () => number,
  ) {}

  /** The process is stopping: the read is given up, and the lease given back for another process to collect. */
  close(): void {
    this.abort.abort();
  }

  async run(): Promise<void> {
    const renewal = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
    renewal.unref();
    try {
      const b = await this.repo.load(this.id);
      // Another process may have ended it between the poll and the lease.
      if (b !== null && b.providerJob !== null && b.status === 'finalizing') await this.collector.collect(b, this.holder, this.abort.signal);
    } finally {
      clearInterval(renewal);
      if (!this.lost) await this.repo.release(this.id, this.holder);
    }
  }

  private async renew(): Promise<void> {
    if ((await this.repo.renew(this.id, this.holder, this.now() + this.leaseMs).catch(() => undefined)) !== null) return;
    this.lost = true;
    this.abort.abort();
  }
}
