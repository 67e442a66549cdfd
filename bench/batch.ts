/**
 * A gateway-managed batch end to end (docs/batches.md): a file of 50,000
 * chat lines uploaded to the gateway, a batch over it created, polled until
 * it completes (validation, every line through the pipeline to a mock
 * upstream, the output file written), then the output file read back and its
 * lines counted. The gateway runs as `npm start` does, pinned to the server
 * core beside the upstream (nginx's fixed answers), its log writer thread on
 * the other core, as bench/run.ts has them. Figures: lines per second from
 * the create request to the completed batch, the gateway's peak RSS (VmHWM,
 * its whole life, the upload included) and its CPU per line. `npm run bench`
 * reports them in RESULTS.md (targets: ≥ 1,000 lines/s, RSS < 200 MiB).
 *
 * Usage alone: npm run build && node dist/bench/batch.js
 * (BENCH_PROFILE=1: the gateway under --cpu-prof, its top self time printed;
 * BENCH_BATCH_ENV='{"GATEWAY_BATCH_CONCURRENCY":"8"}': settings for the gateway, as JSON;
 * BENCH_BASELINE: a built checkout of another version, measured instead, for a before and after.)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runAlone, stopChild } from './children.js';
import { CHAT_REQUEST } from './fixtures.js';
import { admin, BENCH_KEY, freePort, gatewayLogTail, pinLogWriter, portOpen, ROOT, spawnGateway, waitHealthy, waitReady } from './gateway-process.js';
import { nginxFailure, startNginx, staticUpstreamConfig } from './nginx.js';
import { cpuSeconds, memMiB, processTree } from './procfs.js';
import { topSelfTime } from './profile.js';

export const BATCH_LINES = 50_000;
const POLL_MS = 100;
/** Far longer than a batch that meets the target takes; a stuck batch fails the run. */
const TIMEOUT_MS = 15 * 60_000;

export interface BatchFigure {
  lines: number;
  inputBytes: number;
  /** From the create request to the first poll that saw the batch completed. */
  seconds: number;
  linesPerSecond: number;
  /** The gateway's VmHWM after the batch completed: its peak over its whole life. */
  rssPeakMiB: number;
  /** The gateway's CPU (all threads, log writer included) per line. */
  cpuUsPerLine: number;
}

export interface BatchPlan {
  /** Base URL of an OpenAI-shaped upstream answering POST /chat/completions (…/v1). */
  upstream: string;
  /** Gets the gateway's folder (log, data). */
  dir: string;
  serverCore: number;
  loadCore: number;
  /** Extra node flags for the gateway (a profiler). */
  nodeArgs?: string[];
  /** Settings on top of the defaults. */
  env?: Record<string, string>;
  /** Another built checkout to run instead of this one. */
  root?: string;
  log: (msg: string) => void;
}

/** The batch's input: one chat request per line, as OpenAI's Batch API takes it. */
export function batchInput(lines: number): string {
  const body = CHAT_REQUEST;
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(`{"custom_id":"req-${i}","method":"POST","url":"/v1/chat/completions","body":${body}}`);
  return `${out.join('\n')}\n`;
}

