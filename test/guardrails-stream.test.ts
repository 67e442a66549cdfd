// The stream guard on its own: events split anywhere and framed with CRLF,
// completions with several choices, which checks may end a stream before its
// end (decidesOnPrefix), and what comes out on a denial and without one.
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HookRun } from '../src/guardrails/engine.js';
import { compileHooks, type HookConfig } from '../src/guardrails/hooks.js';
import { decidesOnPrefix, StreamGuard } from '../src/guardrails/stream.js';
import { MAX_EVENT_BYTES, TOO_LONG_EVENT } from '../src/providers/shared/sse.js';
import { GatewayError } from '../src/shared/errors.js';

type Json = Record<string, any>;

function hooksOf(c: HookConfig) {
  const h = compileHooks(c, { left: 500 });
  if (!h.ok) assert.fail(h.problem.message);
  return h.value;
}

const DENIED = new GatewayError(446, 'denied', { type: 'hooks_failed', code: 'hooks_failed' });

const TOO_LONG = new GatewayError(502, 'too long', { code: 'answer_too_large_for_guardrails' });

interface Guarded {
  out: string;
  runs: HookRun[];
  /** Characters of text the hooks read, over every judgment (mid-stream and at the end). */
  read: number;
  failed: GatewayError[];
}

/** Runs `bytes` (in the given pieces) through a guard; the output text, the runs handed on, and what the hooks read. */
async function guard(c: HookConfig, pieces: Iterable<string>, window: number, endpoint: 'chat' | 'completions' = 'chat', maxChars = 1e9): Promise<Guarded> {
  const got: Guarded = { out: '', runs: [], read: 0, failed: [] };
  const g = new StreamGuard({
    hooks: hooksOf(c).after,
    window,
    input: { kind: 'after', endpoint, requestType: 'stream-chatComplete', model: 'm', metadata: {}, request: {} },
    denied: DENIED,
    maxChars,
    tooLong: TOO_LONG,
    failed: (e) => got.failed.push(e),
    judged(run) {
      got.runs.push(run);
      return { before_request_hooks: [], after_request_hooks: run.results };
    },
  });
  // Every judgment builds the answer so far once (answer()): the text it holds is what the checks read.
  const guarded = g as unknown as { answer(): { choices: { message?: { content: string }; text?: string }[] } };
  const answer = guarded.answer.bind(g);
  guarded.answer = () => {
    const a = answer();
    for (const c of a.choices) got.read += (c.message?.content ?? c.text ?? '').length;
    return a;
  };
  for await (const chunk of Readable.from((function* () {
    for (const p of pieces) yield Buffer.from(p);
  })()).pipe(g)) got.out += (chunk as Buffer).toString();
  return got;
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

  it('reads the text in time linear in its length: past 8 windows it judges again when the text grew by an eighth', async () => {
    const c = { output_guardrails: [{ deny: true, 'default.contains': { words: ['forbidden'], operator: 'none' } }] };
    const piece = 'abcdefghij'.repeat(10); // 100 characters an event, the default window
    const n = 2000;
    const clean = await guard(c, (function* () {
      for (let i = 0; i < n; i++) yield `${chat(piece)}\n\n`;
      yield 'data: [DONE]\n\n';
    })(), 100);
    const length = n * piece.length;
    assert.equal(events(clean.out).slice(0, n).map((e) => e.choices[0].delta.content).join(''), piece.repeat(n));
    assert.equal(clean.runs.at(-1)!.denied, false);
    // Judging the whole text every window would read n²/2 windows' worth: 200 M characters here.
    assert.ok(clean.read <= 10 * length + 64 * 100, `the checks read ${clean.read} characters of a ${length}-character text`);
    // The word still ends the stream before its end, its text held back.
    const caught = await guard(c, (function* () {
      for (let i = 0; i < n; i++) yield `${chat(i === n - 10 ? 'forbidden ' : piece)}\n\n`;
      yield 'data: [DONE]\n\n';
    })(), 100);
    assert.equal(events(caught.out).at(-1).error.code, 'hooks_failed');
    assert.ok(!events(caught.out).slice(0, -1).some((e) => e.choices[0].delta.content.includes('forbidden')), 'the held text never went out');
    assert.ok(!caught.out.includes('[DONE]'));
  });

  it('a stream of small deltas (4 characters in ~170 bytes) is read in linear time too: held bytes do not force a judgment every 64 KB', async () => {
    const c = { output_guardrails: [{ deny: true, 'default.contains': { words: ['forbidden'], operator: 'none' } }] };
    const n = 60_000;
    const got = await guard(c, (function* () {
      for (let i = 0; i < n; i++) yield `${chat('abc ')}\n\n`;
      yield 'data: [DONE]\n\n';
    })(), 100);
    assert.equal(got.runs.at(-1)!.denied, false);
    const length = 4 * n;
    assert.ok(got.read <= 10 * length + 64 * 100, `the checks read ${got.read} characters of a ${length}-character text`);
  });

  it('events that add no text (tool-call deltas) are released past 64 KB without judging the same text again', async () => {
    const c = { output_guardrails: [{ deny: true, 'default.contains': { words: ['forbidden'], operator: 'none' } }] };
    const tool = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: 'x'.repeat(1000) } }] } }] })}\n\n`;
    const got = await guard(c, (function* () {
      yield `${chat('some text first')}\n\n`;
      for (let i = 0; i < 5000; i++) yield tool; // 5 MB of arguments, no text
      yield 'data: [DONE]\n\n';
    })(), 100);
    assert.equal(got.runs.at(-1)!.denied, false);
    assert.ok(got.read <= 2 * 'some text first'.length, `the checks read ${got.read} characters`);
  });

  it('a stream whose text passes maxChars ends with the tooLong error event, and no [DONE]', async () => {
    const c = { output_guardrails: [{ 'default.notNull': {} }] };
    const got = await guard(c, (function* () {
      for (let i = 0; i < 30; i++) yield `${chat('y'.repeat(100))}\n\n`;
      yield 'data: [DONE]\n\n';
    })(), 100, 'chat', 1000);
    assert.equal(events(got.out).at(-1).error.code, 'answer_too_large_for_guardrails');
    assert.ok(!got.out.includes('[DONE]'));
    assert.deepEqual(got.failed, [TOO_LONG]);
    assert.ok(events(got.out).slice(0, -1).map((e) => e.choices[0].delta.content).join('').length <= 1000);
  });

  it('an event longer than the reader reads ends the stream with a 502 bad_upstream_stream; an upstream event with the reader\'s marker text does not', async () => {
    const c = { output_guardrails: [{ 'default.notNull': {} }] };
    const got = await guard(c, (function* () {
      yield `${chat('first')}\n\n`;
      yield 'data: ';
      for (let i = 0; i <= MAX_EVENT_BYTES / (1 << 20); i++) yield 'x'.repeat(1 << 20);
      yield '\n\ndata: [DONE]\n\n';
    })(), 100);
    const error = events(got.out).at(-1).error;
    assert.equal(error.code, 'bad_upstream_stream');
    assert.match(error.message, new RegExp(`longer than the ${MAX_EVENT_BYTES} bytes`));
    assert.ok(!got.out.includes('[DONE]') && !got.out.includes(TOO_LONG_EVENT));
    assert.deepEqual(got.failed.map((e) => e.code), ['bad_upstream_stream']);
    const marker = await guard(c, [`${chat('first')}\n\ndata: ${TOO_LONG_EVENT}\n\ndata: [DONE]\n\n`], 100);
    assert.ok(marker.out.includes(`data: ${TOO_LONG_EVENT}\n\n`));
    assert.ok(marker.out.endsWith('data: [DONE]\n\n'));
    assert.deepEqual(marker.failed, []);
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
