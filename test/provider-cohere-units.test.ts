// Unit tests of the Cohere adapter's pure parts: the SSE reader, request and answer
// translation, the stream transform fed by hand, errors, and where prepare() sends calls.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CallInput, ProviderCall } from '../src/providers/contract.js';
import { cohere } from '../src/providers/cohere/adapter.js';
import { cohereChat, toCohereChat } from '../src/providers/cohere/chat/request.js';
import { finishReason, fromCohereChat, toLogprobs, toUsage } from '../src/providers/cohere/chat/response.js';
import { chatStream } from '../src/providers/cohere/chat/stream.js';
import { cohereEmbed } from '../src/providers/cohere/embeddings.js';
import { cohereError } from '../src/providers/cohere/errors.js';
import { float32Base64 } from '../src/providers/shared/embeddings.js';
import type { ChatRequest } from '../src/providers/shared/openai-request.js';
import { SseReader } from '../src/providers/shared/sse.js';

describe('cohere: SseReader', () => {
  const readAll = (pieces: (string | Buffer)[]) => {
    const r = new SseReader();
    const out = pieces.flatMap((p) => r.push(typeof p === 'string' ? Buffer.from(p) : p));
    return [...out, ...r.end()];
  };

  it('reads event and data fields, LF, CRLF and CR endings alike', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const text = `event: a${eol}data: {"x":1}${eol}${eol}: a comment${eol}data:no-space${eol}data: second line${eol}${eol}`;
      assert.deepEqual(readAll([text]), [
        { event: 'a', data: '{"x":1}' },
        { event: undefined, data: 'no-space\nsecond line' },
      ], JSON.stringify(eol));
    }
  });

  it('a CRLF split between chunks is one line ending, not two', () => {
    assert.deepEqual(readAll(['event: a\r', '\ndata: 1\r', '\n\r', '\n']), [{ event: 'a', data: '1' }]);
  });

  it('a UTF-8 character split between chunks survives', () => {
    const bytes = Buffer.from('data: é🎉\n\n');
    assert.deepEqual(readAll([...bytes].map((b) => Buffer.from([b]))), [{ event: undefined, data: 'é🎉' }]);
  });

  it('the last event counts even without its closing blank line; an event without data does not', () => {
    assert.deepEqual(readAll(['event: only-name\n\n', 'data: last']), [{ event: undefined, data: 'last' }]);
  });
});

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

describe('cohere: stream transform', () => {
  async function run(input: string, legacyFunctions = false): Promise<string[]> {
    const t = chatStream('m', legacyFunctions);
    const out: string[] = [];
    t.on('data', (d: Buffer) => out.push(d.toString()));
    const ended = new Promise((resolve) => t.on('end', resolve));
    t.end(Buffer.from(input));
    await ended;
    return out.join('').split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
  }

  it('a stream without message-start still opens with the role chunk; [DONE] from Cohere is not repeated', async () => {
    const events = await run(
      'data: {"type":"content-delta","delta":{"message":{"content":{"text":"x"}}}}\n\n' +
        'data: {"type":"message-end","delta":{"finish_reason":"COMPLETE"}}\n\ndata: [DONE]\n\n',
    );
    assert.equal(events.length, 5);
    assert.deepEqual(JSON.parse(events[0]!).choices[0].delta, { role: 'assistant', content: '' });
    assert.equal(JSON.parse(events[1]!).choices[0].delta.content, 'x');
    assert.equal(JSON.parse(events[2]!).choices[0].finish_reason, 'stop');
    assert.deepEqual(JSON.parse(events[3]!).choices, [], 'the usage chunk');
    assert.equal(events[4], '[DONE]');
  });

  it('legacy functions: only the first call is streamed (the legacy shape holds one)', async () => {
    const start = (i: number, name: string) => `data: {"type":"tool-call-start","index":${i},"delta":{"message":{"tool_calls":{"id":"c${i}","type":"function","function":{"name":"${name}","arguments":""}}}}}\n\n`;
    const args = (i: number, a: string) => `data: ${JSON.stringify({ type: 'tool-call-delta', index: i, delta: { message: { tool_calls: { function: { arguments: a } } } } })}\n\n`;
    const events = await run(
      start(0, 'f') + args(0, '{}') + start(1, 'g') + args(1, '{"x":1}') + 'data: {"type":"message-end","delta":{"finish_reason":"TOOL_CALL"}}\n\n',
      true,
    );
    const deltas = events.slice(0, -2).map((e) => JSON.parse(e).choices[0]);
    assert.deepEqual(deltas.map((c) => c.delta), [{ role: 'assistant', content: '' }, { function_call: { name: 'f', arguments: '' } }, { function_call: { arguments: '{}' } }, {}]);
    assert.equal(deltas.at(-1).finish_reason, 'function_call');
  });

  it('an event that is not JSON ends the stream with an error event and no [DONE]', async () => {
    const events = await run('data: {"type":"message-start"}\n\ndata: {oops\n\ndata: {"type":"message-end"}\n\n');
    assert.equal(events.length, 2);
    assert.match(JSON.parse(events[1]!).error.message, /not JSON/);
    assert.equal(JSON.parse(events[1]!).error.code, 'bad_upstream_stream');
  });
});

describe('cohere: where prepare() sends calls', () => {
  const settings = { api_key: 'co-k' };
  const prepare = (input: Partial<CallInput>): ProviderCall => {
    const r = cohere.adapter.prepare({
      target: { provider: 'cohere', settings, clientAuthorization: undefined, customHost: undefined },
      endpoint: 'proxy',
      path: '/',
      body: null,
      ...input,
    });
    assert.ok(!(r instanceof Promise) && r.ok);
    return r.value;
  };

  it('Cohere\'s own host by default; a custom host replaces it (a trailing slash is fine)', () => {
    assert.equal(prepare({ endpoint: 'chat', path: '/chat/completions' }).url, 'https://api.cohere.com/v2/chat');
    assert.equal(prepare({ endpoint: 'embeddings', path: '/embeddings' }).url, 'https://api.cohere.com/v2/embed');
    const target = { provider: 'cohere', settings, clientAuthorization: undefined, customHost: 'http://h:1/base/' };
    assert.equal(prepare({ target, endpoint: 'chat' }).url, 'http://h:1/base/v2/chat');
  });

  it('proxy paths: a leading version segment is Cohere\'s, otherwise /v1', () => {
    const url = (path: string) => prepare({ path }).url;
    assert.equal(url('/v2/rerank'), 'https://api.cohere.com/v2/rerank');
    assert.equal(url('/v1/embed-jobs/abc'), 'https://api.cohere.com/v1/embed-jobs/abc');
    assert.equal(url('/v2?x=1'), 'https://api.cohere.com/v2?x=1');
    assert.equal(url('/rerank'), 'https://api.cohere.com/v1/rerank');
    assert.equal(url('/v2rerank'), 'https://api.cohere.com/v1/v2rerank');
    assert.equal(url('/finetuning/finetuned-models?page_size=1'), 'https://api.cohere.com/v1/finetuning/finetuned-models?page_size=1');
  });

  it("the client's Bearer credential is used when the target has none", () => {
    const target = { provider: 'cohere', settings: {}, clientAuthorization: 'bearer  co-client', customHost: undefined };
    assert.equal(prepare({ target }).headers.authorization, 'Bearer co-client');
  });
});
