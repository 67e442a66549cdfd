// Gemini's whole answer → OpenAI chat.completion.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { finishReason, toChatCompletion, toLogprobs } from './response.js';

describe('generateContent answer → chat.completion', () => {
  const ctx = { provider: 'google', model: 'asked-model' };

  it('maps parts, thoughts, code execution, logprobs, ids and times', () => {
    const out = toChatCompletion(
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: 'plan', thought: true },
                { text: 'Result: ' },
                { executableCode: { language: 'PYTHON', code: 'print(1+1)' } },
                { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '2' } },
              ],
            },
            finishReason: 'STOP',
            logprobsResult: {
              chosenCandidates: [{ token: 'Re', logProbability: -0.1 }],
              topCandidates: [{ candidates: [{ token: 'Re', logProbability: -0.1 }, { token: 'An', logProbability: -2.5 }] }],
            },
          },
        ],
        responseId: 'resp-9',
        createTime: '2025-01-02T03:04:05.678Z',
      },
      ctx,
    );
    assert.equal(out.id, 'resp-9');
    assert.equal(out.model, 'asked-model');
    assert.equal(out.created, Math.floor(Date.parse('2025-01-02T03:04:05Z') / 1000));
    assert.equal(out.usage, undefined);
    const choice = (out.choices as any[])[0];
    assert.equal(choice.message.content, 'Result: \n```python\nprint(1+1)\n```\n\n```\n2\n```\n');
    assert.equal(choice.message.reasoning_content, 'plan');
    assert.equal(choice.finish_reason, 'stop');
    assert.deepEqual(choice.logprobs, {
      content: [
        {
          token: 'Re',
          logprob: -0.1,
          bytes: [82, 101],
          top_logprobs: [
            { token: 'Re', logprob: -0.1, bytes: [82, 101] },
            { token: 'An', logprob: -2.5, bytes: [65, 110] },
          ],
        },
      ],
      refusal: null,
    });
    assert.equal(toLogprobs(undefined), null);
  });

  it('finish reasons', () => {
    const table: [string | undefined, boolean, string | null][] = [
      ['STOP', false, 'stop'],
      ['STOP', true, 'tool_calls'],
      ['MAX_TOKENS', true, 'length'],
      ['SAFETY', false, 'content_filter'],
      ['RECITATION', false, 'content_filter'],
      ['PROHIBITED_CONTENT', false, 'content_filter'],
      ['MALFORMED_FUNCTION_CALL', false, 'stop'],
      [undefined, false, null],
    ];
    for (const [reason, tools, want] of table) assert.equal(finishReason(reason, tools), want, String(reason));
  });
});
