// Reading an answer's token usage from its last bytes (src/pipeline/limits.ts):
// the last `"usage"` key wins, strings that merely contain the word do not
// count, and shapes without total_tokens add their input and output.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { usageTokens } from '../src/pipeline/limits.js';

describe('usage of an answer', () => {
  it('total_tokens of a JSON answer, nested details and all', () => {
    const body = JSON.stringify({
      id: 'chatcmpl-1',
      choices: [{ message: { content: 'see "usage": {"total_tokens": 999} }' } }],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12, completion_tokens_details: { reasoning_tokens: 0 } },
      system_fingerprint: 'fp',
    });
    assert.equal(usageTokens(body), 12);
    assert.equal(usageTokens(JSON.stringify(JSON.parse(body), null, 2)), 12);
  });

  it('the final event of a stream with include_usage; null-usage chunks alone charge nothing', () => {
    const chunk = (usage: unknown) => `data: ${JSON.stringify({ choices: [], usage })}\n\n`;
    assert.equal(usageTokens(chunk(null) + chunk(null) + chunk({ total_tokens: 30 }) + 'data: [DONE]\n\n'), 30);
    assert.equal(usageTokens(chunk(null) + chunk(null) + 'data: [DONE]\n\n'), null);
    assert.equal(usageTokens('data: {"choices":[{"delta":{"content":"x"}}]}\n\ndata: [DONE]\n\n'), null);
  });

  it('input plus output tokens where no total is given (Anthropic-style usage on the proxy)', () => {
    assert.equal(usageTokens('{"type":"message","usage":{"input_tokens":10,"cache_read_input_tokens":3,"output_tokens":4}}'), 14);
  });

  it('a string value "usage", a cut-off object or no usage at all: null', () => {
    assert.equal(usageTokens('{"type":"usage","n":1}'), null);
    assert.equal(usageTokens('{"usage":{"total_tokens":12,"x":"}'), null);
    assert.equal(usageTokens('{"data":[]}'), null);
    assert.equal(usageTokens(''), null);
  });
});
