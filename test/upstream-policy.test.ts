// Where upstream calls may go (GATEWAY_UPSTREAM_DENY / _ALLOW, docs/security.md), black-box. Every gateway
// here resolves names with a fake DNS (support/dns.ts): a name that "is" 169.254.169.254 is refused before a
// socket opens, and everything that is allowed lives on loopback. Nothing leaves the machine.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeDns } from './support/dns.js';
import { ADMIN_KEY, type TestGateway } from './support/gateway.js';
import { assertEnvelope } from './support/http.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { spawnGateway } from './support/process.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'sk-upstream-policy';
const messages = [{ role: 'user', content: 'hi' }];

/** A chat completion through the gateway to the OpenAI-compatible host `base` (…/v1). */
function chat(gw: TestGateway, base: string, config?: Record<string, unknown>): Promise<Response> {
  return gw.call('/chat/completions', {
    headers: {
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': base,
      authorization: `Bearer ${KEY}`,
      ...(config !== undefined ? { 'x-gateway-config': JSON.stringify(config) } : {}),
    },
    body: { model: 'gpt-4o-mini', messages },
  });
}

/** A request through the generic proxy to `base`. */
function proxied(gw: TestGateway, base: string, path = '/rerank'): Promise<Response> {
  return fetch(`${gw.v1}${path}`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': base, authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'q', documents: ['a'] }),
    redirect: 'manual',
  });
}

async function assertDenied(res: Response, host: RegExp): Promise<void> {
  const e = await assertEnvelope(res, 403);
  assert.equal(e.code, 'upstream_address_denied');
  assert.equal(e.type, 'permission_error');
  assert.match(e.message, host);
}

/** A loopback server on `address` answering JSON, closing each connection after its answer (the next request reconnects). */
async function closingServer(address: string): Promise<{ port: number; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    res.end('{"ok":true}');
  });
  server.listen(0, address);
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    requests: () => requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('upstream policy: the defaults', () => {
  const dns = fakeDns({
    'metadata.test': '169.254.169.254',
    'models.test': '127.0.0.1',
    // Were the name not refused as such, it would reach the mock.
    'metadata.google.internal': '127.0.0.1',
    'rebind.test': ['127.0.0.1', '169.254.169.254'],
  });
  const gw = useGateway({ lookup: dns.lookup });
  let mock: MockOpenAI;
  before(async () => {
    mock = await startMockOpenAI({ apiKey: KEY });
  });
  afterEach(() => mock.reset());
  after(() => mock.close());

  it('a custom host that resolves to 169.254.169.254 is refused: 403 naming the host and the address', async () => {
    await assertDenied(await chat(gw, 'http://metadata.test/latest/meta-data'), /metadata\.test \(169\.254\.169\.254\).*169\.254\.0\.0\/16/);
  });

  it('the generic proxy, the same', async () => {
    await assertDenied(await proxied(gw, 'http://metadata.test/v1'), /metadata\.test \(169\.254\.169\.254\)/);
  });

  it('metadata.google.internal is refused by its name, never looked up, wherever it resolves', async () => {
    const asked = dns.asked.length;
    await assertDenied(await chat(gw, `http://metadata.google.internal:${mock.port}/v1`), /metadata\.google\.internal refused/);
    await assertDenied(await proxied(gw, `http://METADATA.google.internal.:${mock.port}/v1`), /metadata\.google\.internal/);
    assert.equal(dns.asked.length, asked);
    assert.equal(mock.requests.length, 0);
  });

  it('loopback, by address or by a name resolving to it, is allowed by default (self-hosted models live there)', async () => {
    assert.equal((await chat(gw, mock.url)).status, 200);
    assert.equal((await chat(gw, `http://models.test:${mock.port}/v1`)).status, 200);
    assert.equal(mock.requests.length, 2);
  });

  it('a refused call is not retried, whatever the retry policy names', async () => {
    const config = { retry: { attempts: 3, on_status_codes: [403, 502] } };
    const lookups = (): number => dns.asked.filter((n) => n === 'metadata.test').length;
    const before = lookups();
    await assertDenied(await chat(gw, 'http://metadata.test/v1', config), /metadata\.test/);
    assert.equal(lookups(), before + 1, 'one attempt, one lookup');
  });

  it('a refused call gives the circuit breaker no verdict: not a failure (even where failure_status_codes names 403), not a success', async () => {
    // No provider in the config: the target takes it and the host from the headers, so one circuit sees both hosts
    // (request_timeout only makes it a config the schema accepts).
    const config = { request_timeout: 30_000, cb_config: { failure_threshold: 2, cooldown_interval: 60_000, failure_status_codes: [403, 502] } };
    const fail502 = { status: 502, body: { error: { message: 'bad gateway', type: 'server_error', param: null, code: null } } };
    for (let i = 0; i < 2; i++) await assertDenied(await chat(gw, 'http://metadata.test/v1', config), /metadata\.test/);
    mock.enqueue('/v1/chat/completions', fail502, fail502);
    assert.equal((await chat(gw, mock.url, config)).status, 502);
    // Had it counted as a success, this would reset the count of consecutive failures.
    await assertDenied(await chat(gw, 'http://metadata.test/v1', config), /metadata\.test/);
    assert.equal((await chat(gw, mock.url, config)).status, 502);
    const open = await assertEnvelope(await chat(gw, mock.url, config), 503);
    assert.equal(open.code, 'circuit_open');
    assert.equal(mock.requests.length, 2);
  });

  it('a name that rebinds: its first connection reaches loopback, the next one (after the server closed it) is refused', async () => {
    const server = await closingServer('127.0.0.1');
    try {
      const base = `http://rebind.test:${server.port}/v1`;
      assert.equal((await proxied(gw, base)).status, 200);
      await assertDenied(await proxied(gw, base), /rebind\.test \(169\.254\.169\.254\)/);
      assert.equal(server.requests(), 1);
      assert.equal(dns.asked.filter((n) => n === 'rebind.test').length, 2);
    } finally {
      await server.close();
    }
  });

  it('a token exchange is held to the policy too: a service account whose token_uri resolves to 169.254.169.254', async () => {
    const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const account = { type: 'service_account', project_id: 'p', private_key: pem, client_email: 'sa@p.iam.gserviceaccount.com', token_uri: 'http://metadata.test/token' };
    const res = await gw.call('/chat/completions', {
      headers: { 'x-gateway-config': JSON.stringify({ provider: 'vertex-ai', cloud2_region: 'us-central1', custom_host: mock.url, cloud2_service_account_json: account }) },
      body: { model: 'gemini-2.5-flash', messages },
    });
    await assertDenied(res, /metadata\.test \(169\.254\.169\.254\)/);
    assert.equal(mock.requests.length, 0);
  });

  it('a provider\'s redirect is never followed: the proxy relays the 302 as it came', async () => {
    mock.enqueue('/v1/rerank', { status: 302, headers: { location: `${mock.url}/elsewhere` }, body: '' });
    const res = await proxied(gw, mock.url);
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), `${mock.url}/elsewhere`);
    assert.equal(mock.requests.length, 1);
  });
});

