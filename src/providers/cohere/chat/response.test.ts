// Cohere's whole answers (chat and embed), finish reasons, usage, log probabilities and errors in OpenAI's shapes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { finishReason, fromCohereChat, toLogprobs, toUsage } from './response.js';
import { cohereEmbed } from '../embeddings.js';
import { cohereError } from '../errors.js';
import { float32Base64 } from '../../shared/embeddings.js';

describe('cohere: answers', () => {
  it('finish reasons', () => {
    assert.deepEqual(
      (['COMPLETE', 'STOP_SEQUENCE', 'MAX_TOKENS', 'TIMEOUT', 'TOOL_CALL', undefined] as const).map((r) => finishReason(r, false)),
      ['stop', 'stop', 'length', 'length', 'tool_calls', 'stop'],
    );
    assert.equal(finishReason('TOOL_CALL', true), 'function_call');
  });

  it('usage: tokens first, billed units else, cached tokens when reported', () => {
    assert.deepEqual(toUsage({ tokens: { input_tokens: 9, output_tokens: 2 }, billed_units: { input_tokens: 1, output_tokens: 1 } }), { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 });
    assert.deepEqual(toUsage({ billed_units: { input_tokens: 1, output_tokens: 1 }, cached_tokens: 0 }), {
      prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, prompt_tokens_details: { cached_tokens: 0 },
    });
    assert.deepEqual(toUsage(undefined), { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('logprobs: a chunk of several tokens is one entry with their summed log probability', () => {
    assert.deepEqual(toLogprobs([{ text: 'ab', token_ids: [1, 2], logprobs: [-1, -2] }, { token_ids: [3] }]).content, [
      { token: 'ab', logprob: -3, bytes: [97, 98], top_logprobs: [] },
      { token: '', logprob: 0, bytes: [], top_logprobs: [] },
    ]);
  });

  it('text beside tool calls wins over the plan; no text and no calls is an empty string', () => {
    const read = (res: unknown) => fromCohereChat(Buffer.from(JSON.stringify(res)), 'm', false);
    const withText = read(
      { id: 'g', finish_reason: 'TOOL_CALL', message: { role: 'assistant', content: [{ type: 'text', text: 'said' }], tool_plan: 'plan', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] } },
    );
    assert.ok(withText.ok);
    assert.equal(JSON.parse(withText.value).choices[0].message.content, 'said');
    const empty = read({ id: 'g', finish_reason: 'COMPLETE', message: { role: 'assistant' } });
    assert.ok(empty.ok);
    assert.equal(JSON.parse(empty.value).choices[0].message.content, '');
  });

  it('float32Base64 writes little-endian float32', () => {
    const buf = Buffer.from(float32Base64([1, -2.5]), 'base64');
    assert.deepEqual([...buf], [0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0]);
  });

  it('embeddings: a client without input_type gets search_document; stream false is no matter', () => {
    const t = cohereEmbed.request({ model: 'embed-v4.0', input: 'x', stream: false });
    assert.ok(t.ok);
    assert.deepEqual(JSON.parse(t.value.body), { model: 'embed-v4.0', texts: ['x'], input_type: 'search_document', embedding_types: ['float'] });
  });

  it('embeddings usage: the tokens read first, billed units else', () => {
    const t = cohereEmbed.request({ model: 'm', input: 'x' });
    assert.ok(t.ok);
    const r = t.value.answer.response(Buffer.from(JSON.stringify({ id: 'e', embeddings: { float: [[0.5]] }, meta: { tokens: { input_tokens: 7 }, billed_units: { input_tokens: 5 } } })), {});
    assert.ok(r.ok);
    assert.deepEqual(JSON.parse(r.value).usage, { prompt_tokens: 7, total_tokens: 7 });
  });

  it("errors: Cohere's message, or the body's text, or a sentence; the status kept", () => {
    const json = cohereError(422, Buffer.from('{"id":"x","message":"invalid request: bad"}'));
    assert.deepEqual([json.status, json.message, json.type], [422, 'invalid request: bad', 'invalid_request_error']);
    assert.equal(cohereError(500, Buffer.from('{"id":"x"}')).message, '{"id":"x"}');
    assert.equal(cohereError(504, Buffer.alloc(0)).message, 'cohere answered 504 without a message');
    assert.equal(cohereError(504, Buffer.alloc(0)).type, 'upstream_error');
  });
});
