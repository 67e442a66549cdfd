// Issue 14 item 5: what the gateway keeps in memory keyed by what callers
// send is bounded. 100,000 requests, each with a model and a metadata value
// of its own (a rate limit groups by it, weekly, so no window ends to sweep
// it), every CIRCUIT_EVERY-th with an inline config of its own whose circuit
// breaker opens on the upstream's answer and stays open, leave the process's
// memory and the size of /metrics where they were after the first 10,000;
// the bounded maps count what they evicted. Gateway, mock upstream and
// client share this process (HTTP keep-alive on loopback), so the memory
// measured is all of theirs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent, request } from 'undici';
import { ADMIN_KEY } from './support/gateway.js';
import { useMockOpenAI } from './support/mock-openai.js';
import { expectJson } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';
import { MAX_CIRCUIT_SERIES } from '../src/metrics/metrics.js';
import { MAX_MEMORY_CIRCUITS } from '../src/routing/circuit.js';

const TOTAL = 100_000;
const WARM = 10_000;
const CONNECTIONS = 16;
const COUNTER_GROUPS = 5_000;
/** Every this many requests, one with an inline config (parsed, validated and planned: the dearest kind). */
const CIRCUIT_EVERY = 8;

setFlagsFromString('--expose-gc');
/** A full collection, so the heap measured is what is still referenced. */
const gc = runInNewContext('gc') as () => void;

// ~60 s of CPU here; the timeout leaves room for a machine shared with other work.
describe('memory keyed by caller strings is bounded (issue 14 item 5)', { timeout: 600_000 }, () => {
  // Logs off: their writer thread and store are not the subject, and would only slow the load.
  const gw = useGateway({ env: { GATEWAY_REQUEST_LOGS: 'off', GATEWAY_MAX_COUNTER_GROUPS: String(COUNTER_GROUPS) } });
  const upstream = useMockOpenAI();
  /** Refuses the configs' key: 401, which their breakers count as a failure. */
  const refusing = useMockOpenAI({ apiKey: 'sk-the-right-one' });
  const agent = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 60_000 });

  before(async () => {
    const workspaces = await expectJson(await gw.call('/workspaces'), 200);
    const workspaceId = workspaces.data[0].id as string;
    await expectJson(
      await gw.call('/policies/rate-limits', {
        body: { name: 'per user', conditions: [{ key: 'workspace_id', value: workspaceId }], group_by: [{ key: 'metadata.user' }], type: 'requests', unit: 'rpw', value: 1_000_000, workspace_id: workspaceId },
      }),
      201,
    );
  });
  after(async () => {
    await agent.close();
  });

  async function send(i: number): Promise<void> {
    const circuit = i % CIRCUIT_EVERY === 0;
    const routing = circuit
      ? {
          'x-gateway-config': JSON.stringify({
            provider: 'openai',
            api_key: 'sk-wrong',
            custom_host: refusing().url,
            cb_config: { failure_threshold: 1, cooldown_interval: 60_000, failure_status_codes: [401] },
            // Makes each config its own: its own hash, its own circuit.
            request_timeout: 30_000 + i,
          }),
        }
      : { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': upstream().url, authorization: 'Bearer sk-test' };
    const res = await request(`${gw.v1}/chat/completions`, {
      method: 'POST',
      dispatcher: agent,
      headers: {
        'x-gateway-api-key': ADMIN_KEY,
        'x-gateway-metadata': JSON.stringify({ user: `user-${i}` }),
        'content-type': 'application/json',
        ...routing,
      },
      body: JSON.stringify({ model: `model-${i}`, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.body.dump();
    assert.equal(res.statusCode, circuit ? 401 : 200);
    // The mocks keep every request they got: not these.
    for (const m of [upstream(), refusing()]) if (m.requests.length >= 1000) m.requests.length = 0;
  }

  async function load(from: number, to: number): Promise<void> {
    let next = from;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < to) await send(next++);
      }),
    );
  }

  async function measure(): Promise<{ heapMB: number; rssMB: number; metricsBytes: number; metrics: string }> {
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    gc();
    const m = process.memoryUsage();
    return { heapMB: m.heapUsed / 2 ** 20, rssMB: m.rss / 2 ** 20, metricsBytes: Buffer.byteLength(metrics), metrics };
  }

  it('100,000 requests with distinct models, metadata values and inline configs leave memory and /metrics flat', async (t) => {
    await load(0, WARM);
    const warm = await measure();
    await load(WARM, TOTAL);
    const done = await measure();
    const growth = { heapMB: done.heapMB - warm.heapMB, rssMB: done.rssMB - warm.rssMB, metricsBytes: done.metricsBytes - warm.metricsBytes };
    const seen = `after ${WARM}: ${JSON.stringify({ ...warm, metrics: undefined })}; after ${TOTAL}: ${JSON.stringify({ ...done, metrics: undefined })}`;
    t.diagnostic(seen);
    // Counter values grow a digit or two; no series is added.
    assert.ok(growth.metricsBytes < warm.metricsBytes * 0.02, seen);
    assert.ok(growth.heapMB < 10, seen);
    assert.ok(growth.rssMB < 50, seen);

    const value = (line: string): number => Number(done.metrics.split('\n').find((l) => l.startsWith(line))?.split(' ').at(-1) ?? NaN);
    assert.equal(value('switchyard_requests_total{endpoint="chat",provider="openai",model="other",status="200"}'), TOTAL - TOTAL / CIRCUIT_EVERY);
    assert.equal(value('switchyard_bounded_evictions_total{map="rate_counters"}'), TOTAL - COUNTER_GROUPS);
    assert.equal(value('switchyard_bounded_evictions_total{map="circuit_series"}'), TOTAL / CIRCUIT_EVERY - MAX_CIRCUIT_SERIES);
    assert.equal(value('switchyard_bounded_evictions_total{map="circuits"}'), Math.max(0, TOTAL / CIRCUIT_EVERY - MAX_MEMORY_CIRCUITS));
  });
});
