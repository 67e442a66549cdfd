/**
 * `npm run soak [-- N]`: N requests of a mixed load (bench/soak-lanes.ts:
 * chat, streams, client cancels, cache hits, upstream errors, invalid
 * bodies, an unreachable provider, rate-limit and budget refusals) against a
 * gateway process it starts with the defaults (`npm start`'s flags, request
 * logs to SQLite, memory cache) and a mock upstream (bench/upstream.ts), both
 * on loopback. Prints a row every N/SOAK_ROWS requests: the gateway's RSS
 * from /proc, its heap and event-loop delay from its /metrics, its CPU; then
 * the outcomes per lane and the verdict: RSS after the warm-up flat within
 * ±10 % of where the warm-up left it. Written up in bench/SOAK.md.
 *
 * Exit status: 0 flat; 1 RSS not flat; 2 the load failed (the gateway died,
 * a request had an outcome its lane does not expect, set-up failed); 3
 * undecided (too few GC cycles after the warm-up to tell a trend: run more).
 *
 * N: the first argument, else SOAK_REQUESTS, else DEFAULT_REQUESTS (about a
 * minute here). SOAK_CONCURRENCY requests in flight (default 32), SOAK_ROWS
 * rows (default 20), SOAK_WARMUP the share of N that is warm-up (default 0.2).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { spawnTracked, stopAll, stopChild } from './children.js';
import { freePort, GATEWAY_MAIN, gatewayLogTail, portOpen, ROOT, spawnGateway, START_ENV_WORDS, START_FLAGS, waitHealthy, waitReady } from './gateway-process.js';
import { metricValue, scrape } from './metrics-text.js';
import { cpuSeconds, machine, memMiB } from './procfs.js';
import { logQueueOutcomes } from './request-logs.js';
import { createPolicies, lanes, SCHEDULE, type Lane } from './soak-lanes.js';
import { outcomeTable, ROW_HEAD, rowLine, rssVerdict, unexpected, type LaneTally, type RssSample, type SoakRow } from './soak-report.js';

const DEFAULT_REQUESTS = 100_000;
const MiB = 2 ** 20;

function log(msg: string): void {
  process.stderr.write(`[soak] ${msg}\n`);
}

/** A setting that cannot be used: exit 2 before anything starts. */
function badSetting(msg: string): never {
  log(msg);
  process.exit(2);
}

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const v = Number(raw.replace(/_/g, ''));
  if (!Number.isInteger(v) || v <= 0) badSetting(`${name}: '${raw}' is not a positive integer`);
  return v;
}

const N = positiveInt('N', process.argv[2] ?? process.env.SOAK_REQUESTS, DEFAULT_REQUESTS);
const CONCURRENCY = positiveInt('SOAK_CONCURRENCY', process.env.SOAK_CONCURRENCY, 32);
const ROWS = Math.min(N, positiveInt('SOAK_ROWS', process.env.SOAK_ROWS, 20));
const WARMUP = Number(process.env.SOAK_WARMUP ?? 0.2);
if (!(WARMUP > 0 && WARMUP < 1)) badSetting(`SOAK_WARMUP: '${process.env.SOAK_WARMUP}' is not a share between 0 and 1`);
const WARMUP_ROWS = Math.max(1, Math.round(ROWS * WARMUP));
/**
 * prom-client's event-loop histogram (monitorEventLoopDelay) times the ticks of
 * a timer of this period (its eventLoopMonitoringPrecision default): the
 * delay is what a tick takes beyond it (an idle process shows p50 ≈ 10 ms).
 */
const LOOP_TICK_MS = 10;
/** The gateway's RSS is read this often for the verdict and the rows' peaks. */
const RSS_SAMPLE_MS = 200;
/** A request with no answer after this long is a failed one, never a stalled soak. */
const REQUEST_TIMEOUT_MS = 30_000;

