/**
 * Hook results on their way to the log: the engine's flat form
 * (guardrails/results.ts) crosses threads and reads back whole; the log's
 * form (guardrails/log-form.ts) leaves out what comes back as it was, and
 * is smaller than the answer's form.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HookLog, runHooks, type HookRun } from '../src/guardrails/engine.js';
import { compileHooks } from '../src/guardrails/hooks.js';
import { forLog, unpackResults } from '../src/guardrails/log-form.js';
import { unflatten, type CheckResult, type HookResult } from '../src/guardrails/results.js';

const AT = '2026-11-26T10:00:00.000Z';
const LATER = '2026-11-26T10:00:00.007Z';

function check(over: Partial<CheckResult>): CheckResult {
  return { id: 'default.contains', verdict: true, explanation: 'fine', data: null, error: null, fail_on_error: false, transformed: false, execution_time: 0.25, created_at: AT, ...over };
}

function hook(over: Partial<HookResult>): HookResult {
  return { id: 'h', type: 'guardrail', verdict: true, deny: false, async: false, transformed: false, feedback: null, execution_time: 1.5, created_at: AT, checks: [check({})], ...over };
}

describe('hook results in the log', () => {
  it('come back as the answer had them, every field away from its default included', () => {
    const results = {
      before_request_hooks: [
        hook({ default: true }),
        hook({
          id: 'input_guardrails[1]',
          type: 'mutator',
          created_at: LATER,
          verdict: false,
          deny: true,
          transformed: true,
          feedback: { value: 0, weight: 1, metadata: { successfulChecks: '', failedChecks: 'default.regexMatch', erroredChecks: 'default.webhook' } },
          checks: [
            check({ id: 'default.regexMatch', verdict: false, data: { matchIndex: 3 }, transformed: true, fail_on_error: true }),
            check({ id: 'default.webhook', error: { message: 'timed out' }, created_at: LATER }),
          ],
        }),
      ],
      after_request_hooks: [hook({ async: true, checks: [] })],
    };
    assert.deepEqual(unpackResults(forLog(results).results), results);
  });

  it('cross to the writer thread flat and read back as the answer has them, every field away from its default included', async () => {
    const hooks = compileHooks(
      {
        before_request_hooks: [
          {
            id: 'rewrite',
            type: 'mutator',
            deny: true,
            on_fail: { feedback: { value: -1, weight: 1 } },
            checks: [
              { id: 'default.regexReplace', parameters: { rule: 'hello', redactText: ' ', failOnDetection: true } },
              // No text to count once the rewrite left only spaces: it errors, and failOnError fails the hook.
              { id: 'default.wordCount', parameters: { minWords: 5, failOnError: true } },
            ],
          },
          { id: 'later', async: true, checks: [{ id: 'default.contains', parameters: { words: ['hello'], operator: 'none' } }] },
        ],
      },
      { left: 1_000 },
    );
    assert.ok(hooks.ok, JSON.stringify(hooks));
    const [rewrite, later] = hooks.value.before;
    const run = (await runHooks([{ ...rewrite!, isDefault: true }, later!], {
      kind: 'before',
      endpoint: 'chat',
      requestType: 'chatComplete',
      model: 'm',
      metadata: {},
      request: { messages: [{ role: 'user', content: 'hello' }] },
      answer: null,
    })) as HookRun;
    const log = new HookLog();
    log.add('before', run);
    await log.settled();
    const back = unflatten(structuredClone(log.logged()));
    assert.deepEqual(back.before_request_hooks.slice(0, 1), log.answered().before_request_hooks);
    const [h, a] = back.before_request_hooks;
    assert.deepEqual(
      { type: h!.type, verdict: h!.verdict, deny: h!.deny, transformed: h!.transformed, default: h!.default, feedback: h!.feedback },
      { type: 'mutator', verdict: false, deny: true, transformed: true, default: true, feedback: { value: -1, weight: 1, metadata: { successfulChecks: '', failedChecks: 'default.regexReplace', erroredChecks: 'default.wordCount' } } },
    );
    assert.deepEqual(
      h!.checks.map((c) => [c.id, c.verdict, c.transformed, c.fail_on_error, c.error?.message ?? null]),
      [
        ['default.regexReplace', false, true, false, null],
        ['default.wordCount', false, false, true, 'there is no text to check'],
      ],
    );
    assert.deepEqual([a!.id, a!.async, a!.verdict, a!.checks[0]!.data], ['later', true, true, { operator: 'none', foundWords: [], missingWords: ['hello'] }]);
    // Math.round(ms * 1000) / 1000 times 1000 is within float error of an integer, not always one (1.005 * 1000 = 1004.9999…).
    const micros = h!.execution_time * 1000;
    assert.ok(h!.execution_time >= 0 && Math.abs(micros - Math.round(micros)) < 1e-6, `times to the microsecond: ${h!.execution_time}`);
    assert.deepEqual(unpackResults(forLog(back).results), back);
  });

  it('keep times to the microsecond', () => {
    const r = unpackResults(forLog({ before_request_hooks: [hook({ execution_time: 0.1234567, checks: [check({ execution_time: 0.0004 })] })], after_request_hooks: [] }).results);
    assert.equal(r.before_request_hooks[0]!.execution_time, 0.123);
    assert.equal(r.before_request_hooks[0]!.checks[0]!.execution_time, 0);
  });

  it('read logs written whole, before this form, as they are', () => {
    const whole = { before_request_hooks: [hook({ checks: [check({ created_at: LATER })] })], after_request_hooks: [] };
    assert.deepEqual(unpackResults(JSON.stringify(whole)), whole);
  });

  it('of three passing checks take under 60 % of the bytes of the answer form', () => {
    const hooks = compileHooks(
      { input_guardrails: [{ 'default.regexMatch': { rule: '[0-9]{13,16}', not: true } }, { 'default.wordCount': { minWords: 1, maxWords: 10_000 } }, { 'default.contains': { words: ['password'], operator: 'none' } }] },
      { left: 1_000 },
    );
    assert.ok(hooks.ok);
    const t0 = Date.now();
    const run = runHooks(hooks.value.before, { kind: 'before', endpoint: 'chat', requestType: 'chatComplete', model: 'm', metadata: {}, request: { messages: [{ role: 'user', content: 'Say hello.' }] }, answer: null });
    const t1 = Date.now();
    assert.ok(!(run instanceof Promise), 'built-in checks run without a promise');
    for (const at of run.results.flatMap((h) => [h.created_at, ...h.checks.map((c) => c.created_at)])) {
      // The engine's own formatting of the time is Date's.
      assert.equal(new Date(Date.parse(at)).toISOString(), at);
      assert.ok(Date.parse(at) >= t0 && Date.parse(at) <= t1, at);
    }
    const log = new HookLog();
    log.add('before', run);
    const logged = forLog(unflatten(log.logged()));
    assert.deepEqual(logged.checks, { 'default.regexMatch': 'passed', 'default.wordCount': 'passed', 'default.contains': 'passed' });
    assert.equal(logged.status, 'passed');
    assert.ok(logged.results.length < JSON.stringify(log.answered()).length * 0.6, `${logged.results.length} bytes`);
  });
});
