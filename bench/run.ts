/**
 * `npm run bench`: upstream, nginx proxy, the "node floor" (bench/node-floor.ts:
 * the least a proxy on the gateway's Node + undici stack does) and the gateway
 * in its variants (bench/variants.ts: request logs on, off, a Redis-backed rate
 * limit) on loopback, the same load against each, one Markdown report (printed
 * and bench/RESULTS.md).
 * Layout and the meaning of each figure: bench/README.md.
 *
 * Env: BENCH_ROUNDS (default 5; rounds of 2 s runs per target and scenario),
 * BENCH_PROFILE=1 (gateway and node floor under --cpu-prof; prints their self-time
 * functions and leaves RESULTS.md alone, since the profiler slows them down; the
 * other gateway variants are left out), BENCH_REDIS_URL (default
 * redis://127.0.0.1:6379, for the rate-limited variant), BENCH_BASELINE (a
 * built checkout of another version, measured beside this one).
 */
import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { measureBatch } from './batch.js';
import { spawnTracked, stopAll, stopChild } from './children.js';
import { CHAT_REQUEST, EMBEDDINGS_REQUEST, STREAM_REQUEST } from './fixtures.js';
import { BENCH_KEY, freePort, GATEWAY_MAIN, gatewayLogTail, pinLogWriter, portOpen, ROOT, spawnGateway, START_ENV, START_ENV_WORDS, START_FLAGS, waitHealthy, waitReady } from './gateway-process.js';
import { parseGc } from './gc.js';
import { measureAll, type Kind, type Plan, type Scenario, type Target } from './measure.js';
import { scrape } from './metrics-text.js';
import { nginxFailure, proxyConfig, startNginx, staticUpstreamConfig } from './nginx.js';
import { measurePromptRender } from './prompt-render.js';
import { machine } from './procfs.js';
import { selfTimeByKind, topSelfTime } from './profile.js';
import { existingProfileSection, renderReport, type BatchResult, type TargetResult } from './report.js';
import { logQueueOutcomes, storedLogRows } from './request-logs.js';
import { gatewayVariants, type GatewayVariant } from './variants.js';

/** Set once the bench is stopping (see finish at the end). */
let finishing = false;
/** Run by finish once every process has stopped, on every path out. */
const cleanups: (() => Promise<void>)[] = [];

const FLOOR_MAIN = join(ROOT, 'dist/bench/node-floor.js');
const RESULTS = join(ROOT, 'bench/RESULTS.md');
const PROFILE_DIR = join(ROOT, 'bench/out/cpu-profile');
const FLOOR_PROFILE_DIR = join(PROFILE_DIR, 'node-floor');
const PROFILE = process.env.BENCH_PROFILE === '1';

/**
 * Servers (proxy under test and upstream) on one core, load on the other. On
 * this VM a wake-up across cores costs tens of µs, so the upstream sits beside
 * the proxy: direct and proxied requests then cross cores once each way, and
 * "added" latency is the proxy's own.
 */
const SERVER_CORE = 0;
const LOAD_CORE = 1;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SLICE_S = 2;
const WARMUP_S = 2;
const BURN_IN_S = 10;
const STREAMS_PER_SLICE = 60;
const STREAM_WARMUP = 20;
/** Idle time after each run, well past the gateway's log flush interval (10 ms in its writer thread), so its deferred writes do not land in the next target's run. */
const SETTLE_MS = 250;

const PATH: Record<Kind, string> = { chat: '/v1/chat/completions', stream: '/v1/chat/completions', embeddings: '/v1/embeddings' };
const BODY: Record<Kind, string> = { chat: CHAT_REQUEST, stream: STREAM_REQUEST, embeddings: EMBEDDINGS_REQUEST };
const JSON_HEADERS = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };

const SCENARIOS: Scenario[] = [
  // GC read around these: chat1 for the p99 target, chat16 for GC at full load.
  { id: 'chat16', kind: 'chat', connections: 16, gc: true },
  { id: 'chat1', kind: 'chat', connections: 1, gc: true },
  { id: 'embed16', kind: 'embeddings', connections: 16 },
  { id: 'stream', kind: 'stream', connections: 1 },
];