describe('upstream policy: GATEWAY_UPSTREAM_DENY=127.0.0.0/8', () => {
  const dns = fakeDns({ 'models.test': '127.0.0.1', 'metadata.test': '169.254.169.254' });
  const gw = useGateway({ env: { GATEWAY_UPSTREAM_DENY: '127.0.0.0/8' }, lookup: dns.lookup });
  let mock: MockOpenAI;
  before(async () => {
    mock = await startMockOpenAI({ apiKey: KEY });
  });
  after(() => mock.close());

  it('refuses the mock on loopback in every notation a URL may write its address, and by a name resolving to it', async () => {
    const p = mock.port;
    for (const host of ['127.0.0.1', '2130706433', '0x7f000001', '0177.0.0.1', '0x7f.0.0.1', '127.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', 'models.test']) {
      await assertDenied(await chat(gw, `http://${host}:${p}/v1`), /127\.0\.0\.0\/8 \(GATEWAY_UPSTREAM_DENY\)/);
    }
    await assertDenied(await proxied(gw, mock.url), /127\.0\.0\.1/);
    // The defaults still stand beside it.
    await assertDenied(await chat(gw, 'http://metadata.test/v1'), /169\.254\.0\.0\/16/);
    assert.equal(mock.requests.length, 0);
  });
});

describe('upstream policy: GATEWAY_UPSTREAM_ALLOW carves exceptions out of GATEWAY_UPSTREAM_DENY', () => {
  const dns = fakeDns({ 'models.test': '127.0.0.2', 'other.test': '127.0.0.2' });
  const gw = useGateway({ env: { GATEWAY_UPSTREAM_DENY: '127.0.0.0/8', GATEWAY_UPSTREAM_ALLOW: '127.0.0.1, models.test' }, lookup: dns.lookup });
  let mock: MockOpenAI;
  let second: Awaited<ReturnType<typeof closingServer>>;
  before(async () => {
    mock = await startMockOpenAI({ apiKey: KEY });
    second = await closingServer('127.0.0.2');
  });
  after(async () => {
    await mock.close();
    await second.close();
  });

  it('an allowed address inside the denied range is reached; the rest of the range is not', async () => {
    assert.equal((await chat(gw, mock.url)).status, 200);
    await assertDenied(await proxied(gw, `http://127.0.0.2:${second.port}/v1`), /127\.0\.0\.2 refused.*127\.0\.0\.0\/8/);
    assert.equal(second.requests(), 0);
  });

  it('an allowed name is reached whatever it resolves to; another name resolving to the same address is not', async () => {
    assert.equal((await proxied(gw, `http://models.test:${second.port}/v1`)).status, 200);
    await assertDenied(await proxied(gw, `http://other.test:${second.port}/v1`), /other\.test \(127\.0\.0\.2\)/);
    assert.equal(second.requests(), 1);
  });
});

describe('upstream policy: bad values stop the start', () => {
  for (const [name, value] of [
    ['GATEWAY_UPSTREAM_DENY', '10.0.0.0/33'],
    ['GATEWAY_UPSTREAM_ALLOW', 'models.internal,http://models.internal'],
  ] as const) {
    it(`${name}=${value}`, async () => {
      await assert.rejects(spawnGateway({ [name]: value }), (e: Error) => {
        assert.match(e.message, /exited before it was ready/);
        assert.match(e.message, new RegExp(`switchyard: ${name}: '[^']+' is not a CIDR`));
        return true;
      });
    });
  }
});