async function call(base: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: BodyInit }): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, { ...init, headers: { 'x-gateway-api-key': BENCH_KEY, ...init.headers }, signal: AbortSignal.timeout(60_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: status ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

export async function measureBatch(p: BatchPlan): Promise<BatchFigure> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const proc = spawnGateway({ port, dir: p.dir, wrap: ['taskset', '-c', String(p.serverCore)], nodeArgs: p.nodeArgs, env: p.env, root: p.root });
  try {
    await waitHealthy(base, proc);
    if (p.env?.GATEWAY_REQUEST_LOGS !== 'off') pinLogWriter(proc.pid!, p.loadCore);
    const vk = (await admin(base, '/v1/virtual-keys', { method: 'POST', body: { name: 'bench batch', provider: 'openai', key: 'sk-bench', custom_host: p.upstream } })) as { id: string };
    const input = batchInput(BATCH_LINES);
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([input]), 'bench.jsonl');
    const file = await call(base, '/v1/files', { method: 'POST', body: form });
    const headers = { 'content-type': 'application/json', 'x-gateway-virtual-key': vk.id };
    const pids = processTree(proc.pid!);
    const cpuBefore = cpuSeconds(pids);
    const started = performance.now();
    const created = await call(base, '/v1/batches', {
      method: 'POST',
      headers,
      body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: 'immediate' }),
    });
    let b = created;
    for (const deadline = Date.now() + TIMEOUT_MS; !['completed', 'failed', 'expired', 'cancelled'].includes(String(b.status)); ) {
      if (Date.now() > deadline) throw new Error(`batch not done after ${TIMEOUT_MS / 1000} s: ${JSON.stringify(b.request_counts)}`);
      await new Promise((r) => setTimeout(r, POLL_MS));
      b = await call(base, `/v1/batches/${String(created.id)}`, { headers });
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSeconds(pids) - cpuBefore;
    const rssPeakMiB = memMiB(pids, 'VmHWM');
    const counts = b.request_counts as { total: number; completed: number; failed: number };
    if (b.status !== 'completed' || counts.completed !== BATCH_LINES || counts.failed !== 0) throw new Error(`batch ended ${String(b.status)}: ${JSON.stringify(counts)} ${JSON.stringify(b.errors)}`);
    // Every line answered, in the output file (read back, not trusted from the counts).
    const out = await fetch(`${base}/v1/files/${String(b.output_file_id)}/content`, { headers: { 'x-gateway-api-key': BENCH_KEY } });
    let lines = 0;
    for await (const chunk of out.body as unknown as AsyncIterable<Uint8Array>) for (const byte of chunk) if (byte === 0x0a) lines++;
    if (lines !== BATCH_LINES) throw new Error(`output file has ${lines} lines, not ${BATCH_LINES}`);
    return { lines: BATCH_LINES, inputBytes: Buffer.byteLength(input), seconds, linesPerSecond: BATCH_LINES / seconds, rssPeakMiB, cpuUsPerLine: (cpu * 1e6) / BATCH_LINES };
  } catch (err) {
    const tail = gatewayLogTail(p.dir);
    if (tail) p.log(`batch gateway log, last lines:\n${tail}`);
    throw err;
  } finally {
    await stopChild(proc, 15_000);
  }
}

/** Alone: an nginx upstream of its own, then the batch; under BENCH_PROFILE=1 the gateway's top self time. */
async function alone(tmp: string): Promise<void> {
  const [serverCore, loadCore] = [0, 1];
  execFileSync('taskset', ['-a', '-pc', String(loadCore), String(process.pid)], { stdio: 'ignore' });
  const upstreamPort = await freePort();
  const upstreamDir = join(tmp, 'nginx-upstream');
  const nginx = startNginx(upstreamDir, (d) => staticUpstreamConfig(d, upstreamPort), serverCore);
  await waitReady('nginx upstream', nginx, () => portOpen(upstreamPort), 5000).catch(async () => {
    throw new Error(await nginxFailure(upstreamDir, nginx));
  });
  const profileDir = join(ROOT, 'bench/out/cpu-profile-batch');
  const profile = process.env.BENCH_PROFILE === '1';
  if (profile) {
    rmSync(profileDir, { recursive: true, force: true });
    mkdirSync(profileDir, { recursive: true });
  }
  const nodeArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--import', pathToFileURL(join(ROOT, 'dist/bench/cpu-prof-exit.js')).href] : [];
  const log = (msg: string): void => void process.stderr.write(`[bench batch] ${msg}\n`);
  const env = process.env.BENCH_BATCH_ENV ? (JSON.parse(process.env.BENCH_BATCH_ENV) as Record<string, string>) : undefined;
  const f = await measureBatch({ upstream: `http://127.0.0.1:${upstreamPort}/v1`, dir: join(tmp, 'gateway'), serverCore, loadCore, nodeArgs, env, root: process.env.BENCH_BASELINE, log });
  console.log(
    `batch of ${f.lines.toLocaleString('en-US')} chat lines (${(f.inputBytes / 2 ** 20).toFixed(1)} MiB): ${f.seconds.toFixed(2)} s, ${Math.round(f.linesPerSecond).toLocaleString('en-US')} lines/s, ` +
      `gateway peak RSS ${f.rssPeakMiB.toFixed(0)} MiB, ${Math.round(f.cpuUsPerLine)} CPU µs per line`,
  );
  if (profile) {
    const file = readdirSync(profileDir).filter((n) => n.endsWith('.cpuprofile')).sort().at(-1);
    if (file) console.log(topSelfTime(join(profileDir, file), 30, ROOT));
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) runAlone('batch', alone);
