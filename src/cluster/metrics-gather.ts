/**
 * /metrics of a cluster: the worker that takes the scrape asks its primary,
 * which asks every worker for its registry's series (getMetricsAsJSON) and
 * sums them (prom-client's AggregatorRegistry: counters and histograms
 * summed, the default process metrics by their own aggregators), so one
 * scrape counts the requests of every worker, and the primary's own series
 * (its log writer's records, usage and evictions) are added to the sum. A worker that does not answer
 * within GATHER_TIMEOUT_MS is left out of that scrape; scrapes that arrive
 * while one is gathered share its answer.
 *
 * A worker that dies takes its counts with it: summed without them, totals
 * would go back (Prometheus reads a reset). So the counters and histograms a
 * worker last answered are kept, and once it is gone (retire) they are folded
 * into a baseline added to every later sum. Gauges are not: a dead worker's
 * queue or memory is no longer there.
 */
import type { Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { METRICS_CALL_TIMEOUT_MS } from './link.js';
import type { ToWorker } from './messages.js';

/** One series of getMetricsAsJSON (prom-client's MetricObjectWithValues), as far as is read here. */
interface Series {
  type: string;
  aggregator?: string;
}

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
  /** Each live worker's series as it last answered: one entry per worker, gone at retire (which keeps its counts). */
  private readonly last = new Map<Worker, unknown[]>();
  private readonly retired = new WeakSet<Worker>();
  /** Dead workers' last counters and histograms, summed into one set of series. */
  private baseline: Promise<object[]> = Promise.resolve([]);

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

  /** A worker exited: its last counts stay in every later sum. */
  retire(w: Worker): void {
    this.retired.add(w);
    // Filtered here, once a worker, rather than on every scrape of every worker.
    const last = this.last.get(w)?.filter(isCount);
    this.last.delete(w);
    if (last === undefined) return;
    // Series that cannot be summed (a worker of another build) leave the baseline as it was, not every later scrape failing.
    this.baseline = this.baseline.then(async (base) => {
      try {
        return await AggregatorRegistry.aggregate([base, last]).getMetricsAsJSON();
      } catch {
        return base;
      }
    });
  }

  private async gather(workers: Worker[]): Promise<Scrape> {
    const answers = await Promise.all(workers.map(async (w) => ({ w, series: await this.ask(w) })));
    // Which workers count as live and which baseline goes with them, read in one turn: a worker that
    // dies while the sum is made is then counted once, in one or the other (one that died while asked
    // is in the baseline already).
    const live = answers.flatMap(({ w, series }) => (series !== null && !this.retired.has(w) ? [series] : []));
    const baseline = this.baseline;
    const parts = [await this.own(), await baseline, ...live];
    const registry = AggregatorRegistry.aggregate(parts);
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
        if (!Array.isArray(series)) return resolve(null);
        if (!this.retired.has(w)) this.last.set(w, series);
        resolve(series as object[]);
      });
      w.send({ sy: 'gather', id } satisfies ToWorker);
    });
  }
}

/** A series that only grows while its worker lives (summed across workers): the ones a baseline keeps. */
function isCount(s: unknown): s is object {
  if (typeof s !== 'object' || s === null) return false;
  const { type, aggregator } = s as Series;
  return (type === 'counter' || type === 'histogram') && (aggregator === undefined || aggregator === 'sum');
}
