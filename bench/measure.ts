/**
 * The load runs. Each scenario is measured in rounds that interleave the
 * targets (direct, nginx, gateway, direct, ...): the machine is shared, and
 * interleaving makes a burst of someone else's work hit every target alike
 * instead of one. Per round percentiles and rates are combined by median.
 * A proxy's CPU is counted over the whole scenario, its idle turns included,
 * so work it defers past its own runs is still charged to it.
 */
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { combineGc, noGc, type GcHistogram } from './gc.js';
import { coreDelta, coreTimes, cpuSeconds, memMiB, processTree, RssSampler, type CoreTimes } from './procfs.js';
import type { RunResult, ScenarioId, TargetName, TargetResult } from './report.js';
import { measureStreams, percentiles, type Percentiles, type Timing } from './ttfb.js';
import { runWrk } from './wrk.js';

export type Kind = 'chat' | 'stream' | 'embeddings';

export interface Target {
  name: TargetName;
  url(kind: Kind): string;
  headers(kind: Kind): Record<string, string>;
  body(kind: Kind): string;
  /** The proxy, whose process tree's CPU and memory are measured. */
  proc?: ChildProcess;
  /** Gateways: their GC histogram now (bench/gc.ts), read around the runs of the scenarios marked `gc`. */
  gc?(): Promise<GcHistogram>;
}

export interface Scenario {
  id: ScenarioId;
  kind: Kind;
  /** wrk connections; streams always go one at a time. */
  connections: number;
  /** Read each gateway's GC histogram before and after each of its runs. */
  gc?: boolean;
}

export interface Plan {
  rounds: number;
  /** Length of one round's run for one target. */
  sliceS: number;
  warmupS: number;
  /** Before the first scenario, each proxy's run of this long (chat, 16 connections), discarded. */
  burnInS: number;
  streamsPerSlice: number;
  streamWarmup: number;
  serverCore: number;
  loadCore: number;
  workDir: string;
  /** The upstream process serving each kind: it shares the server core, so its CPU is counted too. */
  upstreamPid: Record<Kind, number | undefined>;
  /** Every server the bench started on the server core, so that the rest of that core's time is someone else's. */
  serverPids: number[];
  /** Idle time after each run, so work a target defers (log writes) is done before the next target's run. */
  settleMs: number;
  log(msg: string): void;
}

interface Slice {
  requests: number;
  errors: number;
  errorDetail: string;
  rps: number;
  latency?: Percentiles;
  timings: Timing[];
  /** wrk's CPU seconds and run seconds (0 for streams). */
  loadCpuS: number;
  loadS: number;
  cores: CoreTimes[];
  serversCpuS: number;
  upstreamCpuS: number;
  rssPeakMiB?: number;
  /** GCs of the proxy from just before to just after the run (the scrapes are outside wrk's run). */
  gc?: GcHistogram;
}

type Load = Pick<Slice, 'requests' | 'errors' | 'errorDetail' | 'rps' | 'latency' | 'timings' | 'loadCpuS' | 'loadS'>;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

async function load(t: Target, s: Scenario, plan: Plan, seconds: number, streams: number): Promise<Load> {
  const spec = { url: t.url(s.kind), headers: t.headers(s.kind), body: t.body(s.kind) };
  if (s.kind === 'stream') {
    const started = performance.now();
    const r = await measureStreams({ ...spec, count: streams, maxMs: seconds * 1000 });
    const rps = r.timings.length / ((performance.now() - started) / 1000);
    return { requests: r.timings.length, errors: r.errors, errorDetail: r.errorDetail, rps, timings: r.timings, loadCpuS: 0, loadS: 0 };
  }
  const r = await runWrk({ ...spec, connections: s.connections, durationS: seconds }, plan.workDir, plan.loadCore);
  return { ...r, latency: { p50: r.p50, p99: r.p99 }, timings: [], loadCpuS: r.cpuS, loadS: r.durationS };
}

