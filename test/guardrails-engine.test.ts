// The hooks engine: errors follow failOnError, deny and feedback, saved
// guardrail references, async hooks apart, and the text a check sees.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HookLog, runHooks, type HookInput } from '../src/guardrails/engine.js';
import { unflatten } from '../src/guardrails/results.js';
import { compileHooks, MAX_REQUEST_CHECKS, type HookConfig } from '../src/guardrails/hooks.js';
import { textsOf, withTexts } from '../src/guardrails/text.js';

function hooksOf(c: HookConfig) {
  const h = compileHooks(c, { left: 500 });
  if (!h.ok) assert.fail(h.problem.message);
  return h.value;
}

const input = (content: string, over: Partial<HookInput> = {}): HookInput => ({
  kind: 'before',
  endpoint: 'chat',
  requestType: 'chatComplete',
  model: 'm',
  metadata: {},
  request: { model: 'm', messages: [{ role: 'user', content }] },
  answer: null,
  ...over,
});

describe('guardrails engine', () => {
  it('a check that errors fails its hook only with failOnError', async () => {
    const check = (failOnError: boolean) => ({ id: 'default.wordCount', parameters: { maxWords: 5, failOnError } });
    const lenient = await runHooks(hooksOf({ before_request_hooks: [{ id: 'h', deny: true, checks: [check(false)] }] }).before, input(''));
    assert.notEqual(lenient.results[0]!.checks[0]!.error, null);
    assert.equal(lenient.results[0]!.verdict, true);
    assert.equal(lenient.denied, false);
    const strict = await runHooks(hooksOf({ before_request_hooks: [{ id: 'h', deny: true, checks: [check(true)] }] }).before, input(''));
    assert.equal(strict.results[0]!.verdict, false);
    assert.equal(strict.denied, true);
  });

  it('feedback follows the verdict and names the checks by outcome', async () => {
    const hooks = hooksOf({
      after_request_hooks: [
        {
          id: 'h',
          on_success: { feedback: { value: 1 } },
          on_fail: { feedback: { value: -1, weight: 2, metadata: { team: 'a' } } },
          checks: [
            { id: 'default.notNull', parameters: {} },
            { id: 'default.alluppercase', parameters: {} },
            { id: 'default.jsonKeys', parameters: { keys: ['a'] } },
          ],
        },
      ],
    }).after;
    const run = await runHooks(hooks, input('', { kind: 'after', answer: { choices: [{ message: { content: 'not upper' } }] } }));
    assert.deepEqual(run.results[0]!.feedback, {
      value: -1,
      weight: 2,
      metadata: { team: 'a', successfulChecks: 'default.notNull', failedChecks: 'default.alluppercase, default.jsonKeys', erroredChecks: '' },
    });
    assert.equal(run.failed, true);
    assert.equal(run.denied, false);
  });

  it('a guardrail named by id is a reference with its config path, resolved before it runs', () => {
    const [, named] = hooksOf({ input_guardrails: [{ 'default.notNull': {} }, 'pii-guard'] }).before;
    assert.deepEqual(named!.ref, { name: 'pii-guard', at: 'input_guardrails[1]' });
    assert.deepEqual(named!.checks, []);
  });

  it('async hooks: not waited for, no transform kept, their results in the log once ended', async () => {
    const hooks = hooksOf({
      input_guardrails: [{ id: 'later', async: true, deny: true, 'default.regexReplace': { rule: 'x', failOnDetection: true } }],
    }).before;
    const start = input('x marks');
    const run = await runHooks(hooks, start);
    assert.deepEqual(run.results, []);
    assert.equal(run.denied, false);
    assert.equal(run.json, start.request);
    const log = new HookLog();
    log.add('before', run);
    assert.deepEqual(log.answered().before_request_hooks, []);
    await log.settled();
    const [later] = unflatten(log.logged()).before_request_hooks;
    assert.equal(later!.id, 'later');
    assert.equal(later!.verdict, false);
  });

  it('guardrail ids default to their place; deny comes from the item or its on_fail', async () => {
    const hooks = hooksOf({ output_guardrails: [{ 'default.notNull': {} }, { on_fail: { deny: true }, 'default.notNull': {} }] }).after;
    assert.deepEqual(hooks.map((h) => [h.id, h.deny]), [['output_guardrails[0]', false], ['output_guardrails[1]', true]]);
  });
});

