/**
 * The bench's figures as Markdown: printed after every run and written to
 * bench/RESULTS.md, whose hand-written Profile section is carried over.
 */
import type { BatchFigure } from './batch.js';
import { gcBounds, gcFigures, GC_KINDS, type GcHistogram } from './gc.js';
import type { Percentiles } from './ttfb.js';

/** The gateway variants (bench/variants.ts); `gateway` is the defaults, the headline. */
export type GatewayName = 'gateway' | 'gateway, logs off' | 'gateway, 2 workers' | 'gateway, Redis rate limit' | 'gateway, inline config' | 'gateway, 3 input checks' | 'gateway at baseline';
export type TargetName = 'direct' | 'nginx' | 'node floor' | GatewayName;
export type ScenarioId = 'chat16' | 'chat1' | 'embed16' | 'stream';

export interface RunResult {
  requests: number;
  errors: number;
  errorDetail: string;
  rps: number;
  /** wrk: latency of a request; stream: time to the end of the stream (µs). */
  latency: Percentiles;
  /** stream only: time to first body byte (µs). */
  ttfb?: Percentiles;
  /** Busy % of each core over the run. */
  coreBusy: number[];
  /** wrk's own CPU as % of its run time (wrk runs only). */
  loadCpuPercent?: number;
  /** % of the server core busy outside the bench's servers: someone else's work, or kernel time charged to no process. */
  serverCoreOther: number;
  /** Measured for the proxies only (their process tree on the proxy core). */
  cpuUsPerRequest?: number;
  rssPeakMiB?: number;
  /** CPU µs per request of the upstream process serving the run (it shares the proxy's core). */
  upstreamCpuUsPerRequest: number;
  /** Gateways, chat scenarios: their GCs over the rounds (bench/gc.ts) and the rounds' wall time (wrk's runs), s. */
  gc?: { histogram: GcHistogram; seconds: number };
}

export interface TargetResult {
  name: TargetName;
  runs: Partial<Record<ScenarioId, RunResult>>;
  /** VmHWM of the tree after all its runs: peak RSS over its whole life. */
  vmHwmMiB?: number;
  /** Every request it served under load, warm-ups included (per-request figures of a CPU profile). */
  servedRequests?: number;
  /** Why its runs stopped early (or never started); its figures are then missing. */
  failure?: string;
  /** Gateways: whether they logged what they answered (undefined: could not be read). */
  logs?: LogFigures;
}

export interface LogFigures {
  /** Requests the bench got answers to: servedRequests and the checks before the load. */
  answered: number;
  /** Rows of request_logs once the gateway had stopped. */
  rows?: number;
  /** switchyard_log_records_total{outcome="dropped"} after the load (absent with request logs off). */
  dropped?: number;
  /** Records written to the spill file because the store fell behind (replayed later, not lost). */
  spilled?: number;
}

export interface Report {
  date: string;
  machine: string[];
  pinning: string[];
  load: string;
  gatewayStatus: string;
  /** What each gateway variant changes. */
  variants: string[];
  /** How the node floor was run. */
  floorStatus: string;
  targets: TargetResult[];
  /** The in-process micro-benchmark of prompt rendering (bench/prompt-render.ts); absent when it failed. */
  promptRender?: { templateBytes: number; usPerRender: number };
  /** The gateway-managed batch (bench/batch.ts); absent when not run (profiling, not built). */
  batch?: BatchResult;
}

export type BatchResult = BatchFigure | { failure: string };

const SCENARIO_LABEL: Record<ScenarioId, string> = {
  chat16: 'chat, 16 connections',
  chat1: 'chat, 1 connection',
  embed16: 'embeddings, 16 connections',
  stream: 'streaming chat, sequential',
};

const DASH = '—';

/** Row order of the per-target tables. */
const TARGETS: readonly TargetName[] = ['direct', 'nginx', 'node floor', 'gateway'];
const PROXIES: readonly TargetName[] = ['nginx', 'node floor', 'gateway'];
const GATEWAYS: readonly GatewayName[] = ['gateway', 'gateway, logs off', 'gateway, 2 workers', 'gateway, Redis rate limit', 'gateway, inline config', 'gateway, 3 input checks', 'gateway at baseline'];
const LOGS_OFF: GatewayName = 'gateway, logs off';
const REDIS_LIMITED: GatewayName = 'gateway, Redis rate limit';
const BASELINE: GatewayName = 'gateway at baseline';
const CHECKED: GatewayName = 'gateway, 3 input checks';
/** The checks variant's routing without its checks. */
const INLINE: GatewayName = 'gateway, inline config';

