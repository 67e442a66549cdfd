// Checks that call out, on the request path of a running gateway: a
// webhook's transformed request is what the provider receives; default.jwt
// reads the client's own header; openai.moderateContent calls a mock of
// OpenAI's /v1/moderations with a virtual key stored in the workspace, and
// its guardrail denies by default.
import { generateKeyPairSync, sign } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { startMockServer, type MockServer } from './support/mock-server.js';
import { expectJson } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'sk-upstream-outbound';
const MODERATION_KEY = 'sk-moderation-outbound';
type Json = Record<string, any>;

describe('checks that call out, over HTTP', () => {
  const gw = useGateway();
  let provider: MockOpenAI;
  let side: MockServer<never>;
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  before(async () => {
    provider = await startMockOpenAI({ apiKey: KEY });
    // One mock for the webhook, the JWKS and OpenAI's moderation API (its wire format: {input, model} → {id, model, results}).
    side = await startMockServer((rec, _req, res) => {
      const json = (body: unknown, status = 200): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (rec.path === '/webhook') {
        const messages = rec.json.request.json.messages.map((m: Json) => ({ ...m, content: String(m.content).replace(/\d{4}-\d{4}/g, '[CARD]') }));
        return json({ verdict: true, transformedData: { request: { json: { ...rec.json.request.json, messages } } } });
      }
      if (rec.path === '/jwks.json') return json({ keys: [{ ...ec.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256' }] });
      if (rec.path === '/v1/moderations') {
        if (rec.headers.authorization !== `Bearer ${MODERATION_KEY}`) return json({ error: { message: 'Incorrect API key provided' } }, 401);
        const results = (rec.json.input as string[]).map((t) => ({ flagged: /kill/.test(t), categories: { violence: /kill/.test(t), hate: false }, category_scores: { violence: /kill/.test(t) ? 0.9 : 0.01, hate: 0.001 } }));
        return json({ id: 'modr-1', model: rec.json.model, results });
      }
      json({ error: 'not found' }, 404);
    });
  });
  afterEach(() => provider.reset());
  after(() => Promise.all([provider.close(), side.close()]));

  const chat = (content: string, hooks: Json, headers: Record<string, string> = {}) =>
    gw.call('/chat/completions', {
      headers: { 'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: KEY, custom_host: provider.url, ...hooks }), ...headers },
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] },
    });

  it('a webhook’s transformed request is what the provider receives', async () => {
    const res = await chat('my card is 1234-5678', { input_guardrails: [{ 'default.webhook': { webhookURL: `${side.url}/webhook` } }] });
    const body = await expectJson(res, 200);
    assert.equal(provider.requests[0]!.json.messages[0].content, 'my card is [CARD]');
    assert.equal(body.choices[0].message.content, '[mock] echo: my card is [CARD]');
  });

  it('default.jwt reads the client’s header: a request without a valid token is denied', async () => {
    const hooks = { input_guardrails: [{ deny: true, 'default.jwt': { jwksUri: `${side.url}/jwks.json`, headerKey: 'x-user-jwt' } }] };
    const denied = await expectJson(await chat('hi', hooks), 446);
    assert.match(denied.hook_results.before_request_hooks[0].checks[0].explanation, /no x-user-jwt header/);
    assert.equal(provider.requests.length, 0);
    const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
    const data = `${b64({ alg: 'ES256', kid: 'k1' })}.${b64({ sub: 'u1', iat: Math.floor(Date.now() / 1000) })}`;
    const token = `${data}.${sign('sha256', Buffer.from(data), { key: ec.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
    await expectJson(await chat('hi', hooks, { 'x-user-jwt': token }), 200);
  });

  it('openai.moderateContent calls the moderation API with a stored virtual key; flagged input is denied by default', async () => {
    await expectJson(await gw.call('/virtual-keys', { body: { name: 'moderation', provider: 'openai', key: MODERATION_KEY, slug: 'moderation', custom_host: `${side.url}/v1` } }), 201);
    const hooks = { input_guardrails: [{ id: 'moderated', 'openai.moderateContent': { apiDomain: side.url, credential: 'moderation' } }] };
    const denied = await expectJson(await chat('I will kill the process', hooks), 446);
    const check = denied.hook_results.before_request_hooks[0].checks[0];
    assert.equal(check.id, 'openai.moderateContent');
    assert.deepEqual(check.data.categories, ['violence']);
    assert.equal(provider.requests.length, 0);
    assert.doesNotMatch(JSON.stringify(denied), new RegExp(MODERATION_KEY));
    await expectJson(await chat('a kind word', hooks), 200);
    assert.equal(provider.requests.length, 1);
    // Pointed elsewhere, the stored key is not sent: the check errors and (without failOnError) the request goes on.
    const elsewhere = await expectJson(await chat('hi', { input_guardrails: [{ 'openai.moderateContent': { apiDomain: 'https://api.openai.com', credential: 'moderation' } }] }), 200);
    assert.equal(elsewhere.hook_results, undefined);
  });
});
