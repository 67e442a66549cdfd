import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toChat } from './request.js';

const chat = (body: Record<string, unknown>) => {
  const r = toChat(body, 'anthropic');
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  return r.value;
};
const refused = (body: Record<string, unknown>): string | null => {
  const r = toChat(body, 'anthropic');
  assert.ok(!r.ok);
  return r.error.param;
};

describe('Responses request → chat request', () => {
  it('instructions become the first system message; a string input one user message', () => {
    assert.deepEqual(chat({ model: 'm', instructions: 'be brief', input: 'hi' }), {
      model: 'm',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
    });
  });

  it('items: parts, the assistant turn, function calls joined to it, their outputs, reasoning dropped', () => {
    const body = chat({
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: 'https://x/i.png', detail: 'low' }] },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'calling', annotations: [] }] },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}' },
        { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'one' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'two' }] },
      ],
    });
    assert.deepEqual(body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'https://x/i.png', detail: 'low' } }] },
      {
        role: 'assistant',
        content: 'calling',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
          { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'two' }] },
    ]);
  });

  it('tools, tool_choice, text.format, reasoning, max_output_tokens and stream in chat terms', () => {
    const body = chat({
      input: 'x',
      stream: true,
      max_output_tokens: 9,
      temperature: 0.5,
      reasoning: { effort: 'low' },
      tools: [{ type: 'function', name: 'f', description: 'd', parameters: { type: 'object' }, strict: true }],
      tool_choice: { type: 'function', name: 'f' },
      text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
      store: true,
      metadata: { a: 'b' },
      truncation: 'auto',
    });
    assert.equal(body.stream, true);
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.equal(body.max_completion_tokens, 9);
    assert.equal(body.temperature, 0.5);
    assert.equal(body.reasoning_effort, 'low');
    assert.deepEqual(body.tools, [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' }, strict: true } }]);
    assert.deepEqual(body.tool_choice, { type: 'function', function: { name: 'f' } });
    assert.deepEqual(body.response_format, { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } });
    for (const kept of ['store', 'metadata', 'truncation', 'input', 'text', 'reasoning']) assert.equal(body[kept], undefined, kept);
  });

  it('what chat cannot carry is a 400 naming the field', () => {
    assert.equal(refused({ input: 'x', conversation: 'c1' }), 'conversation');
    assert.equal(refused({ input: 'x', background: true }), 'background');
    assert.equal(refused({ input: 'x', tools: [{ type: 'file_search', vector_store_ids: [] }] }), 'tools[0].type');
    assert.equal(refused({ input: [{ type: 'item_reference', id: 'i' }] }), 'input[0].type');
    assert.equal(refused({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] }), 'input[0].content[0].image_url');
    assert.equal(refused({ input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] }), 'input[0].arguments');
    assert.equal(refused({ input: [] }), 'input');
    assert.equal(refused({ input: 'x', tool_choice: { type: 'file_search' } }), 'tool_choice');
  });
});
