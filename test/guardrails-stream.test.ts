// The stream guard on its own: events split anywhere and framed with CRLF,
// completions with several choices, which checks may end a stream before its
// end (decidesOnPrefix), and what comes out on a denial and without one.
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HookRun } from '../src/guardrails/engine.js';
import { compileHooks, type HookConfig } from '../src/guardrails/hooks.js';
import { decidesOnPrefix, StreamGuard } from '../src/guardrails/stream.js';
import { GatewayError } from '../src/shared/errors.js';

type Json = Record<string, any>;

function hooksOf(c: HookConfig) {
  const h = compileHooks(c, { left: 500 });
  if (!h.ok) assert.fail(h.problem.message);
  return h.value;
}

const DENIED = new GatewayError(446, 'denied', { type: 'hooks_failed', code: 'hooks_failed' });

/** Runs `bytes` (in the given pieces) through a guard; the output text and the runs handed on. */
async function guard(c: HookConfig, pieces: string[], window: number, endpoint: 'chat' | 'completions' = 'chat'): Promise<{ out: string; runs: HookRun[] }> {
  const runs: HookRun[] = [];
  const g = new StreamGuard({
    hooks: hooksOf(c).after,
    window,
    input: { kind: 'after', endpoint, requestType: 'stream-chatComplete', model: 'm', metadata: {}, request: {} },
    denied: DENIED,
    judged(run) {
      runs.push(run);
      return { before_request_hooks: [], after_request_hooks: run.results };
    },
  });
  let out = '';
  for await (const chunk of Readable.from(pieces.map((p) => Buffer.from(p))).pipe(g)) out += (chunk as Buffer).toString();
  return { out, runs };
}

const chat = (content: string, index = 0) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index, delta: { content } }] })}`;
const events = (out: string) => out.trim().split('\n\n').map((e) => (e === 'data: [DONE]' ? '[DONE]' : JSON.parse(e.slice('data: '.length))));

describe('stream guard', () => {
  it('reads events split anywhere and framed with CRLF; the results come before the usage chunk and [DONE]', async () => {
    const usage = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { total_tokens: 3 } })}`;
    const body = [chat('hello '), chat('wor'), chat('ld'), usage, 'data: [DONE]'].join('\r\n\r\n') + '\r\n\r\n';
    const pieces = body.match(/[\s\S]{1,7}/g)!;
    const { out, runs } = await guard({ output_guardrails: [{ 'default.contains': { words: ['hello world'] } }] }, pieces, 4);
    const got = events(out);
    assert.equal(got.slice(0, 3).map((e) => e.choices[0].delta.content).join(''), 'hello world');
    assert.equal(got[3].hook_results.after_request_hooks[0].verdict, true);
    assert.deepEqual(got[3].choices, []);
    assert.equal(got[4].usage.total_tokens, 3);
    assert.equal(got[5], '[DONE]');
    assert.equal(runs.length, 1, 'only the run at the end is handed on');
  });

  it('completions: every choice judged apart, joined; a denial mid-stream keeps the held text back', async () => {
    const text = (t: string, index: number) => `data: ${JSON.stringify({ id: 'x', object: 'text_completion', created: 1, model: 'm', choices: [{ index, text: t }] })}\n\n`;
    const c = { output_guardrails: [{ deny: true, 'default.contains': { words: ['bad'], operator: 'none' } }] };
    const { out, runs } = await guard(c, [text('good ', 0), text('fine ', 1), text('ba', 1), text('d', 1), text('more', 0), 'data: [DONE]\n\n'], 3, 'completions');
    const got = events(out);
    assert.equal(got.at(-1).error.code, 'hooks_failed');
    assert.ok(!out.includes('"ba"') && !out.includes('"d"'), 'the held pieces never went out');
    assert.ok(!out.includes('[DONE]'));
    assert.equal(runs.length, 1);
    assert.equal(runs[0]!.denied, true);
  });

  it('a check that needs the end of the text does not judge a prefix', async () => {
    // endsWith fails on every prefix; it runs only at the end, where the text ends as it must.
    const c = { output_guardrails: [{ deny: true, 'default.endsWith': { suffix: 'done' } }] };
    const { out } = await guard(c, [`${chat('not yet ')}\n\n`, `${chat('and then done')}\n\n`, 'data: [DONE]\n\n'], 1);
    assert.match(out, /data: \[DONE\]\n\n$/);
  });

  it('decidesOnPrefix: only failures more text cannot undo', () => {
    const checks = (c: HookConfig) => hooksOf(c).after[0]!.checks[0]!;
    const one = (id: string, parameters: Json) => checks({ after_request_hooks: [{ id: 'h', checks: [{ id, parameters }] }] });
    assert.equal(decidesOnPrefix(one('default.contains', { words: ['x'], operator: 'none' })), true);
    assert.equal(decidesOnPrefix(one('default.contains', { words: ['x'] })), false);
    assert.equal(decidesOnPrefix(one('default.contains', { words: ['x'], not: true })), true);
    assert.equal(decidesOnPrefix(one('default.regexMatch', { rule: 'x', not: true })), true);
    assert.equal(decidesOnPrefix(one('default.regexMatch', { rule: 'x' })), false);
    assert.equal(decidesOnPrefix(one('default.wordCount', { maxWords: 5 })), true);
    assert.equal(decidesOnPrefix(one('default.wordCount', { minWords: 1, maxWords: 5 })), false);
    assert.equal(decidesOnPrefix(one('default.alluppercase', {})), true);
    assert.equal(decidesOnPrefix(one('default.endsWith', { suffix: 'x' })), false);
    assert.equal(decidesOnPrefix(one('default.jsonSchema', { schema: { type: 'object' } })), false);
  });
});
