// Converse's whole answer → OpenAI chat.completion.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fromConverse } from './response.js';
import { value, refusal } from '../../../../test/support/results.js';

describe('Converse → OpenAI chat', () => {
  const answer = (res: unknown, legacyFunctions = false) => JSON.parse(value(fromConverse(Buffer.from(JSON.stringify(res)), 'm', legacyFunctions))) as any;
  const usage = { inputTokens: 5, outputTokens: 7, totalTokens: 2012, cacheReadInputTokens: 1500, cacheWriteInputTokens: 500 };

  it('reasoning, text and cache tokens: prompt_tokens counts cached ones, as OpenAI does', () => {
    const res = answer({
      output: { message: { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'hmm', signature: 's' } } }, { text: 'Hi' }, { text: ' there' }] } },
      stopReason: 'end_turn',
      usage,
    });
    assert.deepEqual(res.choices[0].message, { role: 'assistant', content: 'Hi there', refusal: null, reasoning_content: 'hmm' });
    assert.deepEqual(res.usage, { prompt_tokens: 2005, completion_tokens: 7, total_tokens: 2012, prompt_tokens_details: { cached_tokens: 1500 } });
  });

  it('stop reasons → finish_reason', () => {
    const finish = (stopReason: string, legacyFunctions = false) =>
      answer({ output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 't', name: 'f', input: {} } }] } }, stopReason, usage }, legacyFunctions).choices[0].finish_reason;
    assert.deepEqual(
      ['end_turn', 'stop_sequence', 'max_tokens', 'model_context_window_exceeded', 'tool_use', 'guardrail_intervened', 'content_filtered', 'malformed_tool_use'].map((s) => finish(s)),
      ['stop', 'stop', 'length', 'length', 'tool_calls', 'content_filter', 'content_filter', 'stop'],
    );
    assert.equal(finish('tool_use', true), 'function_call');
  });

  it('legacy functions answer with function_call', () => {
    const res = answer(
      { output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 't', name: 'f', input: { a: 1 } } }] } }, stopReason: 'tool_use', usage },
      true,
    );
    assert.deepEqual(res.choices[0].message.function_call, { name: 'f', arguments: '{"a":1}' });
    assert.equal(res.choices[0].message.tool_calls, undefined);
    assert.equal(res.choices[0].message.content, null);
  });

  it('an answer that is not Converse → 502', () => {
    assert.equal(refusal(fromConverse(Buffer.from('<html>'), 'm', false)).code, 'bad_upstream_response');
    assert.equal(refusal(fromConverse(Buffer.from('{"output":{}}'), 'm', false)).code, 'bad_upstream_response');
  });
});
