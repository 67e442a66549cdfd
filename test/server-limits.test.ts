// What one client may hold of the server: a request's head and body must arrive in time
// (a slowloris is cut off with a 408; a long streamed answer is not), connections are
// capped, idle ones do not crowd out a normal request, and a body over the limit gets
// its 413 read by the client — curl and the OpenAI SDK — instead of a reset connection.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { envelopeOf } from './support/http.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { useGateway } from './support/use-gateway.js';

const MiB = 1024 * 1024;

function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  return once(socket, 'connect').then(() => socket);
}

/** Resolves with what the server wrote once it closes the socket, and how long that took; rejects after `ms`. */
function closed(socket: Socket, ms: number): Promise<{ got: string; afterMs: number }> {
  const start = performance.now();
  let got = '';
  socket.setEncoding('latin1');
  socket.on('data', (s: string) => (got += s));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ got, afterMs: performance.now() - start });
    });
    socket.once('error', () => {});
  });
}

const chat = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

describe('connection limits', { timeout: 30_000 }, () => {
  let upstream: MockOpenAI;
  const gw = useGateway({ env: { GATEWAY_HEADERS_TIMEOUT_MS: '400', GATEWAY_BODY_TIMEOUT_MS: '1000', GATEWAY_MAX_CONNECTIONS: '2500' } });
  const headers = () => ({ 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': upstream.url, authorization: 'Bearer sk-test', 'content-type': 'application/json' });

  before(async () => {
    upstream = await startMockOpenAI();
  });
  after(() => upstream.close());

  it('a client trickling its headers is answered 408 and closed once the headers timeout passes', async () => {
    const socket = await open(gw.url);
    socket.write('POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n');
    const trickle = setInterval(() => socket.write('x-slow: y\r\n'), 50);
    try {
      const { got, afterMs } = await closed(socket, 5000);
      assert.match(got, /^HTTP\/1\.1 408 /);
      assert.equal(envelopeOf(got.slice(got.indexOf('\r\n\r\n') + 4)).type, 'timeout_error');
      assert.ok(afterMs >= 300, `closed after ${afterMs} ms, before the timeout`);
    } finally {
      clearInterval(trickle);
    }
  });

  it('a client trickling its body is cut off once the body timeout passes', async () => {
    const socket = await open(gw.url);
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nx-gateway-api-key: ${ADMIN_KEY}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{`);
    const trickle = setInterval(() => socket.write(' '), 50);
    try {
      const { afterMs } = await closed(socket, 5000);
      assert.ok(afterMs >= 800, `closed after ${afterMs} ms, before the timeout`);
    } finally {
      clearInterval(trickle);
    }
  });

  it('a streamed answer longer than both timeouts arrives whole', async () => {
    const events = Array.from({ length: 10 }, (_, i) =>
      JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: `w${i} ` }, finish_reason: null }] }),
    );
    upstream.enqueue('/v1/chat/completions', { sse: events, chunkDelayMs: 250 });
    const res = await fetch(`${gw.v1}/chat/completions`, { method: 'POST', headers: headers(), body: JSON.stringify({ ...chat('hi'), stream: true }) });
    assert.equal(res.status, 200);
    const text = await res.text();
    for (let i = 0; i < 10; i++) assert.ok(text.includes(`w${i} `), `event ${i} missing`);
    assert.ok(text.trimEnd().endsWith('data: [DONE]'));
  });

  it('2,000 idle connections do not stop a normal request', async () => {
    const idle = await Promise.all(Array.from({ length: 2000 }, () => open(gw.url)));
    try {
      const res = await fetch(`${gw.v1}/chat/completions`, { method: 'POST', headers: headers(), body: JSON.stringify(chat('hello')) });
      assert.equal(res.status, 200, await res.text());
    } finally {
      for (const s of idle) s.destroy();
    }
  });
});

describe('the connection cap', () => {
  const gw = useGateway({ env: { GATEWAY_MAX_CONNECTIONS: '20' } });

  it('closes connections past GATEWAY_MAX_CONNECTIONS at once, and takes new ones when others leave', async () => {
    const held = await Promise.all(Array.from({ length: 20 }, () => open(gw.url)));
    const extra = await open(gw.url);
    const { got } = await closed(extra, 2000);
    assert.equal(got, '');
    for (const s of held) s.destroy();
    for (let i = 0; ; i++) {
      // The server counts a connection gone once it has seen it close.
      const res = await fetch(`${gw.url}/health`).catch(() => null);
      if (res?.status === 200) break;
      assert.ok(i < 50, 'no connection taken after the others left');
      await new Promise((r) => setTimeout(r, 20));
    }
  });
});

describe('a body over GATEWAY_MAX_BODY_BYTES', { timeout: 60_000 }, () => {
  const gw = useGateway();
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-413-'));
    file = join(dir, 'body.json');
    writeFileSync(file, JSON.stringify(chat('x'.repeat(120 * MiB))));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const [name, extra] of [
    ['declared in content-length', []],
    ['sent chunked, no length declared', ['-H', 'transfer-encoding: chunked']],
  ] as const) {
    it(`curl reads the 413 of a 120 MiB body (${name})`, async () => {
      // Not spawnSync: the gateway runs in this process and must go on reading.
      const { stdout } = await promisify(execFile)(
        'curl',
        ['-sS', '-o', '-', '-w', '\n%{http_code}', '-H', `x-gateway-api-key: ${ADMIN_KEY}`, '-H', 'x-gateway-provider: openai', '-H', 'content-type: application/json', ...extra, '--data-binary', `@${file}`, `${gw.v1}/chat/completions`],
        { encoding: 'utf8', maxBuffer: 4 * MiB },
      );
      const [body, status] = [stdout.slice(0, stdout.lastIndexOf('\n')), stdout.slice(stdout.lastIndexOf('\n') + 1)];
      assert.equal(status, '413');
      assert.equal(envelopeOf(body).code, 'payload_too_large');
    });
  }

  it('the OpenAI SDK gets the 413 as an API error (no connection error, so no retried upload)', async () => {
    const client = new OpenAI({ baseURL: gw.v1, apiKey: 'sk-test', defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': 'openai' } });
    const err = await client.chat.completions.create(chat('x'.repeat(120 * MiB)) as never).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err instanceof OpenAI.APIError, `not an API error: ${String(err)}`);
    assert.equal(err.status, 413);
    assert.equal((err.error as { code?: string }).code, 'payload_too_large');
  });
});
