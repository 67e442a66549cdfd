// OpenAI embeddings ⇄ InvokeModel of the Titan and Cohere embedding models.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { invokeEmbeddings } from './embeddings.js';
import { value, refusal } from '../../../test/support/results.js';

describe('embeddings', () => {
  it('Titan v1: fixed 1536 dimensions; token ids and streams refused; user as request metadata', () => {
    const v1 = 'amazon.titan-embed-text-v1';
    const embed = (body: Record<string, unknown>) => invokeEmbeddings.request(body);
    assert.deepEqual(JSON.parse(value(embed({ model: v1, input: 'x', dimensions: 1536 })).body), { inputText: 'x' });
    assert.equal(refusal(embed({ model: v1, input: 'x', dimensions: 512 })).param, 'dimensions');
    assert.equal(refusal(embed({ model: v1, input: [1, 2, 3] })).param, 'input');
    assert.equal(refusal(embed({ model: v1, input: 'x', stream: true })).param, 'stream');
    const call = value(embed({ model: 'arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0', input: ['x'], user: 'u1', dimensions: 256, normalize: false }));
    assert.deepEqual(JSON.parse(call.body), { normalize: false, inputText: 'x', dimensions: 256 }, 'Titan v2 takes dimensions');
    assert.deepEqual(call.headers, { accept: 'application/json', 'x-amzn-bedrock-request-metadata': '{"user":"u1"}' });
  });

  it('Cohere by type: floats first, else the first type asked for; usage from the header', () => {
    const request = value(invokeEmbeddings.request({ model: 'cohere.embed-v4:0', input: 'x' }));
    const answer = request.answer;
    const read = (embeddings: unknown, headers: Record<string, string> = {}) => JSON.parse(value(answer.response(Buffer.from(JSON.stringify({ embeddings })), headers))) as any;
    assert.deepEqual(read({ int8: [[1, 2]], float: [[0.5, 0.25]] }, { 'x-amzn-bedrock-input-token-count': '4' }), {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.5, 0.25] }],
      model: 'cohere.embed-v4:0',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
    assert.deepEqual(read({ int8: [[1, 2]] }).data[0].embedding, [1, 2]);
    assert.equal(refusal(answer.response(Buffer.from('{}'), {})).code, 'bad_upstream_response');
  });
});
