// The conformance suite every translator passes (contract.ts). Providers are found in the
// registry, so a provider added there cannot skip it: a translator without a fixture below
// fails. Pure: no HTTP, no gateway. Every translator must
// - translate the same OpenAI inputs, or refuse them with a 400 whose param names the parameter;
// - name every OpenAI parameter in its policy table (docs/providers.md shows it);
// - end every whole stream with the usage chunk and [DONE], and every cut or broken one with an
//   error event and no [DONE];
// - read its provider's whole answers, and answer an unreadable one with a 502 bad_upstream_response.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { encodeEvent, encodeMessage } from '../../test/support/mock-bedrock.js';
import type { Answer, ChatTranslator, EmbeddingsTranslator, Provider, StreamedAnswer, WholeAnswer } from './contract.js';
import { loadProviders } from './registry.js';
import { applyPolicy } from './shared/params.js';
import { HELD_ENTRY, MAX_HELD_CHARS } from './shared/stream.js';

/** Every parameter of OpenAI's chat completions request and embeddings request. */
const OPENAI_CHAT_PARAMS = [
  'model', 'messages', 'audio', 'frequency_penalty', 'function_call', 'functions', 'logit_bias', 'logprobs', 'max_completion_tokens',
  'max_tokens', 'metadata', 'modalities', 'n', 'parallel_tool_calls', 'prediction', 'presence_penalty', 'prompt_cache_key',
  'reasoning_effort', 'response_format', 'safety_identifier', 'seed', 'service_tier', 'stop', 'store', 'stream', 'stream_options',
  'temperature', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'user', 'verbosity', 'web_search_options',
];
const OPENAI_EMBEDDINGS_PARAMS = ['model', 'input', 'encoding_format', 'dimensions', 'user'];

/** What a translator's provider sends back, in its own format. */
interface Fixture {
  /** The model requests name (Bedrock's embeddings pick the model family by it). */
  model: string;
  /** A whole 2xx answer. */
  whole: Buffer;
  /** A streamed answer, frame by frame; `end` is the index of the frame that is the end marker. */
  stream?: {
    frames: Buffer[];
    end: number;
    garbage: Buffer;
    error: Buffer;
    /** A frame that makes the translator keep an entry until the end: tool call or candidate `i`. */
    entry: (i: number) => Buffer;
  };
}

