// Black-box tests of the model endpoints (chat, completions, embeddings): the official
// OpenAI SDK pointed at a real in-process gateway in front of a mock OpenAI upstream.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { assertEnvelope, assertStreamedAsSent } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const UPSTREAM_KEY = 'sk-upstream';

describe('model endpoints', () => {
  const gw = useGateway();
  let mock: MockOpenAI;
  let client: OpenAI;
  /** Headers of a request routed to the mock as provider `openai`. */
  let routed: Record<string, string>;

  before(async () => {
    mock = await startMockOpenAI({ name: 'mock', apiKey: UPSTREAM_KEY });
    routed = {
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': mock.url,
      authorization: `Bearer ${UPSTREAM_KEY}`,
    };
    client = new OpenAI({
      apiKey: UPSTREAM_KEY,
      baseURL: gw.v1,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url },
    });
  });
  afterEach(() => mock.reset());
  after(async () => {
    await mock.close();
  });

  describe('through the OpenAI SDK', () => {
    it('chat: answers, and the upstream sees the provider key and the exact body', async () => {
      const params = {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system' as const, content: 'be brief' },
          { role: 'user' as const, content: 'hello there' },
        ],
        temperature: 0.5,
        max_completion_tokens: 20,
      };
      const res = await client.chat.completions.create(params);
      assert.equal(res.object, 'chat.completion');
      assert.equal(res.choices[0]?.message.content, '[mock] echo: hello there');
      assert.equal(res.usage?.total_tokens, 8);

      assert.equal(mock.requests.length, 1);
      const up = mock.requests[0]!;
      assert.equal(up.method, 'POST');
      assert.equal(up.path, '/v1/chat/completions');
      assert.equal(up.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
      assert.equal(up.body.toString('utf8'), JSON.stringify(params));
      assert.match(up.headers['content-type'] ?? '', /^application\/json/);
      for (const name of Object.keys(up.headers)) assert.ok(!name.startsWith('x-gateway-'), `${name} reached the upstream`);
    });

    it('streaming chat: chunks arrive and include_usage gives usage', async () => {
      const stream = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'one two three four' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let chunks = 0;
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        chunks++;
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) usage = chunk.usage;
      }
      assert.equal(text, '[mock] echo: one two three four');
      assert.ok(chunks >= 6, `only ${chunks} chunks`);
      assert.deepEqual({ p: usage?.prompt_tokens, c: usage?.completion_tokens }, { p: 4, c: 6 });
      assert.deepEqual(mock.requests[0]?.json.stream_options, { include_usage: true });
    });

    it('completions, plain and streamed', async () => {
      const plain = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'say this' });
      assert.equal(plain.object, 'text_completion');
      assert.equal(plain.choices[0]?.text, '[mock] echo: say this');

      const stream = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'say that', stream: true });
      let text = '';
      let chunks = 0;
      for await (const chunk of stream) {
        chunks++;
        text += chunk.choices[0]?.text ?? '';
      }
      assert.equal(text, '[mock] echo: say that');
      assert.ok(chunks >= 3);
      assert.deepEqual(
        mock.requests.map((r) => [r.path, r.headers.authorization, r.json.stream]),
        [
          ['/v1/completions', `Bearer ${UPSTREAM_KEY}`, undefined],
          ['/v1/completions', `Bearer ${UPSTREAM_KEY}`, true],
        ],
      );
    });

    it('embeddings, float and base64', async () => {
      const floats = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'], encoding_format: 'float' });
      assert.equal(floats.object, 'list');
      assert.equal(floats.data.length, 2);
      const vec = floats.data[0]!.embedding;
      assert.equal(vec.length, 8);
      assert.ok(vec.every((x) => typeof x === 'number'));

      const b64 = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'a', encoding_format: 'base64' });
      const raw = b64.data[0]!.embedding as unknown as string;
      assert.equal(typeof raw, 'string');
      const bytes = Buffer.from(raw, 'base64');
      const decoded = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
      assert.deepEqual(decoded, vec); // same input, same vector, other encoding

      assert.deepEqual(
        mock.requests.map((r) => [r.path, r.json.encoding_format]),
        [
          ['/v1/embeddings', 'float'],
          ['/v1/embeddings', 'base64'],
        ],
      );
    });
  });

  describe('providers of the OpenAI-compatible family', () => {
    let family: MockOpenAI;
    before(async () => {
      family = await startMockOpenAI({ name: 'family' });
    });
    after(() => family.close());

    for (const provider of ['groq', 'deepseek', 'ollama', 'together-ai']) {
      it(`${provider} with a custom host reaches it`, async () => {
        family.reset();
        const res = await gw.call('/chat/completions', {
          headers: { 'x-gateway-provider': provider, 'x-gateway-custom-host': family.url, authorization: 'Bearer sk-family' },
          body: { model: 'some-model', messages: [{ role: 'user', content: 'hi' }] },
        });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('x-gateway-provider'), provider);
        const body = (await res.json()) as { choices: { message: { content: string } }[] };
        assert.equal(body.choices[0]?.message.content, '[family] echo: hi');
        assert.equal(family.requests.length, 1);
        assert.equal(family.requests[0]!.path, '/v1/chat/completions');
        assert.equal(family.requests[0]!.headers.authorization, 'Bearer sk-family');
      });
    }

    it('ollama needs no provider key', async () => {
      family.reset();
      const res = await gw.call('/chat/completions', {
        headers: { 'x-gateway-provider': 'ollama', 'x-gateway-custom-host': family.url },
        body: { model: 'llama3', messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(family.requests[0]?.headers.authorization, undefined);
    });

    it('an endpoint the provider lacks (groq embeddings) is a 400, not a call', async () => {
      family.reset();
      const res = await gw.call('/embeddings', {
        headers: { 'x-gateway-provider': 'groq', 'x-gateway-custom-host': family.url, authorization: 'Bearer sk-family' },
        body: { model: 'e', input: 'hi' },
      });
      const err = await assertEnvelope(res, 400);
      assert.match(err.message, /groq/);
      assert.match(err.message, /embeddings/);
      assert.equal(family.requests.length, 0);
    });
  });

  describe('streaming relay', () => {
    it('relays events as they come, not buffered', async () => {
      const sse = Array.from({ length: 5 }, (_, i) => JSON.stringify({ i }));
      mock.enqueue('/v1/chat/completions', { sse, chunkDelayMs: 200 });
      const t0 = performance.now();
      const res = await gw.call('/chat/completions', {
        headers: routed,
        body: { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true },
      });
      // [DONE] is sent ~1000 ms after the first event.
      await assertStreamedAsSent(res, sse, t0, 500, 700);
    });

    it('a client that disconnects mid-stream aborts the upstream request', async () => {
      const sse = Array.from({ length: 20 }, (_, i) => JSON.stringify({ i }));
      mock.enqueue('/v1/chat/completions', { sse, chunkDelayMs: 100 });
      const ac = new AbortController();
      const res = await fetch(`${gw.v1}/chat/completions`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json', ...routed },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }),
        signal: ac.signal,
      });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      const first = await reader.read();
      assert.match(new TextDecoder().decode(first.value), /^data: \{"i":0\}/);
      ac.abort();
      await reader.cancel().catch(() => {});
      await mock.waitForAbortedStreams(1, 3000);
    });

    it('a client that leaves before the provider answers aborts the provider call too', async () => {
      mock.enqueue('/v1/chat/completions', { delayMs: 1500, sse: ['{"i":0}'] });
      const ac = new AbortController();
      const pending = fetch(`${gw.v1}/chat/completions`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json', ...routed },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }),
        signal: ac.signal,
      }).catch((e: Error) => e);
      while (mock.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
      ac.abort();
      assert.ok((await pending) instanceof Error);
      // The gateway closed its provider connection well before the provider's 1.5 s answer.
      await mock.waitForAbortedStreams(1, 1000);
      const health = await fetch(`${gw.url}/health`);
      assert.equal(health.status, 200);
    });
  });

  describe('validation', () => {
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['empty messages', '/chat/completions', { model: 'm', messages: [] }, 'messages'],
      ['n 129', '/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }], n: 129 }, 'n'],
      ['5 stop sequences', '/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }], stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
      ['temperature 3', '/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 3 }, 'temperature'],
      ['top_logprobs without logprobs', '/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }], top_logprobs: 2 }, 'top_logprobs'],
      ['best_of not above n', '/completions', { model: 'm', prompt: 'x', best_of: 2, n: 2 }, 'best_of'],
      ['empty embedding input', '/embeddings', { model: 'm', input: '' }, 'input'],
      ['2049 embedding inputs', '/embeddings', { model: 'm', input: Array.from({ length: 2049 }, () => 'x') }, 'input'],
      ['dimensions 0', '/embeddings', { model: 'm', input: 'x', dimensions: 0 }, 'dimensions'],
    ];
    for (const [name, path, body, param] of cases) {
      it(`${name} → 400 naming ${param}, never sent upstream`, async () => {
        const res = await gw.call(path, { headers: routed, body });
        const err = await assertEnvelope(res, 400);
        assert.equal(err.param, param);
        assert.ok(err.message.includes(param), err.message);
        assert.equal(err.type, 'invalid_request_error');
        assert.equal(mock.requests.length, 0);
      });
    }

    it('a valid request of each endpoint does pass (the cases above fail for their field)', async () => {
      for (const [path, body] of [
        ['/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }], n: 128, temperature: 2, stop: ['a', 'b', 'c', 'd'], logprobs: true, top_logprobs: 2 }],
        ['/completions', { model: 'm', prompt: 'x', best_of: 3, n: 2 }],
        ['/embeddings', { model: 'm', input: Array.from({ length: 2048 }, () => 'x'), dimensions: 1 }],
      ] as const) {
        const res = await gw.call(path, { headers: routed, body });
        assert.equal(res.status, 200, `${path}: ${await res.text()}`);
      }
      assert.equal(mock.requests.length, 3);
    });

    it('invalid JSON → 400', async () => {
      const res = await gw.call('/chat/completions', { headers: routed, body: '{"model": "m", "messages": [' });
      const err = await assertEnvelope(res, 400);
      assert.match(err.message, /JSON/);
      assert.equal(mock.requests.length, 0);
    });

    it('thinking needs x-gateway-strict-compat-compliance: false', async () => {
      const body = { model: 'm', messages: [{ role: 'user', content: 'x' }], thinking: { type: 'enabled', budget_tokens: 1024 } };
      const denied = await gw.call('/chat/completions', { headers: routed, body });
      const err = await assertEnvelope(denied, 400);
      assert.equal(err.param, 'thinking');
      assert.equal(mock.requests.length, 0);

      const allowed = await gw.call('/chat/completions', { headers: { ...routed, 'x-gateway-strict-compat-compliance': 'false' }, body });
      assert.equal(allowed.status, 200, await allowed.clone().text());
      assert.deepEqual(mock.requests[0]?.json.thinking, { type: 'enabled', budget_tokens: 1024 });
    });

    it('unknown provider → 400', async () => {
      const res = await gw.call('/chat/completions', {
        headers: { ...routed, 'x-gateway-provider': 'no-such-provider' },
        body: { model: 'm', messages: [{ role: 'user', content: 'x' }] },
      });
      const err = await assertEnvelope(res, 400);
      assert.match(err.message, /no-such-provider/);
      assert.equal(mock.requests.length, 0);
    });

    it('an unknown virtual key (header) → 400 naming the header', async () => {
      const res = await gw.call('/chat/completions', {
        headers: { 'x-gateway-virtual-key': 'vk-missing' },
        body: { model: 'm', messages: [{ role: 'user', content: 'x' }] },
      });
      const err = await assertEnvelope(res, 400);
      assert.equal(err.param, 'x-gateway-virtual-key');
      assert.match(err.message, /vk-missing/);
      assert.equal(mock.requests.length, 0);
    });
  });

  describe('body size limit', () => {
    const small = useGateway({ settings: { maxBodyBytes: 1024 } });

    const big = { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(2048) }] };

    it('a body over GATEWAY_MAX_BODY_BYTES → 413', async () => {
      const res = await small.call('/chat/completions', { headers: routed, body: big });
      const err = await assertEnvelope(res, 413);
      assert.match(err.message, /1024/);
      assert.equal(mock.requests.length, 0);
    });

    it('a chunked body (no content-length) over the limit → 413 too', async () => {
      const bytes = new TextEncoder().encode(JSON.stringify(big));
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < bytes.length; i += 512) c.enqueue(bytes.slice(i, i + 512));
          c.close();
        },
      });
      const res = await fetch(`${small.v1}/chat/completions`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json', ...routed },
        body,
        duplex: 'half',
      } as RequestInit);
      await assertEnvelope(res, 413);
      assert.equal(mock.requests.length, 0);
    });

    it('a body under the limit passes', async () => {
      const res = await small.call('/chat/completions', { headers: routed, body: { model: 'm', messages: [{ role: 'user', content: 'x' }] } });
      assert.equal(res.status, 200);
    });
  });

  describe('response headers', () => {
    const chat = { model: 'm', messages: [{ role: 'user', content: 'x' }] };

    it('on success: trace id echoed, provider, cache status, retry count, option index', async () => {
      const { data, response } = await client.chat.completions
        .create(chat as OpenAI.ChatCompletionCreateParamsNonStreaming, { headers: { 'x-gateway-trace-id': 'trace-abc-123' } })
        .withResponse();
      assert.equal(data.object, 'chat.completion');
      const h = response.headers;
      assert.equal(h.get('x-gateway-trace-id'), 'trace-abc-123');
      assert.equal(h.get('x-gateway-provider'), 'openai');
      assert.equal(h.get('x-gateway-cache-status'), 'DISABLED');
      assert.equal(h.get('x-gateway-retry-attempt-count'), '0');
      assert.equal(h.get('x-gateway-last-used-option-index'), 'config');
      assert.equal(h.get('x-powered-by'), null);
      // The provider's own headers come along.
      assert.equal(h.get('openai-version'), '2020-10-01');
    });

    it('a trace id is generated when the client sends none, a new one each time, time-ordered', async () => {
      const a = await gw.call('/chat/completions', { headers: routed, body: chat });
      const b = await gw.call('/chat/completions', { headers: routed, body: chat });
      const ta = a.headers.get('x-gateway-trace-id');
      const tb = b.headers.get('x-gateway-trace-id');
      assert.deepEqual([a.status, b.status], [200, 200]);
      // UUIDv7, so that request logs index them in order.
      for (const t of [ta, tb]) assert.match(String(t), /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.ok(tb! > ta!);
    });

    it('on a gateway error: trace id and cache status, with the envelope', async () => {
      const res = await gw.call('/chat/completions', { headers: { ...routed, 'x-gateway-trace-id': 'trace-err-1' }, body: { model: 'm', messages: [] } });
      assert.equal(res.headers.get('x-gateway-trace-id'), 'trace-err-1');
      assert.equal(res.headers.get('x-gateway-cache-status'), 'DISABLED');
      await assertEnvelope(res, 400);

      const routedErr = await gw.call('/chat/completions', {
        headers: { ...routed, 'x-gateway-provider': 'nope', 'x-gateway-trace-id': 'trace-err-2' },
        body: chat,
      });
      assert.equal(routedErr.headers.get('x-gateway-trace-id'), 'trace-err-2');
      assert.equal(routedErr.headers.get('x-gateway-retry-attempt-count'), '0');
      assert.equal(routedErr.headers.get('x-gateway-last-used-option-index'), 'config');
      await assertEnvelope(routedErr, 400);
    });

    it('on a provider error: its status and body, with every gateway header', async () => {
      mock.enqueue('/v1/chat/completions', { status: 429, body: { error: { message: 'slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' } } });
      const res = await gw.call('/chat/completions', { headers: { ...routed, 'x-gateway-trace-id': 'trace-err-3' }, body: chat });
      assert.equal(res.status, 429);
      assert.equal(res.headers.get('x-gateway-trace-id'), 'trace-err-3');
      assert.equal(res.headers.get('x-gateway-provider'), 'openai');
      assert.equal(res.headers.get('x-gateway-cache-status'), 'DISABLED');
      assert.equal(res.headers.get('x-gateway-retry-attempt-count'), '0');
      assert.equal(res.headers.get('x-gateway-last-used-option-index'), 'config');
      const err = await assertEnvelope(res, 429);
      assert.equal(err.message, 'slow down');
    });

    it('an unreachable provider → 502 envelope naming the provider', async () => {
      const res = await gw.call('/chat/completions', {
        headers: { ...routed, 'x-gateway-custom-host': 'http://127.0.0.1:1/v1' },
        body: chat,
      });
      const err = await assertEnvelope(res, 502);
      assert.match(err.message, /openai/);
      assert.equal(res.headers.get('x-gateway-provider'), 'openai');
    });
  });
});
