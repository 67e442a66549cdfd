// Unit tests of the bedrock adapter's pure parts: eventstream decoding (AWS's published test
// vectors), SigV4 (AWS's published example, checked by the mock's own verifier), and the
// OpenAI ⇄ Converse / InvokeModel translations.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { bedrock, modelSegment } from '../src/providers/bedrock/adapter.js';
import { toConverse } from '../src/providers/bedrock/chat/request.js';
import { fromConverse } from '../src/providers/bedrock/chat/response.js';
import { converseStream } from '../src/providers/bedrock/chat/stream.js';
import { invokeEmbeddings } from '../src/providers/bedrock/embeddings.js';
import { bedrockError } from '../src/providers/bedrock/errors.js';
import { decodeMessage, EventStreamDecoder, EventStreamError } from '../src/providers/bedrock/eventstream.js';
import { signRequest } from '../src/providers/bedrock/sigv4.js';
import type { ProviderCall } from '../src/providers/contract.js';
import type { BedrockSettings } from '../src/providers/bedrock/settings.js';
import { usesLegacyFunctions, type ChatRequest } from '../src/providers/shared/openai-request.js';
import type { GatewayError, Result } from '../src/shared/errors.js';
import { encodeEvent, encodeMessage, verifySigV4 } from './support/mock-bedrock.js';

function value<T>(r: Result<T, GatewayError>): T {
  assert.ok(r.ok, r.ok ? '' : `${r.error.param}: ${r.error.message}`);
  return r.value;
}
function refusal(r: Result<unknown, GatewayError>): GatewayError {
  assert.ok(!r.ok, 'expected a refusal');
  return r.error;
}
const converse = (body: Record<string, unknown>) => toConverse(body as ChatRequest);

// ---- Eventstream: the test vectors of awslabs/aws-c-event-stream (as smithy's codec carries them)

const VECTORS = {
  all_headers:
    '000000cc000000af0fae64ca0a6576656e742d74797065040000a00c0c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e0a626f6f6c2066616c73650109626f6f6c207472756500046279746502cf08627974652062756606001449276d2061206c6974746c6520746561706f74210974696d657374616d70080000000000845fed05696e74313603002a05696e7436340500000000028757b20475756964090102030405060708090a0b0c0d0e0f107b27666f6f273a27626172277daba5f10c',
  empty_message: '000000100000000005c248eb7d98c8ff',
  int32_header: '0000002d0000001041c424b80a6576656e742d74797065040000a00c7b27666f6f273a27626172277d36f480a0',
  payload_no_headers: '0000001d00000000fd528c5a7b27666f6f273a27626172277dc3653936',
  payload_one_str_header:
    '0000003d0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b1',
};
const CORRUPT = {
  corrupted_headers:
    '0000003d0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b61666f6f273a27626172277d8d9c08b1',
  corrupted_header_len:
    '0000003d0000002107fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b1',
  corrupted_length:
    '0000003e0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b1',
  corrupted_payload: '0000001d00000000fd528c5a5b27666f6f273a27626172277dc3653936',
};
const FOO_BAR = "{'foo':'bar'}";

