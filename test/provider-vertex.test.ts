// Black-box tests of the vertex-ai provider: the OpenAI SDK against a real gateway, in front
// of a mock Vertex AI (shared with the Gemini API's) and a mock OAuth token endpoint that
// verifies the service account's signed JWT as Google does.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockGemini, vector, type MockGemini } from './support/mock-gemini.js';
import { assertEnvelope } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const PROJECT = 'proj-test';
const REGION = 'us-central1';
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const STRANGER_PEM = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

describe('vertex-ai', () => {
  const gw = useGateway();
  let mock: MockGemini;
  let accounts = 0;

  before(async () => {
    mock = await startMockGemini({ project: PROJECT, location: REGION });
  });
  afterEach(() => mock.reset());
  after(async () => {
    await mock.close();
  });

  /** A fresh service account key file (each test its own, so the token cache starts empty for it). */
  function account(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    const email = `sa-${++accounts}@${PROJECT}.iam.gserviceaccount.com`;
    mock.addAccount(email, keys.publicKey);
    return {
      type: 'service_account',
      project_id: PROJECT,
      private_key_id: `kid-${accounts}`,
      private_key: PEM,
      client_email: email,
      client_id: '1234567890',
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: mock.tokenUri,
      ...overrides,
    };
  }

  const config = (target: Record<string, unknown>): string =>
    JSON.stringify({ provider: 'vertex-ai', cloud2_region: REGION, custom_host: mock.vertexBase, ...target });

  const sdk = (cfg: string, apiKey = 'unused'): OpenAI =>
    new OpenAI({ apiKey, baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': cfg } });

  const ask = (client: OpenAI, model = 'gemini-2.5-flash') => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello vertex' }] });

  it('a service account: its signed JWT is exchanged at its token_uri, and Vertex is called with the token, project and region', async () => {
    const sa = account();
    const res = await ask(sdk(config({ cloud2_service_account_json: sa })));
    assert.equal(res.choices[0]!.message.content, '[mock] echo: hello vertex');
    assert.equal(res.choices[0]!.finish_reason, 'stop');
    assert.deepEqual([res.usage?.prompt_tokens, res.usage?.completion_tokens], [2, 4]);

    assert.equal(mock.exchanges.length, 1);
    const ex = mock.exchanges[0]!;
    assert.ok(ex.issued, ex.error);
    assert.deepEqual(ex.header, { alg: 'RS256', typ: 'JWT', kid: sa.private_key_id });
    const { iat, exp, ...claims } = ex.claims as { iat: number; exp: number };
    assert.deepEqual(claims, { iss: sa.client_email, scope: 'https://www.googleapis.com/auth/cloud-platform', aud: mock.tokenUri });
    assert.equal(exp - iat, 3600);
    assert.ok(Math.abs(iat - Date.now() / 1000) < 10);

    const up = mock.requests[0]!;
    assert.equal(up.path, `/v1/projects/${PROJECT}/locations/${REGION}/publishers/google/models/gemini-2.5-flash:generateContent`);
    assert.equal(up.headers.authorization, `Bearer ${ex.issued}`);
    assert.deepEqual(up.json, { contents: [{ role: 'user', parts: [{ text: 'hello vertex' }] }] });
  });

  it('the token is cached per service account: two requests, one exchange; another account, its own', async () => {
    const one = sdk(config({ cloud2_service_account_json: account() }));
    await ask(one);
    await ask(one);
    assert.equal(mock.exchanges.length, 1);
    assert.equal(mock.requests[0]!.headers.authorization, mock.requests[1]!.headers.authorization);

    await ask(sdk(config({ cloud2_service_account_json: account() })));
    assert.equal(mock.exchanges.length, 2);
    assert.notEqual(mock.requests[2]!.headers.authorization, mock.requests[0]!.headers.authorization);
  });

  it('a token that expires within five minutes is replaced before use', async () => {
    mock.tokenLifetimeS = 240;
    const client = sdk(config({ cloud2_service_account_json: account() }));
    await ask(client);
    await ask(client);
    assert.equal(mock.exchanges.length, 2);
    assert.notEqual(mock.requests[0]!.headers.authorization, mock.requests[1]!.headers.authorization);
  });

  it('concurrent requests share one exchange in flight', async () => {
    mock.tokenDelayMs = 150;
    const client = sdk(config({ cloud2_service_account_json: account() }));
    const answers = await Promise.all([ask(client), ask(client), ask(client), ask(client)]);
    assert.equal(answers.length, 4);
    assert.equal(mock.exchanges.length, 1);
    assert.equal(new Set(mock.requests.map((r) => r.headers.authorization)).size, 1);
  });

  it('an assertion the token endpoint refuses (wrong key) is a 400 naming the service account; it is not cached', async () => {
    const cfg = config({ cloud2_service_account_json: account({ private_key: STRANGER_PEM }) });
    for (let i = 0; i < 2; i++) {
      const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': cfg }, body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] } });
      const e = await assertEnvelope(res, 400);
      assert.equal(e.param, 'cloud2_service_account_json');
      assert.equal(e.code, 'invalid_grant');
      assert.match(e.message, /Invalid JWT Signature\./);
    }
    assert.deepEqual(mock.exchanges.map((x) => x.error), ['invalid_grant', 'invalid_grant']);
    assert.equal(mock.requests.length, 0);
  });

  it('a token endpoint that fails answers 502', async () => {
    mock.enqueue('token', { status: 503, body: 'Service Unavailable' });
    const res = await gw.call('/chat/completions', {
      headers: { 'x-gateway-config': config({ cloud2_service_account_json: account() }) },
      body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] },
    });
    const e = await assertEnvelope(res, 502);
    assert.equal(e.code, 'token_exchange_failed');
  });

  it('a token endpoint answering 302 is an error, and the redirect is not followed', async () => {
    mock.enqueue('token', { status: 302, headers: { location: `${mock.tokenUri}?moved=1` }, body: '' });
    const res = await gw.call('/chat/completions', {
      headers: { 'x-gateway-config': config({ cloud2_service_account_json: account() }) },
      body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] },
    });
    const e = await assertEnvelope(res, 502);
    assert.equal(e.code, 'upstream_redirect');
    assert.match(e.message, /answered 302, a redirect, which the gateway does not follow/);
    assert.equal(mock.exchanges.length, 1);
    assert.equal(mock.requests.length, 0);
  });

  it('a malformed service account, a missing region or project: 400 naming it, before any call', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ cloud2_service_account_json: account({ client_email: undefined }) }, 'cloud2_service_account_json.client_email'],
      [{ cloud2_service_account_json: account({ private_key: '' }) }, 'cloud2_service_account_json.private_key'],
      [{ cloud2_service_account_json: account({ private_key: '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n' }) }, 'cloud2_service_account_json.private_key'],
      [{ cloud2_service_account_json: account({ token_uri: undefined }) }, 'cloud2_service_account_json.token_uri'],
      [{ cloud2_service_account_json: account({ type: 'authorized_user' }) }, 'cloud2_service_account_json.type'],
      [{ cloud2_service_account_json: account(), cloud2_region: undefined }, 'cloud2_region'],
      [{ cloud2_service_account_json: account(), cloud2_region: 'us-central1/../x' }, 'cloud2_region'],
      [{ cloud2_service_account_json: account({ project_id: undefined }) }, 'cloud2_project_id'],
      [{ api_key: 'ya29.static' }, 'cloud2_project_id'],
      [{ cloud2_project_id: PROJECT }, 'cloud2_service_account_json'],
    ];
    for (const [target, param] of cases) {
      const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config(target) }, body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] } });
      const e = await assertEnvelope(res, 400);
      assert.equal(e.param, param, e.message);
    }
    assert.equal(mock.exchanges.length, 0);
    assert.equal(mock.requests.length, 0);
  });

  it('cloud2_project_id wins over the key file’s project_id (and Vertex’s 403 for a project comes back as 403)', async () => {
    const res = await gw.call('/chat/completions', {
      headers: { 'x-gateway-config': config({ cloud2_service_account_json: account(), cloud2_project_id: 'other-project' }) },
      body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] },
    });
    const e = await assertEnvelope(res, 403);
    assert.equal(e.code, 'permission_denied');
    assert.match(e.message, /projects\/other-project\/locations\/us-central1/);
    assert.match(mock.requests[0]!.path, /^\/v1\/projects\/other-project\//);
  });

  it('a bearer token: from api_key, or the client’s Authorization; Vertex’s 401 for a bad one is kept', async () => {
    mock.addStaticToken('ya29.from-config');
    mock.addStaticToken('ya29.from-client');
    await ask(sdk(config({ api_key: 'ya29.from-config', cloud2_project_id: PROJECT })));
    await ask(sdk(config({ cloud2_project_id: PROJECT }), 'ya29.from-client'));
    assert.deepEqual(
      mock.requests.map((r) => r.headers.authorization),
      ['Bearer ya29.from-config', 'Bearer ya29.from-client'],
    );
    assert.equal(mock.exchanges.length, 0);

    const bad = await ask(sdk(config({ cloud2_project_id: PROJECT }), 'ya29.expired')).catch((e: unknown) => e);
    assert.ok(bad instanceof OpenAI.AuthenticationError);
    assert.match(bad.message, /invalid authentication credentials/);
  });

  it('claude models are routed to the anthropic publisher, which has no embeddings: 400 naming the model', async () => {
    const res = await gw.call('/embeddings', {
      headers: { 'x-gateway-config': config({ cloud2_service_account_json: account() }) },
      body: { model: 'claude-sonnet-4@20250514', input: 'x' },
    });
    const e = await assertEnvelope(res, 400);
    assert.equal(e.param, 'model');
    assert.match(e.message, /claude-sonnet-4@20250514/);
    assert.equal(mock.requests.length, 0);
    assert.equal(mock.exchanges.length, 0);
  });

  it('streaming through streamGenerateContent?alt=sse, usage last with include_usage', async () => {
    const stream = await sdk(config({ cloud2_service_account_json: account() })).chat.completions.create({
      model: 'gemini-2.5-pro',
      messages: [{ role: 'user', content: 'stream it' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, '[mock] echo: stream it');
    assert.equal(usage?.total_tokens, 6);
    assert.equal(mock.requests[0]!.path, `/v1/projects/${PROJECT}/locations/${REGION}/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse`);
  });

  it('embeddings through predict: dimensions and task_type; token counts summed', async () => {
    const client = sdk(config({ cloud2_service_account_json: account() }));
    const res = await client.embeddings.create({ model: 'text-embedding-005', input: ['one two', 'three'], dimensions: 4, task_type: 'RETRIEVAL_DOCUMENT' } as never);
    assert.equal(mock.requests[0]!.path, `/v1/projects/${PROJECT}/locations/${REGION}/publishers/google/models/text-embedding-005:predict`);
    assert.deepEqual(mock.requests[0]!.json, {
      instances: [
        { content: 'one two', task_type: 'RETRIEVAL_DOCUMENT' },
        { content: 'three', task_type: 'RETRIEVAL_DOCUMENT' },
      ],
      parameters: { outputDimensionality: 4 },
    });
    assert.deepEqual(res.data.map((d) => d.embedding), [vector('one two', 4), vector('three', 4)]);
    assert.deepEqual(res.usage, { prompt_tokens: 3, total_tokens: 3 });
  });

  it('the cloud2 alias, completions refused, and the generic proxy with the exchanged token', async () => {
    const sa = account();
    const aliased = await gw.call('/chat/completions', {
      headers: { 'x-gateway-config': JSON.stringify({ provider: 'cloud2', cloud2_region: REGION, custom_host: mock.vertexBase, cloud2_service_account_json: sa }) },
      body: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] },
    });
    assert.equal(aliased.status, 200);
    assert.equal(aliased.headers.get('x-gateway-provider'), 'vertex-ai');

    const completions = await gw.call('/completions', { headers: { 'x-gateway-config': config({ cloud2_service_account_json: sa }) }, body: { model: 'gemini-2.5-flash', prompt: 'x' } });
    assert.equal((await assertEnvelope(completions, 400)).param, 'provider');

    const body = { contents: [{ role: 'user', parts: [{ text: 'raw' }] }] };
    const raw = await gw.call(`/projects/${PROJECT}/locations/${REGION}/publishers/google/models/gemini-2.5-flash:generateContent`, {
      headers: { 'x-gateway-config': config({ cloud2_service_account_json: sa }) },
      body,
    });
    assert.equal(raw.status, 200);
    const answer = (await raw.json()) as { candidates: { content: { parts: { text: string }[] } }[] };
    assert.equal(answer.candidates[0]!.content.parts[0]!.text, '[mock] echo: raw');
    assert.equal(mock.exchanges.length, 1);
    assert.equal(mock.requests.at(-1)!.headers.authorization, `Bearer ${mock.exchanges[0]!.issued}`);
  });
});
