// The hooks engine: errors follow failOnError, deny and feedback, saved
// guardrail references, async hooks apart, and the text a check sees.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HookLog, runHooks, type HookInput } from '../src/guardrails/engine.js';
import { compileHooks, type HookConfig } from '../src/guardrails/hooks.js';
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
    const [later] = log.logged().before_request_hooks;
    assert.equal(later!.id, 'later');
    assert.equal(later!.verdict, false);
  });

  it('guardrail ids default to their place; deny comes from the item or its on_fail', async () => {
    const hooks = hooksOf({ output_guardrails: [{ 'default.notNull': {} }, { on_fail: { deny: true }, 'default.notNull': {} }] }).after;
    assert.deepEqual(hooks.map((h) => [h.id, h.deny]), [['output_guardrails[0]', false], ['output_guardrails[1]', true]]);
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
});