describe('eventstream decoding', () => {
  it('decodes the valid vectors, every header type included', () => {
    const all = decodeMessage(Buffer.from(VECTORS.all_headers, 'hex'));
    assert.equal(all.payload.toString(), FOO_BAR);
    assert.deepEqual(all.headers, {
      'event-type': 40972,
      'content-type': 'application/json',
      'bool false': false,
      'bool true': true,
      byte: -49,
      'byte buf': Buffer.from("I'm a little teapot!"),
      timestamp: new Date(8675309),
      int16: 42,
      int64: 42424242n,
      uuid: '01020304-0506-0708-090a-0b0c0d0e0f10',
    });
    assert.deepEqual(decodeMessage(Buffer.from(VECTORS.empty_message, 'hex')), { headers: {}, payload: Buffer.alloc(0) });
    assert.deepEqual(decodeMessage(Buffer.from(VECTORS.int32_header, 'hex')).headers, { 'event-type': 40972 });
    assert.equal(decodeMessage(Buffer.from(VECTORS.payload_no_headers, 'hex')).payload.toString(), FOO_BAR);
    assert.deepEqual(decodeMessage(Buffer.from(VECTORS.payload_one_str_header, 'hex')).headers, { 'content-type': 'application/json' });
  });

  for (const [name, hex] of Object.entries(CORRUPT)) {
    it(`refuses ${name}`, () => {
      assert.throws(() => new EventStreamDecoder().push(Buffer.from(hex, 'hex')), EventStreamError);
    });
  }

  it('reassembles messages fed one byte at a time', () => {
    const bytes = Buffer.concat(Object.values(VECTORS).map((h) => Buffer.from(h, 'hex')));
    const d = new EventStreamDecoder();
    const got = [];
    for (let i = 0; i < bytes.length; i++) got.push(...d.push(bytes.subarray(i, i + 1)));
    assert.equal(got.length, 5);
    assert.equal(d.pending, 0);
    assert.deepEqual(got.map((m) => m.payload.toString()), [FOO_BAR, '', FOO_BAR, FOO_BAR, FOO_BAR]);
  });

  it('a corrupt prelude fails at once, without waiting for the length it claims', () => {
    const bad = Buffer.from(VECTORS.payload_one_str_header, 'hex');
    bad.writeUInt32BE(0x7fffffff, 0);
    assert.throws(() => new EventStreamDecoder().push(bad.subarray(0, 12)), /prelude CRC mismatch/);
  });

  it("the mock's encoder reproduces a published vector byte for byte", () => {
    assert.equal(encodeMessage({ 'content-type': 'application/json' }, Buffer.from(FOO_BAR)).toString('hex'), VECTORS.payload_one_str_header);
  });
});

// ---- SigV4

describe('SigV4', () => {
  const EXAMPLE = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

  it("the mock's verifier accepts AWS's published get-vanilla example and nothing else", () => {
    const req = {
      method: 'GET',
      path: '/',
      headers: {
        host: 'example.amazonaws.com',
        'x-amz-date': '20150830T123600Z',
        authorization:
          'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
      },
      body: Buffer.alloc(0),
    };
    const at = Date.UTC(2015, 7, 30, 12, 36, 0);
    assert.equal(verifySigV4(req, EXAMPLE, 'us-east-1', 'service', at), null);
    assert.equal(verifySigV4({ ...req, method: 'POST' }, EXAMPLE, 'us-east-1', 'service', at)?.type, 'InvalidSignatureException');
    assert.equal(verifySigV4(req, { ...EXAMPLE, secretAccessKey: 'other' }, 'us-east-1', 'service', at)?.type, 'InvalidSignatureException');
    assert.match(verifySigV4(req, EXAMPLE, 'us-east-1', 'service', at + 10 * 60_000)?.message ?? '', /Signature expired/);
  });

  it('signs an ARN path as sent (each segment encoded again for the canonical URI) and the query', async () => {
    const url = new URL(`http://127.0.0.1:9/model/${encodeURIComponent('arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.x.y-v1:0')}/converse?b=2&a=x%20y`);
    const body = '{"messages":[]}';
    const headers = await signRequest({ method: 'POST', url, headers: { 'content-type': 'application/json' }, body, credentials: EXAMPLE, region: 'us-west-2' });
    const req = { method: 'POST', path: url.pathname + url.search, headers, body: Buffer.from(body) };
    assert.equal(verifySigV4(req, EXAMPLE, 'us-west-2'), null);
    // The same signature does not cover the ARN sent unencoded, nor another body.
    assert.equal(verifySigV4({ ...req, path: decodeURIComponent(url.pathname) }, EXAMPLE, 'us-west-2')?.type, 'InvalidSignatureException');
    assert.equal(verifySigV4({ ...req, body: Buffer.from('{}') }, EXAMPLE, 'us-west-2')?.type, 'InvalidSignatureException');
  });
});

