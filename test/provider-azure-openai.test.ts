// azure-openai through the gateway, black-box: the official OpenAI SDK in front, a mock
// Azure OpenAI resource behind (custom_host replaces https://{resource}.openai.azure.com).
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockAzure, COGNITIVE_SERVICES_SCOPE, type MockAzure } from './support/mock-azure.js';
import { assertEnvelope } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'azure-resource-key-0123456789abcdef';
const DEPLOYMENTS = { 'gpt4o-prod': 'gpt-4o-2024-08-06', 'mini-dep': 'gpt-4o-mini-2024-07-18', 'embed-small': 'text-embedding-3-small', dalle3: 'dall-e-3' };

describe('azure-openai', () => {
  const gw = useGateway();
  let mock: MockAzure;

  /** An inline config naming the mock resource; `extra` adds or (with undefined) removes keys. */
  const config = (extra: Record<string, unknown> = {}): string =>
    JSON.stringify({ provider: 'azure-openai', custom_host: mock.url, api_key: KEY, deployment_id: 'gpt4o-prod', api_version: '2024-10-21', ...extra });

  const client = (cfg: string = config()): OpenAI =>
    new OpenAI({ apiKey: 'not-used', baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': cfg } });

  const chatBody: { model: string; messages: OpenAI.ChatCompletionMessageParam[] } = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello azure' }] };

  before(async () => {
    mock = await startMockAzure({ apiKey: KEY, deployments: DEPLOYMENTS });
  });
  afterEach(() => mock.reset());
  after(async () => {
    await mock.close();
  });

  it('chat: the deployment path, api-version and api-key reach Azure; body and answer pass unchanged', async () => {
    const params = { model: 'gpt-4o', messages: [{ role: 'system' as const, content: 'be brief' }, { role: 'user' as const, content: 'hello azure' }], temperature: 0.2, max_completion_tokens: 30 };
    const { data, response } = await client().chat.completions.create(params).withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(data.choices[0]!.message.content, '[gpt4o-prod] echo: hello azure');
    assert.equal(data.model, 'gpt-4o-2024-08-06');
    assert.equal(data.usage?.total_tokens, 8);
    // Azure's own headers come back (the bytes and headers are relayed, not rebuilt).
    assert.ok(response.headers.get('apim-request-id'));
    assert.equal(response.headers.get('x-gateway-provider'), 'azure-openai');

    const [up] = mock.apiRequests();
    assert.equal(up!.path, '/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
    assert.equal(up!.headers['api-key'], KEY);
    assert.equal(up!.headers.authorization, undefined);
    assert.equal(up!.body.toString('utf8'), JSON.stringify(params));
  });

  it('streaming chat: Azure chunks (filter-results chunk first) reach the SDK, include_usage gives usage', async () => {
    const stream = await client().chat.completions.create({ ...chatBody, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, '[gpt4o-prod] echo: hello azure');
    assert.ok(chunks >= 6, `${chunks} chunks`);
    assert.deepEqual([usage?.prompt_tokens, usage?.completion_tokens], [2, 4]);
    assert.equal(mock.apiRequests()[0]!.json.stream, true);
  });

  it('streaming chat ends with data: [DONE] on the wire', async () => {
    const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config() }, body: { ...chatBody, stream: true } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.ok((await res.text()).endsWith('data: [DONE]\n\n'));
  });

  it('completions, plain and streamed, go to the deployment\'s /completions', async () => {
    const c = client(config({ deployment_id: 'mini-dep' }));
    const plain = await c.completions.create({ model: 'x', prompt: 'say this' });
    assert.equal(plain.choices[0]!.text, '[mini-dep] echo: say this');
    let streamed = '';
    for await (const chunk of await c.completions.create({ model: 'x', prompt: 'say that', stream: true })) streamed += chunk.choices[0]?.text ?? '';
    assert.equal(streamed, '[mini-dep] echo: say that');
    assert.deepEqual(
      mock.apiRequests().map((r) => r.path),
      ['/openai/deployments/mini-dep/completions?api-version=2024-10-21', '/openai/deployments/mini-dep/completions?api-version=2024-10-21'],
    );
  });

  it('embeddings, float and base64', async () => {
    const c = client(config({ deployment_id: 'embed-small' }));
    const floats = await c.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'], encoding_format: 'float' });
    assert.equal(floats.data.length, 2);
    assert.equal(floats.data[0]!.embedding.length, 8);
    assert.equal(floats.model, 'text-embedding-3-small');
    // The SDK asks for base64 by default and decodes it.
    const decoded = await c.embeddings.create({ model: 'text-embedding-3-small', input: 'a' });
    assert.deepEqual(decoded.data[0]!.embedding, floats.data[0]!.embedding);
    assert.equal(mock.apiRequests()[0]!.path, '/openai/deployments/embed-small/embeddings?api-version=2024-10-21');
  });

  describe('deployments: the request\'s model picks the alias', () => {
    const deployments = [
      { alias: 'gpt-4o', deployment_id: 'gpt4o-prod', api_version: '2024-10-21' },
      { alias: 'mini', deployment_id: 'mini-dep', api_version: '2024-08-01-preview', is_default: true },
    ];

    it('a matching alias selects its deployment and api-version; no match falls to the default', async () => {
      const c = client(config({ deployment_id: undefined, api_version: undefined, deployments }));
      const a = await c.chat.completions.create({ ...chatBody, model: 'gpt-4o' });
      const b = await c.chat.completions.create({ ...chatBody, model: 'mini' });
      const d = await c.chat.completions.create({ ...chatBody, model: 'something-else' });
      assert.deepEqual(
        [a, b, d].map((r) => r.choices[0]!.message.content),
        ['[gpt4o-prod] echo: hello azure', '[mini-dep] echo: hello azure', '[mini-dep] echo: hello azure'],
      );
      assert.deepEqual(
        mock.apiRequests().map((r) => r.path),
        [
          '/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21',
          '/openai/deployments/mini-dep/chat/completions?api-version=2024-08-01-preview',
          '/openai/deployments/mini-dep/chat/completions?api-version=2024-08-01-preview',
        ],
      );
    });

    it('an unknown alias without a default is a 400 naming the model and listing the aliases', async () => {
      const cfg = config({ deployment_id: undefined, deployments: deployments.map(({ is_default: _, ...d }) => d) });
      const err = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-config': cfg }, body: { ...chatBody, model: 'gpt-5' } }), 400);
      assert.equal(err.param, 'model');
      assert.equal(err.code, 'unknown_model_alias');
      assert.match(err.message, /unknown model alias 'gpt-5'.*'gpt-4o', 'mini'/);
      assert.equal(mock.requests.length, 0);
    });
  });

  describe('missing or malformed keys: 400 naming the key, before any request', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['api_version', { api_version: undefined }, 'api_version'],
      ['deployment_id', { deployment_id: undefined }, 'deployment_id'],
      ['resource_name (no custom host)', { custom_host: undefined }, 'resource_name'],
      ['a malformed resource_name', { custom_host: undefined, resource_name: 'my resource/x' }, 'resource_name'],
    ];
    for (const [what, extra, param] of cases) {
      it(what, async () => {
        const err = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-config': config(extra) }, body: chatBody }), 400);
        assert.equal(err.param, param);
        assert.match(err.message, new RegExp(param));
        assert.equal(mock.requests.length, 0);
      });
    }

    it('no credential at all (no api_key, no Authorization, no Entra keys)', async () => {
      const err = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-config': config({ api_key: undefined }) }, body: chatBody }), 400);
      assert.equal(err.param, 'api_key');
      assert.equal(mock.requests.length, 0);
    });
  });

  describe('Azure\'s errors are relayed with their status, body and headers', () => {
    it('an unsupported api-version: Azure\'s 404 "Resource not found"', async () => {
      const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config({ api_version: '2023-01-01' }) }, body: chatBody });
      assert.equal(res.status, 404);
      assert.deepEqual(await res.json(), { error: { code: '404', message: 'Resource not found' } });
      assert.equal(mock.apiRequests()[0]!.path, '/openai/deployments/gpt4o-prod/chat/completions?api-version=2023-01-01');
    });

    it('a wrong key: 401, which the SDK raises as AuthenticationError', async () => {
      await assert.rejects(client(config({ api_key: 'wrong' })).chat.completions.create(chatBody), (e: unknown) => {
        assert.ok(e instanceof OpenAI.AuthenticationError);
        assert.match(e.message, /Access denied due to invalid subscription key/);
        return true;
      });
    });

    it('an unknown deployment: 404 DeploymentNotFound', async () => {
      const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config({ deployment_id: 'nope' }) }, body: chatBody });
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'DeploymentNotFound');
    });

    it('429 keeps retry-after-ms, which the SDK\'s own retries read', async () => {
      mock.enqueue('/openai/deployments/gpt4o-prod/chat/completions', {
        status: 429,
        headers: { 'retry-after-ms': '1500', 'retry-after': '2' },
        body: { error: { code: '429', message: 'Requests to the ChatCompletions_Create Operation have exceeded call rate limit.' } },
      });
      const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config() }, body: chatBody });
      assert.equal(res.status, 429);
      assert.equal(res.headers.get('retry-after-ms'), '1500');
      assert.match(((await res.json()) as { error: { message: string } }).error.message, /call rate limit/);
    });
  });

  describe('credentials from the client', () => {
    it('Authorization: Bearer <key> is sent as api-key', async () => {
      const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config({ api_key: undefined }), authorization: `Bearer ${KEY}` }, body: chatBody });
      assert.equal(res.status, 200);
      const [up] = mock.apiRequests();
      assert.equal(up!.headers['api-key'], KEY);
      assert.equal(up!.headers.authorization, undefined);
    });

    it('an Entra access token (a JWT) from the client stays a bearer token', async () => {
      const entraMock = await startMockAzure({ apiKey: KEY, deployments: DEPLOYMENTS, entra: { tenantId: 't1', clientId: 'c1', clientSecret: 's1' } });
      try {
        const token = await fetch(`${entraMock.url}/t1/oauth2/v2.0/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'c1', client_secret: 's1', scope: COGNITIVE_SERVICES_SCOPE }).toString(),
        }).then(async (r) => ((await r.json()) as { access_token: string }).access_token);
        const cfg = JSON.stringify({ provider: 'azure-openai', custom_host: entraMock.url, deployment_id: 'gpt4o-prod', api_version: '2024-10-21' });
        const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': cfg, authorization: `Bearer ${token}` }, body: chatBody });
        assert.equal(res.status, 200, await res.clone().text());
        const [up] = entraMock.apiRequests();
        assert.equal(up!.headers.authorization, `Bearer ${token}`);
        assert.equal(up!.headers['api-key'], undefined);
      } finally {
        await entraMock.close();
      }
    });
  });

  it('the cloud3 alias and the cloud3_* spellings of the keys', async () => {
    const cfg = JSON.stringify({ provider: 'cloud3', custom_host: mock.url, api_key: KEY, cloud3_deployment_id: 'mini-dep', cloud3_api_version: '2024-12-01-preview' });
    const { data, response } = await client(cfg).chat.completions.create(chatBody).withResponse();
    assert.equal(data.choices[0]!.message.content, '[mini-dep] echo: hello azure');
    assert.equal(response.headers.get('x-gateway-provider'), 'azure-openai');
    assert.equal(mock.apiRequests()[0]!.path, '/openai/deployments/mini-dep/chat/completions?api-version=2024-12-01-preview');
  });

  it('api_version v1: the v1 API path, no api-version query, and model names the deployment', async () => {
    const res = await client(config({ api_version: 'v1' })).chat.completions.create({ ...chatBody, model: 'gpt-4o' });
    assert.equal(res.choices[0]!.message.content, '[gpt4o-prod] echo: hello azure');
    const [up] = mock.apiRequests();
    assert.equal(up!.path, '/openai/v1/chat/completions');
    assert.equal(up!.json.model, 'gpt4o-prod');
    assert.deepEqual(up!.json.messages, chatBody.messages);
  });

  it('generic proxy: {host}/openai + path, the api-version added unless the client sent one, auth attached', async () => {
    const path = '/deployments/dalle3/images/generations';
    const res = await gw.call(path, { headers: { 'x-gateway-config': config() }, body: { prompt: 'a lighthouse', n: 1 } });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { data: { revised_prompt: string }[] }).data[0]!.revised_prompt, 'a lighthouse');
    const own = await gw.call(`${path}?api-version=2024-06-01`, { headers: { 'x-gateway-config': config() }, body: { prompt: 'a lighthouse' } });
    assert.equal(own.status, 200);
    assert.deepEqual(
      mock.apiRequests().map((r) => [r.method, r.path, r.headers['api-key']]),
      [
        ['POST', '/openai/deployments/dalle3/images/generations?api-version=2024-10-21', KEY],
        ['POST', '/openai/deployments/dalle3/images/generations?api-version=2024-06-01', KEY],
      ],
    );
  });
});
