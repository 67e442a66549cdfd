// Cohere's chat stream → OpenAI chunks, and how such a stream ends.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chatStream } from './stream.js';

describe('cohere: stream transform', () => {
  async function run(input: string, legacyFunctions = false): Promise<string[]> {
    const t = chatStream('m', legacyFunctions);
    const out: string[] = [];
    t.on('data', (d: Buffer) => out.push(d.toString()));
    const ended = new Promise((resolve) => t.on('end', resolve));
    t.end(Buffer.from(input));
    await ended;
    return out.join('').split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
  }

  it('a stream without message-start still opens with the role chunk; [DONE] from Cohere is not repeated', async () => {
    const events = await run(
      'data: {"type":"content-delta","delta":{"message":{"content":{"text":"x"}}}}\n\n' +
        'data: {"type":"message-end","delta":{"finish_reason":"COMPLETE"}}\n\ndata: [DONE]\n\n',
    );
    assert.equal(events.length, 5);
    assert.deepEqual(JSON.parse(events[0]!).choices[0].delta, { role: 'assistant', content: '' });
    assert.equal(JSON.parse(events[1]!).choices[0].delta.content, 'x');
    assert.equal(JSON.parse(events[2]!).choices[0].finish_reason, 'stop');
    assert.deepEqual(JSON.parse(events[3]!).choices, [], 'the usage chunk');
    assert.equal(events[4], '[DONE]');
  });

  it('legacy functions: only the first call is streamed (the legacy shape holds one)', async () => {
    const start = (i: number, name: string) => `data: {"type":"tool-call-start","index":${i},"delta":{"message":{"tool_calls":{"id":"c${i}","type":"function","function":{"name":"${name}","arguments":""}}}}}\n\n`;
    const args = (i: number, a: string) => `data: ${JSON.stringify({ type: 'tool-call-delta', index: i, delta: { message: { tool_calls: { function: { arguments: a } } } } })}\n\n`;
    const events = await run(
      start(0, 'f') + args(0, '{}') + start(1, 'g') + args(1, '{"x":1}') + 'data: {"type":"message-end","delta":{"finish_reason":"TOOL_CALL"}}\n\n',
      true,
    );
    const deltas = events.slice(0, -2).map((e) => JSON.parse(e).choices[0]);
    assert.deepEqual(deltas.map((c) => c.delta), [{ role: 'assistant', content: '' }, { function_call: { name: 'f', arguments: '' } }, { function_call: { arguments: '{}' } }, {}]);
    assert.equal(deltas.at(-1).finish_reason, 'function_call');
  });

  it('an event that is not JSON ends the stream with an error event and no [DONE]', async () => {
    const events = await run('data: {"type":"message-start"}\n\ndata: {oops\n\ndata: {"type":"message-end"}\n\n');
    assert.equal(events.length, 2);
    assert.match(JSON.parse(events[1]!).error.message, /not JSON/);
    assert.equal(JSON.parse(events[1]!).error.code, 'bad_upstream_stream');
  });
});
