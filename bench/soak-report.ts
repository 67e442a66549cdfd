/**
 * What the soak (bench/soak.ts) prints: one row per interval (RSS, heap,
 * event-loop delay, CPU), the outcomes per lane, and the verdict on RSS.
 */

/** The gateway at the end of one interval of the load. */
export interface SoakRow {
  /** Requests finished so far. */
  requests: number;
  /** Since the load began. */
  seconds: number;
  /** Requests per second over the interval. */
  rps: number;
  /** VmRSS of the gateway process now, and the highest sampled during the interval. */
  rssMiB: number;
  rssPeakMiB: number;
  /** From its /metrics (process.memoryUsage): V8 heap used, and memory outside it (Buffers, native). */
  heapUsedMiB: number | undefined;
  externalMiB: number | undefined;
  /** Major (mark-sweep-compact) GCs of the gateway since it started, from its /metrics. */
  majorGcs: number | undefined;
  /** Event-loop delay over the interval, ms: prom-client's monitorEventLoopDelay (reset at each scrape), less its timer's period. */
  loopP50Ms: number | undefined;
  loopP99Ms: number | undefined;
  loopMaxMs: number | undefined;
  /** CPU of the gateway process over the interval, all threads; 100 = one core. */
  cpuPercent: number;
}

export const ROW_HEAD = [
  '| # | requests | s | req/s | RSS MiB | RSS peak MiB | heap used MiB | external MiB | major GCs | loop delay p50 / p99 / max ms | CPU % |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
].join('\n');

const fixed = (v: number | undefined, digits: number): string => (v === undefined || Number.isNaN(v) ? '–' : v.toFixed(digits));

/** Row `n` of the table (from 1); the rows of the warm-up are marked. */
export function rowLine(r: SoakRow, n: number, warmupRows: number): string {
  const mark = n <= warmupRows ? ' warm-up' : '';
  return `| ${n}${mark} | ${r.requests.toLocaleString('en')} | ${r.seconds.toFixed(0)} | ${r.rps.toFixed(0)} | ${r.rssMiB.toFixed(1)} | ${r.rssPeakMiB.toFixed(1)} | ${fixed(r.heapUsedMiB, 1)} | ${fixed(r.externalMiB, 1)} | ${fixed(r.majorGcs, 0)} | ${fixed(r.loopP50Ms, 1)} / ${fixed(r.loopP99Ms, 1)} / ${fixed(r.loopMaxMs, 1)} | ${r.cpuPercent.toFixed(0)} |`;
}

export interface Verdict {
  outcome: 'flat' | 'not flat' | 'undecided';
  text: string;
}

/** The gateway's VmRSS at one moment of the load. */
export interface RssSample {
  /** Since the load began. */
  seconds: number;
  rssMiB: number;
}

/** Fewer major GCs after the warm-up than this decide nothing: a line through a saw of a few teeth leans with where it was cut. */
export const MIN_GC_CYCLES = 5;

/**
 * RSS after the warm-up flat within ±tolerance: the least-squares line
 * through the samples taken after `fromSeconds` (the end of the warm-up)
 * moves less than ±tolerance between its first and its last sample. A trend,
 * not any two samples: V8 lets garbage gather in the old generation until a
 * major GC, so RSS saws up and down by tens of MiB with nothing retained
 * (heap used falls back each time); a leak shows as the whole saw climbing.
 * A trend needs several teeth of the saw: with fewer than MIN_GC_CYCLES major
 * GCs after the warm-up (`majorGcs`), nothing is decided.
 */
export function rssVerdict(samples: readonly RssSample[], fromSeconds: number, majorGcs: number, tolerance = 0.1): Verdict {
  const after = samples.filter((s) => s.seconds >= fromSeconds);
  const band = `±${(tolerance * 100).toFixed(0)} %`;
  if (!(majorGcs >= MIN_GC_CYCLES) || after.length < 2) {
    return {
      outcome: 'undecided',
      text: `undecided: ${Number.isNaN(majorGcs) ? 'no' : majorGcs} major GC(s) after the warm-up, fewer than the ${MIN_GC_CYCLES} that RSS's saw needs to show a trend; run more requests`,
    };
  }
  const n = after.length;
  const meanT = after.reduce((a, s) => a + s.seconds, 0) / n;
  const meanR = after.reduce((a, s) => a + s.rssMiB, 0) / n;
  let num = 0;
  let den = 0;
  for (const s of after) {
    num += (s.seconds - meanT) * (s.rssMiB - meanR);
    den += (s.seconds - meanT) ** 2;
  }
  const slope = den === 0 ? 0 : num / den;
  const first = after[0]!.seconds;
  const last = after[n - 1]!.seconds;
  const start = meanR + slope * (first - meanT);
  const end = meanR + slope * (last - meanT);
  const drift = end / start - 1;
  const rss = after.map((s) => s.rssMiB);
  const flat = Math.abs(drift) <= tolerance;
  const signed = (v: number): string => `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)} %`;
  return {
    outcome: flat ? 'flat' : 'not flat',
    text:
      `${flat ? `flat within ${band}` : `NOT flat within ${band}`}: the least-squares line through ${n} samples ` +
      `(${first.toFixed(0)}–${last.toFixed(0)} s, ${majorGcs} major GCs) goes from ${start.toFixed(1)} to ${end.toFixed(1)} MiB (${signed(drift)}); ` +
      `samples between ${Math.min(...rss).toFixed(1)} and ${Math.max(...rss).toFixed(1)} MiB, mean ${meanR.toFixed(1)}`,
  };
}

/** Outcomes of one lane: how many of each, and how many were not among those expected. */
export interface LaneTally {
  name: string;
  about: string;
  expected: readonly string[];
  outcomes: Map<string, number>;
}

export function unexpected(t: LaneTally): number {
  let n = 0;
  for (const [outcome, count] of t.outcomes) if (!t.expected.includes(outcome)) n += count;
  return n;
}

export function outcomeTable(tallies: readonly LaneTally[]): string {
  const lines = ['| lane | what | requests | outcomes | unexpected |', '| --- | --- | ---: | --- | ---: |'];
  for (const t of tallies) {
    const total = [...t.outcomes.values()].reduce((a, b) => a + b, 0);
    const outcomes = [...t.outcomes].sort((a, b) => b[1] - a[1]).map(([o, c]) => `${o}: ${c.toLocaleString('en')}`).join(', ');
    lines.push(`| ${t.name} | ${t.about} | ${total.toLocaleString('en')} | ${outcomes} | ${unexpected(t)} |`);
  }
  return lines.join('\n');
}
