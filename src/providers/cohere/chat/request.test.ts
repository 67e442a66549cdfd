// OpenAI chat request → Cohere Chat v2 request.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cohereChat, toCohereChat } from './request.js';
import type { ChatRequest } from '../../shared/openai-request.js';

describe('cohere: chat request', () => {
  const base = { model: 'command-r', messages: [{ role: 'user', content: 'hi' }] };
  const translate = (extra: Record<string, unknown>) => {
    const t = toCohereChat({ ...base, ...extra } as ChatRequest);
    assert.ok(t.ok, t.ok ? '' : t.error.message);
    return t.value;
  };

  it('drops OpenAI-platform parameters, passes Cohere\'s own on, treats null as unset', () => {
    const request = translate({
      user: 'u', safety_identifier: 's', parallel_tool_calls: true, store: true, metadata: { a: 'b' }, service_tier: 'auto',
      prompt_cache_key: 'k', prompt_cache_retention: '24h', verbosity: 'low', n: 1, logit_bias: {}, top_logprobs: 0, modalities: ['text'],
      temperature: null, stop: null, max_tokens: null, stream_options: null,
      documents: ['doc'], citation_options: { mode: 'FAST' }, priority: 2, p: 0.5,
    });
    assert.deepEqual(request, {
      model: 'command-r',
      messages: [{ role: 'user', content: 'hi' }],
      documents: ['doc'],
      citation_options: { mode: 'FAST' },
      priority: 2,
      p: 0.5,
    });
  });

  it('stop arrays, max_tokens alone, top_p 0 and over-1 stays within Cohere\'s range', () => {
    assert.deepEqual(translate({ stop: ['a', 'b'] }).stop_sequences, ['a', 'b']);
    assert.equal(translate({ max_tokens: 12 }).max_tokens, 12);
    assert.equal(translate({ top_p: 0 }).p, 0.01);
    assert.equal(translate({ top_p: 0.5 }).p, 0.5);
  });

  it('the answer: streamed when asked, its usage chunk stripped unless asked for', () => {
    const answer = (extra: Record<string, unknown>) => {
      const t = cohereChat.request({ ...base, ...extra });
      assert.ok(t.ok);
      return t.value.answer;
    };
    const asked = answer({ stream: true, stream_options: { include_usage: true } });
    assert.ok(asked.streamed && !asked.addedUsage);
    const unasked = answer({ stream: true });
    assert.ok(unasked.streamed && unasked.addedUsage);
    assert.equal(answer({ stream: false }).streamed, false);
    assert.equal(translate({ stream: false }).stream, undefined);
  });

  it('assistant text parts beside tool calls become one tool_plan; an assistant turn without calls keeps its content', () => {
    const request = translate({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: [{ type: 'text', text: 'I will ' }, { type: 'text', text: 'look.' }], tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c', content: [{ type: 'text', text: 'result' }] },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] },
      ],
    });
    assert.deepEqual(request.messages.slice(1), [
      { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }], tool_plan: 'I will look.' },
      { role: 'tool', tool_call_id: 'c', content: [{ type: 'text', text: 'result' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'no' }] },
    ]);
  });

  it('legacy function_call none/auto, allowed_tools required, json_schema without a schema', () => {
    const fns = { functions: [{ name: 'f' }, { name: 'g' }] };
    assert.equal(translate({ ...fns, function_call: 'none' }).tool_choice, 'NONE');
    assert.equal(translate({ ...fns, function_call: 'auto' }).tool_choice, undefined);
    const allowed = translate({
      tools: [{ type: 'function', function: { name: 'f' } }, { type: 'function', function: { name: 'g' } }],
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'g' } }] } },
    });
    assert.deepEqual([allowed.tool_choice, allowed.tools?.map((t) => t.function.name)], ['REQUIRED', ['g']]);
    assert.deepEqual(translate({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }).response_format, { type: 'json_object' });
  });

  it('malformed tool calls and thinking are refused naming the field', () => {
    const refused = (extra: Record<string, unknown>, param: string) => {
      const t = toCohereChat({ ...base, ...extra } as ChatRequest);
      assert.ok(!t.ok);
      assert.equal(t.error.param, param);
    };
    refused({ messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }] }] }, 'messages[0].tool_calls[0].function.arguments');
    refused({ tools: [{ type: 'function', function: { name: 'f', parameters: 'x' } }] }, 'tools[0].function.parameters');
    refused({ thinking: { type: 'adaptive' } }, 'thinking.type');
    refused({ functions: [{ name: 'f' }], function_call: { name: 'g' } }, 'function_call.name');
    refused({ tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: { type: 'custom', custom: { name: 'x' } } }, 'tool_choice.type');
  });
});