/** The load: CONCURRENCY loops taking the next request number until N are done or the gateway dies. */
class Load {
  private issued = 0;
  done = 0;
  stopped = false;
  private waiter: { at: number; resolve: () => void } | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly byName: Map<string, Lane>,
    private readonly tallies: Map<string, LaneTally>,
  ) {}

  run(): Promise<void> {
    return Promise.all(Array.from({ length: CONCURRENCY }, () => this.worker())).then(() => this.wake());
  }

  /** Resolves once `requests` are done, or the load has stopped. */
  reached(requests: number): Promise<void> {
    if (this.done >= requests || this.stopped) return Promise.resolve();
    return new Promise((resolve) => (this.waiter = { at: requests, resolve }));
  }

  stop(): void {
    this.stopped = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.resolve();
  }

  private async worker(): Promise<void> {
    while (this.issued < N && !this.stopped) {
      const i = this.issued++;
      const lane = this.byName.get(SCHEDULE[i % SCHEDULE.length]!)!;
      const outcome = await lane.send(this.pool);
      const counts = this.tallies.get(lane.name)!.outcomes;
      counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
      this.done++;
      if (this.waiter !== undefined && this.done >= this.waiter.at) this.wake();
    }
  }
}

async function main(tmp: string): Promise<number> {
  const [upstreamPort, gatewayPort, closedPort] = [await freePort(), await freePort(), await freePort()];
  const upstream = spawnTracked(process.execPath, [join(ROOT, 'dist/bench/upstream.js'), String(upstreamPort)], { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitReady('upstream', upstream, () => portOpen(upstreamPort), 10_000);
  const dir = join(tmp, 'gateway');
  const gateway = spawnGateway({ port: gatewayPort, dir });
  const base = `http://127.0.0.1:${gatewayPort}`;
  const pid = gateway.pid!;
  try {
    await waitHealthy(base, gateway);
    await createPolicies(base);
  } catch (err) {
    log(`set-up failed: ${(err as Error).message}\n${gatewayLogTail(dir)}`);
    return 2;
  }

  const byName = lanes({ upstreamPort, closedPort });
  const tallies = new Map<string, LaneTally>([...byName.values()].map((l) => [l.name, { name: l.name, about: l.about, expected: l.expected, outcomes: new Map() }]));
  const pool = new Pool(base, { connections: CONCURRENCY, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS });

  // One request per lane first: a lane that cannot get its outcome makes the soak meaningless.
  for (const lane of byName.values()) {
    const outcome = await lane.send(pool);
    if (!lane.expected.includes(outcome)) {
      log(`check failed: lane ${lane.name} got ${outcome}, expected ${lane.expected.join(' or ')}\n${gatewayLogTail(dir)}`);
      await pool.close();
      return 2;
    }
  }

  console.log(`# Soak: ${N.toLocaleString('en')} requests\n`);
  console.log(`- Command: \`npm run soak -- ${N}\` (SOAK_CONCURRENCY=${CONCURRENCY}, SOAK_ROWS=${ROWS}, SOAK_WARMUP=${WARMUP})`);
  console.log(`- Machine: ${machine()}; Node ${process.version}; load average at start ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`- Gateway: \`${[...START_ENV_WORDS, 'node', ...START_FLAGS].join(' ')} ${GATEWAY_MAIN.slice(ROOT.length)}\`, defaults (request logs with bodies to SQLite in a fresh GATEWAY_DATA_DIR, memory cache), LOG_LEVEL=warn, pid ${pid}`);
  console.log(`- Load: ${CONCURRENCY} requests in flight over keep-alive connections (undici Pool), lanes in a fixed cycle of ${SCHEDULE.length}: ${[...byName.values()].map((l) => `${l.name} ${((SCHEDULE.filter((s) => s === l.name).length / SCHEDULE.length) * 100).toFixed(0)} %`).join(', ')}`);
  console.log(`- RSS before the load (after one request per lane): ${memMiB([pid], 'VmRSS').toFixed(1)} MiB\n`);
  console.log(ROW_HEAD);

  const load = new Load(pool, byName, tallies);
  gateway.once('exit', () => load.stop());
  await scrape(base); // resets the event-loop delay histogram: the first row covers the load only
  const started = performance.now();
  let prev = { at: started, requests: 0, cpu: cpuSeconds([pid]) };
  const samples: RssSample[] = [];
  let peak = 0; // of the current row
  const sample = (): number => {
    const rssMiB = memMiB([pid], 'VmRSS');
    samples.push({ seconds: (performance.now() - started) / 1000, rssMiB });
    peak = Math.max(peak, rssMiB);
    return rssMiB;
  };
  const sampling = setInterval(sample, RSS_SAMPLE_MS);
  const rows: SoakRow[] = [];
  let warmup: SoakRow | undefined; // its last row
  const loading = load.run();
  const boundary = (k: number): number => Math.round((k * N) / ROWS);
  for (let k = 1; k <= ROWS; k++) {
    await load.reached(boundary(k));
    if (load.stopped) break;
    // The load runs on while a row is made: where it has passed the next boundary too, one row does for both.
    if (k < ROWS && load.done >= boundary(k + 1)) continue;
    const at = performance.now();
    const done = load.done;
    const cpu = cpuSeconds([pid]);
    const rssMiB = sample();
    const rssPeakMiB = peak;
    peak = rssMiB;
    const text = await scrape(base).catch(() => '');
    const metric = (name: string, scale: number, minus = 0): number | undefined => {
      const v = metricValue(text, `switchyard_${name}`);
      return v === undefined ? undefined : Math.max(0, v * scale - minus);
    };
    const seconds = (at - prev.at) / 1000;
    const row: SoakRow = {
      requests: done,
      seconds: (at - started) / 1000,
      rps: (done - prev.requests) / seconds,
      rssMiB,
      rssPeakMiB,
      heapUsedMiB: metric('nodejs_heap_size_used_bytes', 1 / MiB),
      externalMiB: metric('nodejs_external_memory_bytes', 1 / MiB),
      // Until the first major GC, prom-client has no series for the kind.
      majorGcs: text === '' ? undefined : (metricValue(text, 'switchyard_nodejs_gc_duration_seconds_count{kind="major"}') ?? 0),
      loopP50Ms: metric('nodejs_eventloop_lag_p50_seconds', 1000, LOOP_TICK_MS),
      loopP99Ms: metric('nodejs_eventloop_lag_p99_seconds', 1000, LOOP_TICK_MS),
      loopMaxMs: metric('nodejs_eventloop_lag_max_seconds', 1000, LOOP_TICK_MS),
      cpuPercent: ((cpu - prev.cpu) / seconds) * 100,
    };
    rows.push(row);
    if (k >= WARMUP_ROWS && warmup === undefined) warmup = row;
    console.log(rowLine(row, k, WARMUP_ROWS));
    prev = { at, requests: done, cpu };
  }
  await loading;
  clearInterval(sampling);
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();

  const died = gateway.exitCode !== null || gateway.signalCode !== null;
  const logs = died ? undefined : await logQueueOutcomes(base).catch(() => undefined);
  const hwm = memMiB([pid], 'VmHWM');
  if (!died) await stopChild(gateway, 30_000);

  const all = [...tallies.values()];
  const wrong = all.reduce((n, t) => n + unexpected(t), 0);
  const majorGcs = (rows.at(-1)?.majorGcs ?? NaN) - (warmup?.majorGcs ?? NaN);
  const verdict = rssVerdict(samples, warmup?.seconds ?? Infinity, majorGcs);
  console.log(`\n${outcomeTable(all)}\n`);
  console.log(`- Duration: ${elapsed.toFixed(0)} s for ${load.done.toLocaleString('en')} requests (${(load.done / elapsed).toFixed(0)} req/s); load average at end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`- Gateway peak RSS (VmHWM): ${hwm.toFixed(1)} MiB; request log records dropped: ${logs?.dropped ?? '?'}, spilled: ${logs?.spilled ?? '?'}`);
  if (died) console.log(`- The gateway DIED during the load (exit ${gateway.exitCode ?? gateway.signalCode}); last lines of its log:\n\n\`\`\`\n${gatewayLogTail(dir)}\n\`\`\``);
  if (wrong > 0) console.log(`- ${wrong} request(s) had an outcome their lane does not expect (column "unexpected")`);
  console.log(`- Verdict: RSS after warm-up ${verdict.text}`);
  if (died || wrong > 0) return 2;
  return { flat: 0, 'not flat': 1, undecided: 3 }[verdict.outcome];
}

const tmp = mkdtempSync(join(os.tmpdir(), 'switchyard-soak-'));
async function finish(code: number): Promise<never> {
  await stopAll();
  rmSync(tmp, { recursive: true, force: true });
  process.exit(code);
}
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.once(signal, () => {
    log('interrupted: stopping the gateway and the upstream');
    void finish(code);
  });
}
main(tmp).then(finish, (err: unknown) => {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return finish(2);
});
