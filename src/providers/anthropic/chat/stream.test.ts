// Anthropic's streamed message → OpenAI chunks, and how such a stream ends.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { HELD_ENTRY, MAX_HELD_CHARS } from '../../shared/stream.js';
import { AnthropicStream } from './stream.js';
import type { AnthropicMessage } from '../wire.js';
import { toEvents } from '../../../../test/support/mock-anthropic.js';

/** Runs SSE text through the stream transform in pieces of `size` bytes; returns the data payloads. */
async function stream(sse: string, legacyFunctions = false, size = 5): Promise<string[]> {
  const bytes = Buffer.from(sse);
  const pieces: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
  let out = '';
  for await (const c of Readable.from(pieces).pipe(new AnthropicStream(legacyFunctions))) out += c.toString();
  return out.split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
}

const frame = (events: Record<string, unknown>[]): string => events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join('');

function message(content: unknown[], extra: Partial<AnthropicMessage> = {}): AnthropicMessage {
  return {
    id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: content as AnthropicMessage['content'],
    stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 4, output_tokens: 6 }, ...extra,
  };
}

describe('anthropic stream transform', () => {
  const whole = message(
    [
      { type: 'thinking', thinking: 'a b', signature: 'sig' },
      { type: 'text', text: 'Hi there' },
      { type: 'tool_use', id: 't1', name: 'f', input: { q: 'é' } },
      { type: 'tool_use', id: 't2', name: 'g', input: {} },
    ],
    { stop_reason: 'tool_use', usage: { input_tokens: 5, cache_read_input_tokens: 7, output_tokens: 9 } },
  );

  it('turns every event kind into chunks, tool calls indexed in order', async () => {
    const events = (await stream(frame(toEvents(whole as unknown as Record<string, unknown>)), false)).slice(0, -1).map((d) => JSON.parse(d));
    assert.ok(events.every((c) => c.id === 'msg_1' && c.model === 'claude-x' && c.object === 'chat.completion.chunk'));
    const deltas = events.filter((c) => c.choices.length === 1).map((c) => c.choices[0].delta);
    assert.deepEqual(deltas[0], { role: 'assistant', content: '' });
    assert.equal(deltas.map((d) => d.reasoning_content ?? '').join(''), 'a b');
    assert.deepEqual(deltas.flatMap((d) => d.thinking_blocks ?? []), [{ type: 'thinking', thinking: 'a b', signature: 'sig' }]);
    assert.equal(deltas.map((d) => d.content ?? '').join(''), 'Hi there');
    const calls = deltas.flatMap((d) => d.tool_calls ?? []);
    assert.deepEqual(calls[0], { index: 0, id: 't1', type: 'function', function: { name: 'f', arguments: '' } });
    assert.equal(calls.filter((c) => c.index === 0).map((c) => c.function.arguments).join(''), '{"q":"é"}');
    assert.deepEqual(calls.find((c) => c.index === 1), { index: 1, id: 't2', type: 'function', function: { name: 'g', arguments: '' } });
    assert.ok(calls.every((c) => c.function.arguments !== '' || c.id !== undefined), 'no empty argument deltas');
    assert.equal(events.at(-2).choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(events.at(-1), {
      id: 'msg_1', object: 'chat.completion.chunk', created: events[0].created, model: 'claude-x', choices: [],
      usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21, prompt_tokens_details: { cached_tokens: 7 } },
    });
  });

  it('ignores ping and unknown events; a stream error ends it with an error payload and no [DONE]', async () => {
    const start = toEvents(message([]) as unknown as Record<string, unknown>)[0]!;
    const out = await stream(
      frame([start, { type: 'ping' }, { type: 'future_event', x: 1 }, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { type: 'message_stop' }]),
    );
    assert.equal(out.length, 2);
    assert.deepEqual(JSON.parse(out[1]!), { error: { message: 'Overloaded', type: 'server_error', code: 'overloaded_error', param: null } });
  });

  it('legacy functions stream function_call deltas', async () => {
    const m = message([{ type: 'tool_use', id: 't', name: 'f', input: { a: 1 } }], { stop_reason: 'tool_use' });
    const events = (await stream(frame(toEvents(m as unknown as Record<string, unknown>)), true)).slice(0, -2).map((d) => JSON.parse(d));
    const fc = events.map((c) => c.choices[0].delta.function_call).filter(Boolean);
    assert.deepEqual(fc[0], { name: 'f', arguments: '' });
    assert.equal(fc.map((f) => f.arguments).join(''), '{"a":1}');
    assert.equal(events.at(-1).choices[0].finish_reason, 'function_call');
  });

  it('a cut stream or an unreadable event ends in an error, no [DONE]', async () => {
    const start = frame([toEvents(message([]) as unknown as Record<string, unknown>)[0]!]);
    const cut = await stream(start);
    assert.match(JSON.parse(cut.at(-1)!).error.message, /before message_stop/);
    assert.equal(JSON.parse(cut.at(-1)!).error.code, 'incomplete_stream');
    const garbled = await stream(`${start}event: content_block_delta\ndata: {not json\n\n`);
    assert.equal(JSON.parse(garbled.at(-1)!).error.code, 'bad_upstream_stream');
  });

  it('a thinking block longer than the gateway holds ends the stream in a 502, its deltas passed on until then; so do tool calls past the bound', async () => {
    const start = toEvents(message([]) as unknown as Record<string, unknown>)[0]!;
    const mib = 'x'.repeat(1024 * 1024);
    const deltas = Array.from({ length: 12 }, () => ({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: mib } }));
    const out = await stream(frame([start, { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }, ...deltas, { type: 'content_block_stop', index: 0 }, { type: 'message_stop' }]), false, 1 << 20);
    const error = JSON.parse(out.at(-1)!).error;
    assert.equal(error.code, 'upstream_answer_too_large');
    assert.match(error.message, new RegExp(`anthropic streamed more than the ${MAX_HELD_CHARS} characters`));
    assert.equal(out.filter((d) => d.includes('reasoning_content')).length, Math.floor(MAX_HELD_CHARS / mib.length) - 1);
    assert.ok(!out.includes('[DONE]'));
    // A block that ended is no longer held: blocks one after another, each under the bound, pass whole.
    const blocks = [0, 1, 2].flatMap((i) => [
      { type: 'content_block_start', index: i, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: i, delta: { type: 'thinking_delta', thinking: 'y'.repeat(MAX_HELD_CHARS / 2) } },
      { type: 'content_block_stop', index: i },
    ]);
    const passed = await stream(frame([start, ...blocks, { type: 'message_stop' }]), false, 1 << 20);
    assert.equal(passed.at(-1), '[DONE]');
    assert.equal(passed.filter((d) => d.includes('thinking_blocks')).length, 3);
    const tools = Array.from({ length: MAX_HELD_CHARS / HELD_ENTRY + 1 }, (_, i) => ({ type: 'content_block_start', index: i, content_block: { type: 'tool_use', id: `t${i}`, name: 'f', input: {} } }));
    const many = await stream(frame([start, ...tools, { type: 'message_stop' }]), false, 1 << 20);
    assert.equal(JSON.parse(many.at(-1)!).error.code, 'upstream_answer_too_large');
  });

  it("message_delta's usage: the counts read are kept, other keys a provider sends are not (they would pile up)", async () => {
    const start = toEvents(message([]) as unknown as Record<string, unknown>)[0]!;
    const extra = (i: number) => Object.fromEntries(Array.from({ length: 100 }, (_, j) => [`k${i}_${j}`, j]));
    const deltas = [0, 1, 2].map((i) => ({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 10 + i, ...extra(i) } }));
    const s = new AnthropicStream(false);
    const out: string[] = [];
    s.on('data', (c: Buffer) => out.push(c.toString()));
    s.end(Buffer.from(frame([start, ...deltas, { type: 'message_stop' }])));
    await new Promise((r) => s.once('end', r));
    // The stream's own usage, as it stands at the end: the fields openAIUsage reads, nothing else.
    assert.deepEqual(Object.keys((s as unknown as { usage: object }).usage).sort(), ['input_tokens', 'output_tokens']);
    const usage = JSON.parse(out.join('').split('\n\n').filter(Boolean).at(-2)!.replace(/^data: /, '')).usage;
    assert.equal(usage.completion_tokens, 12);
  });

  it('reads a last event that lacks its blank line', async () => {
    const events = toEvents(message([{ type: 'text', text: 'x' }]) as unknown as Record<string, unknown>);
    const out = await stream(frame(events).replace(/\n\n$/, ''));
    assert.equal(out.at(-1), '[DONE]');
    assert.ok(!out.some((d) => d.includes('"error"')));
  });
});
