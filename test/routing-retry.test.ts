// Black-box retry and request-timeout tests: what each upstream received, when
// (RecordedRequest.at), and the routing headers. The 60 s Retry-After cap and
// the jitter bounds are unit-tested in retry.test.ts instead of waited for.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from './support/gateway.js';
import { answer, assertEnvelope, assertRouted, chat, counts, gaps, target, useRouting, type Json, type Upstream } from './support/routing.js';

let gw: TestGateway;
let U: Record<'A' | 'B', Upstream>;
let A: Upstream, B: Upstream;
useRouting(['A', 'B'], (g, u) => {
  gw = g;
  U = u;
  ({ A, B } = u);
});

const CHAT = '/v1/chat/completions';
const fail = (status: number, headers?: Record<string, string>) => ({
  status,
  ...(headers ? { headers } : {}),
  body: { error: { message: `failed with ${status}`, type: 'server_error', param: null, code: null } },
});
const times = <T>(n: number, v: T): T[] => Array.from({ length: n }, () => v);
const withRetry = (retry: Json, extra: Json = {}): Json => target(A, { retry, ...extra });
// Timer and arrival stamps are whole milliseconds; allow a little slack below a wait's floor.
const SLACK = 5;

describe('retry', () => {
  it('attempts N on 503: the upstream sees N+1 requests and the header says N', async () => {
    A.enqueue(CHAT, ...times(3, fail(503)));
    const r = await chat(gw, withRetry({ attempts: 3 }));
    assertRouted(r, { status: 200, index: 'config', retries: 3, provider: 'openai', by: 'A' });
    assert.equal(A.requests.length, 4);
    // Every attempt carries the same body and credential.
    for (const req of A.requests) {
      assert.deepEqual(req.json, A.requests[0]!.json);
      assert.equal(req.headers.authorization, `Bearer ${A.key}`);
    }
  });

  it('stops after N retries and returns the last failure', async () => {
    A.enqueue(CHAT, fail(503), fail(503), { ...fail(502), headers: { 'x-attempt': 'last' } });
    const r = await chat(gw, withRetry({ attempts: 2 }));
    assertRouted(r, { status: 502, retries: 2 });
    assert.equal(r.headers.get('x-attempt'), 'last');
    assert.equal(r.json.error.message, 'failed with 502');
    assert.equal(A.requests.length, 3);
  });

  it('attempts 0 and no retry config both mean one request', async () => {
    A.enqueue(CHAT, fail(503), fail(503));
    const zero = await chat(gw, withRetry({ attempts: 0 }));
    assertRouted(zero, { status: 503, retries: 0 });
    const none = await chat(gw, target(A));
    assertRouted(none, { status: 503, retries: 0 });
    assert.equal(A.requests.length, 2);
  });

  for (const status of [429, 500, 502, 503, 504]) {
    it(`default codes: ${status} is retried`, async () => {
      A.enqueue(CHAT, fail(status));
      const r = await chat(gw, withRetry({ attempts: 1 }));
      assertRouted(r, { status: 200, retries: 1, by: 'A' });
      assert.equal(A.requests.length, 2);
    });
  }

  for (const status of [400, 401, 404, 501]) {
    it(`default codes: ${status} is not retried`, async () => {
      A.enqueue(CHAT, fail(status));
      const r = await chat(gw, withRetry({ attempts: 3 }));
      assertRouted(r, { status, retries: 0 });
      assert.equal(A.requests.length, 1);
    });
  }

  it('custom on_status_codes replace the defaults: 400 retried, 503 not', async () => {
    A.enqueue(CHAT, fail(400), fail(503));
    const r = await chat(gw, withRetry({ attempts: 3, on_status_codes: [400] }));
    assertRouted(r, { status: 503, retries: 1 });
    assert.equal(A.requests.length, 2);
  });

  it('on_status_codes given as strings ("409") count as numbers', async () => {
    A.enqueue(CHAT, fail(409));
    const r = await chat(gw, withRetry({ attempts: 1, on_status_codes: ['409'] }));
    assertRouted(r, { status: 200, retries: 1 });
    assert.equal(A.requests.length, 2);
  });

  it('a dropped connection is retried', async () => {
    A.enqueue(CHAT, { destroy: true });
    const r = await chat(gw, withRetry({ attempts: 1 }));
    assertRouted(r, { status: 200, retries: 1, by: 'A' });
    assert.equal(A.requests.length, 2);
  });

  it('exponential backoff: waits ~100 ms·2^n with jitter 0.5–1', async () => {
    A.enqueue(CHAT, ...times(3, fail(503)));
    const r = await chat(gw, withRetry({ attempts: 3 }));
    assertRouted(r, { status: 200, retries: 3 });
    const [g0, g1, g2] = gaps(A);
    // Floors are exact (jitter ≥ 0.5); ceilings are loose so a busy machine does not flake.
    assert.ok(g0! >= 50 - SLACK && g0! < 600, `first wait ${g0} ms, want 50–100`);
    assert.ok(g1! >= 100 - SLACK && g1! < 800, `second wait ${g1} ms, want 100–200`);
    assert.ok(g2! >= 200 - SLACK && g2! < 1000, `third wait ${g2} ms, want 200–400`);
  });

  it('use_retry_after_headers honours retry-after-ms', async () => {
    A.enqueue(CHAT, fail(429, { 'retry-after-ms': '300' }));
    const r = await chat(gw, withRetry({ attempts: 1, use_retry_after_headers: true }));
    assertRouted(r, { status: 200, retries: 1 });
    const [g] = gaps(A);
    // A backoff would be 50–100 ms.
    assert.ok(g! >= 300 - SLACK && g! < 1000, `waited ${g} ms, want ≥ 300`);
  });

  it('use_retry_after_headers honours retry-after in seconds', async () => {
    A.enqueue(CHAT, fail(503, { 'retry-after': '1' }));
    const r = await chat(gw, withRetry({ attempts: 1, use_retry_after_headers: true }));
    assertRouted(r, { status: 200, retries: 1 });
    const [g] = gaps(A);
    assert.ok(g! >= 1000 - SLACK && g! < 2000, `waited ${g} ms, want ≥ 1000`);
  });

  it('retry-after-ms wins over retry-after', async () => {
    A.enqueue(CHAT, fail(429, { 'retry-after-ms': '200', 'retry-after': '30' }));
    const r = await chat(gw, withRetry({ attempts: 1, use_retry_after_headers: true }));
    assertRouted(r, { status: 200, retries: 1 });
    const [g] = gaps(A);
    assert.ok(g! >= 200 - SLACK && g! < 1000, `waited ${g} ms, want 200`);
  });

  it('without use_retry_after_headers a large Retry-After is ignored (backoff instead)', async () => {
    A.enqueue(CHAT, fail(429, { 'retry-after': '30', 'retry-after-ms': '30000' }));
    const r = await chat(gw, withRetry({ attempts: 1 }));
    assertRouted(r, { status: 200, retries: 1 });
    const [g] = gaps(A);
    assert.ok(g! >= 50 - SLACK && g! < 1000, `waited ${g} ms, want a backoff (< 1 s)`);
  });

  it('use_retry_after_headers without such a header falls back to backoff', async () => {
    A.enqueue(CHAT, fail(503));
    const r = await chat(gw, withRetry({ attempts: 1, use_retry_after_headers: true }));
    assertRouted(r, { status: 200, retries: 1 });
    const [g] = gaps(A);
    assert.ok(g! >= 50 - SLACK && g! < 1000, `waited ${g} ms`);
  });

  it('retries happen per target inside fallback; the header counts the answering target’s', async () => {
    A.enqueue(CHAT, ...times(3, fail(503)));
    const r = await chat(gw, { strategy: { mode: 'fallback' }, retry: { attempts: 2 }, targets: [target(A), target(B)] });
    assertRouted(r, { status: 200, index: 'config.targets[1]', retries: 0, by: 'B' });
    assert.deepEqual(counts(U), { A: 3, B: 1 });
  });

  it('the answering target’s retries are counted after a fallback', async () => {
    A.enqueue(CHAT, fail(500));
    B.enqueue(CHAT, fail(429));
    const r = await chat(gw, { strategy: { mode: 'fallback' }, targets: [target(A), target(B, { retry: { attempts: 1 } })] });
    assertRouted(r, { status: 200, index: 'config.targets[1]', retries: 1, by: 'B' });
    assert.deepEqual(counts(U), { A: 1, B: 2 });
  });

  it('a target’s own retry overrides the inherited one', async () => {
    A.enqueue(CHAT, ...times(5, fail(503)));
    const r = await chat(gw, {
      strategy: { mode: 'fallback' },
      retry: { attempts: 4 },
      targets: [target(A, { retry: { attempts: 1 } }), target(B)],
    });
    assertRouted(r, { status: 200, index: 'config.targets[1]', by: 'B' });
    assert.deepEqual(counts(U), { A: 2, B: 1 });
  });
});

