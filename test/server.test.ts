// Black-box tests of the HTTP server itself: health, metrics, authentication, JSON errors
// even for malformed HTTP, and the bootstrap admin key of a fresh data directory.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { assertEnvelope, envelopeOf } from './support/http.js';
import { spawnGateway, type GatewayProcess } from './support/process.js';
import { useGateway } from './support/use-gateway.js';

/** Writes raw bytes to the server and returns everything it answers until it closes. */
function rawExchange(url: string, payload: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let got = '';
    socket.setEncoding('latin1');
    socket.on('data', (s: string) => (got += s));
    socket.on('close', () => resolve(got));
    // The server may answer and close while we are still writing: a reset then is fine if it answered.
    socket.on('error', (e) => (got !== '' ? resolve(got) : reject(e)));
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer; got so far: ${got.slice(0, 200)}`)));
    socket.write(payload);
  });
}

function parseRaw(raw: string): { status: number; headers: Record<string, string>; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  assert.ok(end > 0, `not an HTTP response: ${JSON.stringify(raw.slice(0, 200))}`);
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1]);
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status, headers, body: raw.slice(end + 4) };
}

describe('server', () => {
  const gw = useGateway();
  let mock: MockOpenAI;

  before(async () => {
    mock = await startMockOpenAI({ name: 'mock' });
  });
  after(async () => {
    await mock.close();
  });

  it('GET /health → 200 {"status":"ok"} without a key', async () => {
    const res = await fetch(`${gw.url}/health`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await res.json(), { status: 'ok' });
    assert.equal(res.headers.get('x-powered-by'), null);
  });

  it('GET /metrics → Prometheus text with request, upstream and overhead series', async () => {
    const chat = await gw.call('/chat/completions', {
      headers: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url },
      body: { model: 'metrics-model', messages: [{ role: 'user', content: 'hi' }] },
    });
    assert.equal(chat.status, 200);
    await chat.arrayBuffer();
    const bad = await gw.call('/chat/completions', {
      headers: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url },
      body: { model: 'metrics-model', messages: [] },
    });
    assert.equal(bad.status, 400);
    await bad.arrayBuffer();

    const res = await fetch(`${gw.url}/metrics`); // no key
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    const sample = (name: string, labels: Record<string, string>): RegExp =>
      new RegExp(`^${name}\\{[^}]*${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join('[^}]*')}[^}]*\\} (\\S+)$`, 'm');
    // A model the catalog does not know is labelled `other`: labels never take a caller's string as it came.
    const ok = { provider: 'openai', model: 'other', status: '200' };
    assert.match(text, /^# TYPE switchyard_requests_total counter$/m);
    assert.equal(Number(sample('switchyard_requests_total', ok).exec(text)?.[1]), 1, 'requests_total for the 200');
    assert.match(text, sample('switchyard_requests_total', { status: '400' }));
    assert.match(text, /^# TYPE switchyard_request_duration_seconds histogram$/m);
    assert.equal(Number(sample('switchyard_request_duration_seconds_count', ok).exec(text)?.[1]), 1);
    assert.match(text, sample('switchyard_upstream_duration_seconds_count', ok));
    assert.match(text, /^# TYPE switchyard_gateway_overhead_seconds histogram$/m);
    assert.match(text, /^switchyard_gateway_overhead_seconds_count\{[^}]*\} [1-9]/m);
  });

  it('/v1 without a key → 401 envelope', async () => {
    const res = await fetch(`${gw.v1}/chat/completions`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    const err = await assertEnvelope(res, 401);
    assert.equal(err.type, 'authentication_error');
    assert.equal(res.headers.get('x-powered-by'), null);
  });

  it('/v1 with a wrong key → 401 envelope', async () => {
    for (const key of ['not-the-key', `${ADMIN_KEY}x`]) {
      const res = await fetch(`${gw.v1}/models`, { headers: { 'x-gateway-api-key': key } });
      await assertEnvelope(res, 401);
    }
    // …while the right key gets past authentication on the same path.
    const res = await fetch(`${gw.v1}/models`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    assert.notEqual(res.status, 401);
    await res.arrayBuffer();
  });

  it('a path outside /v1 → 404 envelope', async () => {
    for (const path of ['/', '/nope', '/v2/chat/completions', '/v1x/chat']) {
      const res = await fetch(`${gw.url}${path}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
      const err = await assertEnvelope(res, 404);
      assert.equal(err.type, 'not_found_error');
      assert.equal(res.headers.get('x-powered-by'), null);
    }
  });

  it('oversized headers → 431 with a JSON envelope', async () => {
    const raw = await rawExchange(
      gw.url,
      `GET /v1/models HTTP/1.1\r\nHost: x\r\nx-gateway-api-key: ${ADMIN_KEY}\r\nx-big: ${'a'.repeat(64 * 1024)}\r\n\r\n`,
    );
    const res = parseRaw(raw);
    assert.equal(res.status, 431);
    assert.match(res.headers['content-type'] ?? '', /^application\/json/);
    assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body, 'latin1'));
    envelopeOf(res.body);
  });

  it('garbage on the socket → 400 with a JSON envelope', async () => {
    const res = parseRaw(await rawExchange(gw.url, 'GARBAGE\r\n\r\n'));
    assert.equal(res.status, 400);
    assert.match(res.headers['content-type'] ?? '', /^application\/json/);
    const err = envelopeOf(res.body);
    assert.equal(err.type, 'invalid_request_error');
  });

  it('an HTTP/1.1 request without Host → 400 with a JSON envelope naming it (Node alone answers it bare)', async () => {
    for (const path of ['/health', '/v1/models']) {
      const res = parseRaw(await rawExchange(gw.url, `GET ${path} HTTP/1.1\r\nx-gateway-api-key: ${ADMIN_KEY}\r\nconnection: close\r\n\r\n`));
      assert.equal(res.status, 400);
      assert.match(res.headers['content-type'] ?? '', /^application\/json/);
      assert.equal(envelopeOf(res.body).param, 'host');
    }
  });

  it('the server still serves after malformed requests', async () => {
    const res = await fetch(`${gw.url}/health`);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
  });
});

