// Anthropic's whole answer, stop reasons, usage and errors in OpenAI's shapes; the base URL of a custom host.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { apiBase } from '../adapter.js';
import { anthropicError } from '../errors.js';
import { messagesChat } from './request.js';
import { finishReason, fromAnthropicMessage, openAIUsage } from './response.js';
import type { AnthropicMessage } from '../wire.js';

function message(content: unknown[], extra: Partial<AnthropicMessage> = {}): AnthropicMessage {
  return {
    id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: content as AnthropicMessage['content'],
    stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 4, output_tokens: 6 }, ...extra,
  };
}

describe('anthropic answer translation', () => {
  it('joins text, maps tool_use, thinking and usage', () => {
    const out = fromAnthropicMessage(
      message(
        [
          { type: 'thinking', thinking: 'hmm', signature: 's1' },
          { type: 'redacted_thinking', data: 'enc' },
          { type: 'text', text: 'a' },
          { type: 'server_tool_use', id: 'srv', name: 'web_search', input: {} },
          { type: 'text', text: 'b' },
          { type: 'tool_use', id: 't1', name: 'f', input: { x: [1] } },
        ],
        { stop_reason: 'tool_use', usage: { input_tokens: 1, cache_read_input_tokens: 2, cache_creation_input_tokens: 3, output_tokens: 4 } },
      ),
      false,
    );
    assert.equal(out.id, 'msg_1');
    assert.equal(out.model, 'claude-x');
    assert.deepEqual(out.choices[0]!.message, {
      role: 'assistant', content: 'ab', refusal: null,
      tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"x":[1]}' } }],
      reasoning_content: 'hmm',
      thinking_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 's1' }, { type: 'redacted_thinking', data: 'enc' }],
    });
    assert.equal(out.choices[0]!.finish_reason, 'tool_calls');
    assert.deepEqual(out.usage, { prompt_tokens: 6, completion_tokens: 4, total_tokens: 10, prompt_tokens_details: { cached_tokens: 2 } });
  });

  it('content is null when Claude only calls tools; legacy requests get function_call', () => {
    const out = fromAnthropicMessage(message([{ type: 'tool_use', id: 't', name: 'f', input: {} }], { stop_reason: 'tool_use' }), true);
    assert.deepEqual(out.choices[0]!.message, { role: 'assistant', content: null, refusal: null, function_call: { name: 'f', arguments: '{}' } });
    assert.equal(out.choices[0]!.finish_reason, 'function_call');
  });

  it('stop reasons', () => {
    const cases: [string | null, string | null][] = [
      ['end_turn', 'stop'], ['stop_sequence', 'stop'], ['pause_turn', 'stop'], ['max_tokens', 'length'],
      ['model_context_window_exceeded', 'length'], ['tool_use', 'tool_calls'], ['refusal', 'content_filter'], [null, null],
    ];
    for (const [anthropic, openai] of cases) assert.equal(finishReason(anthropic, false), openai, String(anthropic));
    assert.deepEqual(openAIUsage({}), { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, prompt_tokens_details: { cached_tokens: 0 } });
  });

  it('the translator refuses an answer that is not a message', () => {
    const request = messagesChat.request({ model: 'claude', messages: [{ role: 'user', content: 'hi' }] });
    assert.ok(request.ok && !request.value.answer.streamed);
    const tr = request.value.answer;
    const bad = tr.response(Buffer.from('<html>'), {});
    assert.ok(!bad.ok && bad.error.status === 502 && bad.error.code === 'bad_upstream_response');
    const notMessage = tr.response(Buffer.from('{"type":"completion"}'), {});
    assert.ok(!notMessage.ok && notMessage.error.status === 502);
    const good = tr.response(Buffer.from(JSON.stringify(message([{ type: 'text', text: 'ok' }]))), {});
    assert.ok(good.ok && JSON.parse(good.value).choices[0].message.content === 'ok');
  });

  it("errors: Anthropic's body gives message and code; other bodies their text", () => {
    const e = anthropicError(429, Buffer.from('{"type":"error","error":{"type":"rate_limit_error","message":"slow down"},"request_id":"req_1"}'));
    assert.deepEqual([e.status, e.message, e.code, e.type], [429, 'slow down', 'rate_limit_error', 'rate_limit_error']);
    const html = anthropicError(502, Buffer.from('<h1>Bad gateway</h1>'));
    assert.deepEqual([html.status, html.message], [502, 'anthropic answered 502: <h1>Bad gateway</h1>']);
  });

  it('custom hosts with and without /v1', () => {
    assert.equal(apiBase(undefined), 'https://api.anthropic.com/v1');
    assert.equal(apiBase('http://127.0.0.1:9/'), 'http://127.0.0.1:9/v1');
    assert.equal(apiBase('http://127.0.0.1:9/v1/'), 'http://127.0.0.1:9/v1');
    assert.equal(apiBase('https://proxy.example/anthropic'), 'https://proxy.example/anthropic/v1');
  });
});
