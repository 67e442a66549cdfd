// Model rules and budgets hold for the model actually sent (issue 15 item 4). Before:
// pass-through chat and the proxy's JSON bodies (/v1/responses) skipped an integration's
// model allow-list and cost nothing to a cost budget (the body was never read); a request
// was priced on the body's model, not the one override_params sends; and under a cost
// budget a model with no known price went through uncharged.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cost } from '../src/catalog/catalog.js';
import { assertEnvelope } from './support/http.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { createWorkspace, expectJson, workspaceKey } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const MESSAGES = [{ role: 'user', content: 'hello' }];
const USAGE = { prompt_tokens: 4000, completion_tokens: 6000, total_tokens: 10_000 };
const ANSWER = {
  body: {
    id: 'chatcmpl-sent',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: USAGE,
  },
};
/** 0.01 and 0.03 cents a token: USD 100 and 300 per million tokens. */
const CUSTOM_PRICE = { type: 'static', pay_as_you_go: { request_token: { price: 0.01 }, response_token: { price: 0.03 } } };
const CUSTOM_COST = (4000 * 100 + 6000 * 300) / 1e6;

describe('model rules and budgets apply to the model actually sent', { timeout: 60_000 }, () => {
  const gw = useGateway();
  let mock: MockOpenAI;
  let ws: string;
  let secret: string;
  let slug: string;
  let integrationKey: string;

  before(async () => {
    mock = await startMockOpenAI();
  });
  afterEach(() => mock.reset());
  after(() => mock.close());

  /** A fresh workspace with an OpenAI integration that admits only the listed models. */
  async function tenant(models: { slug: string; enabled: boolean; pricing_config?: unknown }[]): Promise<void> {
    ws = await createWorkspace(gw, `sent ${randomBytes(4).toString('hex')}`);
    secret = await workspaceKey(gw, ws, ['completions.write']);
    slug = `int-${randomBytes(4).toString('hex')}`;
    integrationKey = `sk-int-${randomBytes(8).toString('hex')}`;
    const made = await expectJson<{ id: string }>(
      await gw.call('/integrations', { body: { name: slug, ai_provider_id: 'openai', key: integrationKey, slug, workspace_id: ws, configurations: { custom_host: mock.url } } }),
      201,
    );
    await expectJson(await gw.call(`/integrations/${made.id}/integration-models`, { method: 'PUT', body: { models, allow_all_models: false } }), 200);
  }

  const budget = async (type: 'cost' | 'tokens', limit: number): Promise<string> =>
    (
      await expectJson<{ id: string }>(
        await gw.call('/policies/usage-limits', {
          body: { conditions: [{ key: 'workspace_id', value: ws }], group_by: [{ key: 'workspace_id' }], type, credit_limit: limit, workspace_id: ws },
        }),
        201,
      )
    ).id;
  const status = async (id: string): Promise<string> => (await expectJson<{ status: string }>(await gw.call(`/policies/usage-limits/${id}`), 200)).status;

  const send = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    gw.call(path, { headers: { 'x-gateway-api-key': secret, 'x-gateway-provider': `@${slug}`, ...headers }, body });
  const passthrough = { 'x-gateway-config': JSON.stringify({ passthrough: true }) };

  it('pass-through chat and the proxy’s /v1/responses are held to the integration’s model list', async () => {
    await tenant([{ slug: 'gpt-4o-mini', enabled: true }]);
    const refusedChat = await assertEnvelope(await send('/chat/completions', { model: 'gpt-4o', messages: MESSAGES }, passthrough), 412);
    assert.equal(refusedChat.code, 'model_not_allowed');
    assert.match(refusedChat.message, /gpt-4o/);
    const refusedProxy = await assertEnvelope(await send('/responses', { model: 'gpt-4o', input: 'hello' }), 412);
    assert.equal(refusedProxy.code, 'model_not_allowed');
    assert.equal(mock.requests.length, 0, 'a refused model reaches no provider');

    mock.enqueue('/v1/chat/completions', ANSWER);
    const ok = await send('/chat/completions', { model: 'gpt-4o-mini', messages: MESSAGES }, passthrough);
    assert.equal(ok.status, 200, await ok.clone().text());
    await ok.arrayBuffer();
    mock.enqueue('/v1/responses', { body: { id: 'resp_1', object: 'response', output: [] } });
    const proxied = await send('/responses', { model: 'gpt-4o-mini', input: 'hello' });
    assert.equal(proxied.status, 200, await proxied.clone().text());
    await proxied.arrayBuffer();
    assert.equal(mock.requests.length, 2);
    assert.equal(mock.requests[1]!.headers.authorization, `Bearer ${integrationKey}`);
  });

  it('a pass-through request is charged to a cost budget at its model’s price', async () => {
    await tenant([{ slug: 'gpt-4o-mini', enabled: true }]);
    const id = await budget('cost', cost('openai', 'gpt-4o-mini', USAGE)!);
    mock.enqueue('/v1/chat/completions', ANSWER);
    const res = await send('/chat/completions', { model: 'gpt-4o-mini', messages: MESSAGES }, passthrough);
    assert.equal(res.status, 200, await res.clone().text());
    await res.arrayBuffer();
    assert.equal(await status(id), 'exhausted');
  });

  it('a request is priced on the model override_params sends, not the body’s', async () => {
    await tenant([
      { slug: 'gpt-4o-mini', enabled: true },
      { slug: 'gpt-4o', enabled: true },
    ]);
    const dear = cost('openai', 'gpt-4o', USAGE)!;
    assert.ok(dear > cost('openai', 'gpt-4o-mini', USAGE)! * 2);
    const id = await budget('cost', dear);
    mock.enqueue('/v1/chat/completions', ANSWER);
    const config = { 'x-gateway-config': JSON.stringify({ provider: `@${slug}`, override_params: { model: 'gpt-4o' } }) };
    const res = await send('/chat/completions', { model: 'gpt-4o-mini', messages: MESSAGES }, config);
    assert.equal(res.status, 200, await res.clone().text());
    await res.arrayBuffer();
    assert.equal(mock.requests[0]!.json.model, 'gpt-4o');
    assert.equal(await status(id), 'exhausted', 'charged at gpt-4o’s price');
  });

  it('under a cost budget an unpriced model is a 400 unless the integration prices it', async () => {
    await tenant([
      { slug: 'house-model', enabled: true },
      { slug: 'priced-house-model', enabled: true, pricing_config: CUSTOM_PRICE },
    ]);
    const tokens = await budget('tokens', 1e9);
    // A token budget counts what it cannot price.
    mock.enqueue('/v1/chat/completions', ANSWER);
    const counted = await send('/chat/completions', { model: 'house-model', messages: MESSAGES });
    assert.equal(counted.status, 200, await counted.clone().text());
    await counted.arrayBuffer();
    await expectJson(await gw.call(`/policies/usage-limits/${tokens}`, { method: 'DELETE' }), 200);

    const id = await budget('cost', CUSTOM_COST);
    const before = mock.requests.length;
    const refused = await assertEnvelope(await send('/chat/completions', { model: 'house-model', messages: MESSAGES }), 400);
    assert.equal(refused.code, 'model_not_priced');
    assert.equal(refused.param, 'model');
    assert.match(refused.message, /house-model/);
    const proxied = await assertEnvelope(await send('/responses', { model: 'house-model', input: 'hi' }), 400);
    assert.equal(proxied.code, 'model_not_priced');
    assert.equal(mock.requests.length, before, 'nothing sent');

    mock.enqueue('/v1/chat/completions', ANSWER);
    const priced = await send('/chat/completions', { model: 'priced-house-model', messages: MESSAGES });
    assert.equal(priced.status, 200, await priced.clone().text());
    await priced.arrayBuffer();
    assert.equal(await status(id), 'exhausted', 'charged at the integration’s price');
  });

  it('a pricing_config that is not a price is a 400 naming its path, and changes nothing', async () => {
    await tenant([{ slug: 'gpt-4o-mini', enabled: true }]);
    const list = await expectJson<{ data: { id: string; slug: string }[] }>(await gw.call(`/integrations?workspace_id=${ws}`), 200);
    const id = list.data.find((i) => i.slug === slug)!.id;
    const bad = { type: 'static', pay_as_you_go: { request_token: { price: -1 }, response_token: { price: 1 } } };
    const e = await assertEnvelope(
      await gw.call(`/integrations/${id}/integration-models`, { method: 'PUT', body: { models: [{ slug: 'x', enabled: true, pricing_config: bad }] } }),
      400,
    );
    assert.equal(e.param, 'models[0].pricing_config.pay_as_you_go.request_token.price');
    const after = await expectJson<{ data: { slug: string }[] }>(await gw.call(`/integrations/${id}/integration-models`), 200);
    assert.deepEqual(after.data.map((m) => m.slug), ['gpt-4o-mini']);
  });
});
