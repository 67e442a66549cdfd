// The hot-path counter and histograms against prom-client's own: the same observations must give
// the same exposition, text and JSON (the cluster sums the JSON), so a scrape cannot tell them apart.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { FastCounter, FastHistogram } from './series.js';

const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LABELS = ['endpoint', 'status'] as const;

function pair() {
  const mine = new Registry();
  const theirs = new Registry();
  return {
    mine,
    theirs,
    h: new FastHistogram('t_seconds', 'help text', LABELS, BOUNDS, mine),
    c: new FastCounter('t_total', 'count help', LABELS, mine),
    ph: new Histogram({ name: 't_seconds', help: 'help text', labelNames: LABELS, buckets: BOUNDS, registers: [theirs] }),
    pc: new Counter({ name: 't_total', help: 'count help', labelNames: LABELS, registers: [theirs] }),
  };
}

const observation = fc.record({
  endpoint: fc.constantFrom('chat', 'embeddings', 'proxy'),
  status: fc.constantFrom('200', '429', '500'),
  // Bounds themselves included: a value on a bound counts in that bucket (le is "less or equal").
  value: fc.oneof(fc.constantFrom(...BOUNDS, 0, 100), fc.double({ min: 0, max: 20, noNaN: true })),
});

describe('fast metrics: exposition equal to prom-client for the same observations', () => {
  it('text and JSON, any observations', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (obs) => {
        const p = pair();
        for (const o of obs) {
          const labels = { endpoint: o.endpoint, status: o.status };
          p.h.labels(labels).observe(o.value);
          p.c.labels(labels).inc();
          p.ph.labels(labels).observe(o.value);
          p.pc.labels(labels).inc();
        }
        assert.equal(await p.mine.metrics(), await p.theirs.metrics());
        const json = (r: Registry) => r.getMetricsAsJSON().then((m) => JSON.parse(JSON.stringify(m)));
        // What the cluster's aggregation reads of each value (prom-client adds an empty exemplar, and writes a bucket's le as a number).
        const norm = (m: { values: { labels: Record<string, unknown>; value: number; metricName?: string }[] }[]) =>
          m.map((x) => ({
            ...x,
            values: x.values.map((v) => ({ value: v.value, metricName: v.metricName, labels: Object.fromEntries(Object.entries(v.labels).map(([k, l]) => [k, String(l)])) })),
          }));
        assert.deepEqual(norm(await json(p.mine)), norm(await json(p.theirs)));
      }),
      { numRuns: 60 },
    );
  });

  it('sums across registries as the cluster does', async () => {
    const a = pair();
    const b = pair();
    a.h.labels({ endpoint: 'chat', status: '200' }).observe(0.003);
    b.h.labels({ endpoint: 'chat', status: '200' }).observe(0.2);
    b.c.labels({ endpoint: 'chat', status: '200' }).inc(2);
    const summed = await AggregatorRegistry.aggregate([await a.mine.getMetricsAsJSON(), await b.mine.getMetricsAsJSON()]).metrics();
    assert.match(summed, /t_seconds_count\{endpoint="chat",status="200"\} 2/);
    assert.match(summed, /t_seconds_bucket\{le="0.005",endpoint="chat",status="200"\} 1/);
    assert.match(summed, /t_seconds_bucket\{le="0.25",endpoint="chat",status="200"\} 2/);
    assert.match(summed, /t_total\{endpoint="chat",status="200"\} 2/);
  });

  it('a series looked up twice is the same series; reset empties', async () => {
    const p = pair();
    assert.equal(p.h.labels({ endpoint: 'chat', status: '200' }), p.h.labels({ status: '200', endpoint: 'chat' }));
    p.h.labels({ endpoint: 'chat', status: '200' }).observe(1);
    p.h.reset();
    assert.doesNotMatch(await p.mine.metrics(), /t_seconds_count/);
  });
});