// ---- The adapter's call

describe('prepare', () => {
  const settings: BedrockSettings = { cloud1_access_key_id: 'AKIAIOSFODNN7EXAMPLE', cloud1_secret_access_key: 'secret' };
  const prepare = async (over: Partial<Parameters<typeof bedrock.adapter.prepare>[0]>): Promise<Result<ProviderCall, GatewayError>> =>
    bedrock.adapter.prepare({
      target: { provider: 'bedrock', settings, clientAuthorization: undefined, customHost: undefined },
      endpoint: 'chat',
      path: '/chat/completions',
      body: { model: 'amazon.nova-lite-v1:0', messages: [{ role: 'user', content: 'hi' }] },
      ...over,
    });

  it('without custom_host: bedrock-runtime in the region, us-east-1 by default', async () => {
    const call = value(await prepare({}));
    assert.equal(call.url, 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse');
    assert.equal(call.headers.host, 'bedrock-runtime.us-east-1.amazonaws.com');
    assert.match(call.headers.authorization!, /\/us-east-1\/bedrock\/aws4_request/);
    const eu = value(await prepare({ target: { provider: 'bedrock', settings: { ...settings, cloud1_region: 'eu-central-1' }, clientAuthorization: undefined, customHost: undefined } }));
    assert.match(eu.url, /^https:\/\/bedrock-runtime\.eu-central-1\.amazonaws\.com\//);
  });

  it('the proxy reads a streamed body whole, to sign it, and sends those bytes', async () => {
    const call = value(await prepare({ endpoint: 'proxy', path: '/x', body: null, method: 'PUT', raw: Readable.from([Buffer.from('ab'), Buffer.from('c')]) }));
    assert.equal(call.body?.toString(), 'abc');
    assert.equal(call.kind, 'relayed', 'the answer is relayed as Bedrock sent it');
    assert.equal(call.headers['x-amz-content-sha256'], 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it("a proxied body over InvokeModel's 25 MB limit → 413, not read on", async () => {
    const e = refusal(await prepare({ endpoint: 'proxy', path: '/x', body: null, method: 'POST', raw: Readable.from([Buffer.alloc(20_000_000), Buffer.alloc(5_000_001)]) }));
    assert.equal(e.status, 413);
  });

  it('a custom host that is not a URL → 400 naming custom_host', async () => {
    const e = refusal(await prepare({ target: { provider: 'bedrock', settings, clientAuthorization: undefined, customHost: 'not a url' } }));
    assert.equal(e.param, 'custom_host');
  });

  it('passthrough (no parsed body) cannot be translated: 400', async () => {
    assert.equal(refusal(await prepare({ body: null })).param, 'passthrough');
  });

  it('an ARN, raw or already encoded, is encoded exactly once', () => {
    const arn = 'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0';
    assert.equal(modelSegment(arn), 'arn%3Aaws%3Abedrock%3Aus-east-1%3A%3Afoundation-model%2Fanthropic.claude-3-haiku-20240307-v1%3A0');
    assert.equal(modelSegment(encodeURIComponent(arn)), modelSegment(arn));
  });
});

// ---- Chat request

describe('OpenAI chat → Converse', () => {
  const base = { model: 'anthropic.claude-3-haiku-20240307-v1:0' };
  const convert = (body: Record<string, unknown>) => value(converse({ ...base, ...body }));

  it('legacy functions: calls get ids the function results reuse; function_call picks the tool', () => {
    const body = {
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, function_call: { name: 'weather', arguments: '{"city":"Oslo"}' } },
        { role: 'function', name: 'weather', content: 'cold' },
      ],
      functions: [{ name: 'weather', parameters: { type: 'object' } }],
      function_call: { name: 'weather' },
    };
    const request = convert(body);
    assert.equal(usesLegacyFunctions(body as unknown as ChatRequest), true);
    assert.deepEqual(request.messages.slice(1), [
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'call_fn_1', name: 'weather', input: { city: 'Oslo' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'call_fn_1', content: [{ text: 'cold' }] } }] },
    ]);
    assert.deepEqual(request.toolConfig, { tools: [{ toolSpec: { name: 'weather', inputSchema: { json: { type: 'object' } } } }], toolChoice: { tool: { name: 'weather' } } });
  });

  it('a function message that answers no call → 400 naming it', () => {
    const e = refusal(converse({ ...base, messages: [{ role: 'user', content: 'x' }, { role: 'function', name: 'f', content: 'y' }] }));
    assert.equal(e.param, 'messages[1].name');
  });

  it("tool_choice none: no tools at all, unless the history holds tool blocks (Converse then needs toolConfig)", () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    assert.equal(convert({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'none' }).toolConfig, undefined);
    const withHistory = convert({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '' } }] },
        { role: 'tool', tool_call_id: 't1', content: '' },
      ],
      tools,
      tool_choice: 'none',
    });
    assert.deepEqual(withHistory.toolConfig, { tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object', properties: {} } } } }] });
    // Empty arguments are an empty input; an empty result is an empty list (Converse refuses blank text).
    assert.deepEqual(withHistory.messages[1]!.content, [{ toolUse: { toolUseId: 't1', name: 'f', input: {} } }]);
    assert.deepEqual(withHistory.messages[2]!.content, [{ toolResult: { toolUseId: 't1', content: [] } }]);
  });

  it('tool_choice auto and a named function; strict tools; cache_control → cachePoint', () => {
    const tools = [{ type: 'function', function: { name: 'f', strict: true, parameters: { type: 'object' } }, cache_control: { type: 'ephemeral' } }];
    assert.deepEqual(convert({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'auto' }).toolConfig, {
      tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } }, strict: true } }, { cachePoint: { type: 'default' } }],
      toolChoice: { auto: {} },
    });
    const named = convert({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice: { type: 'function', function: { name: 'f' } } });
    assert.deepEqual(named.toolConfig?.toolChoice, { tool: { name: 'f' } });
  });

  it('roles: system and developer lifted, consecutive turns merged, empty assistant turns left out', () => {
    const request = convert({
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'rules', cache_control: { type: 'ephemeral' } }] },
        { role: 'user', content: 'a' },
        { role: 'developer', content: 'more rules' },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: null },
        { role: 'assistant', content: [{ type: 'text', text: 'c' }, { type: 'refusal', refusal: 'no' }] },
      ],
    });
    assert.deepEqual(request.system, [{ text: 'rules' }, { cachePoint: { type: 'default' } }, { text: 'more rules' }]);
    assert.deepEqual(request.messages, [
      { role: 'user', content: [{ text: 'a' }, { text: 'b' }] },
      { role: 'assistant', content: [{ text: 'c' }, { text: 'no' }] },
    ]);
  });

  it('content parts: s3 images, PDF files, audio; unsupported ones → 400 naming the part', () => {
    const request = convert({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 's3://bucket/cat.JPG' } },
            { type: 'file', file: { filename: 'Q3 report (final).v2.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          ],
        },
      ],
    });
    assert.deepEqual(request.messages[0]!.content, [
      { image: { format: 'jpeg', source: { s3Location: { uri: 's3://bucket/cat.JPG' } } } },
      { document: { format: 'pdf', name: 'Q3 report (final)-v2', source: { bytes: 'JVBERi0=' } } },
      { audio: { format: 'wav', source: { bytes: 'UklGRg==' } } },
    ]);
    const part = (p: unknown) => converse({ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, p] }] });
    assert.equal(refusal(part({ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } })).param, 'messages[0].content[1].image_url.url');
    assert.match(refusal(part({ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } })).message, /image\/bmp/);
    assert.equal(refusal(part({ type: 'file', file: { file_id: 'file-1' } })).param, 'messages[0].content[1].file.file_data');
    assert.equal(refusal(part({ type: 'video_url' })).param, 'messages[0].content[1].type');
  });

  it('tool calls without a name, or with arguments that are not JSON text → 400 naming them', () => {
    const e = refusal(
      converse({
        ...base,
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{oops' } }] },
        ],
      }),
    );
    assert.equal(e.param, 'messages[1].tool_calls[0].function.arguments');
    const notText = refusal(
      toConverse({ ...base, messages: [{ role: 'user', content: 'x' }, { role: 'assistant', tool_calls: [{ id: 't', function: { name: 'f', arguments: { a: 1 } } }] }] }),
    );
    assert.match(notText.message, /must be a JSON string/);
    const noName = refusal(converse({ ...base, messages: [{ role: 'user', content: 'x' }, { role: 'assistant', tool_calls: [{ id: 't' }] }] }));
    assert.equal(noName.param, 'messages[1].tool_calls[0].function.name');
  });

  it('sampling: max_completion_tokens wins over max_tokens; stop lists; json_object; service tier', () => {
    const request = convert({
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 10,
      max_completion_tokens: 20,
      stop: ['a', 'b'],
      response_format: { type: 'json_object' },
      service_tier: 'flex',
    });
    assert.deepEqual(request.inferenceConfig, { maxTokens: 20, stopSequences: ['a', 'b'] });
    assert.deepEqual(request.outputConfig, { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: '{"type":"object"}', name: 'json_object' } } } });
    assert.deepEqual(request.serviceTier, { type: 'flex' });
    assert.equal(convert({ messages: [{ role: 'user', content: 'x' }], service_tier: 'auto', response_format: { type: 'text' } }).serviceTier, undefined);
  });

  it("model parameters and Converse's own fields: thinking and top_k ride along, native fields pass as given", () => {
    const request = convert({
      messages: [{ role: 'user', content: 'x' }],
      thinking: { type: 'enabled', budget_tokens: 1024 },
      additionalModelRequestFields: { top_k: 3 },
      guardrailConfig: { guardrailIdentifier: 'g1', guardrailVersion: '1' },
      logit_bias: {},
      seed: 1,
      store: true,
    });
    assert.deepEqual(request.additionalModelRequestFields, { thinking: { type: 'enabled', budget_tokens: 1024 }, top_k: 3 });
    assert.deepEqual(request.guardrailConfig, { guardrailIdentifier: 'g1', guardrailVersion: '1' });
    assert.deepEqual(Object.keys(request).sort(), ['additionalModelRequestFields', 'guardrailConfig', 'messages']);
  });

  it('what Converse cannot do → 400 naming the field', () => {
    const msgs = [{ role: 'user', content: 'x' }];
    assert.equal(refusal(converse({ ...base, messages: msgs, logprobs: true })).param, 'logprobs');
    assert.equal(refusal(converse({ ...base, messages: msgs, modalities: ['text', 'audio'] })).param, 'modalities');
    assert.equal(refusal(converse({ ...base, messages: msgs, tools: [{ type: 'custom', custom: { name: 'x' } }] })).param, 'tools[0].type');
    assert.equal(refusal(converse({ ...base, messages: msgs, metadata: { n: 1 } })).param, 'metadata');
    assert.equal(refusal(converse({ messages: msgs })).param, 'model');
  });
});

