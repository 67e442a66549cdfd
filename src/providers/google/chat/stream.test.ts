// Gemini's SSE stream → OpenAI chunks, and how such a stream ends.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GeminiStream } from './stream.js';

describe('Gemini SSE → OpenAI chunks', () => {
  async function run(input: (string | Buffer)[]): Promise<string[]> {
    const s = new GeminiStream({ provider: 'google', model: 'm' });
    const out: string[] = [];
    s.on('data', (d: Buffer) => out.push(d.toString('utf8')));
    const ended = new Promise((resolve) => s.on('end', resolve));
    for (const piece of input) s.write(piece);
    s.end();
    await ended;
    return out.join('').split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
  }

  const ev = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;

  it('reassembles events split anywhere, even inside a UTF-8 character; a last event without its blank line counts', async () => {
    const text = ev({ candidates: [{ content: { parts: [{ text: 'héllo ' }] } }], responseId: 'r' }) +
      `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'wörld' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2, totalTokenCount: 3 } })}`;
    const bytes = Buffer.from(text, 'utf8');
    const pieces: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 7) pieces.push(bytes.subarray(i, i + 7));
    const events = await run(pieces);
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.deepEqual(chunks.map((c) => c.id), ['r', 'r', 'r']);
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: 'héllo ' });
    assert.deepEqual(chunks[1].choices[0], { index: 0, delta: { content: 'wörld' }, logprobs: null, finish_reason: 'stop' });
    assert.deepEqual(chunks[2].choices, []);
    assert.equal(chunks[2].usage.total_tokens, 3);
  });

  it('a blocked prompt is a whole answer; an unreadable event or a cut stream ends in an error, no [DONE]', async () => {
    const blocked = await run([ev({ promptFeedback: { blockReason: 'OTHER' }, usageMetadata: { promptTokenCount: 2 } })]);
    assert.equal(blocked.length, 3);
    assert.deepEqual(JSON.parse(blocked[0]!).choices[0].finish_reason, 'content_filter');
    assert.equal(JSON.parse(blocked[1]!).usage.prompt_tokens, 2);
    assert.equal(blocked[2], '[DONE]');
    const garbled = await run([ev({ candidates: [{ content: { parts: [{ text: 'a' }] } }] }), 'data: {not json\n\n']);
    assert.deepEqual([garbled.length, JSON.parse(garbled[1]!).error.code], [2, 'bad_upstream_stream']);
    const cut = await run([ev({ candidates: [{ content: { parts: [{ text: 'a' }] } }] })]);
    assert.deepEqual([cut.length, JSON.parse(cut[1]!).error.code], [2, 'incomplete_stream']);
  });

  it('tool calls get increasing indexes across events, and the candidate finishes with tool_calls', async () => {
    const call = (name: string) => ({ candidates: [{ content: { parts: [{ functionCall: { name, args: { n: name } } }] } }] });
    const events = await run([ev(call('a')), ev(call('b')), ev({ candidates: [{ finishReason: 'STOP' }] })]);
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.deepEqual(chunks[0].choices[0].delta.role, 'assistant');
    assert.equal(chunks[0].choices[0].delta.content, null);
    assert.deepEqual(
      chunks.slice(0, 2).map((c) => c.choices[0].delta.tool_calls.map((t: any) => [t.index, t.function.name, t.function.arguments])),
      [[[0, 'a', '{"n":"a"}']], [[1, 'b', '{"n":"b"}']]],
    );
    assert.equal(chunks[2].choices[0].finish_reason, 'tool_calls');
  });
});