function log(msg: string): void {
  // Once stopping, runs fail because their processes are being killed: not worth reporting.
  if (!finishing) process.stderr.write(`[bench] ${msg}\n`);
}

function requireTools(): void {
  for (const tool of ['nginx', 'wrk', 'taskset']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
      throw new Error(`${tool} not found: apt-get install -y nginx-light wrk (taskset is in util-linux)`);
    }
  }
  if (os.cpus().length < 2) throw new Error('needs 2 cores: one for the servers, one for the load');
}

function machineAndSoftware(): string[] {
  const nginx = spawnSync('nginx', ['-v'], { encoding: 'utf8' }).stderr.trim().replace('nginx version: ', '');
  const wrk = spawnSync('wrk', ['-v'], { encoding: 'utf8' }).stdout.split(' Copyright')[0]?.trim() ?? '?';
  return [
    `Machine: ${machine()}`,
    `Software: Node ${process.version}, ${nginx}, ${wrk}`,
  ];
}

const CHECKED_KINDS = ['chat', 'embeddings', 'stream'] as const;

/** One request of each kind, checked for the OpenAI shape, before any load. */
async function checkTarget(t: Target): Promise<void> {
  for (const kind of CHECKED_KINDS) {
    const res = await fetch(t.url(kind), { method: 'POST', headers: t.headers(kind), body: t.body(kind), signal: AbortSignal.timeout(5000) });
    const text = await res.text();
    let ok = res.status === 200;
    if (ok && kind === 'stream') ok = text.includes('chat.completion.chunk') && text.includes('data: [DONE]');
    else if (ok) {
      try {
        ok = (JSON.parse(text) as { object?: string }).object === (kind === 'chat' ? 'chat.completion' : 'list');
      } catch {
        ok = false;
      }
    }
    if (!ok) throw new Error(`${kind}: status ${res.status}: ${text.slice(0, 300)}`);
  }
}

interface GatewayRun {
  variant: GatewayVariant;
  proc: ChildProcess;
  base: string;
  /** Its gateway.log and data/ (GATEWAY_DATA_DIR), fresh for each variant. */
  dir: string;
  /** Undefined when it failed before the load. */
  target?: Target;
  /** Model requests made outside the load (set-up, checks): logged like the load's. */
  extraRequests: number;
  failure?: string;
}

/** Starts one gateway variant on a port of its own and checks it; a failure is recorded, not thrown. */
async function startGateway(variant: GatewayVariant, tmp: string, upstream: { chat: number; stream: number }): Promise<GatewayRun> {
  const port = await freePort();
  const dir = join(tmp, variant.name.replace(/[^a-z0-9]+/gi, '-'));
  if (variant.tearDown) cleanups.push(variant.tearDown);
  const profileArgs = PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, '--import', pathToFileURL(join(ROOT, 'dist/bench/cpu-prof-exit.js')).href]
    : [];
  const proc = spawnGateway({ port, dir, env: variant.env, root: variant.root, wrap: ['taskset', '-c', variant.cpus ?? String(SERVER_CORE)], nodeArgs: profileArgs });
  const base = `http://127.0.0.1:${port}`;
  const target: Target = {
    name: variant.name,
    url: (k) => `${base}${PATH[k]}`,
    headers: (k) => {
      const to = `http://127.0.0.1:${k === 'stream' ? upstream.stream : upstream.chat}/v1`;
      const routing = variant.routing?.(to) ?? { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': to };
      return { ...JSON_HEADERS, 'x-gateway-api-key': BENCH_KEY, ...routing };
    },
    body: (k) => BODY[k],
    proc,
    gc: async () => parseGc(await scrape(base)),
  };
  const run: GatewayRun = { variant, proc, base, dir, extraRequests: 0 };
  try {
    await waitHealthy(base, proc);
    if (variant.env.GATEWAY_REQUEST_LOGS !== 'off') pinLogWriter(proc.pid!, LOAD_CORE);
    run.extraRequests += (await variant.setUp?.({ base, target })) ?? 0;
    await checkTarget(target);
    run.extraRequests += CHECKED_KINDS.length;
    run.target = target;
  } catch (err) {
    run.failure = `before load: ${(err as Error).message}`;
    log(`${variant.name} failed ${run.failure}`);
  }
  return run;
}

