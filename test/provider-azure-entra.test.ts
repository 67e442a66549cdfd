// Entra ID client credentials for azure-openai and azure-ai, black-box. The gateway reads
// AZURE_AUTHORITY_HOST from process.env when it needs a token (as Azure's SDKs do), so these
// tests point it at the mock's token endpoint before each request. Each test starts its own
// mock: a new authority is a new cache key, so no test sees another's cached token.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockAzure, AZURE_ML_SCOPE, COGNITIVE_SERVICES_SCOPE, type MockAzure, type MockAzureOptions } from './support/mock-azure.js';
import { assertEnvelope, freePort } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const APP = { tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47', clientId: 'b3c1f6e4-0000-4a4a-9c9c-123456789abc', clientSecret: 'Zx8Q~secret-value' };
const ENTRA_KEYS = { cloud3_entra_tenant_id: APP.tenantId, cloud3_entra_client_id: APP.clientId, cloud3_entra_client_secret: APP.clientSecret };
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hi entra' }];

describe('Entra ID client credentials', () => {
  const gw = useGateway();
  const mocks: MockAzure[] = [];
  const savedAuthority = process.env.AZURE_AUTHORITY_HOST;

  /** A mock resource that is also the authority host. */
  async function azure(extra: Partial<MockAzureOptions> = {}): Promise<MockAzure> {
    const mock = await startMockAzure({ apiKey: 'unused-key', deployments: { 'gpt4o-prod': 'gpt-4o-2024-08-06' }, entra: APP, ...extra });
    mocks.push(mock);
    process.env.AZURE_AUTHORITY_HOST = mock.url;
    return mock;
  }

  const openaiConfig = (mock: MockAzure, extra: Record<string, unknown> = {}): string =>
    JSON.stringify({ provider: 'azure-openai', custom_host: mock.url, deployment_id: 'gpt4o-prod', api_version: '2024-10-21', ...ENTRA_KEYS, ...extra });

  const client = (cfg: string): OpenAI =>
    new OpenAI({ apiKey: 'not-used', baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': cfg } });

  afterEach(async () => {
    await Promise.all(mocks.splice(0).map((m) => m.close()));
    if (savedAuthority === undefined) delete process.env.AZURE_AUTHORITY_HOST;
    else process.env.AZURE_AUTHORITY_HOST = savedAuthority;
  });

  it('azure-openai: one token for two requests, sent as Authorization: Bearer; the exchange is the client-credentials grant', async () => {
    const mock = await azure();
    const c = client(openaiConfig(mock));
    const first = await c.chat.completions.create({ model: 'gpt-4o', messages });
    const second = await c.chat.completions.create({ model: 'gpt-4o', messages });
    assert.equal(first.choices[0]!.message.content, '[gpt4o-prod] echo: hi entra');
    assert.equal(second.choices[0]!.message.content, '[gpt4o-prod] echo: hi entra');

    const tokens = mock.tokenRequests();
    assert.equal(tokens.length, 1);
    assert.equal(tokens[0]!.path, `/${APP.tenantId}/oauth2/v2.0/token`);
    assert.match(tokens[0]!.headers['content-type'] ?? '', /^application\/x-www-form-urlencoded/);
    assert.deepEqual(Object.fromEntries(new URLSearchParams(tokens[0]!.body.toString('utf8'))), {
      grant_type: 'client_credentials',
      client_id: APP.clientId,
      client_secret: APP.clientSecret,
      scope: COGNITIVE_SERVICES_SCOPE,
    });
    const api = mock.apiRequests();
    assert.equal(api.length, 2);
    assert.match(api[0]!.headers.authorization ?? '', /^Bearer eyJ/);
    assert.equal(api[1]!.headers.authorization, api[0]!.headers.authorization);
    assert.equal(api[0]!.headers['api-key'], undefined);
  });

  it('concurrent requests share one exchange', async () => {
    const mock = await azure();
    const c = client(openaiConfig(mock));
    const answers = await Promise.all(Array.from({ length: 6 }, () => c.chat.completions.create({ model: 'gpt-4o', messages })));
    assert.equal(answers.length, 6);
    assert.equal(mock.tokenRequests().length, 1);
    assert.equal(new Set(mock.apiRequests().map((r) => r.headers.authorization)).size, 1);
  });

  it('a token is renewed shortly before it expires', async () => {
    // 2 s tokens are renewed at half-life (after 1 s).
    const mock = await azure({ entra: { ...APP, expiresIn: 2 } });
    const c = client(openaiConfig(mock));
    await c.chat.completions.create({ model: 'gpt-4o', messages });
    await c.chat.completions.create({ model: 'gpt-4o', messages });
    assert.equal(mock.tokenRequests().length, 1);
    await new Promise((r) => setTimeout(r, 1100));
    await c.chat.completions.create({ model: 'gpt-4o', messages });
    assert.equal(mock.tokenRequests().length, 2);
    const auths = mock.apiRequests().map((r) => r.headers.authorization);
    assert.equal(auths[0], auths[1]);
    assert.notEqual(auths[2], auths[1]);
  });

  it('a failed renewal falls back to the token while it is still valid', async () => {
    const mock = await azure({ entra: { ...APP, expiresIn: 2 } });
    const c = client(openaiConfig(mock));
    await c.chat.completions.create({ model: 'gpt-4o', messages });
    await new Promise((r) => setTimeout(r, 1100));
    mock.enqueue(`/${APP.tenantId}/oauth2/v2.0/token`, {
      status: 503,
      body: { error: 'temporarily_unavailable', error_description: 'AADSTS90033: A transient error has occurred. Please try again.' },
    });
    const res = await c.chat.completions.create({ model: 'gpt-4o', messages });
    assert.equal(res.choices[0]!.message.content, '[gpt4o-prod] echo: hi entra');
    assert.equal(mock.tokenRequests().length, 2);
    const auths = mock.apiRequests().map((r) => r.headers.authorization);
    assert.equal(auths[1], auths[0]);
  });

  it('Entra credentials win over api_key', async () => {
    const mock = await azure();
    await client(openaiConfig(mock, { api_key: 'also-a-key' })).chat.completions.create({ model: 'gpt-4o', messages });
    const [up] = mock.apiRequests();
    assert.match(up!.headers.authorization ?? '', /^Bearer /);
    assert.equal(up!.headers['api-key'], undefined);
  });

  it('cloud3_entra_scope replaces the default scope (here Azure then refuses the audience: its 401 is relayed)', async () => {
    const mock = await azure();
    const res = await gw.call('/chat/completions', {
      headers: { 'x-gateway-config': openaiConfig(mock, { cloud3_entra_scope: 'api://switchyard-tests/.default' }) },
      body: { model: 'gpt-4o', messages },
    });
    assert.equal(new URLSearchParams(mock.tokenRequests()[0]!.body.toString('utf8')).get('scope'), 'api://switchyard-tests/.default');
    assert.equal(res.status, 401);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /audience is incorrect/);
  });

  it('azure-ai: the token is for https://ml.azure.com/.default', async () => {
    const mock = await azure({ foundry: { kind: 'serverless', model: 'Meta-Llama-3.1-70B-Instruct' } });
    const cfg = JSON.stringify({ provider: 'azure-ai', custom_host: mock.url, cloud3_deployment_type: 'serverless', ...ENTRA_KEYS });
    const res = await client(cfg).chat.completions.create({ model: 'llama', messages });
    assert.equal(res.choices[0]!.message.content, '[foundry] echo: hi entra');
    assert.equal(new URLSearchParams(mock.tokenRequests()[0]!.body.toString('utf8')).get('scope'), AZURE_ML_SCOPE);
    assert.match(mock.apiRequests()[0]!.headers.authorization ?? '', /^Bearer eyJ/);
  });

  describe('failures', () => {
    it('a partial set of Entra keys is a 400 naming the missing one, before any request', async () => {
      const mock = await azure();
      const res = await gw.call('/chat/completions', {
        headers: { 'x-gateway-config': openaiConfig(mock, { cloud3_entra_client_secret: undefined, api_key: 'k' }) },
        body: { model: 'gpt-4o', messages },
      });
      const err = await assertEnvelope(res, 400);
      assert.equal(err.param, 'cloud3_entra_client_secret');
      assert.equal(mock.requests.length, 0);
    });

    it('a wrong secret: the identity platform\'s 401 in the envelope, its AADSTS message without the trace lines', async () => {
      const mock = await azure();
      const res = await gw.call('/chat/completions', {
        headers: { 'x-gateway-config': openaiConfig(mock, { cloud3_entra_client_secret: 'wrong' }) },
        body: { model: 'gpt-4o', messages },
      });
      const err = await assertEnvelope(res, 401);
      assert.equal(err.code, 'invalid_client');
      assert.match(err.message, /^Entra ID token request failed \(invalid_client\): AADSTS7000215: Invalid client secret/);
      assert.doesNotMatch(err.message, /Trace ID/);
      assert.equal(mock.apiRequests().length, 0);
    });

    it('an unknown tenant: 400 from the identity platform', async () => {
      const mock = await azure();
      const res = await gw.call('/chat/completions', {
        headers: { 'x-gateway-config': openaiConfig(mock, { cloud3_entra_tenant_id: 'contoso.onmicrosoft.com' }) },
        body: { model: 'gpt-4o', messages },
      });
      const err = await assertEnvelope(res, 400);
      assert.match(err.message, /AADSTS90002: Tenant 'contoso.onmicrosoft.com' not found/);
      assert.equal(mock.tokenRequests()[0]!.path, '/contoso.onmicrosoft.com/oauth2/v2.0/token');
    });

    for (const status of [302, 307]) {
      it(`a token endpoint answering ${status} is an error, and the redirect is not followed`, async () => {
        const mock = await azure();
        // Where it points issues tokens: followed (a 307 re-posts the form), the exchange would succeed.
        mock.enqueue(`/${APP.tenantId}/oauth2/v2.0/token`, { status, headers: { location: `${mock.url}/${APP.tenantId}/oauth2/v2.0/token?moved=1` }, body: {} });
        const err = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-config': openaiConfig(mock) }, body: { model: 'gpt-4o', messages } }), 502);
        assert.equal(err.code, 'upstream_redirect');
        assert.match(err.message, new RegExp(`Entra ID token endpoint answered ${status}, a redirect, which the gateway does not follow`));
        assert.deepEqual(mock.tokenRequests().map((r) => r.path), [`/${APP.tenantId}/oauth2/v2.0/token`]);
        assert.equal(mock.apiRequests().length, 0);
      });
    }

    it('an unreachable authority host: 502', async () => {
      const mock = await azure();
      process.env.AZURE_AUTHORITY_HOST = `http://127.0.0.1:${await freePort()}`;
      const err = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-config': openaiConfig(mock) }, body: { model: 'gpt-4o', messages } }), 502);
      assert.equal(err.code, 'upstream_unreachable');
      assert.match(err.message, /Entra ID token endpoint/);
      assert.equal(mock.requests.length, 0);
    });
  });
});
