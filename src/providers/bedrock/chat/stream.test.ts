// ConverseStream → OpenAI chunks, and how such a stream ends.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { converseStream } from './stream.js';
import { encodeEvent, encodeMessage } from '../../../../test/support/mock-bedrock.js';

async function translate(frames: Buffer[], legacyFunctions = false): Promise<string[]> {
  const out: string[] = [];
  const t = converseStream('m', legacyFunctions);
  t.on('data', (d: Buffer) => out.push(d.toString()));
  const done = new Promise((resolve) => t.once('close', resolve).once('end', resolve));
  for (const f of frames) t.write(f);
  t.end();
  await done;
  return out.join('').split('\n\n').filter((e) => e !== '').map((e) => e.slice('data: '.length));
}

describe('ConverseStream → chunks', () => {
  const start = encodeEvent('messageStart', { role: 'assistant' });
  const stop = encodeEvent('messageStop', { stopReason: 'end_turn' });

  it('reasoning deltas, unknown events ignored, usage last when asked, then [DONE]', async () => {
    const events = await translate(
      [
        start,
        encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'think' } } }),
        encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig' } } }),
        encodeEvent('someFutureEvent', { x: 1 }),
        encodeEvent('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'ok' } }),
        stop,
        encodeEvent('metadata', { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 }, metrics: { latencyMs: 1 } }),
      ],
    );
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.deepEqual(chunks.map((c) => c.choices[0]?.delta ?? 'usage'), [{ role: 'assistant', content: '' }, { reasoning_content: 'think' }, { content: 'ok' }, {}, 'usage']);
    assert.deepEqual(chunks.at(-1).usage, { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, prompt_tokens_details: { cached_tokens: 0 } });
  });

  it('legacy functions stream function_call deltas', async () => {
    const events = await translate(
      [
        start,
        encodeEvent('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't', name: 'f' } } }),
        encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{}' } } }),
        encodeEvent('messageStop', { stopReason: 'tool_use' }),
      ],
      true,
    );
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e).choices[0]);
    assert.deepEqual(chunks.slice(1).map((c) => [c.delta, c.finish_reason]), [
      [{ function_call: { name: 'f', arguments: '' } }, null],
      [{ function_call: { arguments: '{}' } }, null],
      [{}, 'function_call'],
    ]);
  });

  it('legacy functions stream only the first call, as the whole answer does', async () => {
    const events = await translate(
      [
        start,
        encodeEvent('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't1', name: 'f' } } }),
        encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"a":1}' } } }),
        encodeEvent('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't2', name: 'g' } } }),
        encodeEvent('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"b":2}' } } }),
        encodeEvent('messageStop', { stopReason: 'tool_use' }),
      ],
      true,
    );
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e).choices[0]);
    assert.deepEqual(chunks.slice(1).map((c) => [c.delta, c.finish_reason]), [
      [{ function_call: { name: 'f', arguments: '' } }, null],
      [{ function_call: { arguments: '{"a":1}' } }, null],
      [{}, 'function_call'],
    ]);
  });

  const ends: [string, Buffer[], RegExp][] = [
    ['a body cut inside a message', [start, stop.subarray(0, 20)], /ended inside a message/],
    ['a body that ends before messageStop', [start], /ended before messageStop/],
    ['an error message', [start, encodeMessage({ ':message-type': 'error', ':error-code': 'InternalFailure', ':error-message': 'boom' }, Buffer.alloc(0))], /^boom$/],
    ['an exception', [start, encodeMessage({ ':message-type': 'exception', ':exception-type': 'modelStreamErrorException' }, Buffer.from('{"message":"model broke"}'))], /^model broke$/],
  ];
  for (const [name, frames, message] of ends) {
    it(`${name} ends with an error event and no [DONE]`, async () => {
      const events = await translate(frames);
      const last = JSON.parse(events.at(-1)!) as { error: { message: string } };
      assert.match(last.error.message, message);
      assert.ok(!events.includes('[DONE]'));
    });
  }
});
