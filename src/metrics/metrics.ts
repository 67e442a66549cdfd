/**
 * Prometheus metrics. Upstream time (provider calls) is kept apart from the
 * gateway's own time so an operator can tell a slow provider from a slow
 * gateway.
 *
 * prom-client keeps every label set it has seen until the process ends, so
 * no label takes a caller's string as it came: a model is the catalog's id
 * or `other` (modelLabel), and circuits, named by config identity (an inline
 * config's hash), are labelled for the MAX_CIRCUIT_SERIES last seen.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { catalog } from '../catalog/catalog.js';
import type { LogQueueStats } from '../logs/queue.js';
import { boundedMap, type OnEvict } from '../shared/bounded.js';
import { FastCounter, FastHistogram, type CounterSeries, type HistogramSeries } from './series.js';

/** The bounded maps whose evictions are counted (switchyard_bounded_evictions_total{map}). */
const BOUNDED_MAPS = ['circuits', 'circuit_series', 'rate_counters', 'rate_leases', 'budget_counters', 'saved_guardrails', 'saved_prompts', 's3_clients'] as const;
export type BoundedMapName = (typeof BOUNDED_MAPS)[number];

/** Circuit state series kept: past this many circuits, the least recently seen one's series is removed. */
export const MAX_CIRCUIT_SERIES = 1000;

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/**
 * GC pauses (switchyard_nodejs_gc_duration_seconds). prom-client's default
 * buckets (1 ms, 10 ms, 100 ms, 1 s, 2 s, 5 s) put every pause between 1 and
 * 10 ms in one bucket; the p99 target at one connection is +1 ms, so the bench
 * (bench/gc.ts) needs to tell a 1 ms pause from a 5 ms one. The defaults are
 * all kept, so a query on one of their buckets still works.
 */
export const GC_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.1, 1, 2, 5];
const OVERHEAD_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];

export class Metrics {
  readonly registry = new Registry();
  // Those counted on every request: series looked up once, counted without hashing (series.ts).
  readonly requests = new FastCounter(
    'switchyard_requests_total',
    'Requests to model and proxy endpoints, by endpoint, provider, model and status.',
    ['endpoint', 'provider', 'model', 'status'] as const,
    this.registry,
  );
  readonly duration = new FastHistogram(
    'switchyard_request_duration_seconds',
    'Whole request time as the client sees it, until the last byte of the answer.',
    ['endpoint', 'provider', 'model', 'status'] as const,
    LATENCY_BUCKETS,
    this.registry,
  );
  readonly upstream = new FastHistogram(
    'switchyard_upstream_duration_seconds',
    'Time spent in provider calls (every attempt, until the last byte).',
    ['provider', 'model', 'status'] as const,
    LATENCY_BUCKETS,
    this.registry,
  );
  readonly overhead = new FastHistogram(
    'switchyard_gateway_overhead_seconds',
    'Request time not spent in provider calls or retry waits: the gateway’s own cost.',
    ['endpoint'] as const,
    OVERHEAD_BUCKETS,
    this.registry,
  );
  readonly retries = new Counter({
    name: 'switchyard_retries_total',
    help: 'Retries made on a target.',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });

  readonly fallbacks = new Counter({
    name: 'switchyard_fallbacks_total',
    help: 'Fallback targets tried after the first target of a fallback group failed, by the provider that finally answered.',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });
  readonly cache = new FastCounter('switchyard_cache_requests_total', 'Requests by cache status (HIT, SEMANTIC HIT, MISS, REFRESH, DISABLED).', ['status'] as const, this.registry);
  readonly embeddingFailures = new Counter({
    name: 'switchyard_cache_embedding_failures_total',
    help: 'Semantic cache lookups whose embedding call failed (provider error, timeout, no embeddings endpoint): each was a plain MISS.',
    registers: [this.registry],
  });
  readonly tokens = new FastCounter('switchyard_tokens_total', 'Tokens of answered requests (from the request log: provider usage, or counted when estimated), by type input or output.', ['provider', 'model', 'type'] as const, this.registry);
  readonly cost = new FastCounter('switchyard_cost_usd_total', 'Cost in USD of answered requests (catalog price times the integration multiplier; from the request log).', ['provider', 'model'] as const, this.registry);
  readonly circuits = new Gauge({
    name: 'switchyard_circuit_state',
    help: 'Circuit breaker state of a target as the last request saw it: 0 closed, 1 half-open (probing), 2 open. Labelled by config identity and target path.',
    labelNames: ['circuit'] as const,
    registers: [this.registry],
  });

