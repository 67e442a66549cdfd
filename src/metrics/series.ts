/**
 * The per-request counter and histograms (requests, duration, upstream,
 * overhead), as prom-client metrics a registry exposes like its own, with
 * one difference: a series is looked up once by its caller and then counted
 * with plain arithmetic. prom-client's label children validate and hash the
 * label set on every inc() and observe() (~1.5 µs each, four per request,
 * measured in the request thread's profile), which these do not.
 *
 * The exposition is prom-client's own shape (registry text and JSON, the
 * cluster's aggregation by `aggregator: 'sum'`), so a scrape cannot tell.
 */
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

interface Value {
  labels: Labels;
  sharedLabels?: Labels;
  value: number;
  metricName?: string;
}

interface Exposed {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: Value[];
  aggregator: 'sum';
}

abstract class FastMetric<S extends { labels: Labels }, L extends string> {
  readonly aggregator = 'sum';
  protected readonly series = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series of these label values; callers keep it (lookups hash, counting does not). */
  labels(values: Record<L, string>): S {
    let key = '';
    for (const n of this.labelNames) key += values[n] + '\u0000';
    let s = this.series.get(key);
    if (s === undefined) {
      const labels: Labels = {};
      for (const n of this.labelNames) labels[n] = values[n];
      this.series.set(key, (s = this.make(labels)));
    }
    return s;
  }

  reset(): void {
    this.series.clear();
  }

  protected abstract make(labels: Labels): S;
}

export class CounterSeries {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(by = 1): void {
    this.value += by;
  }
}

export class FastCounter<L extends string> extends FastMetric<CounterSeries, L> {
  readonly type = 'counter';

  protected make(labels: Labels): CounterSeries {
    return new CounterSeries(labels);
  }

  async get(): Promise<Exposed> {
    const values: Value[] = [];
    for (const s of this.series.values()) values.push({ labels: s.labels, value: s.value });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

export class HistogramSeries {
  /** Observations per bucket, not cumulative; the last is above every bound (+Inf). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > b[i]!) i++;
    this.counts[i]!++;
    this.sum += v;
    this.count++;
  }
}

export class FastHistogram<L extends string> extends FastMetric<HistogramSeries, L> {
  readonly type = 'histogram';

  constructor(name: string, help: string, labelNames: readonly L[], readonly bounds: readonly number[], registry: Registry) {
    super(name, help, labelNames, registry);
  }

  protected make(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.bounds);
  }

  /** What the registry writes as text: prom-client's histogram shape, `le` first, then the series' labels. */
  async getForPromString(): Promise<Exposed> {
    const values: Value[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += s.counts[i]!;
        values.push({ labels: { le: String(this.bounds[i]) }, sharedLabels: s.labels, value: acc, metricName: bucket });
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The JSON form (getMetricsAsJSON, the cluster's aggregation): each value's labels whole. */
  async get(): Promise<Exposed> {
    const data = await this.getForPromString();
    for (const v of data.values) {
      v.labels = { ...v.labels, ...v.sharedLabels };
      delete v.sharedLabels;
    }
    return data;
  }
}
