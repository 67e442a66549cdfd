// Black-box tests of the Cohere adapter's streamed chat: Cohere's `event:`/`data:` SSE in,
// OpenAI's chat.completion.chunk SSE out, read both raw and through the OpenAI SDK.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { useCohere } from './support/cohere-fixture.js';
import { assertEnvelope, readEvents } from './support/http.js';

describe('cohere: streamed chat', () => {
  const co = useCohere();

  const ask = (body: Record<string, unknown>) =>
    co.gw.call('/chat/completions', { headers: co.routed, body: { model: 'command-r', messages: [{ role: 'user', content: 'one two three' }], stream: true, ...body } });

  /** The chunks of a raw SSE answer, checking that it ends in [DONE]. */
  async function chunks(res: Response): Promise<any[]> {
    const events = await readSse(res);
    assert.equal(events.at(-1), '[DONE]');
    return events.slice(0, -1).map((e) => JSON.parse(e));
  }

  /** The chunks of a raw SSE answer that failed: it ends in an error event, never in [DONE]. */
  async function failed(res: Response): Promise<any[]> {
    const events = await readSse(res);
    assert.ok(!events.includes('[DONE]'), 'no [DONE] after an error');
    const out = events.map((e) => JSON.parse(e));
    assert.ok(out.at(-1).error !== undefined, 'ends in an error event');
    return out;
  }

  async function readSse(res: Response): Promise<string[]> {
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    return (await readEvents(res)).map((e) => e.data);
  }

  it('text: chunks with Cohere\'s id, the finish reason, and usage last when asked for', async () => {
    const out = await chunks(await ask({ stream_options: { include_usage: true } }));
    assert.equal(co.mock.requests[0]!.json.stream, true);
    assert.equal(co.mock.requests[0]!.json.stream_options, undefined);
    const id = out[0].id;
    assert.match(id, /^[0-9a-f-]{36}$/);
    for (const c of out) {
      assert.equal(c.object, 'chat.completion.chunk');
      assert.equal(c.id, id);
      assert.equal(c.model, 'command-r');
    }
    assert.deepEqual(out[0].choices[0].delta, { role: 'assistant', content: '' });
    const text = out.map((c) => c.choices[0]?.delta.content ?? '').join('');
    assert.equal(text, '[cohere] echo: one two three');
    const finish = out.at(-2);
    assert.deepEqual(finish.choices[0], { index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
    const usage = out.at(-1);
    assert.deepEqual(usage.choices, []);
    assert.deepEqual(usage.usage, { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 });
  });

  it('no usage chunk unless stream_options.include_usage', async () => {
    const out = await chunks(await ask({}));
    assert.ok(out.every((c) => c.usage === undefined && c.choices.length === 1));
    assert.equal(out.at(-1).choices[0].finish_reason, 'stop');
  });

  it('through the OpenAI SDK', async () => {
    const stream = await co.client.chat.completions.create({
      model: 'command-r',
      messages: [{ role: 'user', content: 'hello stream' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, '[cohere] echo: hello stream');
    assert.equal(finish, 'stop');
    assert.equal(usage?.total_tokens, 12 + 4);
  });

  it('tool calls: the plan as content, id and name first, arguments in pieces (SDK accumulation)', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
    const stream = co.client.chat.completions.stream({ model: 'command-r', messages: [{ role: 'user', content: 'find cats' }], tools });
    const final = await stream.finalChatCompletion();
    const msg = final.choices[0]!.message;
    assert.equal(final.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(msg.content, 'I will call lookup.');
    assert.equal(msg.tool_calls!.length, 1);
    const call = msg.tool_calls![0]!;
    assert.match(call.id, /^lookup_/);
    assert.deepEqual(call.type === 'function' ? [call.function.name, JSON.parse(call.function.arguments)] : [], ['lookup', { q: 'find cats' }]);
  });

  it('two tool calls in one streamed turn get indices 0 and 1', async () => {
    const start = (index: number, id: string) => ({
      type: 'tool-call-start',
      index,
      delta: { message: { tool_calls: { id, type: 'function', function: { name: 'lookup', arguments: '' } } } },
    });
    const args = (index: number, a: string) => ({ type: 'tool-call-delta', index, delta: { message: { tool_calls: { function: { arguments: a } } } } });
    co.mock.enqueue('/v2/chat', {
      events: [
        { type: 'message-start', id: 'g2', delta: { message: { role: 'assistant' } } },
        start(0, 'c0'), args(0, '{"q":'), args(0, '"a"}'), { type: 'tool-call-end', index: 0 },
        start(1, 'c1'), args(1, '{"q":"b"}'), { type: 'tool-call-end', index: 1 },
        { type: 'message-end', delta: { finish_reason: 'TOOL_CALL', usage: { billed_units: { input_tokens: 1, output_tokens: 2 } } } },
      ],
    });
    const out = await chunks(await ask({ tools: [{ type: 'function', function: { name: 'lookup' } }] }));
    const calls = out.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.deepEqual(calls, [
      { index: 0, id: 'c0', type: 'function', function: { name: 'lookup', arguments: '' } },
      { index: 0, function: { arguments: '{"q":' } },
      { index: 0, function: { arguments: '"a"}' } },
      { index: 1, id: 'c1', type: 'function', function: { name: 'lookup', arguments: '' } },
      { index: 1, function: { arguments: '{"q":"b"}' } },
    ]);
    assert.equal(out.at(-1).choices[0].finish_reason, 'tool_calls');
    assert.ok(out.every((c) => c.id === 'g2'));
  });

  it('legacy functions stream as function_call deltas', async () => {
    const res = await co.gw.call('/chat/completions', {
      headers: co.routed,
      body: { model: 'command-r', messages: [{ role: 'user', content: 'find dogs' }], stream: true, functions: [{ name: 'lookup' }] },
    });
    const out = await chunks(res);
    const fc = out.map((c) => c.choices[0]?.delta.function_call).filter(Boolean);
    assert.equal(fc[0].name, 'lookup');
    assert.deepEqual(JSON.parse(fc.map((f: any) => f.arguments).join('')), { q: 'find dogs' });
    assert.ok(out.every((c) => c.choices[0]?.delta.tool_calls === undefined));
    assert.equal(out.at(-1).choices[0].finish_reason, 'function_call');
  });

  it('bytes split anywhere (inside CRLFs and UTF-8 characters) read the same', async () => {
    const pieces = ['Grüße', ' aus', ' 東京', ' 🎉'];
    const events = [
      { type: 'message-start', id: 'g3', delta: { message: { role: 'assistant' } } },
      { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
      ...pieces.map((p) => ({ type: 'content-delta', index: 0, delta: { message: { content: { text: p } } } })),
      { type: 'content-end', index: 0 },
      { type: 'message-end', delta: { finish_reason: 'COMPLETE', usage: { tokens: { input_tokens: 1, output_tokens: 4 } } } },
    ];
    for (const splitBytes of [1, 3, 7]) {
      co.mock.enqueue('/v2/chat', { events, splitBytes, eol: '\r\n' });
      const out = await chunks(await ask({}));
      assert.equal(out.map((c) => c.choices[0]?.delta.content ?? '').join(''), pieces.join(''), `split every ${splitBytes} bytes`);
      assert.equal(out.at(-1).choices[0].finish_reason, 'stop');
    }
  });

  it('events reach the client as Cohere sends them, not buffered', async () => {
    const events = [
      { type: 'message-start', id: 'g4' },
      ...['a', 'b', 'c', 'd'].map((t) => ({ type: 'content-delta', index: 0, delta: { message: { content: { text: t } } } })),
      { type: 'message-end', delta: { finish_reason: 'COMPLETE' } },
    ];
    co.mock.enqueue('/v2/chat', { events, chunkDelayMs: 60 });
    const t0 = performance.now();
    const res = await ask({});
    const got = await readEvents(res);
    assert.equal(got.length, 7); // role, a, b, c, d, finish, [DONE]
    const first = got[0]!.at - t0;
    const spread = got.at(-1)!.at - got[0]!.at;
    assert.ok(first < 200 && spread >= 250, `first at ${first.toFixed(0)} ms, spread ${spread.toFixed(0)} ms`);
  });

  it('thinking deltas come as reasoning_content, MAX_TOKENS as length', async () => {
    co.mock.enqueue('/v2/chat', {
      events: [
        { type: 'message-start', id: 'g5' },
        { type: 'content-start', index: 0, delta: { message: { content: { type: 'thinking', thinking: '' } } } },
        { type: 'content-delta', index: 0, delta: { message: { content: { thinking: 'hmm' } } } },
        { type: 'content-end', index: 0 },
        { type: 'content-start', index: 1, delta: { message: { content: { type: 'text', text: '' } } } },
        { type: 'content-delta', index: 1, delta: { message: { content: { text: 'ok' } } } },
        { type: 'message-end', delta: { finish_reason: 'MAX_TOKENS' } },
      ],
    });
    const out = await chunks(await ask({}));
    assert.deepEqual(
      out.slice(1, -1).map((c) => c.choices[0].delta),
      [{ reasoning_content: 'hmm' }, { content: 'ok' }],
    );
    assert.equal(out.at(-1).choices[0].finish_reason, 'length');
  });

  it('logprobs ride on their content chunks', async () => {
    co.mock.enqueue('/v2/chat', {
      events: [
        { type: 'message-start', id: 'g6' },
        { type: 'content-delta', index: 0, delta: { message: { content: { text: 'Hi' } } }, logprobs: { text: 'Hi', token_ids: [5], logprobs: [-0.1] } },
        { type: 'message-end', delta: { finish_reason: 'COMPLETE' } },
      ],
    });
    const out = await chunks(await ask({ logprobs: true }));
    assert.deepEqual(out[1].choices[0].logprobs, { content: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [] }], refusal: null });
  });

  it('a failed generation (finish ERROR) is an error event the SDK raises', async () => {
    const failing = {
      events: [
        { type: 'message-start', id: 'g7' },
        { type: 'content-delta', index: 0, delta: { message: { content: { text: 'partial' } } } },
        { type: 'message-end', delta: { finish_reason: 'ERROR', error: 'internal model failure' } },
      ],
    };
    co.mock.enqueue('/v2/chat', failing);
    const out = await failed(await ask({ stream_options: { include_usage: true } }));
    assert.equal(out.at(-2).choices[0].delta.content, 'partial');
    assert.deepEqual(out.at(-1), {
      error: { message: 'cohere: the generation failed: internal model failure', type: 'upstream_error', code: 'provider_generation_error', param: null },
    });

    co.mock.enqueue('/v2/chat', failing);
    const stream = await co.client.chat.completions.create({ model: 'command-r', messages: [{ role: 'user', content: 'q' }], stream: true });
    await assert.rejects(
      (async () => {
        for await (const _ of stream);
      })(),
      (e: unknown) => e instanceof OpenAI.APIError && /internal model failure/.test(e.message),
    );
  });

  it('a stream that stops before message-end ends with an error event, no [DONE]', async () => {
    co.mock.enqueue('/v2/chat', {
      events: [
        { type: 'message-start', id: 'g8' },
        { type: 'content-delta', index: 0, delta: { message: { content: { text: 'half' } } } },
      ],
      noDone: true,
    });
    const out = await failed(await ask({}));
    assert.match(out.at(-1).error.message, /ended before message-end/);
    assert.equal(out.at(-1).error.code, 'incomplete_stream');
  });

  it("Cohere's error on a streamed request is the JSON envelope, status kept", async () => {
    const res = await co.gw.call('/chat/completions', {
      headers: { ...co.routed, authorization: 'Bearer co-wrong' },
      body: { model: 'command-r', messages: [{ role: 'user', content: 'q' }], stream: true },
    });
    assert.equal((await assertEnvelope(res, 401)).message, 'invalid api token');
  });
});
