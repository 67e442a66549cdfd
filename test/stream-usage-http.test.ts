// Usage on every stream, over HTTP: for a streaming client that did not ask for usage the
// gateway asks the provider (stream_options.include_usage) and strips the extra chunk and the
// `usage: null` fields again, so the client gets the stream the provider sends without the
// option; a client that asked gets the provider's stream untouched; providers that report usage
// unasked, or may refuse the option, are not asked. Ids and timestamps differ per answer, so
// streams are compared with those masked.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'sk-upstream';
const chatBody = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one two three' }], stream: true };
const completionBody = { model: 'gpt-3.5-turbo-instruct', prompt: 'say this', stream: true };

const mask = (sse: string): string => sse.replace(/"id":"[^"]+"/g, '"id":"…"').replace(/"created":\d+/g, '"created":0');

describe('usage on every stream', () => {
  const gw = useGateway();
  let mock: MockOpenAI;
  let routed: Record<string, string>;

  /** The provider's own stream for `body`, asked directly. */
  const direct = async (path: string, body: unknown): Promise<string> => {
    const res = await fetch(mock.url + path, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return res.text();
  };

  before(async () => {
    mock = await startMockOpenAI({ apiKey: KEY });
    routed = { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url, authorization: `Bearer ${KEY}` };
  });
  afterEach(() => mock.reset());
  after(async () => {
    await mock.close();
  });

  for (const [path, body] of [['/chat/completions', chatBody], ['/completions', completionBody]] as const) {
    it(`${path}: a client that did not ask gets the stream without usage; the provider was asked`, async () => {
      const res = await gw.call(path, { headers: routed, body });
      assert.equal(res.status, 200);
      const got = await res.text();
      assert.ok(!got.includes('usage'), got);
      const up = mock.requests[0]!.json;
      assert.deepEqual(up.stream_options, { include_usage: true });
      assert.deepEqual({ ...up, stream_options: undefined }, { ...body, stream_options: undefined });

      const unasked = await direct(path, body);
      assert.ok(!unasked.includes('usage'));
      assert.equal(mask(got), mask(unasked));
      // What the gateway read before stripping: the mock's usage chunk with include_usage.
      assert.match(await direct(path, { ...body, stream_options: { include_usage: true } }), /"choices":\[\],"usage":\{/);
    });
  }

  it('a client that asked gets the provider’s stream as it is: usage null on each chunk, the usage chunk last', async () => {
    const body = { ...chatBody, stream_options: { include_usage: true } };
    const res = await gw.call('/chat/completions', { headers: routed, body });
    const got = await res.text();
    assert.equal(mock.requests[0]!.body.toString('utf8'), JSON.stringify(body)); // the client's own bytes
    assert.equal(mask(got), mask(await direct('/chat/completions', body)));
    assert.match(got, /"usage":null/);
    assert.match(got, /"choices":\[\],"usage":\{"prompt_tokens":3,"completion_tokens":\d+/);
  });

  it('other stream options are kept; a stream the provider sends with a content-length is re-framed', async () => {
    const sse =
      'data: {"id":"a","choices":[{"index":0,"delta":{"content":"hi"}}],"usage":null}\n\n' +
      'data: {"id":"a","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\n' +
      'data: [DONE]\n\n';
    mock.enqueue('/v1/chat/completions', { headers: { 'content-type': 'text/event-stream', 'content-length': String(Buffer.byteLength(sse)) }, body: sse });
    const res = await gw.call('/chat/completions', { headers: routed, body: { ...chatBody, stream_options: { include_obfuscation: false } } });
    assert.equal(res.headers.get('content-length'), null);
    assert.equal(await res.text(), 'data: {"id":"a","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n');
    assert.deepEqual(mock.requests[0]!.json.stream_options, { include_obfuscation: false, include_usage: true });
  });

  it('the cache keeps the stream as the client got it: a hit has no usage either', async () => {
    const headers = { ...routed, 'x-gateway-config': JSON.stringify({ cache: { mode: 'simple' } }) };
    const body = { ...chatBody, messages: [{ role: 'user', content: 'cached stream' }] };
    const miss = await gw.call('/chat/completions', { headers, body });
    assert.equal(miss.headers.get('x-gateway-cache-status'), 'MISS');
    const sent = await miss.text();
    const hit = await gw.call('/chat/completions', { headers, body });
    assert.equal(hit.headers.get('x-gateway-cache-status'), 'HIT');
    assert.equal(await hit.text(), sent);
    assert.ok(!sent.includes('usage'));
    assert.equal(mock.requests.length, 1);
  });

  it('providers that report usage unasked or may refuse the option are not asked (Mistral, Together, an unknown server)', async () => {
    for (const provider of ['mistral-ai', 'together-ai', 'openai-compatible']) {
      mock.reset();
      const res = await gw.call('/chat/completions', { headers: { ...routed, 'x-gateway-provider': provider }, body: chatBody });
      assert.equal(res.status, 200, provider);
      await res.text();
      assert.equal(mock.requests[0]!.body.toString('utf8'), JSON.stringify(chatBody), provider);
    }
  });

  it('answers that are not streams are not touched', async () => {
    const res = await gw.call('/chat/completions', { headers: routed, body: { ...chatBody, stream: false } });
    const answer = (await res.json()) as { usage: { total_tokens: number } };
    assert.ok(answer.usage.total_tokens > 0);
    assert.equal(mock.requests[0]!.json.stream_options, undefined);
  });
});
