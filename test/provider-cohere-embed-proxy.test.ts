// Black-box tests of the Cohere adapter's embeddings (Embed v2), its generic proxy and
// pass-through mode, with the OpenAI SDK and plain fetch against a mock Cohere.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_KEY } from './support/gateway.js';
import { DEFAULT_EMBED_DIMS, mockVector } from './support/mock-cohere.js';
import { KEY, useCohere } from './support/cohere-fixture.js';
import { assertEnvelope } from './support/http.js';

describe('cohere: embeddings, proxy, pass-through', () => {
  const co = useCohere();

  describe('embeddings', () => {
    it('floats: texts, input_type defaulted, floats requested, answer in OpenAI shape', async () => {
      const res = await co.client.embeddings.create({ model: 'embed-v4.0', input: ['hello world', 'bye'], encoding_format: 'float', user: 'u1' });
      assert.equal(co.mock.requests.length, 1);
      const up = co.mock.requests[0]!;
      assert.equal(up.path, '/v2/embed');
      assert.equal(up.headers.authorization, `Bearer ${KEY}`);
      assert.deepEqual(up.json, { model: 'embed-v4.0', texts: ['hello world', 'bye'], input_type: 'search_document', embedding_types: ['float'] });
      assert.equal(res.object, 'list');
      assert.equal(res.model, 'embed-v4.0');
      assert.deepEqual(
        res.data.map((d) => [d.object, d.index, d.embedding]),
        [
          ['embedding', 0, mockVector('hello world', DEFAULT_EMBED_DIMS)],
          ['embedding', 1, mockVector('bye', DEFAULT_EMBED_DIMS)],
        ],
      );
      // Only billed units in embed's meta: they are the usage.
      assert.deepEqual(res.usage, { prompt_tokens: 3, total_tokens: 3 });
    });

    it('base64 is made by the gateway from the floats: little-endian float32', async () => {
      const res = await co.gw.call('/embeddings', { headers: co.routed, body: { model: 'embed-v4.0', input: 'one string', encoding_format: 'base64' } });
      assert.equal(res.status, 200);
      assert.deepEqual(co.mock.requests[0]!.json.embedding_types, ['float']);
      const body = (await res.json()) as { data: { embedding: string }[] };
      const bytes = Buffer.from(body.data[0]!.embedding, 'base64');
      assert.equal(bytes.length, DEFAULT_EMBED_DIMS * 4);
      const decoded = Array.from({ length: DEFAULT_EMBED_DIMS }, (_, i) => bytes.readFloatLE(i * 4));
      assert.deepEqual(decoded, mockVector('one string', DEFAULT_EMBED_DIMS));
    });

    it("dimensions → output_dimension; the client's input_type and Cohere's own fields go through", async () => {
      const res = await co.client.embeddings.create({
        model: 'embed-v4.0',
        input: 'query text',
        dimensions: 256,
        ...({ input_type: 'search_query', truncate: 'END' } as object),
      });
      assert.deepEqual(co.mock.requests[0]!.json, {
        model: 'embed-v4.0',
        texts: ['query text'],
        input_type: 'search_query',
        embedding_types: ['float'],
        truncate: 'END',
        output_dimension: 256,
      });
      assert.equal(res.data[0]!.embedding.length, 256);
    });

    it('token ids, embedding_types and stream are refused naming the field; Cohere\'s own limits answer with its status', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ input: [1, 2, 3] }, 'input'],
        [{ input: [[1, 2], [3]] }, 'input'],
        [{ input: 'x', embedding_types: ['int8'] }, 'embedding_types'],
        [{ input: 'x', stream: true }, 'stream'],
      ];
      for (const [body, param] of cases) {
        const res = await co.gw.call('/embeddings', { headers: co.routed, body: { model: 'embed-v4.0', ...body } });
        assert.equal((await assertEnvelope(res, 400)).param, param);
      }
      assert.equal(co.mock.requests.length, 0);

      const tooMany = await co.gw.call('/embeddings', { headers: co.routed, body: { model: 'embed-v4.0', input: Array.from({ length: 97 }, (_, i) => `t${i}`) } });
      assert.match((await assertEnvelope(tooMany, 400)).message, /at most 96/);
      const badDims = await co.gw.call('/embeddings', { headers: co.routed, body: { model: 'embed-v4.0', input: 'x', dimensions: 100 } });
      assert.match((await assertEnvelope(badDims, 400)).message, /output_dimension/);
      const wrongKey = await co.gw.call('/embeddings', { headers: { ...co.routed, authorization: 'Bearer co-nope' }, body: { model: 'embed-v4.0', input: 'x' } });
      assert.equal((await assertEnvelope(wrongKey, 401)).message, 'invalid api token');
    });

    it('an answer without float embeddings is a 502', async () => {
      co.mock.enqueue('/v2/embed', { body: { id: 'e', embeddings: { int8: [[1]] } } });
      const res = await co.gw.call('/embeddings', { headers: co.routed, body: { model: 'embed-v4.0', input: 'x' } });
      assert.match((await assertEnvelope(res, 502)).message, /no float embeddings/);
    });
  });

  describe('generic proxy', () => {
    interface Echo {
      method: string;
      path: string;
      headers: Record<string, string>;
      body: string;
    }

    it("a path after /v1 that names Cohere's version goes as it is; any other keeps /v1", async () => {
      const rerank = { model: 'rerank-v3.5', query: 'q', documents: ['a', 'b'], top_n: 1 };
      const v2 = await fetch(`${co.gw.v1}/v2/rerank?x=1`, {
        method: 'POST',
        headers: { ...co.routed, 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
        body: JSON.stringify(rerank),
      });
      assert.equal(v2.status, 200);
      const echo = (await v2.json()) as Echo;
      assert.equal(echo.path, '/v2/rerank?x=1');
      assert.equal(echo.headers.authorization, `Bearer ${KEY}`);
      assert.equal(echo.body, JSON.stringify(rerank), 'the body goes untranslated');
      assert.equal(v2.headers.get('x-gateway-provider'), 'cohere');

      const tokenize = await fetch(`${co.gw.v1}/tokenize`, {
        method: 'POST',
        headers: { ...co.routed, 'x-gateway-api-key': ADMIN_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'hi', model: 'command-r' }),
      });
      assert.equal(((await tokenize.json()) as Echo).path, '/v1/tokenize');

      const datasets = await fetch(`${co.gw.v1}/datasets?datasetType=embed-input`, { headers: { ...co.routed, 'x-gateway-api-key': ADMIN_KEY } });
      const d = (await datasets.json()) as Echo;
      assert.deepEqual([d.method, d.path], ['GET', '/v1/datasets?datasetType=embed-input']);
    });

    it("Cohere's own error comes back unchanged", async () => {
      const res = await fetch(`${co.gw.v1}/v2/rerank`, {
        method: 'POST',
        headers: { ...co.routed, 'x-gateway-api-key': ADMIN_KEY, authorization: 'Bearer co-nope', 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(res.status, 401);
      const body = (await res.json()) as { id: string; message: string };
      assert.deepEqual(Object.keys(body).sort(), ['id', 'message']);
      assert.equal(body.message, 'invalid api token');
    });
  });

  describe('pass-through mode', () => {
    it("chat and embed bodies go to Cohere's endpoints as sent; the answers come back as Cohere wrote them", async () => {
      const config = JSON.stringify({ passthrough: true, provider: 'cohere', api_key: KEY, custom_host: co.mock.url });
      const native = { model: 'command-r', messages: [{ role: 'user', content: 'native body' }], k: 3 };
      const res = await co.gw.call('/chat/completions', { headers: { 'x-gateway-config': config }, body: native });
      assert.equal(res.status, 200);
      assert.equal(co.mock.requests[0]!.path, '/v2/chat');
      assert.deepEqual(co.mock.requests[0]!.json, native);
      const answer = (await res.json()) as { finish_reason: string; message: { content: { text: string }[] } };
      assert.equal(answer.finish_reason, 'COMPLETE');
      assert.equal(answer.message.content[0]!.text, '[cohere] echo: native body');

      const embed = { model: 'embed-v4.0', texts: ['x'], input_type: 'clustering', embedding_types: ['float'] };
      const e = await co.gw.call('/embeddings', { headers: { 'x-gateway-config': config }, body: embed });
      assert.equal(e.status, 200);
      assert.equal(co.mock.requests[1]!.path, '/v2/embed');
      assert.deepEqual(co.mock.requests[1]!.json, embed);
      assert.ok(((await e.json()) as { embeddings: { float: number[][] } }).embeddings.float);
    });
  });
});