const sse = (event: string | null, data: unknown): Buffer =>
  Buffer.from(`${event === null ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);

const ANTHROPIC: Fixture = {
  model: 'claude-sonnet-4-5',
  whole: Buffer.from(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } })),
  stream: {
    frames: [
      sse('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 3, output_tokens: 1 } } }),
      sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } }),
      sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } }),
      sse('message_stop', { type: 'message_stop' }),
    ],
    end: 5,
    garbage: sse('content_block_delta', '{not json'),
    error: sse('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    entry: (i) => sse('content_block_start', { type: 'content_block_start', index: i + 1, content_block: { type: 'tool_use', id: `t${i}`, name: 'f', input: {} } }),
  },
};

const bedrockEvent = (event: string, payload: Record<string, unknown>): Buffer => encodeEvent(event, payload);

const BEDROCK_CHAT: Fixture = {
  model: 'anthropic.claude-3-haiku-20240307-v1:0',
  whole: Buffer.from(JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'hi' }] } }, stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 } })),
  stream: {
    frames: [
      bedrockEvent('messageStart', { role: 'assistant' }),
      bedrockEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'hi' } }),
      bedrockEvent('contentBlockStop', { contentBlockIndex: 0 }),
      bedrockEvent('messageStop', { stopReason: 'end_turn' }),
      bedrockEvent('metadata', { usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 }, metrics: { latencyMs: 1 } }),
    ],
    end: 3,
    // A frame whose CRC does not match its bytes.
    garbage: Buffer.from('0000001d00000000fd528c5a5b27666f6f273a27626172277dc3653936', 'hex'),
    error: encodeMessage({ ':message-type': 'exception', ':exception-type': 'throttlingException' }, Buffer.from('{"message":"slow down"}')),
    entry: (i) => bedrockEvent('contentBlockStart', { contentBlockIndex: i + 1, start: { toolUse: { toolUseId: `t${i}`, name: 'f' } } }),
  },
};

const BEDROCK_EMBEDDINGS: Fixture = {
  model: 'amazon.titan-embed-text-v2:0',
  whole: Buffer.from(JSON.stringify({ embedding: [0.5, 0.25], inputTextTokenCount: 2 })),
};

const COHERE: Fixture = {
  model: 'command-r',
  whole: Buffer.from(JSON.stringify({ id: 'c1', finish_reason: 'COMPLETE', message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }] }, usage: { tokens: { input_tokens: 3, output_tokens: 1 } } })),
  stream: {
    frames: [
      sse('message-start', { type: 'message-start', id: 'c1' }),
      sse('content-delta', { type: 'content-delta', index: 0, delta: { message: { content: { text: 'hi' } } } }),
      sse('message-end', { type: 'message-end', delta: { finish_reason: 'COMPLETE', usage: { tokens: { input_tokens: 3, output_tokens: 1 } } } }),
      sse(null, '[DONE]'),
    ],
    end: 2,
    garbage: sse('content-delta', '{not json'),
    error: sse('message-end', { type: 'message-end', delta: { finish_reason: 'ERROR', error: 'internal model failure' } }),
    entry: (i) => sse('tool-call-start', { type: 'tool-call-start', index: i, delta: { message: { tool_calls: { id: `t${i}`, type: 'function', function: { name: 'f', arguments: '' } } } } }),
  },
};

const COHERE_EMBEDDINGS: Fixture = {
  model: 'embed-v4.0',
  whole: Buffer.from(JSON.stringify({ id: 'e', embeddings: { float: [[0.5, 0.25]] }, meta: { tokens: { input_tokens: 2 } } })),
};

const GEMINI: Fixture = {
  model: 'gemini-2.5-flash',
  whole: Buffer.from(JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 } })),
  stream: {
    frames: [
      sse(null, { candidates: [{ content: { role: 'model', parts: [{ text: 'h' }] }, index: 0 }], usageMetadata: { promptTokenCount: 3 } }),
      sse(null, { candidates: [{ content: { role: 'model', parts: [{ text: 'i' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 } }),
    ],
    end: 1,
    garbage: sse(null, '{not json'),
    error: sse(null, { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }),
    entry: (i) => sse(null, { candidates: [{ content: { role: 'model', parts: [{ text: 'h' }] }, index: i + 1 }] }),
  },
};

const GEMINI_EMBEDDINGS: Fixture = { model: 'text-embedding-004', whole: Buffer.from(JSON.stringify({ embeddings: [{ values: [0.5, 0.25] }] })) };
const PREDICT_EMBEDDINGS: Fixture = {
  model: 'text-embedding-005',
  whole: Buffer.from(JSON.stringify({ predictions: [{ embeddings: { values: [0.5, 0.25], statistics: { token_count: 2 } } }] })),
};

/** By provider, API and endpoint, as the registry's providers name their translators. */
const FIXTURES: Readonly<Record<string, Fixture>> = {
  'anthropic/messages/chat': ANTHROPIC,
  'bedrock/converse/chat': BEDROCK_CHAT,
  'bedrock/invoke-model/embeddings': BEDROCK_EMBEDDINGS,
  'cohere/v2/chat': COHERE,
  'cohere/v2/embeddings': COHERE_EMBEDDINGS,
  'google/gemini/chat': GEMINI,
  'google/gemini/embeddings': GEMINI_EMBEDDINGS,
  'vertex-ai/google/chat': GEMINI,
  'vertex-ai/google/embeddings': PREDICT_EMBEDDINGS,
  'vertex-ai/anthropic/chat': ANTHROPIC,
};

const TOOL = { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };

/** OpenAI chat inputs: the parameter each is about, and the body's fields besides model and messages. */
const CHAT_CASES: readonly (readonly [string, Record<string, unknown>])[] = [
  ['tools', { tools: [TOOL] }],
  ['tool_choice', { tools: [TOOL], tool_choice: 'required' }],
  ['tool_choice', { tools: [TOOL], tool_choice: 'none' }],
  ['tool_choice', { tools: [TOOL], tool_choice: { type: 'function', function: { name: 'get_weather' } } }],
  ['parallel_tool_calls', { tools: [TOOL], parallel_tool_calls: false }],
  ['functions', { functions: [TOOL.function], function_call: 'auto' }],
  ['function_call', { functions: [TOOL.function], function_call: { name: 'get_weather' } }],
  ['messages', { messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] }],
  ['messages', { messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }] }],
  ['messages', { messages: [{ role: 'system', content: 'be brief' }, { role: 'developer', content: 'be kind' }, { role: 'user', content: 'hi' }] }],
  ['messages', {
    tools: [TOOL],
    messages: [
      { role: 'user', content: 'weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '-3°C' },
    ],
  }],
  ['messages', { messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '[1]' } }] }] }],
  ['response_format', { response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false } } } }],
  ['response_format', { response_format: { type: 'json_object' } }],
  ['n', { n: 2 }],
  ['n', { n: 1 }],
  ['stop', { stop: ['END'] }],
  ['logprobs', { logprobs: true, top_logprobs: 2 }],
  ['top_logprobs', { logprobs: true, top_logprobs: 2 }],
  ['seed', { seed: 7 }],
  ['temperature', { temperature: 0.5 }],
  ['top_p', { top_p: 0.9 }],
  ['max_tokens', { max_tokens: 100 }],
  ['max_completion_tokens', { max_completion_tokens: 100 }],
  ['presence_penalty', { presence_penalty: 0.5 }],
  ['frequency_penalty', { frequency_penalty: 0.5 }],
  ['logit_bias', { logit_bias: { '50256': -100 } }],
  ['user', { user: 'u-1' }],
  ['safety_identifier', { safety_identifier: 'u-1' }],
  ['metadata', { metadata: { team: 'a' } }],
  ['store', { store: true }],
  ['service_tier', { service_tier: 'auto' }],
  ['modalities', { modalities: ['text', 'audio'] }],
  ['audio', { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }],
  ['prediction', { prediction: { type: 'content', content: 'x' } }],
  ['web_search_options', { web_search_options: {} }],
  ['reasoning_effort', { reasoning_effort: 'low' }],
  ['verbosity', { verbosity: 'low' }],
  ['prompt_cache_key', { prompt_cache_key: 'k' }],
  ['stream', { stream: true }],
  ['stream_options', { stream: true, stream_options: { include_usage: true } }],
  ['conformance_unknown_parameter', { conformance_unknown_parameter: 1 }],
];

const EMBEDDINGS_CASES: readonly (readonly [string, Record<string, unknown>])[] = [
  ['input', { input: 'hello' }],
  ['input', { input: ['hello'] }],
  ['input', { input: [1, 2, 3] }],
  ['encoding_format', { input: 'hello', encoding_format: 'base64' }],
  ['dimensions', { input: 'hello', dimensions: 256 }],
  ['user', { input: 'hello', user: 'u-1' }],
  ['stream', { input: 'hello', stream: true }],
  ['conformance_unknown_parameter', { input: 'hello', conformance_unknown_parameter: 1 }],
];

/** A 400 names one of the parameters sent (the case's), or a place inside one. */
function namesParam(param: string | null, keys: readonly string[]): boolean {
  return keys.some((key) => param === key || param?.startsWith(`${key}.`) === true || param?.startsWith(`${key}[`) === true);
}

/** Runs provider bytes through a translated stream; the data of each event it writes. */
async function run(answer: StreamedAnswer, frames: Buffer[], piece = 7): Promise<string[]> {
  let out = '';
  // Bytes arrive in pieces that split events anywhere.
  const bytes = Buffer.concat(frames);
  const pieces: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += piece) pieces.push(bytes.subarray(i, i + piece));
  for await (const chunk of Readable.from(pieces).pipe(answer.stream())) out += (chunk as Buffer).toString('utf8');
  return out.split('\n\n').filter((e) => e !== '').map((e) => e.replace(/^data: /, ''));
}

function assertEndsInError(events: string[], what: string, code?: string): void {
  assert.ok(!events.includes('[DONE]'), `${what}: no [DONE] after a cut or broken stream`);
  const last = JSON.parse(events.at(-1) ?? 'null') as { error?: { code?: unknown } } | null;
  assert.ok(last?.error !== undefined, `${what}: ends in an error event`);
  if (code !== undefined) assert.equal(last.error.code, code, what);
}

function assertWhole(events: string[], what: string): void {
  assert.equal(events.at(-1), '[DONE]', `${what}: a whole stream ends in [DONE]`);
  assert.ok(!events.some((e) => e.includes('"error"')), `${what}: no error event`);
  const usage = JSON.parse(events.at(-2)!) as { choices: unknown[]; usage?: Record<string, unknown> };
  assert.deepEqual(usage.choices, [], `${what}: the usage chunk comes last`);
  for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens']) assert.equal(typeof usage.usage?.[k], 'number', `${what}: usage.${k}`);
}

function streamed(translator: ChatTranslator, body: Record<string, unknown>): StreamedAnswer {
  const r = translator.request({ ...body, stream: true });
  assert.ok(r.ok && r.value.answer.streamed);
  return r.value.answer;
}

function whole(translator: ChatTranslator | EmbeddingsTranslator, body: Record<string, unknown>): WholeAnswer {
  const r = translator.request(body);
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  const answer: Answer = r.value.answer;
  assert.ok(!answer.streamed);
  return answer;
}

const PROVIDERS: Readonly<Record<string, Provider>> = await loadProviders();

describe('provider conformance', () => {
  it('every translator has a fixture, and every fixture a translator', () => {
    const keys: string[] = [];
    for (const [name, p] of Object.entries(PROVIDERS)) {
      for (const [api, t] of Object.entries(p.translators)) for (const endpoint of Object.keys(t)) keys.push(`${name}/${api}/${endpoint}`);
    }
    assert.deepEqual(keys.sort(), Object.keys(FIXTURES).sort());
  });

  // Discovered from the registry, so a new provider's translators get their own tests.
  for (const [name, p] of Object.entries(PROVIDERS)) {
    for (const [api, translators] of Object.entries(p.translators)) {
      const chat = translators.chat;
      if (chat !== undefined) {
        const key = `${name}/${api}/chat`;
        const fixture = FIXTURES[key];
        describe(key, () => {
          const base: Record<string, unknown> = { model: fixture?.model ?? 'm', messages: [{ role: 'user', content: 'hi' }] };

          it('its policy names every OpenAI chat parameter', () => {
            const missing = OPENAI_CHAT_PARAMS.filter((k) => chat.params.rules[k] === undefined);
            assert.deepEqual(missing, [], `${key}: add these to the policy table`);
          });

          it('translates each OpenAI input or refuses it with a 400 naming the parameter', () => {
            for (const [param, fields] of CHAT_CASES) {
              const body = { ...base, ...fields };
              const r = chat.request(body);
              const ruled = applyPolicy(body, chat.params, name);
              if (r.ok) {
                assert.ok(ruled.ok, `${key} ${param}: translated although its policy refuses it`);
                assert.equal(typeof JSON.parse(r.value.body), 'object', `${key} ${param}: the body is JSON`);
                assert.equal(r.value.answer.streamed, body.stream === true, `${key} ${param}: streamed as asked`);
              } else {
                assert.equal(r.error.status, 400, `${key} ${param}: ${r.error.message}`);
                assert.ok(namesParam(r.error.param, Object.keys(fields)), `${key} ${param}: the 400 names ${r.error.param}`);
              }
            }
          });

          it('reads a whole answer; an unreadable one is a 502 bad_upstream_response; errors keep their status', () => {
            assert.ok(fixture !== undefined, `no conformance fixture for ${key}`);
            const answer = whole(chat, base);
            const read = answer.response(fixture.whole, {});
            assert.ok(read.ok, read.ok ? '' : read.error.message);
            const completion = JSON.parse(read.value) as { object: string; choices: { message: { role: string } }[]; usage: Record<string, number> };
            assert.equal(completion.object, 'chat.completion');
            assert.equal(completion.choices[0]?.message.role, 'assistant');
            assert.equal(typeof completion.usage.total_tokens, 'number');
            const bad = answer.response(Buffer.from('<html>Bad gateway</html>'), {});
            assert.ok(!bad.ok && bad.error.status === 502 && bad.error.code === 'bad_upstream_response');
            assert.equal(answer.error(503, Buffer.from('<html>Unavailable</html>'), {}).status, 503);
          });

          it('a whole stream ends with the usage chunk and [DONE]; the usage chunk is stripped unless asked for', async () => {
            assert.ok(fixture?.stream !== undefined, `no conformance stream for ${key}`);
            assertWhole(await run(streamed(chat, base), fixture.stream.frames), key);
            assert.equal(streamed(chat, base).addedUsage, true);
            assert.equal(streamed(chat, { ...base, stream_options: { include_usage: true } }).addedUsage, false);
          });

          it('a stream cut anywhere before its end marker ends in an error event, never [DONE]', async () => {
            const { frames, end } = fixture!.stream!;
            const bytes = Buffer.concat(frames);
            const endsAt = Buffer.concat(frames.slice(0, end + 1)).length;
            // At each frame's start, inside it, and before its last byte; the end marker itself only while its data is cut
            // (an SSE event without its closing blank line still counts).
            const cuts = new Set<number>([0]);
            for (let i = 0, at = 0; i <= end; at += frames[i]!.length, i++) {
              cuts.add(at);
              cuts.add(at + Math.floor(frames[i]!.length / 2));
              if (i < end) cuts.add(at + frames[i]!.length - 1);
            }
            for (const cut of cuts) {
              if (cut >= endsAt) continue;
              assertEndsInError(await run(streamed(chat, base), [bytes.subarray(0, cut)]), `${key} cut at byte ${cut}`);
            }
            assertEndsInError(await run(streamed(chat, base), [bytes.subarray(0, Buffer.concat(frames.slice(0, end)).length)]), `${key} before its end marker`, 'incomplete_stream');
          });

          it("an unreadable event, or the provider's own error event, ends the stream in an error event", async () => {
            const { frames, garbage, error } = fixture!.stream!;
            assertEndsInError(await run(streamed(chat, base), [frames[0]!, garbage, ...frames.slice(1)]), `${key} garbage`, 'bad_upstream_stream');
            assertEndsInError(await run(streamed(chat, base), [frames[0]!, error, ...frames.slice(1)]), `${key} error event`);
          });

          it('a stream that makes it keep more than the gateway holds (tool calls, candidates) ends in a 502 upstream_answer_too_large', async () => {
            const { frames, entry } = fixture!.stream!;
            const entries = Array.from({ length: MAX_HELD_CHARS / HELD_ENTRY + 1 }, (_, i) => entry(i));
            const events = await run(streamed(chat, base), [frames[0]!, ...entries, ...frames.slice(1)], 1 << 16);
            assertEndsInError(events, `${key} entries`, 'upstream_answer_too_large');
          });
        });
      }

      const embeddings = translators.embeddings;
      if (embeddings !== undefined) {
        const key = `${name}/${api}/embeddings`;
        const fixture = FIXTURES[key];
        describe(key, () => {
          const base = { model: fixture?.model ?? 'm' };

          it('its policy names every OpenAI embeddings parameter', () => {
            assert.deepEqual(OPENAI_EMBEDDINGS_PARAMS.filter((k) => embeddings.params.rules[k] === undefined), []);
          });

          it('translates each OpenAI input or refuses it with a 400 naming the parameter', () => {
            for (const [param, fields] of EMBEDDINGS_CASES) {
              const r = embeddings.request({ ...base, ...fields });
              if (r.ok) {
                assert.equal(typeof JSON.parse(r.value.body), 'object');
                assert.equal(r.value.answer.streamed, false);
              } else {
                assert.equal(r.error.status, 400, `${key} ${param}: ${r.error.message}`);
                assert.ok(namesParam(r.error.param, Object.keys(fields)), `${key} ${param}: the 400 names ${r.error.param}`);
              }
            }
            const tokens = embeddings.request({ ...base, input: [1, 2, 3] });
            assert.ok(!tokens.ok && tokens.error.param === 'input', `${key}: token ids are refused`);
          });

          it('reads a whole answer, as floats or base64; an unreadable one is a 502 bad_upstream_response', () => {
            assert.ok(fixture !== undefined, `no conformance fixture for ${key}`);
            const floats = whole(embeddings, { ...base, input: 'hello' }).response(fixture.whole, {});
            assert.ok(floats.ok, floats.ok ? '' : floats.error.message);
            assert.deepEqual((JSON.parse(floats.value) as { data: { embedding: unknown }[] }).data[0]?.embedding, [0.5, 0.25]);
            const b64 = whole(embeddings, { ...base, input: 'hello', encoding_format: 'base64' }).response(fixture.whole, {});
            assert.ok(b64.ok && typeof (JSON.parse(b64.value) as { data: { embedding: unknown }[] }).data[0]?.embedding === 'string');
            const bad = whole(embeddings, { ...base, input: 'hello' }).response(Buffer.from('<html>'), {});
            assert.ok(!bad.ok && bad.error.code === 'bad_upstream_response');
          });
        });
      }
    }
  }
});
