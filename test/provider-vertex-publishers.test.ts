// Vertex AI model ids that name their publisher (`anthropic.…`, `google.…`, `meta.…`), as the
// reference product takes them, beside the bare ids: the OpenAI SDK against a real gateway in
// front of the mock Vertex AI, each form whole and streamed. URL shapes on Google's own hosts:
// src/providers/vertex-ai/adapter.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { useMockGemini } from './support/mock-gemini.js';
import { assertEnvelope } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const PROJECT = 'proj-publishers';
const REGION = 'us-east5';
const AT = `/v1/projects/${PROJECT}/locations/${REGION}`;

describe('vertex-ai: model ids with a publisher', () => {
  const gw = useGateway();
  const vertex = useMockGemini({ project: PROJECT, location: REGION, staticToken: 'ya29.static' });

  const sdk = (): OpenAI =>
    new OpenAI({
      apiKey: 'unused',
      baseURL: gw.v1,
      maxRetries: 0,
      defaultHeaders: {
        'x-gateway-api-key': ADMIN_KEY,
        'x-gateway-config': JSON.stringify({ provider: 'vertex-ai', api_key: 'ya29.static', cloud2_project_id: PROJECT, cloud2_region: REGION, custom_host: vertex().vertexBase }),
      },
    });

  async function whole(model: string): Promise<OpenAI.ChatCompletion> {
    const res = await sdk().chat.completions.create({ model, messages: [{ role: 'user', content: 'hello vertex' }], max_tokens: 32 });
    assert.equal(res.object, 'chat.completion');
    assert.equal(res.choices[0]!.message.content, '[mock] echo: hello vertex');
    assert.equal(res.choices[0]!.finish_reason, 'stop');
    return res;
  }

  async function streamed(model: string): Promise<string> {
    const stream = await sdk().chat.completions.create({ model, messages: [{ role: 'user', content: 'stream it' }], max_tokens: 32, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    return text;
  }

  const forms: { model: string; path: string; streamPath: string; sent: (json: any) => void }[] = [
    {
      model: 'anthropic.claude-3-5-haiku@20241022',
      path: `${AT}/publishers/anthropic/models/claude-3-5-haiku@20241022:rawPredict`,
      streamPath: `${AT}/publishers/anthropic/models/claude-3-5-haiku@20241022:streamRawPredict`,
      sent: (json) => {
        assert.equal(json.anthropic_version, 'vertex-2023-10-16');
        assert.equal(json.model, undefined, 'the URL names the model');
      },
    },
    {
      model: 'claude-3-5-haiku@20241022',
      path: `${AT}/publishers/anthropic/models/claude-3-5-haiku@20241022:rawPredict`,
      streamPath: `${AT}/publishers/anthropic/models/claude-3-5-haiku@20241022:streamRawPredict`,
      sent: (json) => assert.equal(json.anthropic_version, 'vertex-2023-10-16'),
    },
    {
      model: 'google.gemini-2.5-flash',
      path: `${AT}/publishers/google/models/gemini-2.5-flash:generateContent`,
      streamPath: `${AT}/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
      sent: (json) => {
        assert.equal(json.contents[0].role, 'user');
        assert.equal(json.model, undefined, 'the URL names the model');
      },
    },
    {
      model: 'gemini-2.5-flash',
      path: `${AT}/publishers/google/models/gemini-2.5-flash:generateContent`,
      streamPath: `${AT}/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
      sent: (json) => assert.equal(json.contents[0].role, 'user'),
    },
    {
      model: 'meta.llama-3.3-70b-instruct-maas',
      path: `${AT}/endpoints/openapi/chat/completions`,
      streamPath: `${AT}/endpoints/openapi/chat/completions`,
      sent: (json) => {
        assert.equal(json.model, 'meta/llama-3.3-70b-instruct-maas');
        assert.equal(json.max_tokens, 32, 'the client’s OpenAI body goes on as it is');
      },
    },
  ];

  for (const form of forms) {
    it(`${form.model}: whole, to …${form.path.slice(AT.length)}`, async () => {
      await whole(form.model);
      const up = vertex().requests[0]!;
      assert.equal(up.path, form.path);
      assert.equal(up.headers.authorization, 'Bearer ya29.static');
      form.sent(up.json);
    });

    it(`${form.model}: streamed, to …${form.streamPath.slice(AT.length)}`, async () => {
      assert.equal(await streamed(form.model), '[mock] echo: stream it');
      const up = vertex().requests[0]!;
      assert.equal(up.path, form.streamPath);
      assert.equal(up.json.stream, form.model.startsWith('meta.') || form.model.includes('claude') ? true : undefined);
      form.sent(up.json);
    });
  }

  it('an open model’s answer is Vertex’s OpenAI answer, relayed: its model, its usage', async () => {
    const res = await whole('meta.llama-3.3-70b-instruct-maas');
    assert.equal(res.model, 'meta/llama-3.3-70b-instruct-maas');
    assert.equal(res.usage?.completion_tokens, 4);
  });

  it('an open model’s error comes back with Vertex’s status', async () => {
    vertex().enqueue('openapi', { status: 429, body: { error: { code: 429, message: 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model', status: 'RESOURCE_EXHAUSTED' } } });
    await assert.rejects(whole('meta.llama-3.3-70b-instruct-maas'), (e: unknown) => e instanceof OpenAI.APIError && e.status === 429);
  });

  it('open models serve chat only: embeddings are a 400 naming the model, before any call', async () => {
    const res = await gw.call('/embeddings', {
      headers: { 'x-gateway-config': JSON.stringify({ provider: 'vertex-ai', api_key: 'ya29.static', cloud2_project_id: PROJECT, cloud2_region: REGION, custom_host: vertex().vertexBase }) },
      body: { model: 'meta.llama-3.3-70b-instruct-maas', input: 'x' },
    });
    const e = await assertEnvelope(res, 400);
    assert.equal(e.param, 'model');
    assert.match(e.message, /meta\.llama-3\.3-70b-instruct-maas/);
    assert.equal(vertex().requests.length, 0);
  });
});
