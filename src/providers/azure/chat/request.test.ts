// The Model Inference API's request edits.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toInferenceChat } from './request.js';

describe('toInferenceChat', () => {
  it('returns null when nothing differs', () => {
    assert.equal(toInferenceChat({ messages: [{ role: 'system', content: 's' }], max_tokens: 5, temperature: 1 }), null);
  });

  it('max_completion_tokens becomes max_tokens, winning over a max_tokens sent with it', () => {
    assert.deepEqual(toInferenceChat({ messages: [], max_completion_tokens: 10 }), { messages: [], max_tokens: 10 });
    assert.deepEqual(toInferenceChat({ messages: [], max_tokens: 99, max_completion_tokens: 10 }), { messages: [], max_tokens: 10 });
  });

  it('developer messages become system messages; other roles, parts and fields stay', () => {
    const image = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] };
    const tool = { role: 'tool', tool_call_id: 'c1', content: '42' };
    const body = { messages: [{ role: 'developer', content: 'rules', name: 'ops' }, image, tool], tools: [{ type: 'function', function: { name: 'f' } }] };
    const out = toInferenceChat(body)!;
    assert.deepEqual(out.messages, [{ role: 'system', content: 'rules', name: 'ops' }, image, tool]);
    assert.deepEqual(out.tools, body.tools);
    assert.equal(body.messages[0]!.role, 'developer', 'the input is not modified');
  });
});
