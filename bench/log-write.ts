/**
 * CPU per request log on the write path, stage by stage: building a record,
 * redacting its bodies and metadata, and writing it (LogRepo.insert at the
 * queue's batch sizes, then the whole queue: enqueue, batch, flush) on
 * SQLite (a file in a temp dir, opened as the gateway opens it) and on
 * Postgres. The gateway's throughput bench pins the whole process to one
 * core, so what counts is this process's CPU (all its threads), not wall
 * time; the Postgres server's own CPU is not in the figures.
 *
 *   npm run build && node dist/bench/log-write.js
 *
 * Records are written twice: without metadata (the throughput bench's
 * requests) and with three metadata pairs. Each figure is the median of 5
 * rounds (the machine is shared; a burst of someone else's work lands in
 * one round, not all).
 *
 * Env: LOG_BENCH_ROWS (records per write figure, default 20000),
 * LOG_BENCH_PREFILL (rows written to each database before measuring, so
 * index inserts land in trees of a realistic size; default 100000),
 * DATABASE_URL_BENCH (Postgres; default postgres://postgres@127.0.0.1:5432/test,
 * a throw-away schema; `none` skips Postgres).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { LogQueue, storeSink } from '../src/logs/queue.js';
import { LOG_FORMAT, type LogRecord } from '../src/store/log-record.js';
import { logBody, redactMetadata, redactValue, safeHeaders } from '../src/logs/redact.js';
import { SpillFiles } from '../src/logs/spill.js';
import { newId } from '../src/store/ids.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';

const ROWS = Number(process.env.LOG_BENCH_ROWS ?? 20_000);
const PREFILL = Number(process.env.LOG_BENCH_PREFILL ?? 100_000);
const PG_URL = process.env.DATABASE_URL_BENCH ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The queue writes up to 500 a batch; fewer when requests arrive slower than 5,000/s. */
const BATCH_SIZES = [1, 10, 100, 500];

/** A chat request of about 300 bytes, as the client sent it. */
const REQUEST = Buffer.from(
  JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are a helpful assistant that answers briefly and cites sources where it can.' },
      { role: 'user', content: 'What is the capital of Australia, and when did it become the capital? Answer in two sentences.' },
    ],
    temperature: 0.2,
    max_tokens: 200,
    user: 'user-4711',
  }),
);

/** A chat completion of about 600 bytes, as the provider sent it. */
const RESPONSE = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-AbCdEfGhIjKlMnOpQrStUvWxYz012',
    object: 'chat.completion',
    created: 1700000000,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'The capital of Australia is Canberra.\nIt became the capital in 1913, chosen as a compromise between Sydney and Melbourne, and Parliament moved there in 1927.',
          refusal: null,
        },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 52, completion_tokens: 38, total_tokens: 90, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
    system_fingerprint: 'fp_0ba0d124f1',
  }),
);

const HEADERS = {
  host: '127.0.0.1:8787',
  'content-type': 'application/json',
  'content-length': String(REQUEST.length),
  accept: 'application/json',
  'user-agent': 'OpenAI/JS 6.3.0',
  authorization: 'Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123456789',
  'x-gateway-api-key': 'gw-abcdefghijklmnopqrstuvwxyz',
  'x-gateway-provider': '@prod-openai',
  'x-gateway-metadata': '{"env":"prod","feature":"search","user":"u-11"}',
};

const FEATURES = ['search', 'chat', 'summarise', 'translate'];

/** Three pairs, few distinct values: how metadata is mostly used (environment, feature, user). */
function metadata(i: number): Record<string, string> {
  return { env: 'prod', feature: FEATURES[i % FEATURES.length]!, user: `u-${i % 1000}` };
}

const WORKSPACES = ['ws-a', 'ws-b', 'ws-c'];
const KEYS = Array.from({ length: 20 }, (_, i) => `key-${i}`);