  readonly redisErrors = new Counter({
    name: 'switchyard_redis_errors_total',
    help: 'Redis commands that failed (Redis away, timed out, refused), by the part of the gateway that sent them.',
    labelNames: ['component'] as const,
    registers: [this.registry],
  });

  readonly evictions = new Counter({
    name: 'switchyard_bounded_evictions_total',
    help: 'Entries pushed out of a bounded in-process map keyed by what callers send, to make room: circuits (memory circuit breakers), circuit_series (switchyard_circuit_state label sets), rate_counters, rate_leases, budget_counters. Steady growth means the bound is small for the traffic (or someone floods it).',
    labelNames: ['map'] as const,
    registers: [this.registry],
  });

  readonly limitsUncounted = new Counter({
    name: 'switchyard_limits_uncounted_total',
    help: 'Requests under rate-limit or usage-limit policies whose counters (Redis) were unreachable, by policy kind: admitted uncounted (every applying policy fails open) or refused (one fails closed).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  /** The series a request (or a log record's usage) counts, found with one lookup rather than one per metric. */
  private readonly children = new Map<string, Children>();
  private readonly usageChildren = new Map<string, { input: CounterSeries; output: CounterSeries; cost: CounterSeries }>();
  /** Circuits with a state series, least recently seen first out (and its series removed). */
  private readonly circuitSeries = boundedMap<true>(MAX_CIRCUIT_SERIES, (circuit) => {
    this.circuits.remove({ circuit });
    this.evicted('circuit_series')(circuit);
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'switchyard_', gcDurationBuckets: GC_BUCKETS });
    // Exposed at 0 from the start, as the log outcomes are.
    for (const map of BOUNDED_MAPS) this.evictions.labels({ map }).inc(0);
  }

  /** What a bounded map calls for each entry it evicts. */
  evicted(map: BoundedMapName): OnEvict {
    const c = this.evictions.labels({ map });
    return () => c.inc();
  }

  /** With REDIS_URL set: a gauge of whether the connection is ready, read at each scrape. */
  watchRedis(up: () => boolean): void {
    new Gauge({
      name: 'switchyard_redis_up',
      help: '1 while the connection to REDIS_URL is ready, 0 while Redis is away (counters and circuits then fall back).',
      registers: [this.registry],
      collect() {
        this.set(up() ? 1 : 0);
      },
    });
  }

  /** The log queue's depth and its counters, read at each scrape. */
  watchLogQueue(stats: () => LogQueueStats): void {
    new Gauge({
      name: 'switchyard_log_queue_depth',
      help: 'Request log records in memory, waiting to be written to the store or the spill file.',
      registers: [this.registry],
      collect() {
        this.set(stats().depth);
      },
    });
    new Gauge({
      name: 'switchyard_log_store_down',
      help: '1 while log writes find the store away (records go to the spill file on disk until a replay succeeds).',
      registers: [this.registry],
      collect() {
        this.set(stats().storeDown ? 1 : 0);
      },
    });
    const outcomes = ['flushed', 'spilled', 'replayed', 'dropped'] as const;
    const seen = { flushed: 0, spilled: 0, replayed: 0, dropped: 0 };
    new Counter({
      name: 'switchyard_log_records_total',
      help: 'Request log records by outcome: flushed (to the store), spilled (to disk), replayed (from disk to the store), dropped (lost).',
      labelNames: ['outcome'] as const,
      registers: [this.registry],
      collect() {
        const now = stats();
        for (const o of outcomes) {
          // Zero increments too, so every outcome (dropped above all) is exposed from the start.
          this.labels({ outcome: o }).inc(now[o] - seen[o]);
          seen[o] = now[o];
        }
      },
    });
  }

