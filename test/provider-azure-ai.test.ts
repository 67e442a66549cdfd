// azure-ai (AI Foundry serverless and managed endpoints) through the gateway, black-box:
// the OpenAI SDK in front, a mock endpoint behind (custom_host replaces
// https://{endpoint}.{region}.models.ai.azure.com or ….inference.ml.azure.com).
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockAzure, type MockAzure } from './support/mock-azure.js';
import { assertEnvelope } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'foundry-endpoint-key-abcdef';
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hello foundry' }];

describe('azure-ai', () => {
  const gw = useGateway();
  let serverless: MockAzure;
  let managed: MockAzure;

  const config = (mock: MockAzure, extra: Record<string, unknown>): string =>
    JSON.stringify({ provider: 'azure-ai', custom_host: mock.url, api_key: KEY, ...extra });
  const client = (cfg: string): OpenAI =>
    new OpenAI({ apiKey: 'not-used', baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': cfg } });

  before(async () => {
    [serverless, managed] = await Promise.all([
      startMockAzure({ apiKey: KEY, foundry: { kind: 'serverless', model: 'Meta-Llama-3.1-70B-Instruct' } }),
      startMockAzure({ apiKey: KEY, foundry: { kind: 'managed', model: 'Phi-4', deployments: ['blue', 'green'] } }),
    ]);
  });
  afterEach(() => {
    serverless.reset();
    managed.reset();
  });
  after(async () => {
    await Promise.all([serverless.close(), managed.close()]);
  });

  describe('serverless, OpenAI-compatible /v1 routes (no cloud3_api_version)', () => {
    const cfg = (): string => config(serverless, { cloud3_deployment_type: 'serverless', cloud3_endpoint_name: 'llama-xyz', cloud3_region: 'eastus2' });

    it('chat: /v1/chat/completions with the key as a bearer token, the body as sent', async () => {
      const params = { model: 'llama', messages, temperature: 0.3, max_completion_tokens: 40 };
      const res = await client(cfg()).chat.completions.create(params);
      assert.equal(res.choices[0]!.message.content, '[foundry] echo: hello foundry');
      assert.equal(res.model, 'Meta-Llama-3.1-70B-Instruct');
      const [up] = serverless.apiRequests();
      assert.equal(up!.path, '/v1/chat/completions');
      assert.equal(up!.headers.authorization, `Bearer ${KEY}`);
      assert.equal(up!.headers['api-key'], undefined);
      assert.equal(up!.headers['azureml-model-deployment'], undefined);
      assert.equal(up!.headers['extra-parameters'], undefined);
      assert.equal(up!.body.toString('utf8'), JSON.stringify(params));
    });

    it('streaming chat with usage', async () => {
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of await client(cfg()).chat.completions.create({ model: 'llama', messages, stream: true, stream_options: { include_usage: true } })) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) usage = chunk.usage;
      }
      assert.equal(text, '[foundry] echo: hello foundry');
      assert.equal(usage?.total_tokens, 6);
    });

    it('embeddings: /v1/embeddings', async () => {
      const res = await client(cfg()).embeddings.create({ model: 'embed', input: 'x', encoding_format: 'float' });
      assert.equal(res.data[0]!.embedding.length, 8);
      assert.equal(serverless.apiRequests()[0]!.path, '/v1/embeddings');
    });
  });

  describe('managed online endpoint', () => {
    it('cloud3_deployment_name goes in azureml-model-deployment', async () => {
      const cfg = config(managed, { cloud3_deployment_type: 'managed', cloud3_endpoint_name: 'phi-endpoint', cloud3_region: 'westus3', cloud3_deployment_name: 'green' });
      const res = await client(cfg).chat.completions.create({ model: 'phi', messages });
      assert.equal(res.choices[0]!.message.content, '[green] echo: hello foundry');
      const [up] = managed.apiRequests();
      assert.equal(up!.path, '/v1/chat/completions');
      assert.equal(up!.headers['azureml-model-deployment'], 'green');
      assert.equal(up!.headers.authorization, `Bearer ${KEY}`);
    });

    it('without a deployment name the endpoint\'s traffic rules decide', async () => {
      const res = await client(config(managed, { cloud3_deployment_type: 'managed' })).chat.completions.create({ model: 'phi', messages });
      assert.equal(res.choices[0]!.message.content, '[blue] echo: hello foundry');
      assert.equal(managed.apiRequests()[0]!.headers['azureml-model-deployment'], undefined);
    });

    it('an unknown deployment: the endpoint\'s 404 is relayed', async () => {
      const res = await gw.call('/chat/completions', {
        headers: { 'x-gateway-config': config(managed, { cloud3_deployment_type: 'managed', cloud3_deployment_name: 'purple' }) },
        body: { model: 'phi', messages },
      });
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'DeploymentNotFound');
    });
  });

  describe('the Azure AI Model Inference API (cloud3_api_version set)', () => {
    const cfg = (extra: Record<string, unknown> = {}): string =>
      config(serverless, { cloud3_deployment_type: 'serverless', cloud3_deployment_name: 'llama-xyz', cloud3_region: 'eastus2', cloud3_api_version: '2024-05-01-preview', ...extra });

    it('chat: /chat/completions?api-version=…, extra-parameters: pass-through, max_completion_tokens → max_tokens, developer → system', async () => {
      const res = await client(cfg()).chat.completions.create({
        model: 'llama',
        messages: [{ role: 'developer', content: 'be terse' }, ...messages],
        max_completion_tokens: 25,
        user: 'user-42',
        seed: 7,
      });
      assert.equal(res.choices[0]!.message.content, '[foundry] echo: hello foundry');
      const [up] = serverless.apiRequests();
      assert.equal(up!.path, '/chat/completions?api-version=2024-05-01-preview');
      assert.equal(up!.headers['extra-parameters'], 'pass-through');
      assert.deepEqual(up!.json, {
        model: 'llama',
        messages: [{ role: 'system', content: 'be terse' }, ...messages],
        user: 'user-42',
        seed: 7,
        max_tokens: 25,
      });
    });

    it('a client may ask the API to drop unknown parameters instead (forwarded extra-parameters header)', async () => {
      const res = await gw.call('/chat/completions', {
        headers: { 'x-gateway-config': cfg(), 'x-gateway-forward-headers': 'extra-parameters', 'extra-parameters': 'drop' },
        body: { model: 'llama', messages, logit_bias: { '50256': -100 } },
      });
      assert.equal(res.status, 200);
      assert.equal(serverless.apiRequests()[0]!.headers['extra-parameters'], 'drop');
    });

    it('streaming chat and embeddings on the same API', async () => {
      let text = '';
      for await (const chunk of await client(cfg()).chat.completions.create({ model: 'llama', messages, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
      assert.equal(text, '[foundry] echo: hello foundry');
      await client(cfg()).embeddings.create({ model: 'cohere-embed', input: ['a'], encoding_format: 'float' });
      assert.deepEqual(
        serverless.apiRequests().map((r) => r.path),
        ['/chat/completions?api-version=2024-05-01-preview', '/embeddings?api-version=2024-05-01-preview'],
      );
    });

    it('an api-version the endpoint does not serve: its 400 is relayed', async () => {
      const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': cfg({ cloud3_api_version: '2099-01-01' }) }, body: { model: 'llama', messages } });
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'InvalidApiVersionParameter');
    });
  });

  it('a wrong key: the endpoint\'s 401 reaches the SDK as AuthenticationError', async () => {
    await assert.rejects(
      client(config(serverless, { cloud3_deployment_type: 'serverless', api_key: 'wrong' })).chat.completions.create({ model: 'llama', messages }),
      OpenAI.AuthenticationError,
    );
  });

  describe('missing keys without a custom host: 400 naming the key, before any request', () => {
    // Root configs: provider + api_key is a key group, custom_host left out so the host is built.
    const cases: [string, Record<string, unknown>, string][] = [
      ['cloud3_deployment_type', { cloud3_endpoint_name: 'e', cloud3_region: 'eastus2' }, 'cloud3_deployment_type'],
      ['cloud3_endpoint_name (managed)', { cloud3_deployment_type: 'managed', cloud3_deployment_name: 'blue', cloud3_region: 'eastus2' }, 'cloud3_endpoint_name'],
      ['cloud3_endpoint_name or cloud3_deployment_name (serverless)', { cloud3_deployment_type: 'serverless', cloud3_region: 'eastus2' }, 'cloud3_endpoint_name'],
      ['cloud3_region', { cloud3_deployment_type: 'serverless', cloud3_endpoint_name: 'e' }, 'cloud3_region'],
      ['a malformed cloud3_region', { cloud3_deployment_type: 'serverless', cloud3_endpoint_name: 'e', cloud3_region: 'east us' }, 'cloud3_region'],
    ];
    for (const [what, keys, param] of cases) {
      it(what, async () => {
        const cfg = JSON.stringify({ provider: 'azure-ai', api_key: KEY, ...keys });
        const err = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-config': cfg }, body: { model: 'm', messages } }), 400);
        assert.equal(err.param, param);
        assert.match(err.message, new RegExp(param));
      });
    }
  });
});