/** The record the gateway builds when an answer is finished, bodies redacted here; the trace id is generated (no x-gateway-trace-id). */
function buildRecord(i: number, startedAt: number, withMetadata: boolean): LogRecord {
  return {
    id: newId(startedAt),
    createdAtMs: startedAt,
    traceId: newId(startedAt),
    spanId: null,
    parentSpanId: null,
    spanName: null,
    workspaceId: WORKSPACES[i % WORKSPACES.length]!,
    apiKeyId: KEYS[i % KEYS.length]!,
    userId: null,
    configId: null,
    virtualKeyId: 'vk-prod-openai',
    integrationId: null,
    promptId: null,
    promptVersion: null,
    provider: 'openai',
    model: 'gpt-4o-mini',
    endpoint: 'chat',
    method: 'POST',
    path: '/chat/completions',
    status: 200,
    latencyMs: 412,
    upstreamTtfbMs: 380,
    promptTokens: 52,
    completionTokens: 38,
    totalTokens: 90,
    tokensEstimated: false,
    costUsd: 0.0000306,
    cacheStatus: 'MISS',
    retryCount: 0,
    lastUsedOptionIndex: 'config',
    metadata: withMetadata ? redactMetadata(metadata(i)) : null,
    error: redactValue(null),
    hooks: null,
    requestHeaders: safeHeaders(HEADERS),
    requestBody: logBody(REQUEST),
    responseBody: logBody(RESPONSE),
    logFormat: LOG_FORMAT,
  };
}

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

const ROUNDS = 5;

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

/** µs of this process's CPU per call of fn, after a warm-up: the median of ROUNDS rounds of n calls. */
function perCall(n: number, fn: (i: number) => unknown): number {
  for (let i = 0; i < 2000; i++) fn(i);
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = cpuUs();
    for (let i = 0; i < n; i++) fn(i);
    rounds.push((cpuUs() - t0) / n);
  }
  return median(rounds);
}

let serial = 0;

function records(n: number, withMetadata: boolean): LogRecord[] {
  const now = Date.now();
  serial += n;
  return Array.from({ length: n }, (_, i) => buildRecord(serial + i, now, withMetadata));
}

/** µs of CPU per record for LogRepo.insert in batches of `size` (records built beforehand). */
async function insertCost(store: Store, size: number, rows: number, withMetadata: boolean): Promise<number> {
  await store.logs.insert(records(size, withMetadata)); // warm: statements prepared
  const perRound = Math.max(size, Math.round(rows / ROUNDS / size) * size);
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const batches = Array.from({ length: perRound / size }, () => records(size, withMetadata));
    const t0 = cpuUs();
    for (const b of batches) await store.logs.insert(b);
    rounds.push((cpuUs() - t0) / perRound);
  }
  return median(rounds);
}

/**
 * µs of CPU per record through the queue: records arrive 50 every 10 ms
 * (5,000/s: full batches of 500 every 100 ms), the pump batches and writes
 * them, close() writes the rest. The same arrivals without a queue are
 * measured too and taken off: this loop's own timers cost the bench ~3 µs
 * a record, and in a gateway the event loop is awake for requests anyway.
 * A store that cannot keep up makes the queue spill and replay, which the
 * figure includes (and `spilled` shows).
 */
async function queueCost(store: Store, dir: string, rows: number, withMetadata: boolean): Promise<{ us: number; spilled: number }> {
  const all = records(rows, withMetadata);
  const arrive = async (enqueue: (r: LogRecord) => void): Promise<void> => {
    for (let i = 0; i < all.length; i += 50) {
      for (const r of all.slice(i, i + 50)) enqueue(r);
      await sleep(10);
    }
  };
  let t0 = cpuUs();
  await arrive(() => {});
  const idle = cpuUs() - t0;
  const queue = new LogQueue({ sink: storeSink(store), spill: new SpillFiles(join(dir, 'spill')) });
  queue.start();
  t0 = cpuUs();
  await arrive((r) => queue.enqueue(r));
  await queue.close();
  const us = (cpuUs() - t0 - idle) / rows;
  const s = queue.stats();
  if (s.flushed + s.replayed !== rows) throw new Error(`queue wrote ${s.flushed + s.replayed} of ${rows} records (${JSON.stringify(s)})`);
  return { us, spilled: s.spilled };
}

async function prefill(store: Store): Promise<void> {
  for (let done = 0; done < PREFILL; done += 500) await store.logs.insert(records(Math.min(500, PREFILL - done), done % 1000 === 0));
}

interface WriteFigures {
  insert: Record<number, number>;
  queue: { us: number; spilled: number };
}