describe('bootstrap admin key', { timeout: 30_000 }, () => {
  let dataDir: string;
  let proc: GatewayProcess | undefined;

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bootstrap-'));
  });
  after(() => {
    proc?.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function stop(p: GatewayProcess): Promise<void> {
    p.child.kill('SIGTERM');
    const { code } = await p.exited;
    assert.equal(code, 0);
  }

  const status = async (url: string, key: string): Promise<number> => {
    const res = await fetch(`${url}/v1/models`, { headers: { 'x-gateway-api-key': key } });
    await res.arrayBuffer();
    return res.status;
  };

  it('without GATEWAY_ADMIN_API_KEY a key is generated, printed once, and works; it is not stored in plain text', async () => {
    proc = await spawnGateway({ GATEWAY_DATA_DIR: dataDir });
    const first = proc;
    const lines = first.stdout().split('\n').filter((l) => /admin key/i.test(l));
    assert.equal(lines.length, 1, `stdout: ${first.stdout()}`);
    const key = /:\s*(\S+)\s*$/.exec(lines[0]!)?.[1];
    assert.ok(key !== undefined && key.length >= 32, lines[0]);

    assert.notEqual(await status(first.url, key), 401);
    assert.equal(await status(first.url, `${key}x`), 401);
    await stop(first);

    // Every file of the data dir (the SQLite file and its WAL) is free of the secret.
    for (const f of readdirSync(dataDir, { recursive: true, withFileTypes: true })) {
      if (!f.isFile()) continue;
      const bytes = readFileSync(join(f.parentPath, f.name));
      assert.ok(!bytes.includes(key), `${f} holds the key in plain text`);
      assert.ok(!bytes.includes(Buffer.from(key, 'utf16le')), `${f} holds the key in plain text`);
    }

    // A second start on the same data dir prints nothing new; the old key still works.
    proc = await spawnGateway({ GATEWAY_DATA_DIR: dataDir });
    const second = proc;
    assert.ok(!/admin key/i.test(second.stdout()), `second start printed: ${second.stdout()}`);
    assert.ok(!second.stdout().includes(key));
    assert.notEqual(await status(second.url, key), 401);
    await stop(second);
    assert.ok(!/admin key/i.test(second.stdout()));
  });
});
