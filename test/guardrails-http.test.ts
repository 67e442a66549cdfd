// Hooks and guardrails on the request path, with the official OpenAI SDK as
// the client and a mock OpenAI upstream: a denying check is a 446 with
// hook_results (the provider never called for input checks), a failing check
// without deny a 246 with the answer and hook_results, async hooks change
// nothing and reach the log, sequential transforms reach the provider.
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { watchedClient, type WatchedClient } from './support/guardrails.js';
import { startMockAnthropic, type MockAnthropic } from './support/mock-anthropic.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { logOf } from './support/logs.js';
import { expectJson } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'sk-upstream-guardrails';
const ANTHROPIC_KEY = 'sk-ant-guardrails';
type Json = Record<string, any>;

describe('hooks and guardrails over HTTP', () => {
  const gw = useGateway();
  let mock: MockOpenAI;
  let anthropic: MockAnthropic;
  let client: OpenAI;
  let refusal: WatchedClient['refusal'];

  const config = (hooks: Json): Json => ({ provider: 'openai', api_key: KEY, custom_host: mock.url, ...hooks });
  const opts = (hooks: Json, traceId = randomUUID()) => ({ headers: { 'x-gateway-config': JSON.stringify(config(hooks)), 'x-gateway-trace-id': traceId } });
  const ask = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content }] });

  before(async () => {
    [mock, anthropic] = await Promise.all([startMockOpenAI({ apiKey: KEY }), startMockAnthropic({ apiKey: ANTHROPIC_KEY })]);
    ({ client, refusal } = watchedClient(gw, ADMIN_KEY));
  });
  afterEach(() => mock.reset());
  after(async () => {
    await Promise.all([mock.close(), anthropic.close()]);
  });

  it('an input guardrail that denies: 446 with hook_results, and the provider is never called', async () => {
    const hooks = { input_guardrails: [{ id: 'no-secrets', deny: true, 'default.contains': { words: ['password'], operator: 'none' } }] };
    const r = await refusal(client.chat.completions.create(ask('my password is hunter2'), opts(hooks)));
    assert.equal(r.status, 446);
    assert.equal(r.body.error.type, 'hooks_failed');
    const [hook] = r.body.hook_results.before_request_hooks;
    assert.equal(hook.id, 'no-secrets');
    assert.equal(hook.verdict, false);
    assert.equal(hook.deny, true);
    assert.equal(hook.checks[0].id, 'default.contains');
    assert.equal(hook.checks[0].verdict, false);
    assert.equal(typeof hook.checks[0].execution_time, 'number');
    assert.deepEqual(r.body.hook_results.after_request_hooks, []);
    assert.equal(mock.requests.length, 0);
  });

  it('deny on the hook itself and in on_fail both deny; a passing check does not', async () => {
    const check = { id: 'default.regexMatch', parameters: { rule: '^\\d+$' } };
    for (const hook of [{ id: 'h', deny: true, checks: [check] }, { id: 'h', on_fail: { deny: true }, checks: [check] }]) {
      const r = await refusal(client.chat.completions.create(ask('not digits'), opts({ before_request_hooks: [hook] })));
      assert.equal(r.status, 446);
    }
    const ok = await client.chat.completions.create(ask('12345'), opts({ before_request_hooks: [{ id: 'h', deny: true, checks: [check] }] })).withResponse();
    assert.equal(ok.response.status, 200);
    assert.equal((ok.data as Json).hook_results, undefined, 'a 200 answer is the provider’s own');
  });

  it('a failing check without deny: 246 with the answer and hook_results, and the log has them', async () => {
    const traceId = randomUUID();
    const hooks = { input_guardrails: [{ 'default.wordCount': { maxWords: 2 } }], output_guardrails: [{ 'default.contains': { words: ['echo'] } }] };
    const { data, response } = await client.chat.completions.create(ask('one two three four'), opts(hooks, traceId)).withResponse();
    assert.equal(response.status, 246);
    assert.equal(data.choices[0]!.message.content, '[mock] echo: one two three four');
    const results = (data as Json).hook_results;
    assert.equal(results.before_request_hooks[0].verdict, false);
    assert.equal(results.after_request_hooks[0].verdict, true);
    assert.equal(mock.requests.length, 1);
    const log = await logOf(gw, traceId);
    assert.equal(log.status, 246);
    assert.equal(log.hook_results.before_request_hooks[0].checks[0].id, 'default.wordCount');
    assert.equal(log.hook_results.after_request_hooks[0].checks[0].verdict, true);
  });

  it('an output guardrail that denies: 446 after the provider answered', async () => {
    const hooks = { output_guardrails: [{ deny: true, 'default.contains': { words: ['echo'], operator: 'none' } }] };
    const r = await refusal(client.chat.completions.create(ask('hi'), opts(hooks)));
    assert.equal(r.status, 446);
    assert.equal(r.body.hook_results.after_request_hooks[0].checks[0].verdict, false);
    assert.equal(mock.requests.length, 1);
  });

  it('async hooks never change the answer; their results reach the log', async () => {
    const traceId = randomUUID();
    const hooks = { after_request_hooks: [{ id: 'later', async: true, deny: true, checks: [{ id: 'default.wordCount', parameters: { maxWords: 1 } }] }] };
    const { data, response } = await client.chat.completions.create(ask('a few words here'), opts(hooks, traceId)).withResponse();
    assert.equal(response.status, 200);
    assert.equal((data as Json).hook_results, undefined);
    const log = await logOf(gw, traceId);
    const [hook] = log.hook_results.after_request_hooks;
    assert.equal(hook.id, 'later');
    assert.equal(hook.async, true);
    assert.equal(hook.verdict, false);
  });

  it('sequential transforms reach the provider, each check seeing the last one’s text', async () => {
    const hooks = {
      before_request_hooks: [
        {
          id: 'redact',
          sequential: true,
          deny: true,
          checks: [
            { id: 'default.regexReplace', parameters: { rule: '/\\d{3}-\\d{4}/g', redactText: '[PHONE]' } },
            // Passes only on the redacted text.
            { id: 'default.regexMatch', parameters: { rule: '\\d{3}-\\d{4}', not: true } },
            { id: 'default.addPrefix', parameters: { prefix: 'You are careful.', applyToRole: 'system' } },
          ],
        },
      ],
    };
    const { data, response } = await client.chat.completions.create(ask('call 555-1234 or 555-9876'), opts(hooks)).withResponse();
    assert.equal(response.status, 200);
    assert.equal(data.choices[0]!.message.content, '[mock] echo: call [PHONE] or [PHONE]');
    assert.deepEqual(mock.requests[0]!.json.messages, [
      { role: 'system', content: 'You are careful.' },
      { role: 'user', content: 'call [PHONE] or [PHONE]' },
    ]);
  });

  it('checks side by side see the text before any transform', async () => {
    const hooks = {
      before_request_hooks: [
        {
          id: 'parallel',
          checks: [
            { id: 'default.regexReplace', parameters: { rule: 'secret', redactText: 'x' } },
            { id: 'default.contains', parameters: { words: ['secret'], operator: 'none' } },
          ],
        },
      ],
    };
    const { data, response } = await client.chat.completions.create(ask('a secret'), opts(hooks)).withResponse();
    assert.equal(response.status, 246, 'the second check saw the unredacted text');
    assert.equal(mock.requests[0]!.json.messages[0].content, 'a x');
    assert.equal((data as Json).hook_results.before_request_hooks[0].checks[0].transformed, true);
  });

  it('an output transform changes the relayed answer', async () => {
    const hooks = { output_guardrails: [{ 'default.regexReplace': { rule: '/mock/g', redactText: 'gateway' } }] };
    const res = await client.chat.completions.create(ask('hi'), opts(hooks));
    assert.equal(res.choices[0]!.message.content, '[gateway] echo: hi');
  });

  it('an answer the hooks changed is not cached: a hit would replay it without them', async () => {
    const hooks = { cache: { mode: 'simple' }, output_guardrails: [{ 'default.regexReplace': { rule: 'mock', redactText: 'gateway' } }] };
    for (let i = 0; i < 2; i++) assert.equal((await client.chat.completions.create(ask('cache me'), opts(hooks))).choices[0]!.message.content, '[gateway] echo: cache me');
    assert.equal(mock.requests.length, 2);
  });

  it('a cache hit passes the output guardrails too: a HIT when they pass, 446 when they fail', async () => {
    // The rule reads the request's metadata, which the cache key leaves out: the same stored answer passes for one caller and not another.
    const hooks = { cache: { mode: 'simple' }, output_guardrails: [{ deny: true, 'default.modelRules': { rules: { defaults: ['other-model'], metadata: { tier: { gold: ['gpt-4o-mini'] } } } } }] };
    const as = (tier: string) => ({ headers: { ...opts(hooks).headers, 'x-gateway-metadata': JSON.stringify({ tier }) } });
    assert.equal((await client.chat.completions.create(ask('cache this'), as('gold')).withResponse()).response.status, 200);
    const hit = await client.chat.completions.create(ask('cache this'), as('gold')).withResponse();
    assert.equal(hit.response.headers.get('x-gateway-cache-status'), 'HIT');
    assert.equal(hit.response.status, 200);
    assert.equal(hit.data.choices[0]!.message.content, '[mock] echo: cache this');
    const r = await refusal(client.chat.completions.create(ask('cache this'), as('free')));
    assert.equal(r.status, 446);
    assert.equal(r.body.hook_results.after_request_hooks[0].checks[0].id, 'default.modelRules');
    assert.equal(mock.requests.length, 1, 'both later answers came from the cache');
  });

  it('judges a translated answer (Anthropic) as text', async () => {
    const hooks = { provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: anthropic.url, output_guardrails: [{ deny: true, 'default.endsWith': { suffix: 'never' } }] };
    const r = await refusal(client.chat.completions.create({ ...ask('hi'), model: 'claude-3-5-haiku-latest', max_tokens: 50 }, opts(hooks)));
    assert.equal(r.status, 446);
  });

  it('completions and embeddings run input checks; a model outside the list is denied', async () => {
    const hooks = { input_guardrails: [{ deny: true, 'default.modelWhitelist': { models: ['gpt-4o-mini'] } }] };
    const c = await refusal(client.completions.create({ model: 'davinci-002', prompt: 'x' }, opts(hooks)));
    assert.equal(c.status, 446);
    const e = await refusal(client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }, opts(hooks)));
    assert.equal(e.status, 446);
    const ok = await client.embeddings.create({ model: 'gpt-4o-mini', input: 'x' }, opts(hooks)).withResponse();
    assert.equal(ok.response.status, 200);
  });

  it('a streamed answer after a failed input check without deny is a 246, its events unchanged', async () => {
    const hooks = { input_guardrails: [{ 'default.alluppercase': {} }] };
    const { data: stream, response } = await client.chat.completions.create({ ...ask('quiet words'), stream: true }, opts(hooks)).withResponse();
    assert.equal(response.status, 246);
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, '[mock] echo: quiet words');
  });

  describe('POST /v1/responses', () => {
    const responses = (hooks: Json, input: unknown) => gw.call('/responses', { method: 'POST', body: { model: 'gpt-4o-mini', input }, headers: { 'x-gateway-config': JSON.stringify(config(hooks)) } });
    const answer = (text: string) => ({
      body: { id: 'resp_1', object: 'response', status: 'completed', model: 'gpt-4o-mini', output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }] },
    });

    it('input checks judge its input (a string, or the last user item): 446 and the provider never called', async () => {
      const hooks = { input_guardrails: [{ deny: true, 'default.contains': { words: ['password'], operator: 'none' } }] };
      const denied = await expectJson(await responses(hooks, 'my password is hunter2'), 446);
      assert.equal(denied.error.type, 'hooks_failed');
      assert.equal(denied.hook_results.before_request_hooks[0].checks[0].verdict, false);
      const items = [{ role: 'user', content: [{ type: 'input_text', text: 'the password' }] }];
      await expectJson(await responses(hooks, items), 446);
      assert.equal(mock.requests.length, 0);
      mock.enqueue('/v1/responses', answer('fine'));
      const ok = await responses(hooks, [{ role: 'system', content: 'no password here' }, { role: 'user', content: 'hello' }]);
      assert.equal(ok.status, 200, 'the default scope reads the last user item only');
      assert.equal((await ok.json()).output[0].content[0].text, 'fine');
      assert.equal(mock.requests.length, 1);
    });

    it('output checks judge a whole answer: 246 with hook_results', async () => {
      mock.enqueue('/v1/responses', answer('one two three'));
      const hooks = { output_guardrails: [{ 'default.wordCount': { maxWords: 2 } }] };
      const body = await expectJson(await responses(hooks, 'count'), 246);
      assert.equal(body.output[0].content[0].text, 'one two three');
      assert.equal(body.hook_results.after_request_hooks[0].verdict, false);
    });

    it('a hook that rewrites the request rewrites the input the provider gets', async () => {
      const hooks = { before_request_hooks: [{ id: 'r', checks: [{ id: 'default.regexReplace', parameters: { rule: 'x', redactText: 'y' } }] }] };
      mock.enqueue('/v1/responses', answer('fine'));
      assert.equal((await responses(hooks, 'x marks')).status, 200);
      assert.equal((mock.requests[0]!.json as any).input, 'y marks');
    });
  });

  it('a bad check parameter is a 400 naming its config path', async () => {
    const hooks = { before_request_hooks: [{ id: 'h', checks: [{ id: 'default.regexMatch', parameters: { rule: '(a)\\1' } }] }] };
    const r = await refusal(client.chat.completions.create(ask('x'), opts(hooks)));
    assert.equal(r.status, 400);
    assert.equal(r.body.error.param, 'before_request_hooks[0].checks[0].parameters.rule');
  });
});