/** Figures without metadata, then with. */
type EngineFigures = [WriteFigures, WriteFigures];

async function measureEngine(store: Store, dir: string): Promise<EngineFigures> {
  await store.migrate();
  await prefill(store);
  const figures = async (withMetadata: boolean): Promise<WriteFigures> => {
    const insert: Record<number, number> = {};
    for (const size of BATCH_SIZES) insert[size] = await insertCost(store, size, size === 1 ? Math.min(ROWS, 2000) : ROWS, withMetadata);
    return { insert, queue: await queueCost(store, dir, ROWS, withMetadata) };
  };
  return [await figures(false), await figures(true)];
}

async function sqlite(): Promise<EngineFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-log-bench-'));
  const store = await openStore({ dataDir: dir, databaseUrl: undefined });
  try {
    return await measureEngine(store, dir);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres(): Promise<EngineFigures | string> {
  const schema = `sy_log_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  try {
    await admin.connect();
  } catch (e) {
    return `skipped: ${(e as Error).message}`;
  }
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-log-bench-'));
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(PG_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const store = await openStore({ dataDir: dir, databaseUrl: url.toString() });
    try {
      return await measureEngine(store, dir);
    } finally {
      await store.close();
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

function fmt(us: number): string {
  return us.toFixed(2).padStart(8);
}

async function main(): Promise<void> {
  const now = Date.now();
  const n = 20_000;
  const built = buildRecord(0, now, true);
  const bodies = perCall(n, () => {
    logBody(REQUEST);
    logBody(RESPONSE);
  });
  const parsed = JSON.parse(REQUEST.toString('utf8')) as unknown;
  const parsedBody = perCall(n, () => logBody(parsed));
  const secret = Buffer.from(REQUEST.toString('utf8').replace('"user-4711"', '"user-4711","api_key":"abc"'));
  const slowBody = perCall(n, () => logBody(secret));
  const meta = perCall(n, (i) => redactMetadata(metadata(i)));
  const headers = perCall(n, () => safeHeaders(HEADERS));
  const ids = perCall(n, () => newId());
  const plain = perCall(n, (i) => buildRecord(i, now, false));
  const whole = perCall(n, (i) => buildRecord(i, now, true));

  console.log(`request body ${REQUEST.length} B, response body ${RESPONSE.length} B, stored record ${JSON.stringify(built).length} B as JSON`);
  console.log('\n| stage | µs CPU per record |\n| --- | ---: |');
  console.log(`| id (newId) | ${fmt(ids)} |`);
  console.log(`| redact both bodies (raw bytes: request + response) | ${fmt(bodies)} |`);
  console.log(`| redact request body given parsed (for comparison) | ${fmt(parsedBody)} |`);
  console.log(`| redact request body with a secret-named field (slow path, for comparison) | ${fmt(slowBody)} |`);
  console.log(`| redact metadata (3 pairs) | ${fmt(meta)} |`);
  console.log(`| allow-listed headers | ${fmt(headers)} |`);
  console.log(`| whole record without metadata: ids, fields, headers, bodies | ${fmt(plain)} |`);
  console.log(`| whole record with metadata | ${fmt(whole)} |`);

  const engines: [string, EngineFigures | string][] = [['sqlite', await sqlite()]];
  if (PG_URL !== 'none') engines.push(['postgres', await postgres()]);
  console.log(`\nWrites (median of ${ROUNDS} rounds, ${ROWS} records in all, after ${PREFILL} rows prefilled; this process's CPU only):\n`);
  console.log(`| engine | metadata | ${BATCH_SIZES.map((s) => `insert ×${s}`).join(' | ')} | queue (enqueue → written) | spilled |`);
  console.log(`| --- | --- | ${BATCH_SIZES.map(() => '---:').join(' | ')} | ---: | ---: |`);
  for (const [name, f] of engines) {
    if (typeof f === 'string') {
      console.log(`| ${name} | ${f} |`);
      continue;
    }
    f.forEach((w, i) => {
      console.log(`| ${name} | ${i === 0 ? 'none' : '3 pairs'} | ${BATCH_SIZES.map((s) => fmt(w.insert[s]!)).join(' | ')} | ${fmt(w.queue.us)} | ${w.queue.spilled} |`);
    });
  }
}

await main();