/**
 * After the load: the log queue's outcomes from /metrics while each gateway
 * still runs, then (all stopped, queues written) the rows each one stored.
 */
async function stopGateways(runs: GatewayRun[], results: TargetResult[]): Promise<void> {
  const outcomes = await Promise.all(runs.map((g) => (g.failure ? undefined : logQueueOutcomes(g.base).catch(() => undefined))));
  // Under --cpu-prof, the profiles are written as they exit.
  await Promise.all(runs.map((g) => stopChild(g.proc, 15_000)));
  for (const [i, g] of runs.entries()) {
    const r = results.find((x) => x.name === g.variant.name);
    if (!r) continue;
    if (r.failure) {
      const tail = gatewayLogTail(g.dir);
      if (tail) log(`${g.variant.name} log, last lines:\n${tail}`);
    }
    if (g.failure) continue;
    const rows = await storedLogRows(join(g.dir, 'data')).catch((err: Error) => {
      log(`${g.variant.name}: request_logs not counted: ${err.message}`);
      return undefined;
    });
    r.logs = { answered: (r.servedRequests ?? 0) + g.extraRequests, rows, ...outcomes[i] };
  }
}

function printProfile(who: string, dir: string, top: number, requests: number | undefined): void {
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the request thread (worker threads, such as
  // the log writer, write profiles of their own).
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f)) : [];
  const file = files.sort().at(-1);
  if (!file) {
    log(`no .cpuprofile in ${dir}: the ${who} did not exit normally`);
    return;
  }
  if (top > 0) {
    console.log(`\n## ${who} CPU profile: top ${top} self time (${join(dir, file)})\n`);
    console.log(topSelfTime(join(dir, file), top, ROOT));
  }
  console.log(`\n## ${who} CPU profile: self time by kind (${join(dir, file)}; native frames and Node helpers such as Buffer and crypto count with their caller, socket writes apart)\n`);
  console.log(selfTimeByKind(join(dir, file), ROOT, requests));
}

/** The batch bench (bench/batch.ts); a failure is recorded for the report, not thrown. */
async function measureBatchRecorded(dir: string, upstream: string): Promise<BatchResult> {
  try {
    return await measureBatch({ upstream, dir, serverCore: SERVER_CORE, loadCore: LOAD_CORE, log });
  } catch (err) {
    log(`batch failed: ${(err as Error).message}`);
    return { failure: (err as Error).message };
  }
}