describe('checks per request', () => {
  it(`a config with more than ${MAX_REQUEST_CHECKS} checks is refused, naming the hook that passed the bound`, () => {
    const webhook = { id: 'default.webhook', parameters: { webhookURL: 'https://hooks.example/check' } };
    const config = (n: number): HookConfig => ({
      input_guardrails: [{ 'default.contains': { words: ['x'], operator: 'none' } }],
      after_request_hooks: Array.from({ length: n }, (_, i) => ({ id: `w${i}`, checks: [webhook, webhook] })),
    });
    const under = compileHooks(config((MAX_REQUEST_CHECKS - 1) / 2 - 0.5), { left: 500 });
    assert.ok(under.ok, JSON.stringify(!under.ok && under.problem));
    const over = compileHooks(config(MAX_REQUEST_CHECKS / 2), { left: 500 });
    assert.ok(!over.ok);
    assert.deepEqual(over.problem.path, ['after_request_hooks', MAX_REQUEST_CHECKS / 2 - 1]);
    assert.match(over.problem.message, /more than the 64 a request may run/);
  });
});

describe('the text a check sees', () => {
  it('chat input: the last user message, its text parts', () => {
    const body = {
      messages: [
        { role: 'user', content: 'first' },
        { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'u' } }, { type: 'text', text: 'b' }] },
        { role: 'assistant', content: 'reply' },
      ],
    };
    assert.deepEqual(textsOf('before', 'chat', body), ['a', 'b']);
    const changed = withTexts('before', 'chat', body, ['A', 'B']);
    assert.deepEqual((changed.messages as { content: unknown }[])[1]!.content, [{ type: 'text', text: 'A' }, { type: 'image_url', image_url: { url: 'u' } }, { type: 'text', text: 'B' }]);
    assert.equal((body.messages[1]!.content as { text: string }[])[0]!.text, 'a', 'the original is not changed');
  });

  it('completions and embeddings input; output every choice', () => {
    assert.deepEqual(textsOf('before', 'completions', { prompt: ['p1', 'p2'] }), ['p1', 'p2']);
    assert.deepEqual(textsOf('before', 'embeddings', { input: [[1, 2], 'text'] }), ['text']);
    assert.deepEqual(textsOf('after', 'chat', { choices: [{ message: { content: 'one' } }, { message: { content: null, tool_calls: [] } }, { message: { content: 'two' } }] }), ['one', '', 'two']);
    assert.deepEqual(textsOf('after', 'completions', { choices: [{ text: 't' }] }), ['t']);
  });

  it('scope all_messages widens a chat request to every message; transforms write back to each', async () => {
    const request = { model: 'm', messages: [{ role: 'system', content: 'the code is 1234' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'hello' }] };
    assert.deepEqual(textsOf('before', 'chat', request, 'all_messages'), ['the code is 1234', 'ok', 'hello']);
    const forbid = { 'default.regexMatch': { rule: '\\d{4}', not: true }, deny: true };
    const narrow = await runHooks(hooksOf({ input_guardrails: [forbid] }).before, input('', { request }));
    assert.equal(narrow.denied, false, 'the last user message alone has no digits');
    const wide = await runHooks(hooksOf({ input_guardrails: [{ ...forbid, scope: 'all_messages' }] }).before, input('', { request }));
    assert.equal(wide.denied, true);
    const redacted = await runHooks(hooksOf({ before_request_hooks: [{ id: 'r', scope: 'all_messages', checks: [{ id: 'default.regexReplace', parameters: { rule: '/\\d/g', redactText: '#' } }] }] }).before, input('', { request }));
    assert.deepEqual((redacted.json.messages as { content: string }[]).map((m) => m.content), ['the code is ####', 'ok', 'hello']);
    // The next hook, with the default scope, reads the last user message again.
    const both = hooksOf({ before_request_hooks: [{ id: 'w', scope: 'all_messages', checks: [] }], input_guardrails: [{ 'default.contains': { words: ['code'] } }] });
    assert.equal((await runHooks(both.before, input('', { request }))).failed, true);
  });
});
