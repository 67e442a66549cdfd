// Issue 14 item 2: a caller's body can cost the log writer no more than its
// size, and the request thread never waits for the log writer. 200 requests
// with 1 MiB bodies full of `-----BEGIN PRIVATE KEY-----` and no END (each
// BEGIN once scanned to the end of the body: seconds of writer CPU per body)
// go through a running gateway while a small request is sent again and
// again: small requests keep being answered throughout (their p99 is
// reported, not judged: a wall-clock bound in a test fails on a busy machine,
// and speed is the benchmarks' to measure), every big request's log is
// written, or counted as dropped, soon after, and what is stored of a big
// body holds no key material.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { useMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { spawnGateway, type GatewayProcess } from './support/process.js';

const MiB = 1024 * 1024;
const BIG_REQUESTS = 200;
/**
 * One big request starts every this many ms (if the last has ended): the
 * subject is whether the request thread waits for the log writer, not how
 * a machine shared by other work queues a saturating load.
 */
const BIG_EVERY_MS = 50;
const KEY = 'logs-load-admin-key-0123456789abcdef';
const PEM_START = '-----BEGIN PRIVATE KEY-----';

// A gateway process of its own: what its request thread does is measured apart from this client and the mocks.
describe('log redaction under load (issue 14 item 2)', { timeout: 180_000 }, () => {
  let gw: GatewayProcess;
  let dataDir: string;
  const big = useMockOpenAI({ name: 'big' });
  const small = useMockOpenAI({ name: 'small' });
  const agent = new Agent({ connections: 2, keepAliveTimeout: 30_000 });

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-logs-load-'));
    gw = await spawnGateway({ GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_API_KEY: KEY });
  });
  after(async () => {
    gw.kill();
    await gw.exited;
    await agent.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const headers = (upstream: MockOpenAI, traceId: string) => ({
    'x-gateway-api-key': KEY,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': upstream.url,
    'x-gateway-trace-id': traceId,
    authorization: 'Bearer sk-test',
    'content-type': 'application/json',
  });

  async function chat(upstream: MockOpenAI, traceId: string, body: string | Buffer): Promise<number> {
    const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: headers(upstream, traceId), body, dispatcher: agent });
    await res.body.dump();
    return res.statusCode;
  }

  async function metric(name: string): Promise<number> {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    return Number(text.split('\n').find((l) => l.startsWith(name))?.split(' ').at(-1) ?? NaN);
  }

  it('small requests are answered throughout, and every log is written or counted soon after', async (t) => {
    const content = PEM_START.repeat(Math.ceil(MiB / PEM_START.length)).slice(0, MiB);
    const body = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }));
    // The big upstream answers briefly: the subject is the request body's log, not the mock's echo of it.
    big().enqueue('/v1/chat/completions', ...Array.from({ length: BIG_REQUESTS }, () => ({ body: { id: 'c', object: 'chat.completion', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } } })));
    const smallBody = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    // Warm: connections, the log writer thread, the first JIT.
    const WARM = 20;
    for (let i = 0; i < WARM; i++) assert.equal(await chat(small(), `warm-${i}`, smallBody), 200);

    const statuses: number[] = [];
    const load = (async () => {
      for (let i = 0; i < BIG_REQUESTS; i++) {
        const pace = sleep(BIG_EVERY_MS);
        statuses.push(await chat(big(), `big-${i}`, body));
        // The mock keeps every request it got: not these.
        big().requests.length = 0;
        await pace;
      }
    })();
    let loading = true;
    void load.finally(() => (loading = false));
    const latencies: number[] = [];
    while (loading) {
      const started = performance.now();
      assert.equal(await chat(small(), `small-${latencies.length}`, smallBody), 200);
      latencies.push(performance.now() - started);
    }
    await load;
    assert.deepEqual(new Set(statuses), new Set([200]));
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.ceil(latencies.length * 0.99) - 1]!;
    const seen = `p99 of ${latencies.length} small requests: ${p99.toFixed(1)} ms (median ${latencies[latencies.length >> 1]!.toFixed(1)} ms)`;
    t.diagnostic(seen);

    // The writer keeps up: each big body costs it milliseconds, so every log is accounted for well within the wait.
    const expected = WARM + BIG_REQUESTS + latencies.length;
    let accounted = 0;
    for (let i = 0; i < 300 && accounted < expected; i++) {
      if (i > 0) await sleep(100);
      accounted = (await metric('switchyard_log_records_total{outcome="flushed"}')) + (await metric('switchyard_log_records_total{outcome="dropped"}'));
    }
    assert.equal(accounted, expected, 'logs written or counted as dropped within 30 s');

    const admin = async (path: string) => {
      const res = await fetch(`${gw.url}/v1${path}`, { headers: { 'x-gateway-api-key': KEY } });
      assert.equal(res.status, 200);
      return (await res.json()) as Record<string, any>;
    };
    const page = await admin('/logs?trace_id=big-0');
    assert.equal(page.data.length, 1);
    const log = await admin(`/logs/${page.data[0].id}`);
    const stored = String(log.request.body);
    assert.ok(!stored.includes('PRIVATE KEY-----'), stored.slice(0, 200));
    assert.ok(stored.length < 1000, `${stored.length} characters kept of a body that is one unfinished key`);

    assert.ok(latencies.length >= 100, `only ${latencies.length} small requests during the load`);
  });
});
