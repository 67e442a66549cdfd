/**
 * The gateway's memory with request logs on (issue 20): a gateway as the
 * bench runs it (the flags of `npm start`, the defaults, bodies logged to
 * SQLite; on the server core, its log writer on the load core) under short
 * wrk runs of chat and of embeddings whose answers are 19 KB (1,536
 * floats, as text-embedding-3-small answers), at 16 and 64 connections.
 * Figures: VmRSS idle after start, peak VmRSS per run (sampled every
 * 100 ms), VmRSS idle after the load, VmHWM, req/s, and the log records
 * dropped and spilled (/metrics). Short on purpose: a check of the bound,
 * not a throughput figure (bench/run.ts is that).
 *
 * Usage: npm run build && node dist/bench/memory.js
 * (BENCH_MEMORY_S: seconds per run, default 8; BENCH_MEMORY_ENV='{"GATEWAY_LOG_QUEUE_BYTES":"…"}': settings, as JSON;
 * BENCH_BASELINE: a built checkout of another version, measured instead, for a before and after.)
 */
import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { runAlone, stopChild } from './children.js';
import { CHAT_REQUEST, EMBEDDINGS_REQUEST } from './fixtures.js';
import { BENCH_KEY, freePort, pinLogWriter, portOpen, spawnGateway, waitHealthy, waitReady } from './gateway-process.js';
import { nginxFailure, startNginx, staticUpstreamConfig } from './nginx.js';
import { memMiB, processTree, RssSampler } from './procfs.js';
import { logQueueOutcomes } from './request-logs.js';
import { runWrk } from './wrk.js';

const [SERVER_CORE, LOAD_CORE] = [0, 1];
const RUN_S = Number(process.env.BENCH_MEMORY_S ?? 8);
const IDLE_MS = 3000;

/** An embeddings answer of 1,536 floats: ~19 KB, what text-embedding-3-small returns for one input. */
export function bigEmbeddingsResponse(): string {
  const embedding = Array.from({ length: 1536 }, (_, i) => Number((Math.sin(i * 7.3) * 0.05).toFixed(9)));
  return JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding }], model: 'text-embedding-3-small', usage: { prompt_tokens: 2, total_tokens: 2 } });
}

const RUNS = [
  { name: 'chat, 16 connections', path: '/v1/chat/completions', body: CHAT_REQUEST, connections: 16 },
  { name: 'embeddings 19 KB, 16 connections', path: '/v1/embeddings', body: EMBEDDINGS_REQUEST, connections: 16 },
  { name: 'embeddings 19 KB, 64 connections', path: '/v1/embeddings', body: EMBEDDINGS_REQUEST, connections: 64 },
];

async function main(tmp: string): Promise<void> {
  execFileSync('taskset', ['-a', '-pc', String(LOAD_CORE), String(process.pid)], { stdio: 'ignore' });
  const upstreamPort = await freePort();
  const upstreamDir = join(tmp, 'nginx-upstream');
  // nginx's worker (user nobody) reads the answer's file under it.
  chmodSync(tmp, 0o755);
  const nginx = startNginx(upstreamDir, (d) => staticUpstreamConfig(d, upstreamPort, bigEmbeddingsResponse()), SERVER_CORE);
  await waitReady('nginx upstream', nginx, () => portOpen(upstreamPort), 5000).catch(async () => {
    throw new Error(await nginxFailure(upstreamDir, nginx));
  });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = process.env.BENCH_MEMORY_ENV ? (JSON.parse(process.env.BENCH_MEMORY_ENV) as Record<string, string>) : undefined;
  const proc = spawnGateway({ port, dir: join(tmp, 'gateway'), wrap: ['taskset', '-c', String(SERVER_CORE)], env, root: process.env.BENCH_BASELINE });
  try {
    await waitHealthy(base, proc);
    if (env?.GATEWAY_REQUEST_LOGS !== 'off') pinLogWriter(proc.pid!, LOAD_CORE);
    const rss = (): number => memMiB(processTree(proc.pid!), 'VmRSS');
    await sleep(IDLE_MS);
    console.log(`idle after start: ${rss().toFixed(1)} MiB`);
    const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-bench', 'x-gateway-api-key': BENCH_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `http://127.0.0.1:${upstreamPort}/v1` };
    for (const r of RUNS) {
      const sampler = new RssSampler(proc.pid!);
      const w = await runWrk({ url: `${base}${r.path}`, headers, body: r.body, connections: r.connections, durationS: RUN_S }, tmp, LOAD_CORE);
      await sleep(500);
      const peak = sampler.stop();
      console.log(`${r.name}: peak ${peak.toFixed(1)} MiB, ${Math.round(w.rps)} req/s, ${w.errors} errors`);
    }
    await sleep(IDLE_MS);
    const logs = await logQueueOutcomes(base);
    console.log(`idle after load: ${rss().toFixed(1)} MiB; VmHWM ${memMiB(processTree(proc.pid!), 'VmHWM').toFixed(1)} MiB; log records dropped ${logs.dropped ?? '-'}, spilled ${logs.spilled ?? '-'}`);
  } finally {
    await stopChild(proc, 15_000);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) runAlone('memory', main);
