/**
 * Prometheus metrics. Upstream time (provider calls) is kept apart from the
 * gateway's own time so an operator can tell a slow provider from a slow
 * gateway.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const OVERHEAD_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'switchyard_requests_total',
    help: 'Requests to model and proxy endpoints, by endpoint, provider, model and status.',
    labelNames: ['endpoint', 'provider', 'model', 'status'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'switchyard_request_duration_seconds',
    help: 'Whole request time as the client sees it, until the last byte of the answer.',
    labelNames: ['endpoint', 'provider', 'model', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly upstream = new Histogram({
    name: 'switchyard_upstream_duration_seconds',
    help: 'Time spent in provider calls (every attempt, until the last byte).',
    labelNames: ['provider', 'model', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly overhead = new Histogram({
    name: 'switchyard_gateway_overhead_seconds',
    help: 'Request time not spent in provider calls or retry waits: the gateway’s own cost.',
    labelNames: ['endpoint'] as const,
    buckets: OVERHEAD_BUCKETS,
    registers: [this.registry],
  });
  readonly retries = new Counter({
    name: 'switchyard_retries_total',
    help: 'Retries made on a target.',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'switchyard_' });
  }
}
