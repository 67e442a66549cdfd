// The bench's reading of the gateway's GC histogram (bench/gc.ts): parsing
// prom-client's text, differences over a run, pauses above a bucket bound,
// and the figures the GC pauses section of bench/RESULTS.md shows.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { combineGc, gcBounds, gcFigures, parseGc, pausesAbove } from '../bench/gc.js';
import { renderReport, type RunResult } from '../bench/report.js';
import { GC_BUCKETS, Metrics } from '../src/metrics/metrics.js';

const BOUNDS = ['0.0005', '0.001', '0.002', '0.005', '0.01', '0.05', '0.1'];

/** The histogram as prom-client exposes it, for the kinds given: cumulative bucket counts in BOUNDS order, then +Inf = count. */
function exposition(kinds: Record<string, { buckets: number[]; count: number; sum: number }>): string {
  const lines = ['# HELP switchyard_nodejs_gc_duration_seconds Garbage collection duration by kind.', '# TYPE switchyard_nodejs_gc_duration_seconds histogram'];
  for (const [kind, k] of Object.entries(kinds)) {
    BOUNDS.forEach((le, i) => lines.push(`switchyard_nodejs_gc_duration_seconds_bucket{le="${le}",kind="${kind}"} ${k.buckets[i]}`));
    lines.push(`switchyard_nodejs_gc_duration_seconds_bucket{le="+Inf",kind="${kind}"} ${k.count}`);
    lines.push(`switchyard_nodejs_gc_duration_seconds_sum{kind="${kind}"} ${k.sum}`);
    lines.push(`switchyard_nodejs_gc_duration_seconds_count{kind="${kind}"} ${k.count}`);
  }
  return `${lines.join('\n')}\nswitchyard_other_metric 3\n`;
}

const before = parseGc(exposition({ minor: { buckets: [90, 98, 100, 100, 100, 100, 100], count: 100, sum: 0.04 } }));
const after = parseGc(
  exposition({
    // 100 more minor GCs: 5 of 1–2 ms, 5 of 2–5 ms; one major of 10–50 ms and one above 100 ms.
    minor: { buckets: [170, 188, 195, 200, 200, 200, 200], count: 200, sum: 0.1 },
    major: { buckets: [0, 0, 0, 0, 0, 1, 1], count: 2, sum: 0.15 },
  }),
);