// ---- Chat answers

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

// ---- The stream translator

async function translate(frames: Buffer[], legacyFunctions = false): Promise<string[]> {
  const out: string[] = [];
  const t = converseStream('m', legacyFunctions);
  t.on('data', (d: Buffer) => out.push(d.toString()));
  const done = new Promise((resolve) => t.once('close', resolve).once('end', resolve));
  for (const f of frames) t.write(f);
  t.end();
  await done;
  return out.join('').split('\n\n').filter((e) => e !== '').map((e) => e.slice('data: '.length));
}

describe('ConverseStream → chunks', () => {
  const start = encodeEvent('messageStart', { role: 'assistant' });
  const stop = encodeEvent('messageStop', { stopReason: 'end_turn' });

  it('reasoning deltas, unknown events ignored, usage last when asked, then [DONE]', async () => {
    const events = await translate(
      [
        start,
        encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'think' } } }),
        encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig' } } }),
        encodeEvent('someFutureEvent', { x: 1 }),
        encodeEvent('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'ok' } }),
        stop,
        encodeEvent('metadata', { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 }, metrics: { latencyMs: 1 } }),
      ],
    );
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.deepEqual(chunks.map((c) => c.choices[0]?.delta ?? 'usage'), [{ role: 'assistant', content: '' }, { reasoning_content: 'think' }, { content: 'ok' }, {}, 'usage']);
    assert.deepEqual(chunks.at(-1).usage, { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, prompt_tokens_details: { cached_tokens: 0 } });
  });

  it('legacy functions stream function_call deltas', async () => {
    const events = await translate(
      [
        start,
        encodeEvent('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't', name: 'f' } } }),
        encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{}' } } }),
        encodeEvent('messageStop', { stopReason: 'tool_use' }),
      ],
      true,
    );
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e).choices[0]);
    assert.deepEqual(chunks.slice(1).map((c) => [c.delta, c.finish_reason]), [
      [{ function_call: { name: 'f', arguments: '' } }, null],
      [{ function_call: { arguments: '{}' } }, null],
      [{}, 'function_call'],
    ]);
  });

  it('legacy functions stream only the first call, as the whole answer does', async () => {
    const events = await translate(
      [
        start,
        encodeEvent('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't1', name: 'f' } } }),
        encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"a":1}' } } }),
        encodeEvent('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't2', name: 'g' } } }),
        encodeEvent('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"b":2}' } } }),
        encodeEvent('messageStop', { stopReason: 'tool_use' }),
      ],
      true,
    );
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e).choices[0]);
    assert.deepEqual(chunks.slice(1).map((c) => [c.delta, c.finish_reason]), [
      [{ function_call: { name: 'f', arguments: '' } }, null],
      [{ function_call: { arguments: '{"a":1}' } }, null],
      [{}, 'function_call'],
    ]);
  });

  const ends: [string, Buffer[], RegExp][] = [
    ['a body cut inside a message', [start, stop.subarray(0, 20)], /ended inside a message/],
    ['a body that ends before messageStop', [start], /ended before messageStop/],
    ['an error message', [start, encodeMessage({ ':message-type': 'error', ':error-code': 'InternalFailure', ':error-message': 'boom' }, Buffer.alloc(0))], /^boom$/],
    ['an exception', [start, encodeMessage({ ':message-type': 'exception', ':exception-type': 'modelStreamErrorException' }, Buffer.from('{"message":"model broke"}'))], /^model broke$/],
  ];
  for (const [name, frames, message] of ends) {
    it(`${name} ends with an error event and no [DONE]`, async () => {
      const events = await translate(frames);
      const last = JSON.parse(events.at(-1)!) as { error: { message: string } };
      assert.match(last.error.message, message);
      assert.ok(!events.includes('[DONE]'));
    });
  }
});

// ---- Embeddings and errors

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

describe('errors', () => {
  it('message from message or Message, code from x-amzn-ErrorType, status kept', () => {
    const e = bedrockError(424, Buffer.from('{"Message":"model failed"}'), { 'x-amzn-errortype': 'ModelErrorException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
    assert.deepEqual([e.status, e.code, e.message], [424, 'ModelErrorException', 'model failed']);
    const html = bedrockError(502, Buffer.from('<html>Bad Gateway</html>'));
    assert.deepEqual([html.status, html.code, html.message, html.type], [502, 'bad_gateway', '<html>Bad Gateway</html>', 'upstream_error']);
  });
});