function treeCpu(pid: number | undefined): number {
  return pid === undefined ? 0 : cpuSeconds(processTree(pid));
}

/** One measured run, with what it cost the upstream and the server core, and the proxy's peak RSS. */
async function slice(t: Target, s: Scenario, plan: Plan): Promise<Slice> {
  const upstreamPid = plan.upstreamPid[s.kind];
  const serversCpu = (): number => plan.serverPids.reduce((a, pid) => a + treeCpu(pid), 0);
  // The scrapes of /metrics are kept out of the run's core and CPU figures.
  const gcRead = s.gc ? t.gc : undefined;
  const gcBefore = await gcRead?.();
  const cores = coreTimes();
  const servers = serversCpu();
  const upstreamCpu = treeCpu(upstreamPid);
  const sampler = t.proc?.pid === undefined ? undefined : new RssSampler(t.proc.pid);
  let r: Load;
  let rssPeakMiB: number | undefined;
  try {
    r = await load(t, s, plan, plan.sliceS, plan.streamsPerSlice);
  } finally {
    rssPeakMiB = sampler?.stop();
  }
  const measured = {
    ...r,
    cores: coreDelta(cores, coreTimes()),
    serversCpuS: serversCpu() - servers,
    upstreamCpuS: treeCpu(upstreamPid) - upstreamCpu,
    rssPeakMiB,
  };
  const gcAfter = await gcRead?.();
  return {
    ...measured,
    gc: gcBefore && gcAfter ? combineGc(gcAfter, gcBefore, -1) : undefined,
  };
}

/** `proxyCpuS`: the proxy's CPU over the whole scenario, undefined for the direct target. */
function combine(slices: Slice[], proxyCpuS: number | undefined, serverCore: number): RunResult {
  const sum = (pick: (x: Slice) => number): number => slices.reduce((a, x) => a + pick(x), 0);
  const requests = sum((x) => x.requests);
  const perRequest = (seconds: number): number => (seconds * 1e6) / Math.max(requests, 1);
  const cores = (slices[0]?.cores ?? []).map((_, i) => ({
    busy: sum((x) => x.cores[i]?.busy ?? 0),
    total: sum((x) => x.cores[i]?.total ?? 0),
  }));
  const server = cores[serverCore] ?? { busy: 0, total: 1 };
  const timings = slices.flatMap((x) => x.timings);
  const wrkLatency = slices.map((x) => x.latency).filter((l): l is Percentiles => l !== undefined);
  const upstreamCpuS = sum((x) => x.upstreamCpuS);
  const loadS = sum((x) => x.loadS);
  return {
    requests,
    errors: sum((x) => x.errors),
    errorDetail: slices.map((x) => x.errorDetail).find((d) => d) ?? '',
    rps: median(slices.map((x) => x.rps)),
    // Streams: percentiles over every sample; wrk only reports per run, so the median of the runs' values.
    latency: timings.length
      ? percentiles(timings.map((x) => x.total))
      : { p50: median(wrkLatency.map((l) => l.p50)), p99: median(wrkLatency.map((l) => l.p99)) },
    ttfb: timings.length ? percentiles(timings.map((x) => x.ttfb)) : undefined,
    coreBusy: cores.map((c) => (c.total > 0 ? (100 * c.busy) / c.total : 0)),
    loadCpuPercent: loadS > 0 ? (100 * sum((x) => x.loadCpuS)) / loadS : undefined,
    serverCoreOther: (100 * (server.busy - sum((x) => x.serversCpuS))) / server.total,
    upstreamCpuUsPerRequest: perRequest(upstreamCpuS),
    cpuUsPerRequest: proxyCpuS === undefined ? undefined : perRequest(proxyCpuS),
    rssPeakMiB: slices.some((x) => x.rssPeakMiB !== undefined) ? Math.max(...slices.map((x) => x.rssPeakMiB ?? 0)) : undefined,
    gc: slices.some((x) => x.gc) ? { histogram: slices.reduce((a, x) => (x.gc ? combineGc(a, x.gc) : a), noGc()), seconds: loadS } : undefined,
  };
}

