// Running prompts through the gateway's request pipeline, on both engines, with the
// official OpenAI SDK against a mock OpenAI: POST /v1/prompts/:id/completions (whole and
// streamed) with the prompt's credential or saved config, and a chat request whose config
// names prompt_id. Routing, cache and guardrails apply as to any chat request; logs and the
// prompt groups record the prompt and the version rendered; scopes and the prompt's run role
// are enforced before anything reaches the provider.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { engines } from './support/engines.js';
import { as, email, expect, expectError, seedKey, type Json } from './support/identity.js';
import { logOf } from './support/logs.js';
import { useMockOpenAI } from './support/mock-openai.js';
import { useGateway } from './support/use-gateway.js';

const UPSTREAM_KEY = 'sk-upstream-prompts';

const TEMPLATE = JSON.stringify([
  { role: 'system', content: 'You answer as {{persona}}.' },
  { role: 'user', content: 'Tell me about {{topic}}' },
]);

for (const engine of engines()) {
  describe(`running prompts (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    const mock = useMockOpenAI({ apiKey: UPSTREAM_KEY });
    let runKey = '';
    let prompt: Json;
    let client: OpenAI;

    before(async () => {
      await expect(gw.call('/virtual-keys', { body: { name: 'main', provider: 'openai', key: UPSTREAM_KEY, slug: 'main-openai', custom_host: mock().url } }), 201);
      prompt = await expect(
        gw.call('/prompts', { body: { name: 'explainer', slug: 'explainer', string: TEMPLATE, model: 'gpt-4o-mini', parameters: { temperature: 0.2, max_tokens: 64 }, virtual_key: 'main-openai' } }),
        201,
      );
      runKey = await seedKey(gw, { scopes: ['prompts.run'] });
      client = new OpenAI({ apiKey: 'not-the-provider-key', baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': runKey } });
    });

    const run = (ref: string, body: Json) => client.post<OpenAI.ChatCompletion>(`/prompts/${ref}/completions`, { body });

    it("runs a prompt with its credential: the provider gets the rendered messages, the version's model and parameters, the call's hyperparameters", async () => {
      const { data, response } = await run('explainer', { variables: { persona: 'a pirate', topic: 'the "sea"' }, temperature: 0.9 }).withResponse();
      assert.equal(data.object, 'chat.completion');
      assert.equal(data.choices[0]!.message.content, '[mock] echo: Tell me about the "sea"');
      assert.equal(response.headers.get('x-gateway-provider'), 'openai');
      const sent = mock().requests.at(-1)!;
      assert.equal(sent.path, '/v1/chat/completions');
      assert.equal(sent.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
      assert.deepEqual(sent.json, {
        temperature: 0.9,
        max_completion_tokens: 64,
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'You answer as a pirate.' },
          { role: 'user', content: 'Tell me about the "sea"' },
        ],
      });
      const log = await logOf(gw, response.headers.get('x-gateway-trace-id')!);
      assert.deepEqual([log.prompt_id, log.prompt_version, log.path], [prompt.id, 1, `/prompts/explainer/completions`]);
    });

    it('streams a run through the SDK, and a pinned version renders that version', async () => {
      await expect(gw.call(`/prompts/${prompt.id}`, { method: 'PUT', body: { patch: true, string: JSON.stringify([{ role: 'user', content: 'v2 about {{topic}}' }]) } }), 200);
      const stream = await client.post<OpenAI.ChatCompletionChunk>('/prompts/explainer@2/completions', {
        body: { variables: { topic: 'tides' }, stream: true },
        stream: true,
      });
      let text = '';
      for await (const chunk of stream as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) text += chunk.choices[0]?.delta?.content ?? '';
      assert.equal(text, '[mock] echo: v2 about tides');
      const sent = mock().requests.at(-1)!.json;
      assert.equal(sent.stream, true);
      assert.deepEqual(sent.messages, [{ role: 'user', content: 'v2 about tides' }]);
      // The default version is still 1 until published.
      await run('explainer', { variables: { persona: 'p', topic: 't' } });
      assert.equal(mock().requests.at(-1)!.json.messages.length, 2);
    });

    it("a chat request whose config names prompt_id renders the prompt, its messages after the prompt's, routed by the prompt's credential", async () => {
      const key = await seedKey(gw, { scopes: ['completions.write', 'prompts.run'] });
      const chat = new OpenAI({ apiKey: 'x', baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': key } });
      const params = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'and more' }], variables: { persona: 'a poet', topic: 'rain' } } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
      const { data, response } = await chat.chat.completions.create(params, { headers: { 'x-gateway-config': JSON.stringify({ prompt_id: 'explainer' }) } }).withResponse();
      assert.equal(data.choices[0]!.message.content, '[mock] echo: and more');
      assert.deepEqual(mock().requests.at(-1)!.json.messages, [
        { role: 'system', content: 'You answer as a poet.' },
        { role: 'user', content: 'Tell me about rain' },
        { role: 'user', content: 'and more' },
      ]);
      const log = await logOf(gw, response.headers.get('x-gateway-trace-id')!);
      assert.deepEqual([log.prompt_id, log.prompt_version], [prompt.id, 1]);
      // Without prompts.run, a config's prompt is refused before the provider is called.
      const plain = await seedKey(gw, { scopes: ['completions.write'] });
      const count = mock().requests.length;
      const refused = await expectError(
        gw.call('/chat/completions', { headers: { ...as(plain), 'x-gateway-config': JSON.stringify({ prompt_id: 'explainer' }) }, body: { variables: { persona: 'a', topic: 'b' } } }),
        403,
        'prompts.run',
      );
      assert.equal(refused.error.code, 'missing_scope');
      await expectError(gw.call('/chat/completions', { headers: { ...as(key), 'x-gateway-config': JSON.stringify({ prompt_id: 'nope' }) }, body: {} }), 400, 'prompt_id');
      await expectError(gw.call('/embeddings', { headers: { ...as(key), 'x-gateway-config': JSON.stringify({ prompt_id: 'explainer' }) }, body: { input: 'x' } }), 400, 'prompt_id');
      assert.equal(mock().requests.length, count);
    });

    it("a prompt naming a saved config is routed by it: the config's cache and guardrails apply", async () => {
      const config = await expect(
        gw.call('/configs', {
          body: {
            name: 'cached and guarded',
            config: { virtual_key: 'main-openai', cache: { mode: 'simple' }, input_guardrails: [{ deny: true, 'default.contains': { words: ['password'], operator: 'none' } }] },
          },
        }),
        201,
      );
      await expect(gw.call('/prompts', { body: { name: 'cached', slug: 'cached', string: 'Say {{word}}', model: 'gpt-4o-mini', config_id: config.slug } }), 201);
      const first = await run('cached', { variables: { word: 'hello' } }).withResponse();
      const second = await run('cached', { variables: { word: 'hello' } }).withResponse();
      assert.equal(first.response.headers.get('x-gateway-cache-status'), 'MISS');
      assert.equal(second.response.headers.get('x-gateway-cache-status'), 'HIT');
      assert.equal(second.data.choices[0]!.message.content, '[mock] echo: Say hello');
      const count = mock().requests.length;
      const denied = await gw.call('/prompts/cached/completions', { headers: as(runKey), body: { variables: { word: 'my password' } } });
      assert.equal(denied.status, 446);
      assert.equal(mock().requests.length, count, 'the guardrail stopped it before the provider');
    });

    it('refusals before the provider: missing variable (400 naming it), unknown prompt (404), scope, the prompt’s run role', async () => {
      const count = mock().requests.length;
      const missing = await expectError(gw.call('/prompts/explainer/completions', { headers: as(runKey), body: { variables: { persona: 'x' } } }), 400, 'variables.topic');
      assert.equal(missing.error.code, 'missing_variable');
      await expectError(gw.call('/prompts/nope/completions', { headers: as(runKey), body: {} }), 404);
      const noRun = await seedKey(gw, { scopes: ['completions.write', 'prompts.read'] });
      await expectError(gw.call('/prompts/explainer/completions', { headers: as(noRun), body: {} }), 403, 'prompts.run');
      const user = await expect(gw.call('/users', { body: { email: email('runner'), role: 'member', workspaces: [{ id: (await gw.store.workspaces.default()).id, role: 'member' }] } }), 201);
      const memberKey = await seedKey(gw, { subType: 'user', userId: user.id, scopes: ['prompts.run'] });
      await expect(gw.call('/prompts/explainer', { method: 'PUT', body: { access: { run: 'manager' } } }), 200);
      const denied = await expectError(gw.call('/prompts/explainer/completions', { headers: as(memberKey), body: { variables: { persona: 'a', topic: 'b' } } }), 403);
      assert.match(denied.error.message, /run of prompt 'explainer' needs workspace manager/);
      await expect(gw.call('/prompts/explainer', { method: 'PUT', body: { access: {} } }), 200);
      const ok = await gw.call('/prompts/explainer/completions', { headers: as(memberKey), body: { variables: { persona: 'a', topic: 'b' } } });
      assert.equal(ok.status, 200, await ok.text());
      assert.equal(mock().requests.length, count + 1);
    });

    it('the prompt group of /v1/logs/groups and /v1/analytics/groups counts runs per prompt; /v1/logs filters by prompt_id', async () => {
      const trace = (await run('explainer', { variables: { persona: 'a', topic: 'b' } }).withResponse()).response.headers.get('x-gateway-trace-id')!;
      await logOf(gw, trace);
      for (const path of ['/logs/groups/prompt', '/analytics/groups/prompt']) {
        const groups = await expect(gw.call(`${path}?columns=total_tokens`), 200);
        const mine = groups.data.find((g: Json) => g.prompt === prompt.id);
        assert.ok(mine !== undefined && mine.requests >= 4, JSON.stringify(groups.data));
      }
      const listed = await expect(gw.call(`/logs?prompt_id=${prompt.id}&limit=100`), 200);
      assert.ok(listed.data.length >= 4);
      assert.ok(listed.data.every((l: Json) => l.prompt_id === prompt.id));
    });
  });
}
