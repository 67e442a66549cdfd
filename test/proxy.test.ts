// Black-box tests of the generic proxy: any other /v1 path goes to the provider and
// its answer comes back unchanged, bytes, status and headers.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { assertEnvelope, assertStreamedAsSent } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const UPSTREAM_KEY = 'sk-upstream';

interface Echo {
  method: string;
  path: string;
  headers: Record<string, string>;
  body_base64: string;
}

describe('generic proxy', () => {
  const gw = useGateway();
  let mock: MockOpenAI;
  let routed: Record<string, string>;

  before(async () => {
    mock = await startMockOpenAI({ name: 'mock', apiKey: UPSTREAM_KEY });
    routed = {
      'x-gateway-api-key': ADMIN_KEY,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': mock.url,
      authorization: `Bearer ${UPSTREAM_KEY}`,
    };
  });
  afterEach(() => mock.reset());
  after(async () => {
    await mock.close();
  });

  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
    it(`${method}: method, path and query reach the provider`, async () => {
      const body = method === 'GET' || method === 'DELETE' ? undefined : JSON.stringify({ query: 'q', documents: ['a', 'b'], top_n: 1 });
      const res = await fetch(`${gw.v1}/rerank/some/thing?x=1&y=two%20words&x=3`, {
        method,
        headers: { ...routed, ...(body ? { 'content-type': 'application/json' } : {}) },
        body,
      });
      assert.equal(res.status, 200);
      const echo = (await res.json()) as Echo;
      assert.equal(echo.method, method);
      assert.equal(echo.path, '/v1/rerank/some/thing?x=1&y=two%20words&x=3');
      assert.equal(Buffer.from(echo.body_base64, 'base64').toString('utf8'), body ?? '');
      assert.equal(echo.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
      assert.equal(mock.requests.length, 1);
      assert.equal(res.headers.get('x-gateway-provider'), 'openai');
      assert.ok(res.headers.get('x-gateway-trace-id'));
    });
  }

  for (const method of ['POST', 'PUT', 'PATCH']) {
    it(`${method}: a random binary body arrives byte for byte`, async () => {
      const bytes = randomBytes(64 * 1024 + 7);
      const res = await fetch(`${gw.v1}/files/raw`, {
        method,
        headers: { ...routed, 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      const got = mock.requests[0]!;
      assert.equal(got.headers['content-type'], 'application/octet-stream');
      assert.equal(got.headers['content-length'], String(bytes.length));
      assert.ok(got.body.equals(bytes), 'body bytes differ');
    });
  }

  it('GET /v1/binary: bytes, content-type and status as the provider sent them', async () => {
    const res = await fetch(`${gw.v1}/binary`, { headers: routed });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/octet-stream');
    const got = Buffer.from(await res.arrayBuffer());
    assert.ok(got.equals(Buffer.from(Array.from({ length: 256 }, (_, i) => i))));
    // Provider headers come along unchanged.
    assert.equal(res.headers.get('openai-version'), '2020-10-01');
    assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
  });

  it('a multipart upload arrives intact with its boundary', async () => {
    const file = randomBytes(10_000);
    const form = new FormData();
    form.append('purpose', 'fine-tune');
    form.append('file', new Blob([new Uint8Array(file)], { type: 'application/jsonl' }), 'train.jsonl');
    const res = await fetch(`${gw.v1}/upload`, { method: 'POST', headers: routed, body: form });
    const answer = (await res.json()) as { bytes: number; content_type: string };
    assert.equal(res.status, 200, JSON.stringify(answer));

    const got = mock.requests[0]!;
    const contentType = got.headers['content-type']!;
    assert.match(contentType, /^multipart\/form-data; boundary=/);
    assert.equal(answer.content_type, contentType);
    assert.equal(answer.bytes, got.body.length);
    // Parse what the provider got with the boundary it was told: the parts are all there.
    const parsed = await new Response(new Uint8Array(got.body), { headers: { 'content-type': contentType } }).formData();
    assert.equal(parsed.get('purpose'), 'fine-tune');
    const part = parsed.get('file') as File;
    assert.equal(part.name, 'train.jsonl');
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(file));
  });

  it("a provider's error is returned unchanged", async () => {
    const body = '{"detail":[{"loc":["body","documents"],"msg":"field required"}]}  ';
    mock.enqueue('/v1/rerank', {
      status: 422,
      headers: { 'content-type': 'application/problem+json; charset=utf-8', 'x-provider-thing': 'kept' },
      body,
    });
    const res = await fetch(`${gw.v1}/rerank`, {
      method: 'POST',
      headers: { ...routed, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(res.status, 422);
    assert.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(res.headers.get('x-provider-thing'), 'kept');
    assert.equal(await res.text(), body);
  });

  it('hop-by-hop headers are not forwarded', async () => {
    // fetch refuses to send these, so a plain http request does.
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${gw.v1}/echo`);
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'GET',
          headers: {
            ...routed,
            connection: 'keep-alive, x-hop-marker',
            'x-hop-marker': 'named in Connection, so hop-by-hop',
            'keep-alive': 'timeout=5, max=100',
            te: 'trailers',
            upgrade: 'h2c',
            'proxy-authorization': 'Basic cHJveHk6c2VjcmV0',
            'x-custom-end-to-end': 'kept',
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 200);
    const h = mock.requests[0]!.headers;
    assert.equal(h['x-custom-end-to-end'], 'kept'); // an ordinary header does go through
    assert.equal(h['keep-alive'], undefined);
    assert.equal(h.te, undefined);
    assert.equal(h.upgrade, undefined);
    assert.equal(h['proxy-authorization'], undefined);
    assert.ok(!(h.connection ?? '').includes('x-hop-marker'), `connection: ${h.connection}`);
    assert.equal(h['x-hop-marker'], undefined);
  });

  it('x-forwarded-* and every x-gateway-* header (the gateway key!) stay with the gateway', async () => {
    const res = await fetch(`${gw.v1}/echo`, {
      method: 'POST',
      headers: {
        ...routed,
        'content-type': 'application/json',
        'x-forwarded-for': '203.0.113.9',
        'x-forwarded-host': 'public.example.com',
        'x-forwarded-proto': 'https',
        forwarded: 'for=203.0.113.9',
        'x-real-ip': '203.0.113.9',
        'x-gateway-trace-id': 'trace-proxy',
        'x-gateway-metadata': '{"user":"u1"}',
        // Asking to forward them explicitly must not leak them either.
        'x-gateway-forward-headers': 'x-gateway-api-key, x-forwarded-for, x-custom',
        'x-custom': 'kept',
      },
      body: '{}',
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-gateway-trace-id'), 'trace-proxy');
    const h = mock.requests[0]!.headers;
    assert.equal(h['x-custom'], 'kept');
    for (const [name, value] of Object.entries(h)) {
      assert.ok(!name.startsWith('x-gateway-'), `${name} reached the provider`);
      assert.ok(!name.startsWith('x-forwarded-'), `${name} reached the provider`);
      assert.ok(!String(value).includes(ADMIN_KEY), `the gateway key reached the provider in ${name}`);
    }
    assert.equal(h.forwarded, undefined);
    assert.equal(h['x-real-ip'], undefined);
    assert.equal(h.authorization, `Bearer ${UPSTREAM_KEY}`);
  });

  it('a streamed provider answer is relayed as it comes', async () => {
    const sse = ['{"a":1}', '{"a":2}', '{"a":3}', '{"a":4}'];
    mock.enqueue('/v1/runs/stream', { sse, chunkDelayMs: 150 });
    const t0 = performance.now();
    const res = await fetch(`${gw.v1}/runs/stream`, { method: 'POST', headers: { ...routed, 'content-type': 'application/json' }, body: '{}' });
    await assertStreamedAsSent(res, sse, t0, 400, 450);
  });

  it('a 5 MiB upload goes through intact', async () => {
    const bytes = randomBytes(5 * 1024 * 1024);
    const res = await fetch(`${gw.v1}/files/big`, {
      method: 'POST',
      headers: { ...routed, 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    assert.equal(res.status, 200);
    const echo = (await res.json()) as Echo;
    assert.ok(Buffer.from(echo.body_base64, 'base64').equals(bytes), 'echoed body differs');
    assert.ok(mock.requests[0]!.body.equals(bytes));
  });

  it('a chunked upload (no content-length) streams through intact', async () => {
    const bytes = randomBytes(1024 * 1024 + 3);
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) c.enqueue(bytes.subarray(i, i + 64 * 1024));
        c.close();
      },
    });
    const res = await fetch(`${gw.v1}/files/chunked`, {
      method: 'POST',
      headers: { ...routed, 'content-type': 'application/octet-stream' },
      body,
      duplex: 'half',
    } as RequestInit);
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    assert.ok(mock.requests[0]!.body.equals(bytes));
  });

  describe('body size limit (GATEWAY_MAX_BODY_BYTES)', () => {
    const LIMIT = 64 * 1024;
    const small = useGateway({ settings: { maxBodyBytes: LIMIT } });

    it('a streamed body declared over the limit is a 413 before it is read; nothing reaches the provider', async () => {
      const res = await fetch(`${small.v1}/files/big`, { method: 'POST', headers: { ...routed, 'content-type': 'application/octet-stream' }, body: randomBytes(LIMIT + 1) });
      assert.equal((await assertEnvelope(res, 413)).code, 'payload_too_large');
      assert.equal(mock.requests.length, 0);
    });

    it('a chunked body (no length) is streamed within the limit, and cut off past it', async () => {
      const chunked = (size: number): RequestInit => {
        const bytes = randomBytes(size);
        const body = new ReadableStream<Uint8Array>({
          start(c) {
            for (let i = 0; i < bytes.length; i += 16 * 1024) c.enqueue(bytes.subarray(i, i + 16 * 1024));
            c.close();
          },
        });
        return { method: 'POST', headers: { ...routed, 'content-type': 'application/octet-stream' }, body, duplex: 'half' } as RequestInit;
      };
      const within = await fetch(`${small.v1}/files/within`, chunked(LIMIT));
      assert.equal(within.status, 200);
      await within.arrayBuffer();
      assert.equal(mock.requests.length, 1);
      // Past it the connection closes: no answer, and no whole body at the provider.
      // Past it the connection closes (an answer would wait for the rest of the body), and the rest is not
      // read: of 64 MiB offered, the client gets to send little more than its socket buffers hold.
      const offered = 64 * 1024 * 1024;
      let pulled = 0;
      const endless = new ReadableStream<Uint8Array>({
        pull(c) {
          if (pulled >= offered) return c.close();
          pulled += 64 * 1024;
          c.enqueue(new Uint8Array(64 * 1024));
        },
      });
      const init = { method: 'POST', headers: { ...routed, 'content-type': 'application/octet-stream' }, body: endless, duplex: 'half' } as RequestInit;
      const past = await fetch(`${small.v1}/files/past`, init).then(async (r) => `${r.status} ${JSON.parse(await r.text()).error.code}`, () => 'closed');
      assert.match(past, /^(413 payload_too_large|closed)$/);
      assert.equal(past, 'closed', 'no answer: the connection was closed, not left open for a body nobody reads');
      assert.ok(pulled < offered / 4, `the client sent ${pulled} bytes`);
      assert.ok(mock.requests.every((r) => r.body.length <= LIMIT), 'the provider got no more than the limit');
    });
  });
});