describe('request timeout', () => {
  it('config request_timeout → 408 envelope when the upstream is slower', async () => {
    A.enqueue(CHAT, { delayMs: 2000 });
    const r = await chat(gw, target(A, { request_timeout: 200 }));
    assertEnvelope(r, 408);
    assert.equal(r.headers.get('x-gateway-provider'), 'openai');
    assert.equal(r.headers.get('x-gateway-last-used-option-index'), 'config');
    assert.ok(r.json.error.message.includes('200'), r.json.error.message);
    assert.ok(r.ms >= 200 - SLACK && r.ms < 1500, `answered after ${r.ms} ms`);
    assert.equal(A.requests.length, 1);
  });

  it('x-gateway-request-timeout header → 408 (no config)', async () => {
    A.enqueue(CHAT, { delayMs: 2000 });
    const r = await chat(gw, null, {
      headers: {
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': A.url,
        authorization: `Bearer ${A.key}`,
        'x-gateway-request-timeout': '200',
      },
    });
    assertEnvelope(r, 408);
    assert.ok(r.ms < 1500, `answered after ${r.ms} ms`);
  });

  it('x-gateway-request-timeout header applies to a config without request_timeout', async () => {
    A.enqueue(CHAT, { delayMs: 2000 });
    const r = await chat(gw, target(A), { headers: { 'x-gateway-request-timeout': '200' } });
    assertEnvelope(r, 408);
    assert.ok(r.ms < 1500, `answered after ${r.ms} ms`);
  });

  it('an upstream faster than the timeout answers normally', async () => {
    A.enqueue(CHAT, answer(A, { delayMs: 50 }));
    const r = await chat(gw, target(A, { request_timeout: 2000 }));
    assertRouted(r, { status: 200, by: 'A' });
  });

  it('a timeout inside fallback moves to the next target', async () => {
    A.enqueue(CHAT, { delayMs: 2000 });
    const r = await chat(gw, { strategy: { mode: 'fallback' }, request_timeout: 200, targets: [target(A), target(B)] });
    assertRouted(r, { status: 200, index: 'config.targets[1]', by: 'B' });
    assert.deepEqual(counts(U), { A: 1, B: 1 });
    assert.ok(r.ms >= 200 - SLACK && r.ms < 1500, `answered after ${r.ms} ms`);
  });

  it('a timeout inside fallback narrowed by on_status_codes still moves on when 408 is listed', async () => {
    A.enqueue(CHAT, { delayMs: 2000 });
    const r = await chat(gw, {
      strategy: { mode: 'fallback', on_status_codes: [408, 503] },
      targets: [target(A, { request_timeout: 200 }), target(B)],
    });
    assertRouted(r, { status: 200, index: 'config.targets[1]', by: 'B' });
  });
});
