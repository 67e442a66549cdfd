// The primary's sum of its workers' /metrics series: counters summed, a worker
// that does not answer within GATHER_TIMEOUT_MS left out, concurrent scrapes
// sharing one gathering. Across real workers: workers-http.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Worker } from 'node:cluster';
import { Counter, Gauge, Registry } from 'prom-client';
import { MetricsGatherer } from '../src/cluster/metrics-gather.js';

/** A fake worker whose registry counted `n` requests; `silent` never answers. */
function worker(gatherer: MetricsGatherer, n: number, asked: { count: number }, silent = false): Worker {
  const registry = new Registry();
  new Counter({ name: 'x_requests_total', help: 'x', registers: [registry] }).inc(n);
  new Gauge({ name: 'x_queue_depth', help: 'x', registers: [registry] }).set(1);
  return {
    isConnected: () => true,
    send: (m: { id: number }) => {
      asked.count++;
      if (!silent) void registry.getMetricsAsJSON().then((series) => gatherer.answered(m.id, series));
      return true;
    },
  } as unknown as Worker;
}

const total = (text: string): number => Number(/^x_requests_total (\d+)$/m.exec(text)?.[1]);

describe('MetricsGatherer', () => {
  it('sums every worker’s counters; concurrent scrapes share one gathering', async () => {
    const g = new MetricsGatherer();
    const asked = { count: 0 };
    const workers = [worker(g, 3, asked), worker(g, 4, asked)];
    const [a, b] = await Promise.all([g.scrape(workers), g.scrape(workers)]);
    assert.equal(total(a.text), 7);
    assert.equal(b.text, a.text);
    assert.equal(asked.count, 2);
  });

  it('adds the primary’s own series (its log writer’s, usage) to the workers’', async () => {
    const own = new Registry();
    new Counter({ name: 'x_requests_total', help: 'x', registers: [own] }).inc(5);
    const g = new MetricsGatherer(() => own.getMetricsAsJSON());
    const scrape = await g.scrape([worker(g, 3, { count: 0 }), worker(g, 4, { count: 0 })]);
    assert.equal(total(scrape.text), 12);
  });

  it('leaves out a worker that does not answer in time', async () => {
    const g = new MetricsGatherer();
    const asked = { count: 0 };
    const scrape = await g.scrape([worker(g, 3, asked), worker(g, 100, asked, true)]);
    assert.equal(total(scrape.text), 3);
  });
});

describe('MetricsGatherer, a worker that dies', () => {
  it('keeps its last counts: totals do not fall when it is gone; its gauges go', async () => {
    const g = new MetricsGatherer();
    const a = worker(g, 3, { count: 0 });
    const b = worker(g, 4, { count: 0 });
    const before = await g.scrape([a, b]);
    assert.equal(total(before.text), 7);
    assert.match(before.text, /^x_queue_depth 2$/m);
    g.retire(b);
    const after = await g.scrape([a]);
    assert.equal(total(after.text), 7);
    assert.match(after.text, /^x_queue_depth 1$/m);
    // Its replacement counts from zero, on top of the baseline.
    assert.equal(total((await g.scrape([a, worker(g, 1, { count: 0 })])).text), 8);
  });

  it('one that dies while asked is counted once', async () => {
    const g = new MetricsGatherer();
    const a = worker(g, 3, { count: 0 });
    await g.scrape([a]);
    const during = g.scrape([a]);
    g.retire(a);
    assert.equal(total((await during).text), 3);
  });
});

describe('MetricsGatherer, a counter not summed across workers', () => {
  it('goes with its worker, as a gauge does: the baseline keeps only what is summed', async () => {
    const g = new MetricsGatherer();
    const registry = new Registry();
    new Counter({ name: 'x_peak_total', help: 'x', aggregator: 'max', registers: [registry] }).inc(5);
    const w = {
      isConnected: () => true,
      send: (m: { id: number }) => (void registry.getMetricsAsJSON().then((series) => g.answered(m.id, series)), true),
    } as unknown as Worker;
    assert.match((await g.scrape([w])).text, /^x_peak_total 5$/m);
    g.retire(w);
    assert.doesNotMatch((await g.scrape([])).text, /^x_peak_total/m);
  });
});

describe('MetricsGatherer, a malformed answer', () => {
  it('is no baseline: later scrapes still sum', async () => {
    const g = new MetricsGatherer();
    const bad = {
      isConnected: () => true,
      send: (m: { id: number }) => (setImmediate(() => g.answered(m.id, [null, { name: 'x_requests_total', type: 'counter', values: 'no' }])), true),
    } as unknown as Worker;
    await g.scrape([bad]).catch(() => {});
    g.retire(bad);
    assert.equal(total((await g.scrape([worker(g, 3, { count: 0 })])).text), 3);
  });
});
