import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { responseFromChat } from './answer.js';
import { HELD_ENTRY, MAX_HELD_CHARS } from '../shared/stream.js';
import { ResponsesStream } from './stream.js';

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm-1', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const usage = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm-1', choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, prompt_tokens_details: { cached_tokens: 2 } } })}\n\n`;

/** The Responses events a chat SSE body (cut anywhere) becomes. */
async function events(chat: string[], body: Record<string, unknown> = { model: 'm' }, piece = 7): Promise<any[]> {
  const s = new ResponsesStream(new PassThrough(), body, 'prov');
  const out: string[] = [];
  s.on('data', (c: Buffer) => out.push(c.toString()));
  const ended = new Promise((r) => s.once('end', r));
  const all = Buffer.from(chat.join(''));
  for (let i = 0; i < all.length; i += piece) s.write(all.subarray(i, i + piece)); // events split across writes
  s.end();
  await ended;
  return out.join('').split('\n\n').filter((e) => e !== '').map((e) => {
    const [event, data] = e.split('\n') as [string, string];
    const parsed = JSON.parse(data.slice('data: '.length));
    assert.equal(event, `event: ${parsed.type}`);
    return parsed;
  });
}

describe('chat stream → Responses events', () => {
  it('text: created, in_progress, the message item and its part, deltas, done events, completed with usage; numbered in order', async () => {
    const got = await events([chunk({ role: 'assistant', content: 'Hel' }), chunk({ content: 'lo' }), chunk({}, 'stop'), usage, 'data: [DONE]\n\n']);
    assert.deepEqual(got.map((e) => e.type), [
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      'response.output_text.delta', 'response.output_text.delta', 'response.output_text.done', 'response.content_part.done',
      'response.output_item.done', 'response.completed',
    ]);
    assert.deepEqual(got.map((e) => e.sequence_number), got.map((_, i) => i));
    const done = got.at(-1).response;
    assert.equal(done.status, 'completed');
    assert.equal(done.model, 'm-1');
    assert.equal(done.output[0].content[0].text, 'Hello');
    assert.deepEqual(done.usage, { input_tokens: 5, input_tokens_details: { cached_tokens: 2 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 8 });
    assert.equal(got[6].text, 'Hello');
    assert.equal(got[4].item_id, got[2].item.id);
  });

  it('reasoning, then a function call: its item, argument deltas and done; a length stop is incomplete', async () => {
    const got = await events([
      chunk({ reasoning_content: 'think' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
      chunk({}, 'length'),
      'data: [DONE]\n\n',
    ]);
    const types = got.map((e) => e.type);
    assert.deepEqual(types.slice(2, 5), ['response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta']);
    assert.ok(types.indexOf('response.function_call_arguments.done') > types.lastIndexOf('response.function_call_arguments.delta'));
    const last = got.at(-1);
    assert.equal(last.type, 'response.incomplete');
    assert.deepEqual(last.response.incomplete_details, { reason: 'max_output_tokens' });
    assert.deepEqual(last.response.output[0].summary, [{ type: 'summary_text', text: 'think' }]);
    assert.deepEqual(last.response.output[1], { id: last.response.output[1].id, type: 'function_call', status: 'completed', call_id: 'call_1', name: 'f', arguments: '{"a":1}' });
  });

  it('a chat error event, or a chat stream cut before [DONE], ends in an error event with the envelope and no completed', async () => {
    const failed = await events([chunk({ content: 'x' }), `data: ${JSON.stringify({ error: { message: 'overloaded', type: 'upstream_error', code: 'overloaded_error', param: null } })}\n\n`]);
    assert.deepEqual(failed.at(-1), { type: 'error', code: 'overloaded_error', message: 'overloaded', param: null, error: { message: 'overloaded', type: 'upstream_error', code: 'overloaded_error', param: null }, sequence_number: failed.length - 1 });
    const cut = await events([chunk({ content: 'x' })]);
    assert.equal(cut.at(-1).type, 'error');
    assert.equal(cut.at(-1).code, 'incomplete_stream');
    assert.ok(!cut.some((e) => e.type === 'response.completed'));
  });
});

describe('chat.completion → Response', () => {
  it('the message, tool calls as function_call items, the request echoed, usage in the Responses shape', () => {
    const chat = { id: 'c', object: 'chat.completion', model: 'm-2', choices: [{ index: 0, message: { role: 'assistant', content: 'ok', tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 } };
    const r = responseFromChat(JSON.stringify(chat), { model: 'm', instructions: 'i', previous_response_id: 'resp_syx', metadata: { a: 'b' }, temperature: 0.2 }, 'prov');
    assert.ok(r.ok);
    const res = JSON.parse(r.value);
    assert.equal(res.object, 'response');
    assert.match(res.id, /^resp_sy[0-9a-f]{32}$/);
    assert.equal(res.status, 'completed');
    assert.equal(res.model, 'm-2');
    assert.deepEqual([res.instructions, res.previous_response_id, res.temperature, res.metadata], ['i', 'resp_syx', 0.2, { a: 'b' }]);
    assert.deepEqual(res.output.map((o: any) => o.type), ['message', 'function_call']);
    assert.equal(res.output[0].content[0].text, 'ok');
    assert.equal(res.output[1].call_id, 'call_9');
    assert.equal(res.usage.total_tokens, 6);
    const bad = responseFromChat('{"choices": []}', { model: 'm' }, 'prov');
    assert.ok(!bad.ok && bad.error.code === 'bad_upstream_response');
  });
  it('an output longer than the gateway holds for response.completed ends in an error event (502), never a completed response', async () => {
    const mib = 'x'.repeat(1024 * 1024);
    const got = await events([...Array.from({ length: 12 }, () => chunk({ content: mib })), chunk({}, 'stop'), 'data: [DONE]\n\n'], { model: 'm' }, 1 << 20);
    const last = got.at(-1);
    assert.equal(last.type, 'error');
    assert.equal(last.code, 'upstream_answer_too_large');
    assert.match(last.message, new RegExp(`prov streamed more than the ${MAX_HELD_CHARS} characters`));
    assert.equal(got.filter((e) => e.type === 'response.output_text.delta').length, MAX_HELD_CHARS / mib.length);
    assert.ok(!got.some((e) => e.type === 'response.completed'));
    const calls = Array.from({ length: MAX_HELD_CHARS / HELD_ENTRY + 1 }, (_, i) => chunk({ tool_calls: [{ index: i, id: `c${i}`, type: 'function', function: { name: 'f', arguments: '' } }] }));
    assert.equal((await events([...calls, 'data: [DONE]\n\n'], { model: 'm' }, 1 << 20)).at(-1).code, 'upstream_answer_too_large');
    // A call's id and name are kept too.
    const named = [0, 1, 2].map((i) => chunk({ tool_calls: [{ index: i, id: `c${i}`, type: 'function', function: { name: 'f'.repeat(MAX_HELD_CHARS / 2), arguments: '' } }] }));
    assert.equal((await events([...named, 'data: [DONE]\n\n'], { model: 'm' }, 1 << 20)).at(-1).code, 'upstream_answer_too_large');
  });
});