describe('bench GC histogram', () => {
  it('parses every kind, its buckets, sum and count; a kind with no series reads as zeros', () => {
    assert.equal(before.minor.count, 100);
    assert.equal(before.minor.sum, 0.04);
    assert.equal(before.minor.buckets.get(0.001), 98);
    assert.equal(before.minor.buckets.size, BOUNDS.length, '+Inf is the count, not a bucket');
    assert.deepEqual(before.major, { count: 0, sum: 0, buckets: new Map() });
    assert.deepEqual(gcBounds(before), BOUNDS.map(Number));
  });

  it('takes a run as after − before and sums runs', () => {
    const run = combineGc(after, before, -1);
    assert.equal(run.minor.count, 100);
    assert.ok(Math.abs(run.minor.sum - 0.06) < 1e-12);
    assert.equal(run.minor.buckets.get(0.001), 90);
    assert.equal(run.major.count, 2);
    const two = combineGc(run, run);
    assert.equal(two.minor.count, 200);
    assert.equal(two.major.buckets.get(0.05), 2);
  });

  it('counts pauses above a bucket bound over all kinds, their time at least at bucket lower bounds', () => {
    const run = combineGc(after, before, -1);
    // Above 1 ms: 10 minor (5 at ≥ 1 ms, 5 at ≥ 2 ms) and both majors (≥ 10 ms, ≥ 100 ms).
    const above1 = pausesAbove(run, 0.001);
    assert.equal(above1?.count, 12);
    assert.ok(Math.abs((above1?.minSeconds ?? 0) - (5 * 0.001 + 5 * 0.002 + 0.01 + 0.1)) < 1e-12, String(above1?.minSeconds));
    assert.deepEqual(pausesAbove(run, 0.01), { count: 2, minSeconds: 0.11 });
    assert.equal(pausesAbove(run, 0.003), undefined, 'not a bound: the histogram cannot tell');
  });

  it('gives per-1,000, µs per request, share of wall time and the >1 ms pauses in requests’ time', () => {
    const run = combineGc(after, before, -1);
    // 1,000 requests in 2 s: 2 ms a request.
    const f = gcFigures({ histogram: run, seconds: 2 }, 1000);
    assert.equal(f.perThousand.minor, 100);
    assert.equal(f.perThousand.major, 2);
    assert.ok(Math.abs(f.usPerRequest - 210) < 1e-9, String(f.usPerRequest));
    assert.ok(Math.abs(f.wallPercent - 10.5) < 1e-9, String(f.wallPercent));
    assert.equal(f.above10ms?.count, 2);
    assert.ok(Math.abs((f.above1msInRequests ?? 0) - 0.125 / 0.002) < 1e-9, String(f.above1msInRequests));
  });

  it('reads the buckets the gateway registers, fine enough to tell 1 ms and 10 ms pauses apart', async () => {
    const metrics = new Metrics();
    // The series appear with the first GC: allocate until one has been observed.
    let h = parseGc(await metrics.registry.metrics());
    const keep: unknown[] = [];
    for (let i = 0; i < 200 && gcBounds(h).length === 0; i++) {
      for (let j = 0; j < 50_000; j++) keep.push({ j });
      keep.length = 0;
      await new Promise((r) => setImmediate(r));
      h = parseGc(await metrics.registry.metrics());
    }
    assert.deepEqual(gcBounds(h), GC_BUCKETS);
    for (const bound of [0.001, 0.002, 0.01]) assert.ok(GC_BUCKETS.includes(bound), `${bound} s`);
    for (const byDefault of [0.001, 0.01, 0.1, 1, 2, 5]) assert.ok(GC_BUCKETS.includes(byDefault), `prom-client's default ${byDefault} s kept`);
  });
});

describe('bench report, GC pauses section', () => {
  const chat1 = (p99: number, gc?: RunResult['gc']): RunResult => ({
    requests: 1000, errors: 0, errorDetail: '', rps: 500, latency: { p50: 100, p99 }, coreBusy: [50, 50], serverCoreOther: 0, upstreamCpuUsPerRequest: 10, gc,
  });
  const report = (gc?: RunResult['gc']): string =>
    renderReport(
      {
        date: 'now', machine: [], pinning: [], load: '', gatewayStatus: '', variants: [], floorStatus: '',
        targets: [
          { name: 'direct', runs: { chat1: chat1(200) } },
          { name: 'gateway', runs: { chat1: chat1(1500, gc) } },
        ],
      },
      '## Profile',
    );

  it('shows each gateway run with GC figures: per 1,000 by kind, pauses above 1 and 10 ms, and the >1 ms pauses next to the added p99', () => {
    const md = report({ histogram: combineGc(after, before, -1), seconds: 2 });
    assert.match(md, /^## GC pauses$/m);
    assert.match(md, /bounds 0.5 ms, 1 ms, 2 ms, 5 ms, 10 ms, 50 ms, 100 ms\)/);
    assert.match(md, /^\| gateway \| chat, 1 connection \| 1,000 \| 100\.0 \/ 2\.0 \/ 0\.0 \/ 0\.0 \| 210\.0 \| 10\.5 % \| 12 \(≥ 125\.00 ms\) \| 2 \(≥ 110\.00 ms\) \| \+1,300 µs \| ≥ 62\.5 \(12\.0 per 1,000\) \|$/m);
  });

  it('shows no time for no pauses', () => {
    const md = report({ histogram: before, seconds: 2 });
    assert.match(md, /^\| gateway \| chat, 1 connection \| 1,000 \| 100\.0 \/ 0\.0 \/ 0\.0 \/ 0\.0 \| 40\.0 \| 2\.0 % \| 2 \(≥ 2,000 µs\) \| 0 \| \+1,300 µs \| ≥ 1\.0 \(2\.0 per 1,000\) \|$/m);
  });

  it('leaves the section out when no run read the GC histogram', () => {
    assert.doesNotMatch(report(), /## GC pauses/);
  });
});