  /** A circuit's state as a request saw it. */
  circuit(key: string, state: 'closed' | 'half-open' | 'open'): void {
    this.circuitSeries.set(key, true);
    this.circuits.labels({ circuit: key }).set(state === 'closed' ? 0 : state === 'half-open' ? 1 : 2);
  }

  /** Tokens and cost of answered requests (summed by the log writer thread from their records). */
  usage(provider: string, asked: string, input: number | null, output: number | null, costUsd: number | null): void {
    const model = modelLabel(provider, asked);
    const key = `${provider}\u0000${model}`;
    let c = this.usageChildren.get(key);
    if (c === undefined) {
      c = {
        input: this.tokens.labels({ provider, model, type: 'input' }),
        output: this.tokens.labels({ provider, model, type: 'output' }),
        cost: this.cost.labels({ provider, model }),
      };
      if (this.usageChildren.size < MAX_CACHED_SERIES) this.usageChildren.set(key, c);
    }
    if (input !== null) c.input.inc(input);
    if (output !== null) c.output.inc(output);
    if (costUsd !== null) c.cost.inc(costUsd);
  }

  /** One finished request. */
  record(r: FinishedRequest): void {
    const { endpoint, provider, status } = r;
    const model = modelLabel(provider, r.model);
    const key = `${endpoint}\u0000${provider}\u0000${model}\u0000${status}`;
    let c = this.children.get(key);
    if (c === undefined) {
      const labels = { endpoint, provider, model, status: statusLabel(status) };
      c = {
        requests: this.requests.labels(labels),
        duration: this.duration.labels(labels),
        upstream: this.upstream.labels({ provider, model, status: labels.status }),
        overhead: this.overhead.labels({ endpoint }),
      };
      // Statuses are whatever upstreams answer (their labels are bounded, the keys here not): past this many, stop caching.
      if (this.children.size < MAX_CACHED_SERIES) this.children.set(key, c);
    }
    c.requests.inc();
    c.duration.observe(r.totalMs / 1000);
    if (r.upstreamMs > 0) c.upstream.observe(r.upstreamMs / 1000);
    c.overhead.observe(Math.max(0, r.totalMs - r.upstreamMs - r.waitedMs) / 1000);
    if (r.retries > 0) this.retries.labels({ provider }).inc(r.retries);
    if (r.fallbacks > 0) this.fallbacks.labels({ provider }).inc(r.fallbacks);
    if (r.cacheStatus !== null) this.cache.labels({ status: r.cacheStatus }).inc();
  }
}

const MAX_CACHED_SERIES = 10_000;

/** The statuses the gateway and providers answer with meaning of their own; any other is labelled by its class. */
const STATUS_LABELS = new Set([200, 201, 204, 246, 400, 401, 402, 403, 404, 405, 408, 409, 410, 413, 415, 422, 424, 429, 446, 499, 500, 501, 502, 503, 504, 529]);

/**
 * A status as labels name it: one of STATUS_LABELS, or its class (`5xx`).
 * An upstream (a caller's custom_host) may answer any code from 100 to 999,
 * and each would be a series per endpoint, provider and model for the life of the process.
 */
export function statusLabel(status: number): string {
  return STATUS_LABELS.has(status) ? String(status) : `${Math.floor(status / 100)}xx`;
}

/** A model as labels name it: the catalog's id for the provider (a Bedrock ARN's model, say), `none`, or `other` for any the catalog does not know. */
export function modelLabel(provider: string, model: string): string {
  if (model === 'none') return model;
  return catalog.find(provider, model)?.model ?? 'other';
}

/** A request to a model endpoint or the proxy once it ended; times in milliseconds. */
export interface FinishedRequest {
  endpoint: string;
  /** Who answered; 'none' when no provider did. */
  provider: string;
  model: string;
  status: number;
  /** Arrival to the last byte. */
  totalMs: number;
  /** In provider calls: failed attempts, and the answering one until its last byte. */
  upstreamMs: number;
  /** In retry backoff. */
  waitedMs: number;
  retries: number;
  fallbacks: number;
  cacheStatus: string | null;
}

interface Children {
  requests: CounterSeries;
  duration: HistogramSeries;
  upstream: HistogramSeries;
  overhead: HistogramSeries;
}