function failure(t: Target, s: Scenario, err: unknown): string {
  const exit = t.proc ? (t.proc.exitCode ?? t.proc.signalCode) : null;
  return `${s.id}: ${(err as Error).message.trim()}${exit !== null ? ` (its process exited: ${exit})` : ''}`;
}

/**
 * Runs every scenario against every target. A target that cannot run, or has
 * failed requests, gets its failure recorded and sits out the later scenarios.
 */
export async function measureAll(targets: Target[], scenarios: Scenario[], plan: Plan): Promise<TargetResult[]> {
  const results = targets.map((t): TargetResult => ({ name: t.name, runs: {} }));
  const live = (): [Target, TargetResult][] =>
    targets.map((t, i): [Target, TargetResult] => [t, results[i] as TargetResult]).filter(([, r]) => !r.failure);
  const attempt = async (t: Target, r: TargetResult, s: Scenario, run: () => Promise<void>): Promise<void> => {
    try {
      await run();
    } catch (err) {
      r.failure = failure(t, s, err);
      plan.log(`${t.name} failed: ${r.failure}`);
    }
    await sleep(plan.settleMs);
  };

  // JIT tiers and heap sizes settle over the first seconds of load (a fresh gateway's rate climbed for
  // some 10 s of it here): without this the first scenario would measure how fast each proxy warms up
  // (the gateways with more code to compile last).
  const burnIn: Scenario = { id: 'chat16', kind: 'chat', connections: 16 };
  for (const [t, r] of live()) {
    if (t.proc === undefined) continue;
    await attempt(t, r, burnIn, async () => {
      const w = await load(t, burnIn, plan, plan.burnInS, 0);
      r.servedRequests = (r.servedRequests ?? 0) + w.requests;
    });
  }
  for (const s of scenarios) {
    for (const [t, r] of live()) {
      await attempt(t, r, s, async () => {
        const w = await load(t, s, plan, plan.warmupS, plan.streamWarmup);
        r.servedRequests = (r.servedRequests ?? 0) + w.requests;
      });
    }
    const slices = new Map<TargetName, Slice[]>();
    const proxyCpuAtStart = new Map(targets.map((t) => [t.name, treeCpu(t.proc?.pid)]));
    for (let round = 0; round < plan.rounds; round++) {
      for (const [t, r] of live()) {
        await attempt(t, r, s, async () => {
          const x = await slice(t, s, plan);
          slices.set(t.name, [...(slices.get(t.name) ?? []), x]);
          r.servedRequests = (r.servedRequests ?? 0) + x.requests;
        });
      }
    }
    for (const [t, r] of live()) {
      const proxyCpuS = t.proc ? treeCpu(t.proc.pid) - (proxyCpuAtStart.get(t.name) ?? 0) : undefined;
      const run = combine(slices.get(t.name) ?? [], proxyCpuS, plan.serverCore);
      r.runs[s.id] = run;
      const figure =
        s.kind === 'stream'
          ? `TTFB p50 ${run.ttfb?.p50.toFixed(0)} µs, total p50 ${run.latency.p50.toFixed(0)} µs`
          : `${run.rps.toFixed(0)} req/s, p50 ${run.latency.p50} µs, p99 ${run.latency.p99} µs`;
      plan.log(`${s.id} ${t.name}: ${figure}${run.errors ? `, ${run.errors} errors (${run.errorDetail})` : ''}`);
      // Figures with failed requests in them are kept for the report but not trusted: the target stops here.
      if (run.errors) r.failure = `${s.id}: ${run.errors} failed requests (${run.errorDetail})`;
    }
  }
  for (const [t, r] of live()) {
    if (t.proc?.pid !== undefined) r.vmHwmMiB = memMiB(processTree(t.proc.pid), 'VmHWM');
  }
  return results;
}