/** Busy % of the load core from which the load side (wrk, or whatever else took that core) may have set the pace. */
const LOAD_BOUND = 90;

function int(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** µs below 10 ms, ms with two decimals above. */
function time(us: number | undefined): string {
  if (us === undefined || Number.isNaN(us)) return DASH;
  return Math.abs(us) < 10_000 ? `${int(us)} µs` : `${(us / 1000).toFixed(2)} ms`;
}

function added(us: number | undefined): string {
  if (us === undefined || Number.isNaN(us)) return DASH;
  return `${us >= 0 ? '+' : '−'}${time(Math.abs(us))}`;
}

/** A percentage with one decimal, signed when `signed` (a cost can come out negative within noise). */
function percent(v: number, signed = false): string {
  return `${signed && v > 0 ? '+' : v < 0 ? '−' : ''}${Math.abs(v).toFixed(1)} %`;
}

function verdict(ok: boolean | undefined): string {
  return ok === undefined ? 'not measured' : ok ? '✅ met' : '❌ missed';
}

/**
 * The verdict on a ratio whose base was load-bound (¹): the base is then a
 * floor, and the ratio a bound on one side only, which decides a miss but
 * not a pass (`ok`: the figure as measured would pass).
 */
function boundVerdict(ok: boolean | undefined, baseLoadBound: boolean): string {
  return ok && baseLoadBound ? 'undecided (base load-bound, see ¹ under Throughput)' : verdict(ok);
}

function table(header: string[], rows: string[][]): string {
  const align = header.map((_, i) => (i === 0 ? '---' : '---:'));
  return [header, align, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

export function renderReport(r: Report, profileSection: string): string {
  const target = (name: TargetName): TargetResult | undefined => r.targets.find((t) => t.name === name);
  const batchFigure = r.batch && !('failure' in r.batch) ? r.batch : undefined;
  const run = (name: TargetName, s: ScenarioId): RunResult | undefined => target(name)?.runs[s];
  const diff = (name: TargetName, s: ScenarioId, pick: (x: RunResult) => number | undefined): number | undefined => {
    const a = run(name, s);
    const b = run('direct', s);
    const va = a && pick(a);
    const vb = b && pick(b);
    return va === undefined || vb === undefined ? undefined : va - vb;
  };

  const has = (v: number | undefined): v is number => v !== undefined && Number.isFinite(v);
  const loadBound = (name: TargetName, s: ScenarioId): boolean => (run(name, s)?.coreBusy[1] ?? 0) >= LOAD_BOUND;
  /** The figures the targets are about, for any proxy (the verdicts judge the gateway's). */
  const figures = (name: TargetName) => ({
    rps: run(name, 'chat16')?.rps,
    p50: diff(name, 'chat1', (x) => x.latency.p50),
    p99: diff(name, 'chat1', (x) => x.latency.p99),
    ttfb: diff(name, 'stream', (x) => x.ttfb?.p50),
    rss: Math.max(...Object.values(target(name)?.runs ?? {}).map((x) => x.rssPeakMiB ?? NaN)),
  });
  const gw = figures('gateway');
  const fl = figures('node floor');
  const rpsText = (v: number | undefined): string => (has(v) ? `${int(v)} req/s` : DASH);
  const rssText = (v: number | undefined): string => (has(v) ? `${v.toFixed(1)} MiB` : DASH);
  const targets = table(
    ['target', 'gateway measured', 'verdict', 'node floor'],
    [
      ['≥ 10,000 req/s, non-streaming chat, 16 connections, one core', rpsText(gw.rps), verdict(has(gw.rps) ? gw.rps >= 10_000 : undefined), rpsText(fl.rps)],
      ['≤ +100 µs p50 over direct, 1 connection', added(gw.p50), verdict(has(gw.p50) ? gw.p50 <= 100 : undefined), added(fl.p50)],
      ['≤ +1 ms p99 over direct, 1 connection', added(gw.p99), verdict(has(gw.p99) ? gw.p99 <= 1000 : undefined), added(fl.p99)],
      ['stream first byte delayed ≤ 1 ms (p50)', added(gw.ttfb), verdict(has(gw.ttfb) ? gw.ttfb <= 1000 : undefined), added(fl.ttfb)],
      ['RSS < 120 MiB under load (peak)', rssText(gw.rss), verdict(has(gw.rss) ? gw.rss < 120 : undefined), rssText(fl.rss)],
    ],
  );

  // What request logging and a Redis-backed rate limit cost, and whether the logging gateways logged everything.
  const onRps = run('gateway', 'chat16')?.rps;
  const offRps = run(LOGS_OFF, 'chat16')?.rps;
  const limitedRps = run(REDIS_LIMITED, 'chat16')?.rps;
  const logShare = has(onRps) && has(offRps) ? (100 * onRps) / offRps : undefined;
  const redisCost = has(onRps) && has(limitedRps) ? 100 * (1 - limitedRps / onRps) : undefined;
  const checkedRps = run(CHECKED, 'chat16')?.rps;
  const inlineRps = run(INLINE, 'chat16')?.rps;
  // The checks against the same config without them; the config's own cost (inline instead of headers) beside it.
  const checksCost = has(inlineRps) && has(checkedRps) ? 100 * (1 - checkedRps / inlineRps) : undefined;
  const inlineCost = has(onRps) && has(inlineRps) ? 100 * (1 - inlineRps / onRps) : undefined;
  // This code against another build of the gateway (BENCH_BASELINE), measured in the same rounds.
  const baselineRps = run(BASELINE, 'chat16')?.rps;
  const baselineShare = has(onRps) && has(baselineRps) ? (100 * onRps) / baselineRps : undefined;
  const baselineP50 = run(BASELINE, 'chat1')?.latency.p50;
  const p50 = run('gateway', 'chat1')?.latency.p50;
  const baselineRows = target(BASELINE)
    ? [
        [
          'this code against the baseline build: chat, 16 connections, req/s ≥ 95 % of the baseline’s (no worse within run-to-run noise)',
          has(baselineShare) ? `${percent(baselineShare)} (${int(onRps ?? 0)} / ${int(baselineRps ?? 0)} req/s)` : DASH,
          boundVerdict(has(baselineShare) ? baselineShare >= 95 : undefined, loadBound(BASELINE, 'chat16')),
        ],
        [
          'this code against the baseline build: chat p50, 1 connection, ≤ +50 µs',
          has(p50) && has(baselineP50) ? `${added(p50 - baselineP50)} (${time(p50)} vs ${time(baselineP50)})` : DASH,
          verdict(has(p50) && has(baselineP50) ? p50 - baselineP50 <= 50 : undefined),
        ],
      ]
    : [];
  const logged = r.targets.flatMap((t) => (t.logs ? [{ name: t.name, ...t.logs }] : []));
  const withDropped = logged.filter((l) => l.dropped !== undefined);
  const withRows = logged.filter((l) => l.rows !== undefined);
  const rowsOk = (l: (typeof logged)[number]): boolean => (l.name === LOGS_OFF ? l.rows === 0 : (l.rows ?? 0) >= l.answered);
  const costs = table(
    ['target', 'measured', 'verdict'],
    [
      [
        'request logging: chat, 16 connections, req/s with logs on ≥ 90 % of logs off',
        has(logShare) ? `${loadBound(LOGS_OFF, 'chat16') ? '≤ ' : ''}${percent(logShare)} (${int(onRps ?? 0)} / ${int(offRps ?? 0)} req/s)` : DASH,
        boundVerdict(has(logShare) ? logShare >= 90 : undefined, loadBound(LOGS_OFF, 'chat16')),
      ],
      [
        'Redis-backed rate-limit check: chat, 16 connections, req/s cost < 10 % (logs on both)',
        has(redisCost) ? `${loadBound('gateway', 'chat16') ? '≥ ' : ''}${percent(redisCost, true)} (${int(limitedRps ?? 0)} vs ${int(onRps ?? 0)} req/s)` : DASH,
        boundVerdict(has(redisCost) ? redisCost < 10 : undefined, loadBound('gateway', 'chat16')),
      ],
      [
        'log records dropped (`switchyard_log_records_total{outcome="dropped"}` after the load) = 0',
        withDropped.length ? withDropped.map((l) => `${l.name}: ${int(l.dropped ?? 0)}`).join('; ') : DASH,
        verdict(withDropped.length ? withDropped.every((l) => l.dropped === 0) : undefined),
      ],
      [
        'request_logs rows after the run ≥ requests answered (none with logs off)',
        withRows.length ? withRows.map((l) => `${l.name}: ${int(l.rows ?? 0)} / ${int(l.answered)}`).join('; ') : DASH,
        verdict(withRows.length ? withRows.every(rowsOk) : undefined),
      ],
      [
        'three built-in input checks on every request (input_guardrails of an inline config, against the same config without them): chat, 16 connections, req/s cost < 10 %',
        has(checksCost) ? `${loadBound(INLINE, 'chat16') ? '≥ ' : ''}${percent(checksCost, true)} (${int(checkedRps ?? 0)} vs ${int(inlineRps ?? 0)} req/s)` : DASH,
        boundVerdict(has(checksCost) ? checksCost < 10 : undefined, loadBound(INLINE, 'chat16')),
      ],
      [
        'routing by an inline x-gateway-config instead of headers (no target: what the row above starts from): chat, 16 connections, req/s cost',
        has(inlineCost) ? `${percent(inlineCost, true)} (${int(inlineRps ?? 0)} vs ${int(onRps ?? 0)} req/s)` : DASH,
        DASH,
      ],
      [
        `render of a 1 KB prompt template (chat, ${r.promptRender ? `${int(r.promptRender.templateBytes)} bytes, ` : ''}variables, sections, a partial; in-process): < 50 µs per render`,
        r.promptRender ? `${r.promptRender.usPerRender.toFixed(2)} µs` : DASH,
        verdict(r.promptRender ? r.promptRender.usPerRender < 50 : undefined),
      ],
      [
        `gateway-managed batch of ${int(batchFigure?.lines ?? 50_000)} chat lines (upload, validation, every line through the pipeline to nginx's fixed answer, output file; the gateway on the server core, its log writer on the load core): ≥ 1,000 lines/s and peak RSS < 200 MiB`,
        batchFigure
          ? `${int(batchFigure.linesPerSecond)} lines/s (${batchFigure.seconds.toFixed(1)} s), ${int(batchFigure.rssPeakMiB)} MiB, ${int(batchFigure.cpuUsPerLine)} CPU µs per line`
          : DASH,
        verdict(batchFigure ? batchFigure.linesPerSecond >= 1000 && batchFigure.rssPeakMiB < 200 : undefined),
      ],
      ...baselineRows,
    ],
  );

  const variantFigures = table(
    ['variant', 'chat16 req/s', '% of gateway', 'embed16 req/s', '% of gateway', 'chat1 p50', 'chat1 p99', 'stream TTFB p50', 'chat16 CPU µs/req', 'RSS peak'],
    GATEWAYS.filter(target).map((name) => {
      const rps = (s: ScenarioId): string => {
        const v = run(name, s)?.rps;
        return v === undefined ? DASH : `${loadBound(name, s) ? '≥ ' : ''}${int(v)}`;
      };
      const share = (s: ScenarioId): string => {
        const v = run(name, s)?.rps;
        const base = run('gateway', s)?.rps;
        return v === undefined || !base ? DASH : percent((100 * v) / base);
      };
      const cpu = run(name, 'chat16')?.cpuUsPerRequest;
      const rss = Math.max(...Object.values(target(name)?.runs ?? {}).map((x) => x.rssPeakMiB ?? NaN));
      return [
        name,
        rps('chat16'),
        share('chat16'),
        rps('embed16'),
        share('embed16'),
        time(run(name, 'chat1')?.latency.p50),
        time(run(name, 'chat1')?.latency.p99),
        time(run(name, 'stream')?.ttfb?.p50),
        cpu === undefined ? DASH : cpu.toFixed(1),
        rssText(rss),
      ];
    }),
  );
  const count = (v: number | undefined): string => (v === undefined ? DASH : int(v));
  const variantLogs = table(
    ['variant', 'requests answered', 'request_logs rows', 'log records dropped', 'log records spilled'],
    logged.map((l) => [l.name, int(l.answered), count(l.rows), count(l.dropped), count(l.spilled)]),
  );

  const gwChat = run('gateway', 'chat16');
  // The gateway's "one core" also ran the upstream: say how much of it that took.
  const upstreamShare = gwChat
    ? `\nIn the 16-connection chat run the upstream took ${((gwChat.upstreamCpuUsPerRequest * gwChat.rps) / 1e4).toFixed(0)} % of the gateway's core (0).\n`
    : '';

  const throughput = table(
    ['scenario', 'direct upstream', 'nginx', 'node floor', 'gateway', 'gateway / nginx', 'gateway / node floor'],
    (['chat16', 'embed16'] as const).map((s) => {
      const rps = (name: TargetName): string => {
        const x = run(name, s);
        if (!x) return DASH;
        return loadBound(name, s) ? `≥ ${int(x.rps)} ¹` : int(x.rps);
      };
      const g = run('gateway', s)?.rps;
      const ratio = (name: TargetName): string => {
        const base = run(name, s)?.rps;
        // A load-bound base figure is a floor, so the ratio is a ceiling.
        return base && g ? `${loadBound(name, s) ? '≤ ' : ''}${((100 * g) / base).toFixed(0)} %` : DASH;
      };
      return [SCENARIO_LABEL[s], ...TARGETS.map(rps), ratio('nginx'), ratio('node floor')];
    }),
  );

  const latency = table(
    ['target', 'p50', 'p99', 'added p50', 'added p99'],
    TARGETS.map((name) => {
      const x = run(name, 'chat1');
      const isDirect = name === 'direct';
      return [
        name,
        time(x?.latency.p50),
        time(x?.latency.p99),
        isDirect ? DASH : added(diff(name, 'chat1', (y) => y.latency.p50)),
        isDirect ? DASH : added(diff(name, 'chat1', (y) => y.latency.p99)),
      ];
    }),
  );

  const streaming = table(
    ['target', 'TTFB p50', 'TTFB p99', 'total p50', 'total p99', 'added TTFB p50 / p99', 'added total p50 / p99'],
    TARGETS.map((name) => {
      const x = run(name, 'stream');
      const pair = (pick: (y: RunResult) => Percentiles | undefined): string =>
        name === 'direct'
          ? DASH
          : `${added(diff(name, 'stream', (y) => pick(y)?.p50))} / ${added(diff(name, 'stream', (y) => pick(y)?.p99))}`;
      return [
        name,
        time(x?.ttfb?.p50),
        time(x?.ttfb?.p99),
        time(x?.latency.p50),
        time(x?.latency.p99),
        pair((y) => y.ttfb),
        pair((y) => y.latency),
      ];
    }),
  );

  const scenarios = Object.keys(SCENARIO_LABEL) as ScenarioId[];
  const cpuOf = (name: TargetName, s: ScenarioId): number | undefined => run(name, s)?.cpuUsPerRequest;
  const cost = table(
    [
      'scenario',
      ...PROXIES.map((n) => `${n} CPU µs/req`),
      'gateway − node floor',
      ...PROXIES.map((n) => `${n} RSS peak`),
    ],
    [
      ...scenarios.map((s) => {
        const cpu = (name: TargetName): string => {
          const v = cpuOf(name, s);
          return v === undefined ? DASH : v.toFixed(1);
        };
        const g = cpuOf('gateway', s);
        const f = cpuOf('node floor', s);
        const own = g === undefined || f === undefined ? DASH : `${g >= f ? '+' : '−'}${Math.abs(g - f).toFixed(1)}`;
        const rss = (name: TargetName): string => {
          const v = run(name, s)?.rssPeakMiB;
          return v === undefined ? DASH : `${v.toFixed(1)} MiB`;
        };
        return [SCENARIO_LABEL[s], ...PROXIES.map(cpu), own, ...PROXIES.map(rss)];
      }),
      ['VmHWM after all runs', ...PROXIES.map(() => ''), '', ...PROXIES.map((n) => {
        const v = target(n)?.vmHwmMiB;
        return v === undefined ? DASH : `${v.toFixed(1)} MiB`;
      })],
    ],
  );

  const details = table(
    ['target', 'scenario', 'requests', 'errors', 'upstream CPU µs/req', 'core 0 busy', 'of which other', 'core 1 busy', 'wrk CPU'],
    r.targets.flatMap((t) =>
      scenarios.flatMap((s) => {
        const x = t.runs[s];
        if (!x) return [];
        const busy = (core: number): string => `${(x.coreBusy[core] ?? 0).toFixed(0)} %`;
        const errors = x.errors ? `${x.errors} (${x.errorDetail})` : '0';
        const other = `${Math.max(0, x.serverCoreOther).toFixed(0)} %`; // below 0 is tick rounding
        const wrk = x.loadCpuPercent === undefined ? DASH : `${x.loadCpuPercent.toFixed(0)} %`;
        return [[t.name, SCENARIO_LABEL[s], int(x.requests), errors, x.upstreamCpuUsPerRequest.toFixed(1), busy(0), other, busy(1), wrk]];
      }),
    ),
  );

  const gcRuns = GATEWAYS.flatMap((name) => (['chat1', 'chat16'] as const).flatMap((s) => {
    const x = run(name, s);
    return x?.gc ? [{ name, s, x, gc: x.gc }] : [];
  }));
  const pauses = (p: { count: number; minSeconds: number } | undefined): string => (!p ? DASH : p.count ? `${int(p.count)} (≥ ${time(p.minSeconds * 1e6)})` : '0');
  const gcTable = table(
    ['variant', 'scenario', 'requests', `GCs per 1,000 req (${GC_KINDS.join(' / ')})`, 'GC µs/req', 'GC % of wall time', 'pauses > 1 ms (time)', 'pauses > 10 ms (time)', 'chat1 p99 added', 'pauses > 1 ms in chat1 requests'],
    gcRuns.map(({ name, s, x, gc }) => {
      const f = gcFigures(gc, x.requests);
      const chat1 = s === 'chat1';
      return [
        name,
        SCENARIO_LABEL[s],
        int(x.requests),
        GC_KINDS.map((k) => f.perThousand[k].toFixed(1)).join(' / '),
        f.usPerRequest.toFixed(1),
        percent(f.wallPercent),
        pauses(f.above1ms),
        pauses(f.above10ms),
        chat1 ? added(diff(name, 'chat1', (y) => y.latency.p99)) : DASH,
        chat1 && f.above1msInRequests !== undefined ? `≥ ${f.above1msInRequests.toFixed(1)} (${((1000 * (f.above1ms?.count ?? 0)) / Math.max(x.requests, 1)).toFixed(1)} per 1,000)` : DASH,
      ];
    }),
  );
  const bounds = gcRuns.map((g) => gcBounds(g.gc.histogram)).find((b) => b.length) ?? [];
  const gcSection = gcRuns.length
    ? `
## GC pauses

The gateway's own GC pauses (its request thread; the log writer's thread has a heap of its own), from
\`switchyard_nodejs_gc_duration_seconds{kind}\` read from its /metrics just before and after each round's
run of the scenario, summed over the rounds. Per request and % of wall time: over wrk's run time.
Pauses above a time come from the histogram's buckets (bounds ${bounds.length ? bounds.map((b) => (b < 1 ? `${b * 1000} ms` : `${b} s`)).join(', ') : DASH}),
their time counted at each bucket's lower bound: a floor. Counts are a floor too: prom-client records only
the first of the GCs Node reports together in one event-loop turn.

How this relates to the p99 at one connection: p99 is the slowest 10 requests per 1,000. If pauses above 1 ms
come about as often or more (last column, per 1,000), and their time is worth that many requests, GC can
explain the p99 added over direct; far fewer, and something else sets it.

${gcTable}
`
    : '';

  const failed: { name: string; failure?: string }[] = r.targets.filter((t) => t.failure);
  if (r.batch && 'failure' in r.batch) failed.push({ name: 'batch', failure: r.batch.failure });
  const failures = failed.length
    ? `\n## Failures\n\n${failed.map((t) => `- ${t.name}: ${t.failure ?? ''}`).join('\n')}\n`
    : '';

  return `# Switchyard benchmark results

Written by \`npm run bench\` (bench/run.ts; see bench/README.md). Everything above
\`## Profile\` is rewritten on each run; the Profile section is kept as written.

- Date: ${r.date}
${r.machine.map((m) => `- ${m}`).join('\n')}
- Command: \`npm run bench\`
- Load: ${r.load}
- Gateway: ${r.gatewayStatus}
${r.variants.length ? `- Gateway variants, each its own process with a fresh data dir (SQLite), measured in the same rounds:\n${r.variants.map((v) => `  - ${v}`).join('\n')}\n` : ''}- Node floor: ${r.floorStatus}

Pinning:
${r.pinning.map((p) => `- ${p}`).join('\n')}

## Targets

The verdicts judge the gateway. The **node floor** (bench/node-floor.ts) is the smallest proxy on the
gateway's own stack: node:http server, undici Agent with keep-alive, read and \`JSON.parse\` the body,
the same bytes upstream, status, headers and body piped back, on the gateway's core with its node flags.
It is here to separate what Node + undici cost on this machine from what the gateway's own work costs
(auth, config, validation, routing, metrics): floor minus nginx is the price of the stack, gateway minus
floor the price of the gateway's code. Its column is measured exactly like the gateway's.

${targets}
${upstreamShare}
What request logging and a Redis-backed rate-limit check cost the gateway (ratios of the medians
of chat, 16 connections; the variants in Gateway variants below):

${costs}

## Throughput (requests/s)

Median over the rounds of each round's rate.

${throughput}

¹ Core 1 was ≥ ${LOAD_BOUND} % busy (wrk CPU in Run details tells whether by wrk or by other work): the load side may
have set this pace, so the target can do at least this.

## Gateway variants

The same gateway with one setting changed, in the same rounds as the other targets; % = share of the
headline \`gateway\`'s figure (logs on, no rate limit). CPU µs/req counts the log writes done after
a run too (the scenario's CPU, idle turns included). Requests answered = what the bench got answers to
(load, warm-ups, the checks before it); the rows were counted once the gateway had stopped, and a few
more rows than answers are requests wrk abandoned at the end of its runs.

${variantFigures}

${variantLogs}

## Latency, non-streaming chat, 1 connection

p50 and p99 are the medians over the rounds of each round's percentile (wrk reports them per run).
Added = this target minus direct upstream.

${latency}
${gcSection}
## Streaming chat

Upstream sends the first event at once and the other four plus \`[DONE]\` 20 ms later,
so TTFB shows the proxy's delay on the first event and total the whole stream.
Percentiles over all requests of all rounds, measured by bench/ttfb.ts (node:http, one keep-alive connection).

${streaming}

## Cost per request on the proxy core

CPU = utime + stime of the proxy's process tree from the first to the last round of the scenario
(its idle turns included, so deferred work counts) / its requests. Loopback softirq time is not in it.
RSS peak = highest VmRSS sampled every 100 ms during the runs; VmHWM also covers start-up.
At 16 connections the proxy is never idle, so those rows are the cost of a request. At 1 connection
and in streaming it sleeps between events, and each sleep and wake-up is charged to it (about 0.1 ms
on this VM): those rows compare targets, they do not price a request.
gateway − node floor = the CPU per request the gateway adds to the bare Node + undici stack: its own code and the stack work that code causes.

${cost}

## Run details

Core 1 busy near 100 % means the load side may have set the pace; wrk CPU is wrk's own share of it
(loopback softirq is charged to no process). "Of which other":
core 0 time outside the bench's own servers, i.e. another job on the machine or kernel work (loopback
softirq) charged to no process; high values mean that run was disturbed or kernel-heavy.
Errors: socket errors, timeouts and HTTP statuses ≥ 400 (all should be 0).

${details}
${failures}
${profileSection.trim()}
`;
}

export const PROFILE_PLACEHOLDER = `## Profile

### What costs most

_Not written yet. Run \`BENCH_PROFILE=1 npm run bench\`: it prints the gateway's top 25
self-time functions from a CPU profile; summarise here where the time per request goes._`;

/** The `## Profile` section of an existing RESULTS.md (it is last), or the placeholder. */
export function existingProfileSection(markdown: string | undefined): string {
  const at = markdown?.search(/^## Profile\s*$/m) ?? -1;
  return markdown && at >= 0 ? markdown.slice(at) : PROFILE_PLACEHOLDER;
}
