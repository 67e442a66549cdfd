// Unit tests of the anthropic translation functions: request, message, stream, errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { apiBase } from '../src/providers/anthropic/adapter.js';
import { anthropicError } from '../src/providers/anthropic/errors.js';
import { DEFAULT_MAX_TOKENS, messagesChat, toMessagesRequest } from '../src/providers/anthropic/chat/request.js';
import { finishReason, fromAnthropicMessage, openAIUsage } from '../src/providers/anthropic/chat/response.js';
import { AnthropicStream } from '../src/providers/anthropic/chat/stream.js';
import { usesLegacyFunctions, type ChatRequest } from '../src/providers/shared/openai-request.js';
import type { AnthropicMessage } from '../src/providers/anthropic/wire.js';
import { toEvents } from './support/mock-anthropic.js';

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

/** Runs SSE text through the stream transform in pieces of `size` bytes; returns the data payloads. */
async function stream(sse: string, legacyFunctions = false, size = 5): Promise<string[]> {
  const bytes = Buffer.from(sse);
  const pieces: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
  let out = '';
  for await (const c of Readable.from(pieces).pipe(new AnthropicStream(legacyFunctions))) out += c.toString();
  return out.split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
}

const frame = (events: Record<string, unknown>[]): string => events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join('');

function message(content: unknown[], extra: Partial<AnthropicMessage> = {}): AnthropicMessage {
  return {
    id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: content as AnthropicMessage['content'],
    stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 4, output_tokens: 6 }, ...extra,
  };
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

describe('anthropic stream transform', () => {
  const whole = message(
    [
      { type: 'thinking', thinking: 'a b', signature: 'sig' },
      { type: 'text', text: 'Hi there' },
      { type: 'tool_use', id: 't1', name: 'f', input: { q: 'é' } },
      { type: 'tool_use', id: 't2', name: 'g', input: {} },
    ],
    { stop_reason: 'tool_use', usage: { input_tokens: 5, cache_read_input_tokens: 7, output_tokens: 9 } },
  );

  it('turns every event kind into chunks, tool calls indexed in order', async () => {
    const events = (await stream(frame(toEvents(whole as unknown as Record<string, unknown>)), false)).slice(0, -1).map((d) => JSON.parse(d));
    assert.ok(events.every((c) => c.id === 'msg_1' && c.model === 'claude-x' && c.object === 'chat.completion.chunk'));
    const deltas = events.filter((c) => c.choices.length === 1).map((c) => c.choices[0].delta);
    assert.deepEqual(deltas[0], { role: 'assistant', content: '' });
    assert.equal(deltas.map((d) => d.reasoning_content ?? '').join(''), 'a b');
    assert.deepEqual(deltas.flatMap((d) => d.thinking_blocks ?? []), [{ type: 'thinking', thinking: 'a b', signature: 'sig' }]);
    assert.equal(deltas.map((d) => d.content ?? '').join(''), 'Hi there');
    const calls = deltas.flatMap((d) => d.tool_calls ?? []);
    assert.deepEqual(calls[0], { index: 0, id: 't1', type: 'function', function: { name: 'f', arguments: '' } });
    assert.equal(calls.filter((c) => c.index === 0).map((c) => c.function.arguments).join(''), '{"q":"é"}');
    assert.deepEqual(calls.find((c) => c.index === 1), { index: 1, id: 't2', type: 'function', function: { name: 'g', arguments: '' } });
    assert.ok(calls.every((c) => c.function.arguments !== '' || c.id !== undefined), 'no empty argument deltas');
    assert.equal(events.at(-2).choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(events.at(-1), {
      id: 'msg_1', object: 'chat.completion.chunk', created: events[0].created, model: 'claude-x', choices: [],
      usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21, prompt_tokens_details: { cached_tokens: 7 } },
    });
  });

  it('ignores ping and unknown events; a stream error ends it with an error payload and no [DONE]', async () => {
    const start = toEvents(message([]) as unknown as Record<string, unknown>)[0]!;
    const out = await stream(
      frame([start, { type: 'ping' }, { type: 'future_event', x: 1 }, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { type: 'message_stop' }]),
    );
    assert.equal(out.length, 2);
    assert.deepEqual(JSON.parse(out[1]!), { error: { message: 'Overloaded', type: 'server_error', code: 'overloaded_error', param: null } });
  });

  it('legacy functions stream function_call deltas', async () => {
    const m = message([{ type: 'tool_use', id: 't', name: 'f', input: { a: 1 } }], { stop_reason: 'tool_use' });
    const events = (await stream(frame(toEvents(m as unknown as Record<string, unknown>)), true)).slice(0, -2).map((d) => JSON.parse(d));
    const fc = events.map((c) => c.choices[0].delta.function_call).filter(Boolean);
    assert.deepEqual(fc[0], { name: 'f', arguments: '' });
    assert.equal(fc.map((f) => f.arguments).join(''), '{"a":1}');
    assert.equal(events.at(-1).choices[0].finish_reason, 'function_call');
  });

  it('a cut stream or an unreadable event ends in an error, no [DONE]', async () => {
    const start = frame([toEvents(message([]) as unknown as Record<string, unknown>)[0]!]);
    const cut = await stream(start);
    assert.match(JSON.parse(cut.at(-1)!).error.message, /before message_stop/);
    assert.equal(JSON.parse(cut.at(-1)!).error.code, 'incomplete_stream');
    const garbled = await stream(`${start}event: content_block_delta\ndata: {not json\n\n`);
    assert.equal(JSON.parse(garbled.at(-1)!).error.code, 'bad_upstream_stream');
  });

  it('reads a last event that lacks its blank line', async () => {
    const events = toEvents(message([{ type: 'text', text: 'x' }]) as unknown as Record<string, unknown>);
    const out = await stream(frame(events).replace(/\n\n$/, ''));
    assert.equal(out.at(-1), '[DONE]');
    assert.ok(!out.some((d) => d.includes('"error"')));
  });
});
