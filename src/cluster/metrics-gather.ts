/**
 * /metrics of a cluster: the worker that takes the scrape asks its primary,
 * which asks every worker for its registry's series (getMetricsAsJSON) and
 * sums them (prom-client's AggregatorRegistry: counters and histograms
 * summed, the default process metrics by their own aggregators), so one
 * scrape counts the requests of every worker, and the primary's own series
 * (its log writer's records, usage and evictions) are added to the sum. A worker that does not answer
 * within GATHER_TIMEOUT_MS is left out of that scrape; scrapes that arrive
 * while one is gathered share its answer.
 */
import type { Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { METRICS_CALL_TIMEOUT_MS } from './link.js';
import type { ToWorker } from './messages.js';

/** Within the asking worker's call timeout, with room for the summing. */
export const GATHER_TIMEOUT_MS = METRICS_CALL_TIMEOUT_MS - 500;

export interface Scrape {
  contentType: string;
  text: string;
}

export class MetricsGatherer {
  private next = 0;
  /** One entry per worker asked, each gone within GATHER_TIMEOUT_MS. */
  private readonly waiting = new Map<number, (series: unknown) => void>();
  private current: Promise<Scrape> | null = null;

  /** `own`: the primary's series, summed with the workers'. */
  constructor(private readonly own: () => Promise<object[]> = async () => []) {}

  scrape(workers: Iterable<Worker>): Promise<Scrape> {
    this.current ??= this.gather([...workers]).finally(() => (this.current = null));
    return this.current;
  }

  /** A worker's answer to `gather` (ignored when late). */
  answered(id: number, series: unknown): void {
    this.waiting.get(id)?.(series);
  }

  private async gather(workers: Worker[]): Promise<Scrape> {
    const parts = await Promise.all([this.own(), ...workers.map((w) => this.ask(w))]);
    const registry = AggregatorRegistry.aggregate(parts.filter((p): p is object[] => p !== null));
    return { contentType: registry.contentType, text: await registry.metrics() };
  }

  private ask(w: Worker): Promise<object[] | null> {
    return new Promise((resolve) => {
      if (!w.isConnected()) return resolve(null);
      const id = (this.next = (this.next + 1) % Number.MAX_SAFE_INTEGER);
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(null);
      }, GATHER_TIMEOUT_MS);
      this.waiting.set(id, (series) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(Array.isArray(series) ? (series as object[]) : null);
      });
      w.send({ sy: 'gather', id } satisfies ToWorker);
    });
  }
}
