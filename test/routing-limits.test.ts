// What one request may take of the providers, whatever its config: upstream
// attempts (GATEWAY_MAX_ATTEMPTS) across retries and fallbacks at every depth,
// and its deadline (GATEWAY_REQUEST_DEADLINE_MS) over answers and backoffs.
// The 100-target bound of configs is unit-tested in config-schema.test.ts.
import { generateKeyPairSync } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { startMockServer } from './support/mock-server.js';
import { assertEnvelope, assertRouted, chat, startUpstreams, target, type Json, type Upstream } from './support/routing.js';

const CHAT = '/v1/chat/completions';
const DEADLINE_MS = 1000;
const fail = (status: number, headers: Record<string, string> = {}) => ({
  status,
  headers,
  body: { error: { message: `failed with ${status}`, type: 'server_error', param: null, code: null } },
});
const times = <T>(n: number, v: T): T[] => Array.from({ length: n }, () => v);
const fallback = (targets: Json[], extra: Json = {}): Json => ({ strategy: { mode: 'fallback' }, targets, ...extra });

let defaults: TestGateway;
let short: TestGateway;
let A: Upstream;
before(async () => {
  defaults = await startTestGateway();
  short = await startTestGateway({ GATEWAY_MAX_ATTEMPTS: '4', GATEWAY_REQUEST_DEADLINE_MS: String(DEADLINE_MS) });
  ({ A } = await startUpstreams('A'));
});
afterEach(() => A.reset());
after(async () => {
  await Promise.all([defaults.stop(), short.stop(), A.close()]);
});

describe('GATEWAY_MAX_ATTEMPTS', () => {
  // Five groups of ten failing targets, each retried five times: 300 calls without the bound.
  // retry-after-ms 0 keeps the backoffs out of the test's time.
  const retry = { attempts: 5, use_retry_after_headers: true };
  const fifty = (): Json => fallback(Array.from({ length: 5 }, () => fallback(times(10, target(A)))), { retry });

  it('a fallback of 50 failing targets with retries makes 10 upstream calls (the default), and answers the last failure', async () => {
    A.enqueue(CHAT, ...times(400, fail(503, { 'retry-after-ms': '0' })));
    const r = await chat(defaults, fifty());
    assert.equal(A.requests.length, 10);
    // The first target made 6 calls (5 retries), the second 4 (3 retries) when the bound was reached.
    assertRouted(r, { status: 503, index: 'config.targets[0].targets[1]', retries: 3 });
    assert.equal(r.json.error.message, 'failed with 503');
  });

  it('a failed token exchange while preparing a call counts as an attempt: 11 Vertex targets whose token_uri fails make 10 exchanges (the 11th is not tried)', async () => {
    const exchanges = await startMockServer<never>((_rec, _req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":"internal"}');
    });
    try {
      const account = {
        type: 'service_account',
        project_id: 'p',
        private_key_id: 'kid',
        // 1024 bits: 11 keys fit in the config header (16 KB).
        private_key: generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
        client_email: 'sa@p.iam.gserviceaccount.com',
        token_uri: `${exchanges.url}/token`,
      };
      const vertex = { provider: 'vertex-ai', cloud2_region: 'us-central1', cloud2_service_account_json: account };
      const r = await chat(defaults, fallback(times(11, vertex)));
      assert.ok(r.status >= 400, `status ${r.status} ${JSON.stringify(r.json)}`);
      assert.equal(exchanges.requests.length, 10);
    } finally {
      await exchanges.close();
    }
  });

  it('the bound is the environment’s: GATEWAY_MAX_ATTEMPTS=4 makes 4 calls', async () => {
    A.enqueue(CHAT, ...times(400, fail(503, { 'retry-after-ms': '0' })));
    const r = await chat(short, fifty());
    assert.equal(A.requests.length, 4);
    assertRouted(r, { status: 503, index: 'config.targets[0].targets[0]', retries: 3 });
  });

  it('a success within the bound is answered as usual', async () => {
    A.enqueue(CHAT, ...times(9, fail(503, { 'retry-after-ms': '0' })));
    const r = await chat(defaults, fifty());
    assertRouted(r, { status: 200, index: 'config.targets[0].targets[1]', retries: 3 });
    assert.equal(A.requests.length, 10);
  });
});

describe('GATEWAY_REQUEST_DEADLINE_MS', () => {
  it('a retry whose backoff would end past the deadline is not made: the last answer comes back at once', async () => {
    // Five retries 600 ms apart would take 3 s; the second wait would end past the 1 s deadline.
    A.enqueue(CHAT, ...times(6, fail(429, { 'retry-after-ms': '600' })));
    const r = await chat(short, target(A, { retry: { attempts: 5, use_retry_after_headers: true } }));
    assertRouted(r, { status: 429, retries: 1 });
    assert.equal(A.requests.length, 2);
    assert.ok(r.ms < DEADLINE_MS + 500, `answered after ${r.ms} ms`);
  });

  it('cuts an attempt still waiting for its answer at the deadline, even under a longer request_timeout: 504, and no fallback after it', async () => {
    A.enqueue(CHAT, { delayMs: 5000 });
    const r = await chat(short, fallback([target(A), target(A)], { request_timeout: 4000 }));
    assertEnvelope(r, 504, { code: 'deadline_exceeded' });
    assert.match(r.json.error.message, new RegExp(`deadline of ${DEADLINE_MS} ms`));
    assert.equal(r.headers.get('x-gateway-last-used-option-index'), 'config.targets[0]');
    assert.equal(A.requests.length, 1);
    assert.ok(r.ms >= DEADLINE_MS - 5 && r.ms < DEADLINE_MS + 1500, `answered after ${r.ms} ms`);
  });

  it('a shorter request_timeout still answers 408 first', async () => {
    A.enqueue(CHAT, { delayMs: 3000 });
    const r = await chat(short, target(A, { request_timeout: 200 }));
    assertEnvelope(r, 408, { code: 'request_timeout' });
  });

  it('bounds the read of an answer read whole: headers and part of its body, then nothing, is a timeout, not a request held forever', { timeout: 15_000 }, async () => {
    const stalled = await startMockServer<never>((_rec, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' });
      res.write('{"id":"chatcmpl-stalled",');
      // and nothing more, until the gateway gives up
    });
    try {
      const config = (extra: Json): Json => ({ provider: 'openai', api_key: 'sk-stalled', custom_host: `${stalled.url}/v1`, ...extra });
      const timedOut = await chat(short, config({ request_timeout: 300 }));
      assertEnvelope(timedOut, 408, { code: 'request_timeout' });
      const past = await chat(short, config({}));
      assertEnvelope(past, 504, { code: 'deadline_exceeded' });
      assert.ok(past.ms < DEADLINE_MS + 1500, `answered after ${past.ms} ms`);
    } finally {
      await stalled.close();
    }
  });

  it('does not cut a stream that has begun', async () => {
    const chunk = (content: string) => JSON.stringify({ object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] });
    A.enqueue(CHAT, { sse: times(4, chunk('tick ')), chunkDelayMs: 500 });
    const res = await short.call('/chat/completions', {
      headers: { 'x-gateway-config': JSON.stringify(target(A)) },
      body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] },
    });
    assert.equal(res.status, 200);
    const started = performance.now();
    const text = await res.text();
    assert.ok(performance.now() - started > DEADLINE_MS, 'the stream outlasted the deadline');
    assert.equal(text.match(/tick /g)?.length, 4);
    assert.match(text, /data: \[DONE\]/);
  });
});
