// OpenAI chat request → Anthropic Messages request (toMessagesRequest): mapping, the parameter policy, refusals.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_MAX_TOKENS, toMessagesRequest } from './request.js';
import { usesLegacyFunctions, type ChatRequest } from '../../shared/openai-request.js';

function request(body: Record<string, unknown>): Record<string, any> {
  const r = toMessagesRequest({ model: 'claude', messages: [{ role: 'user', content: 'hi' }], ...body } as ChatRequest);
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  return r.value;
}

function refusal(body: Record<string, unknown>): { message: string; param: string | null; status: number } {
  const r = toMessagesRequest({ model: 'claude', messages: [{ role: 'user', content: 'hi' }], ...body } as ChatRequest);
  assert.ok(!r.ok, 'expected a refusal');
  return r.error;
}

describe('anthropic request translation', () => {
  it('maps sampling, stop, user and max tokens; defaults max_tokens', () => {
    assert.deepEqual(request({ stop: ['a', 'b'], temperature: 0.5, top_p: 0.8, safety_identifier: 'u1', max_tokens: 10, max_completion_tokens: 20, stream: true }), {
      model: 'claude', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      max_tokens: 20, temperature: 0.5, top_p: 0.8, stop_sequences: ['a', 'b'], stream: true, metadata: { user_id: 'u1' },
    });
    assert.equal(request({}).max_tokens, DEFAULT_MAX_TOKENS);
    assert.equal(request({ max_tokens: 9 }).max_tokens, 9);
    assert.equal(request({ thinking: { type: 'enabled', budget_tokens: 3000 } }).max_tokens, DEFAULT_MAX_TOKENS + 3000);
  });

  it('drops OpenAI-only knobs by rule, passes Anthropic-native fields on, skips nulls', () => {
    const out = request({
      seed: 1, frequency_penalty: 1, presence_penalty: 1, logit_bias: { 1: 2 }, logprobs: true, top_logprobs: 2, n: 1,
      metadata: { a: 'b' }, store: true, reasoning_effort: 'low', stream_options: { include_usage: true }, response_format: { type: 'json_object' },
      top_k: 40, mcp_servers: [{ type: 'url', url: 'https://m', name: 'm' }], stop: null, temperature: null,
    });
    assert.deepEqual(Object.keys(out).sort(), ['max_tokens', 'mcp_servers', 'messages', 'model', 'top_k']);
    assert.equal(out.top_k, 40);
  });

  it('maps service_tier where Anthropic has a counterpart', () => {
    assert.equal(request({ service_tier: 'auto' }).service_tier, 'auto');
    assert.equal(request({ service_tier: 'default' }).service_tier, 'standard_only');
    assert.equal(request({ service_tier: 'flex' }).service_tier, undefined);
  });

  it('refuses what Claude cannot answer as asked, naming the field', () => {
    assert.equal(refusal({ n: 2 }).param, 'n');
    assert.equal(refusal({ audio: { voice: 'x', format: 'mp3' } }).param, 'audio');
    assert.equal(refusal({ modalities: ['text', 'audio'] }).param, 'modalities');
    assert.equal(refusal({ model: undefined }).param, 'model');
    assert.equal(refusal({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }).param, 'response_format.json_schema.schema');
    assert.equal(refusal({ tool_choice: { type: 'allowed_tools' } }).param, 'tool_choice');
  });

  it('lifts system and developer text, keeping cache_control; refuses non-text system parts', () => {
    const out = request({
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'big', cache_control: { type: 'ephemeral' } }] },
        { role: 'user', content: 'hi' },
        { role: 'developer', content: 'late rule' },
        { role: 'system', content: '' },
      ],
    });
    assert.deepEqual(out.system, [{ type: 'text', text: 'big', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'late rule' }]);
    assert.equal(out.messages.length, 1);
    const r = refusal({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x' } }] }, { role: 'user', content: 'x' }] });
    assert.equal(r.param, 'messages[0].content[0].type');
  });

  it('converts content parts: data URLs (base64 or not), PDFs, files; refuses audio and file ids', () => {
    const out = request({
      messages: [{
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/' } },
          { type: 'image_url', image_url: { url: 'data:application/pdf;base64,JVBE' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBF', filename: 'a.pdf' } },
          { type: 'file', file: { file_data: 'JVBG' } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'native' } },
        ],
      }],
    });
    assert.deepEqual(out.messages[0].content, [
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBF' }, title: 'a.pdf' },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBG' } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'native' } },
    ]);
    const part = (p: unknown) => refusal({ messages: [{ role: 'user', content: [p] }] }).param;
    assert.equal(part({ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }), 'messages[0].content[0].type');
    assert.equal(part({ type: 'image_url', image_url: { url: 'data:,rawtext' } }), 'messages[0].content[0].image_url.url');
    const plainData = request({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png,raw' } }] }] });
    assert.deepEqual(plainData.messages[0].content[0].source, { type: 'base64', media_type: 'image/png', data: Buffer.from('raw').toString('base64') });
    assert.equal(part({ type: 'file', file: { file_id: 'file-abc' } }), 'messages[0].content[0].file.file_data');
  });

  it('assistant turns: thinking blocks first, empty text skipped, refusal parts as text, tool calls parsed', () => {
    const out = request({
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: [{ type: 'text', text: '' }, { type: 'refusal', refusal: 'no' }],
          thinking_blocks: [{ type: 'redacted_thinking', data: 'enc' }],
          reasoning_content: 'ignored without a signature',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'r' },
      ],
    });
    assert.deepEqual(out.messages[1].content, [
      { type: 'redacted_thinking', data: 'enc' },
      { type: 'text', text: 'no' },
      { type: 'tool_use', id: 'c1', name: 'f', input: {} },
    ]);
    const call = (args: unknown) =>
      refusal({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }] }] });
    assert.equal(call('[1]').param, 'messages[0].tool_calls[0].function.arguments');
    assert.equal(call('nope').param, 'messages[0].tool_calls[0].function.arguments');
    assert.equal(refusal({ messages: [{ role: 'assistant', thinking_blocks: [{ type: 'text' }] }] }).param, 'messages[0].thinking_blocks[0].type');
  });

  it('tool results go before text in a merged user turn', () => {
    const out = request({
      messages: [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'user', content: 'by the way' },
        { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'done' }] },
      ],
    });
    assert.deepEqual(out.messages[1], {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: 'done' }] }, { type: 'text', text: 'by the way' }],
    });
  });

  it('legacy functions: function_call and function messages pair by name; serial calls', () => {
    const body = {
      functions: [{ name: 'f', parameters: { type: 'object', properties: { a: { type: 'number' } } } }],
      function_call: 'auto',
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{"a":1}' } },
        { role: 'function', name: 'f', content: '2' },
      ],
    };
    const out = request(body);
    assert.deepEqual(out.tools, [{ name: 'f', input_schema: { type: 'object', properties: { a: { type: 'number' } } } }]);
    assert.deepEqual(out.tool_choice, { type: 'auto', disable_parallel_tool_use: true });
    assert.deepEqual(out.messages.slice(1), [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_fn_1', name: 'f', input: { a: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_fn_1', content: '2' }] },
    ]);
    assert.equal(usesLegacyFunctions(body as ChatRequest), true);
    assert.equal(refusal({ messages: [{ role: 'function', name: 'g', content: 'x' }] }).param, 'messages[0].name');
  });

  it('tools: strict only when true, cache_control kept, server tools as written; tool_choice forms', () => {
    const fn = { type: 'function', function: { name: 'f', strict: false } };
    const out = request({
      tools: [
        { ...fn, cache_control: { type: 'ephemeral' } },
        { type: 'function', function: { name: 'g', strict: true, parameters: { type: 'object', properties: {}, additionalProperties: false } } },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
      ],
    });
    assert.deepEqual(out.tools, [
      { name: 'f', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral' } },
      { name: 'g', input_schema: { type: 'object', properties: {}, additionalProperties: false }, strict: true },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
    ]);
    const choice = (extra: Record<string, unknown>) => request({ tools: [fn], ...extra }).tool_choice;
    assert.deepEqual(choice({ tool_choice: 'auto' }), { type: 'auto' });
    assert.deepEqual(choice({ tool_choice: 'none', parallel_tool_calls: false }), { type: 'none' });
    assert.deepEqual(choice({ tool_choice: 'required' }), { type: 'any' });
    assert.deepEqual(choice({ parallel_tool_calls: false }), { type: 'auto', disable_parallel_tool_use: true });
    assert.deepEqual(choice({ parallel_tool_calls: true }), undefined);
    assert.deepEqual(choice({ tool_choice: { type: 'any' } }), { type: 'any' });
  });

  it('json_schema merges into a native output_config', () => {
    const schema = { type: 'object', properties: {}, additionalProperties: false };
    const out = request({ output_config: { effort: 'low' }, response_format: { type: 'json_schema', json_schema: { name: 'n', schema } } });
    assert.deepEqual(out.output_config, { effort: 'low', format: { type: 'json_schema', schema } });
  });
});