async function main(tmp: string): Promise<number> {
  requireTools();
  // Children inherit this; each server is then pinned explicitly to the server core.
  execFileSync('taskset', ['-a', '-pc', String(LOAD_CORE), String(process.pid)], { stdio: 'ignore' });
  if (PROFILE) {
    rmSync(PROFILE_DIR, { recursive: true, force: true });
    mkdirSync(FLOOR_PROFILE_DIR, { recursive: true });
  }

  const [staticPort, streamPort, proxyPort, proxyStreamPort, floorPort, floorStreamPort] = (await Promise.all(
    Array.from({ length: 6 }, () => freePort()),
  )) as [number, number, number, number, number, number];

  const upstreamDir = join(tmp, 'nginx-upstream');
  const upstreamNginx = startNginx(upstreamDir, (d) => staticUpstreamConfig(d, staticPort), SERVER_CORE);
  const streamUpstream = spawnTracked(
    'taskset',
    ['-c', String(SERVER_CORE), process.execPath, join(ROOT, 'dist/bench/upstream.js'), String(streamPort)],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const proxyDir = join(tmp, 'nginx-proxy');
  const proxy = startNginx(
    proxyDir,
    (d) => proxyConfig(d, { chat: proxyPort, stream: proxyStreamPort }, { chat: staticPort, stream: streamPort }),
    SERVER_CORE,
  );
  for (const [dir, master, port] of [[upstreamDir, upstreamNginx, staticPort], [proxyDir, proxy, proxyStreamPort]] as const) {
    await waitReady(`nginx (${dir})`, master, () => portOpen(port), 5000).catch(async () => {
      throw new Error(await nginxFailure(dir, master));
    });
  }
  await waitReady('streaming upstream', streamUpstream, () => portOpen(streamPort), 5000);

  const body = (k: Kind): string => BODY[k];
  const direct: Target = {
    name: 'direct',
    url: (k) => `http://127.0.0.1:${k === 'stream' ? streamPort : staticPort}${PATH[k]}`,
    headers: () => JSON_HEADERS,
    body,
  };
  const nginx: Target = {
    name: 'nginx',
    url: (k) => `http://127.0.0.1:${k === 'stream' ? proxyStreamPort : proxyPort}${PATH[k]}`,
    headers: () => JSON_HEADERS,
    body,
    proc: proxy,
  };
  for (const t of [direct, nginx]) await checkTarget(t).catch((err: Error) => Promise.reject(new Error(`${t.name}: ${err.message}`)));
  const targets = [direct, nginx];

  // The node floor: same core, node binary and flags as the gateway, one port per upstream like nginx.
  const floorArgs = [`${floorPort}=http://127.0.0.1:${staticPort}`, `${floorStreamPort}=http://127.0.0.1:${streamPort}`];
  // Its SIGTERM handler exits normally, so --cpu-prof gets to write its file.
  const floorProfileArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${FLOOR_PROFILE_DIR}`] : [];
  const floor = spawnTracked('taskset', ['-c', String(SERVER_CORE), process.execPath, ...START_FLAGS, ...floorProfileArgs, FLOOR_MAIN, ...floorArgs], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...START_ENV },
  });
  const floorCommand = [...START_ENV_WORDS, 'taskset', '-c', String(SERVER_CORE), 'node', ...START_FLAGS, ...(PROFILE ? ['--cpu-prof'] : []), 'dist/bench/node-floor.js'].join(' ');
  const floorStatus = `\`${floorCommand} <port>=<upstream> <port>=<streaming upstream>\` (the gateway's core, node, environment and flags), bench/node-floor.ts: node:http server, undici Agent with keep-alive, JSON.parse of the body, same bytes upstream, status + headers + body piped back; nothing else`;
  const floorTarget: Target = {
    name: 'node floor',
    url: (k) => `http://127.0.0.1:${k === 'stream' ? floorStreamPort : floorPort}${PATH[k]}`,
    headers: () => JSON_HEADERS,
    body,
    proc: floor,
  };
  let floorFailure: string | undefined;
  try {
    await waitReady('node floor', floor, async () => (await portOpen(floorPort)) && portOpen(floorStreamPort), 10_000);
    await checkTarget(floorTarget);
    targets.push(floorTarget);
  } catch (err) {
    floorFailure = `before load: ${(err as Error).message}`;
    log(`node floor failed ${floorFailure}`);
  }

  const gatewayCommand = [...START_ENV_WORDS, 'taskset', '-c', String(SERVER_CORE), 'node', ...START_FLAGS, ...(PROFILE ? ['--cpu-prof'] : []), 'dist/src/main.js'].join(' ');
  let gatewayStatus = `\`${gatewayCommand}\` (the environment and flags of \`npm start\`), LOG_LEVEL=warn, provider openai via x-gateway-custom-host`;
  const built = existsSync(GATEWAY_MAIN);
  if (!built) gatewayStatus = 'not built (no dist/src/main.js): only the direct upstream, nginx and the node floor were measured';
  // Under the profiler the variants' differences mean little, and the profile is the headline gateway's.
  const variants = built ? gatewayVariants().filter((v) => !PROFILE || v.name === 'gateway') : [];
  const gateways: GatewayRun[] = [];
  for (const v of variants) gateways.push(await startGateway(v, tmp, { chat: staticPort, stream: streamPort }));
  for (const g of gateways) if (g.target) targets.push(g.target);

  const plan: Plan = {
    rounds: ROUNDS,
    sliceS: SLICE_S,
    warmupS: WARMUP_S,
    burnInS: BURN_IN_S,
    streamsPerSlice: STREAMS_PER_SLICE,
    streamWarmup: STREAM_WARMUP,
    serverCore: SERVER_CORE,
    loadCore: LOAD_CORE,
    workDir: tmp,
    upstreamPid: { chat: upstreamNginx.pid, embeddings: upstreamNginx.pid, stream: streamUpstream.pid },
    serverPids: [upstreamNginx, streamUpstream, proxy, floor, ...gateways.map((g) => g.proc)].flatMap((c) => (c.pid === undefined ? [] : [c.pid])),
    settleMs: SETTLE_MS,
    log,
  };
  const results: TargetResult[] = await measureAll(targets, SCENARIOS, plan);
  if (floorFailure) results.splice(2, 0, { name: 'node floor', runs: {}, failure: floorFailure });
  for (const g of gateways) if (g.failure) results.push({ name: g.variant.name, runs: {}, failure: g.failure });
  await Promise.all([stopGateways(gateways, results), stopChild(floor, 5000)]);
  // In-process, after the load: nothing else runs on the machine then.
  const promptRender = built ? measurePromptRender() : undefined;
  // A gateway of its own on the server core, the upstream nginx still up; not under the profiler, which slows it.
  const batch = built && !PROFILE ? await measureBatchRecorded(join(tmp, 'gateway-batch'), `http://127.0.0.1:${staticPort}/v1`) : undefined;
  const failed = results.some((r) => r.failure) || (batch !== undefined && 'failure' in batch);

  const markdown = renderReport(
    {
      date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      machine: machineAndSoftware(),
      pinning: [
        `core ${SERVER_CORE}: the proxy under load, nginx (1 worker), the node floor or a gateway variant (\`taskset -c ${SERVER_CORE}\`; one is loaded at a time, the others idle), and the upstream: nginx (1 worker, fixed non-streaming answers via \`return\`) and bench/upstream.ts (node:http, SSE)`,
        `core ${LOAD_CORE}: wrk (\`taskset -c ${LOAD_CORE} wrk -t1\`), the streaming client, this orchestrator (samples /proc every 100 ms), and the log writer thread of the gateway variants that log (\`sy-log-writer\`, moved with \`taskset -pc ${LOAD_CORE} <tid>\` as each one starts (the first log entry starts one; one idle for a minute is replaced by the next): request logs are made and written there, off the request thread, as on any machine with a second core; the rest of the process, V8's helper threads included, stays on core ${SERVER_CORE})`,
        "why the upstream shares the proxy's core: a wake-up across cores costs tens of µs on this VM, so with the upstream there direct and proxied requests each cross cores once per direction, and added latency is the proxy's own; the upstream's CPU per request on that core is in Run details",
      ],
      load: `first a ${BURN_IN_S} s run of chat with 16 connections per proxy (discarded: JIT tiers and heap sizes settle); then per scenario, ${ROUNDS} rounds of ${SLICE_S} s runs interleaving the targets, after a ${WARMUP_S} s warm-up run per target (discarded), ${SETTLE_MS} ms idle after each run; wrk -t1; streaming: ${STREAMS_PER_SLICE} sequential requests per round on one keep-alive connection, after ${STREAM_WARMUP} discarded`,
      gatewayStatus,
      variants: variants.map((v) => `\`${v.name}\`: ${v.about}`),
      floorStatus,
      targets: results,
      promptRender,
      batch,
    },
    existingProfileSection(existsSync(RESULTS) ? readFileSync(RESULTS, 'utf8') : undefined),
  );
  console.log(markdown);
  if (PROFILE) {
    const served = (name: TargetResult['name']): number | undefined => results.find((t) => t.name === name)?.servedRequests;
    printProfile('Gateway', PROFILE_DIR, 25, served('gateway'));
    printProfile('Node floor', FLOOR_PROFILE_DIR, 0, served('node floor'));
  }
  else if (failed) log(`not writing ${RESULTS}: a target failed (see Failures)`);
  else {
    writeFileSync(RESULTS, markdown);
    log(`wrote ${RESULTS}`);
  }
  return failed ? 1 : 0;
}

const tmp = mkdtempSync(join(os.tmpdir(), 'switchyard-bench-'));
async function finish(code: number): Promise<never> {
  if (!finishing) {
    finishing = true;
    await stopAll();
    for (const cleanup of cleanups) await cleanup().catch((err: Error) => process.stderr.write(`[bench] cleanup failed: ${err.message}\n`));
    rmSync(tmp, { recursive: true, force: true });
  }
  process.exit(code);
}
const interrupted = (code: number) => (): void => {
  log('interrupted: stopping every process started');
  void finish(code);
};
process.once('SIGINT', interrupted(130));
process.once('SIGTERM', interrupted(143));
main(tmp).then(finish, (err: unknown) => {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return finish(1);
});
