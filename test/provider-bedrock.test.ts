// Black-box tests of the bedrock provider: the official OpenAI SDK pointed at a real gateway
// in front of a mock Bedrock Runtime that verifies SigV4 with the known secret and streams
// ConverseStream answers in the binary eventstream framing.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { APIError } from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { encodeEvent, MOCK_REGION, startMockBedrock, type MockBedrock } from './support/mock-bedrock.js';
import { assertEnvelope } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const CREDS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const CLAUDE = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const ARN = 'arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20240620-v1:0';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('bedrock provider', () => {
  const gw = useGateway();
  let mock: MockBedrock;
  let client: OpenAI;

  /** A config for the mock, with overrides (undefined removes a key). */
  const config = (over: Record<string, unknown> = {}): string => {
    const c: Record<string, unknown> = {
      provider: 'bedrock',
      custom_host: mock.url,
      cloud1_access_key_id: CREDS.accessKeyId,
      cloud1_secret_access_key: CREDS.secretAccessKey,
      cloud1_region: MOCK_REGION,
      ...over,
    };
    for (const k of Object.keys(c)) if (c[k] === undefined) delete c[k];
    return JSON.stringify(c);
  };
  const sdk = (cfg = config()): OpenAI =>
    new OpenAI({ apiKey: 'unused', baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': cfg } });
  const upstream = (): any => {
    assert.equal(mock.requests.length, 1, 'one upstream request');
    return mock.requests[0]!;
  };

  before(async () => {
    mock = await startMockBedrock(CREDS);
    client = sdk();
  });
  afterEach(() => mock.reset());
  after(async () => {
    await mock.close();
  });

  describe('chat through Converse', () => {
    it('answers as a chat.completion; Bedrock sees a signed Converse request', async () => {
      const res = await client.chat.completions.create({
        model: CLAUDE,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'developer', content: 'no jokes' },
          { role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
        ],
        max_completion_tokens: 50,
        temperature: 0.3,
        top_p: 0.9,
        stop: 'END',
        user: 'user-42',
        metadata: { team: 'search' },
      });
      assert.equal(res.object, 'chat.completion');
      assert.equal(res.model, CLAUDE);
      assert.match(res.id, /^chatcmpl-/);
      assert.equal(res.choices[0]?.message.content, '[bedrock] echo: what is this');
      assert.equal(res.choices[0]?.finish_reason, 'stop');
      assert.deepEqual({ p: res.usage?.prompt_tokens, c: res.usage?.completion_tokens, t: res.usage?.total_tokens }, { p: 3, c: 5, t: 8 });

      const up = upstream();
      assert.equal(up.method, 'POST');
      assert.equal(up.path, '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
      assert.match(up.headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=[^,]*host[^,]*, Signature=[0-9a-f]{64}$/);
      assert.equal(up.headers.accept, 'application/json');
      assert.deepEqual(up.json, {
        messages: [
          { role: 'user', content: [{ text: 'what is this' }, { image: { format: 'png', source: { bytes: PNG } } }] },
        ],
        system: [{ text: 'be brief' }, { text: 'no jokes' }],
        inferenceConfig: { maxTokens: 50, temperature: 0.3, topP: 0.9, stopSequences: ['END'] },
        requestMetadata: { team: 'search', user: 'user-42' },
      });
    });

    it('a full ARN as model: URL-encoded as one path segment, and signed as sent', async () => {
      const res = await client.chat.completions.create({ model: ARN, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(res.model, ARN);
      const up = upstream();
      assert.equal(up.path, `/model/${encodeURIComponent(ARN)}/converse`);
      assert.match(up.path, /^\/model\/arn%3Aaws%3Abedrock%3Aus-west-2%3A123456789012%3Ainference-profile%2Fus\./);
      assert.equal(up.modelId, ARN);
    });

    it('temporary credentials: the session token goes as x-amz-security-token', async () => {
      const withToken = await startMockBedrock({ ...CREDS, sessionToken: 'FwoGZXIvYXdzEXAMPLETOKEN' });
      try {
        const cfg = (token?: string) => sdk(config({ custom_host: withToken.url, cloud1_session_token: token }));
        const res = await cfg('FwoGZXIvYXdzEXAMPLETOKEN').chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'hi' }] });
        assert.equal(res.choices[0]?.message.content, '[bedrock] echo: hi');
        assert.equal(withToken.requests[0]?.headers['x-amz-security-token'], 'FwoGZXIvYXdzEXAMPLETOKEN');
        assert.match(String(withToken.requests[0]?.headers.authorization), /SignedHeaders=[^,]*x-amz-security-token/);

        await assert.rejects(cfg(undefined).chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'hi' }] }), (e: APIError) => {
          assert.equal(e.status, 403);
          assert.match(e.message, /security token included in the request is invalid/);
          return true;
        });
      } finally {
        await withToken.close();
      }
    });

    it('tools, tool_choice, parallel tool calls and their results map to Converse and back', async () => {
      mock.enqueue('converse', {
        json: {
          output: {
            message: {
              role: 'assistant',
              content: [
                { text: 'Checking both.' },
                { toolUse: { toolUseId: 'tooluse_a1', name: 'get_weather', input: { city: 'Paris' } } },
                { toolUse: { toolUseId: 'tooluse_b2', name: 'get_weather', input: { city: 'Oslo' } } },
              ],
            },
          },
          stopReason: 'tool_use',
          usage: { inputTokens: 40, outputTokens: 20, totalTokens: 60 },
          metrics: { latencyMs: 5 },
        },
      });
      const res = await client.chat.completions.create({
        model: CLAUDE,
        messages: [
          { role: 'user', content: 'weather in Rome and Bern?' },
          {
            role: 'assistant',
            content: '',
            tool_calls: [
              { id: 'tooluse_r', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
              { id: 'tooluse_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Bern"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'tooluse_r', content: 'sunny' },
          { role: 'tool', tool_call_id: 'tooluse_b', content: 'rain' },
          { role: 'user', content: 'and Paris and Oslo?' },
        ],
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'weather now', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
        tool_choice: 'required',
      });
      const msg = res.choices[0]!.message;
      assert.equal(res.choices[0]!.finish_reason, 'tool_calls');
      assert.equal(msg.content, 'Checking both.');
      assert.deepEqual(msg.tool_calls, [
        { id: 'tooluse_a1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'tooluse_b2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      ]);
      const up = upstream().json;
      assert.deepEqual(up.toolConfig, {
        tools: [{ toolSpec: { name: 'get_weather', description: 'weather now', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } }],
        toolChoice: { any: {} },
      });
      // Tool results of parallel calls and the next user turn form one user turn: roles alternate.
      assert.deepEqual(up.messages, [
        { role: 'user', content: [{ text: 'weather in Rome and Bern?' }] },
        {
          role: 'assistant',
          content: [
            { toolUse: { toolUseId: 'tooluse_r', name: 'get_weather', input: { city: 'Rome' } } },
            { toolUse: { toolUseId: 'tooluse_b', name: 'get_weather', input: { city: 'Bern' } } },
          ],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'tooluse_r', content: [{ text: 'sunny' }] } },
            { toolResult: { toolUseId: 'tooluse_b', content: [{ text: 'rain' }] } },
            { text: 'and Paris and Oslo?' },
          ],
        },
      ]);
    });

    it('response_format json_schema → outputConfig.textFormat (schema as JSON text)', async () => {
      const schema = { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'], additionalProperties: false };
      const res = await client.chat.completions.create({
        model: CLAUDE,
        messages: [{ role: 'user', content: 'json please' }],
        response_format: { type: 'json_schema', json_schema: { name: 'echo', schema, strict: true } },
      });
      assert.deepEqual(JSON.parse(res.choices[0]!.message.content!), { echo: 'json please' });
      assert.deepEqual(upstream().json.outputConfig, {
        textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(schema), name: 'echo' } } },
      });
    });

    it('model parameters Converse lacks go to additionalModelRequestFields; neutral and dropped ones do not', async () => {
      const body = {
        model: CLAUDE,
        messages: [{ role: 'user', content: 'hi' }],
        top_k: 5,
        presence_penalty: 0,
        frequency_penalty: 0,
        seed: 7,
        parallel_tool_calls: false,
      };
      const ok = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config() }, body });
      assert.equal(ok.status, 200, await ok.clone().text());
      assert.deepEqual(upstream().json.additionalModelRequestFields, { top_k: 5 });
      assert.equal(upstream().json.seed, undefined);

      // A penalty that does something is sent on; Claude refuses it, and Bedrock's 400 reaches the client.
      mock.reset();
      const refused = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config() }, body: { ...body, presence_penalty: 0.5 } });
      const e = await assertEnvelope(refused, 400);
      assert.equal(e.code, 'ValidationException');
      assert.match(e.message, /presence_penalty: Extra inputs are not permitted/);
      assert.deepEqual(upstream().json.additionalModelRequestFields, { top_k: 5, presence_penalty: 0.5 });
    });

    it('Bedrock errors keep their status and name: throttling 429, an invalid model id 400', async () => {
      mock.enqueue('converse', { status: 429, errorType: 'ThrottlingException', message: 'Too many requests, please wait before trying again.' });
      const throttled = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config() }, body: { model: CLAUDE, messages: [{ role: 'user', content: 'x' }] } });
      const t = await assertEnvelope(throttled, 429);
      assert.deepEqual([t.code, t.type, t.message], ['ThrottlingException', 'rate_limit_error', 'Too many requests, please wait before trying again.']);

      const bad = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config() }, body: { model: 'no such model!', messages: [{ role: 'user', content: 'x' }] } });
      const b = await assertEnvelope(bad, 400);
      assert.equal(b.code, 'ValidationException');
      assert.match(b.message, /modelId/);
    });

    it('n > 1 → 400 naming n, before any call', async () => {
      const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config() }, body: { model: CLAUDE, n: 2, messages: [{ role: 'user', content: 'x' }] } });
      const e = await assertEnvelope(res, 400);
      assert.equal(e.param, 'n');
      assert.equal(mock.requests.length, 0);
    });
  });

  describe('credentials', () => {
    it('a wrong secret: Bedrock rejects the signature, 403 relayed in the envelope', async () => {
      const res = await gw.call('/chat/completions', {
        headers: { 'x-gateway-config': config({ cloud1_secret_access_key: 'not-the-right-secret' }) },
        body: { model: CLAUDE, messages: [{ role: 'user', content: 'x' }] },
      });
      const e = await assertEnvelope(res, 403);
      assert.equal(e.code, 'InvalidSignatureException');
      assert.equal(e.type, 'permission_error');
      assert.match(e.message, /^The request signature we calculated does not match the signature you provided/);
      assert.equal(mock.requests.length, 1);
    });

    it('a wrong region signs for the wrong scope: 403', async () => {
      const res = await gw.call('/chat/completions', {
        headers: { 'x-gateway-config': config({ cloud1_region: 'eu-west-1' }) },
        body: { model: CLAUDE, messages: [{ role: 'user', content: 'x' }] },
      });
      const e = await assertEnvelope(res, 403);
      assert.match(e.message, /region/);
    });

    const refusals: [string, Record<string, unknown>, string][] = [
      ['a missing access key id', { cloud1_access_key_id: undefined }, 'cloud1_access_key_id'],
      ['a missing secret', { cloud1_secret_access_key: undefined, cloud1_access_key_id: CREDS.accessKeyId }, 'cloud1_secret_access_key'],
      ['a malformed access key id', { cloud1_access_key_id: 'AKIA/not valid' }, 'cloud1_access_key_id'],
      ['a malformed region', { cloud1_region: 'US East' }, 'cloud1_region'],
      ['a blank session token', { cloud1_session_token: ' ' }, 'cloud1_session_token'],
    ];
    for (const [name, over, key] of refusals) {
      it(`${name} → 400 naming ${key}, no call`, async () => {
        const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config(over) }, body: { model: CLAUDE, messages: [{ role: 'user', content: 'x' }] } });
        const e = await assertEnvelope(res, 400);
        assert.equal(e.param, key);
        assert.ok(e.message.includes(key), e.message);
        assert.ok(!e.message.includes(CREDS.secretAccessKey));
        assert.equal(mock.requests.length, 0);
      });
    }

    it('the alias cloud1 by header, with no credentials anywhere → 400 naming cloud1_access_key_id', async () => {
      const res = await gw.call('/chat/completions', {
        headers: { 'x-gateway-provider': 'cloud1', 'x-gateway-custom-host': mock.url },
        body: { model: CLAUDE, messages: [{ role: 'user', content: 'x' }] },
      });
      const e = await assertEnvelope(res, 400);
      assert.equal(e.param, 'cloud1_access_key_id');
      assert.equal(mock.requests.length, 0);
    });
  });

  describe('streaming through ConverseStream', () => {
    it('the OpenAI SDK reads the chunks; include_usage gives the usage chunk last', async () => {
      const stream = await client.chat.completions.create({
        model: CLAUDE,
        messages: [{ role: 'user', content: 'one two three' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) {
        chunks.push(chunk);
        text += chunk.choices[0]?.delta.content ?? '';
      }
      assert.equal(text, '[bedrock] echo: one two three');
      assert.equal(chunks[0]?.choices[0]?.delta.role, 'assistant');
      assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, 'stop');
      const last = chunks.at(-1)!;
      assert.deepEqual(last.choices, []);
      assert.deepEqual({ p: last.usage?.prompt_tokens, c: last.usage?.completion_tokens, t: last.usage?.total_tokens }, { p: 3, c: 5, t: 8 });
      assert.ok(chunks.every((c) => c.id === chunks[0]!.id && c.model === CLAUDE && c.object === 'chat.completion.chunk'));

      const up = upstream();
      assert.equal(up.path, '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream');
      assert.equal(up.headers.accept, 'application/vnd.amazon.eventstream');
    });

    it('without include_usage there is no usage chunk', async () => {
      const stream = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'hi' }], stream: true });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      assert.ok(chunks.every((c) => c.usage == null && c.choices.length === 1));
      assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, 'stop');
    });

    it('streamed parallel tool calls assemble into tool_calls (SDK stream helper)', async () => {
      mock.enqueue('converse-stream', {
        stream: [
          { event: 'messageStart', payload: { role: 'assistant' } },
          { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: 'Let me look.' } } },
          { event: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
          { event: 'contentBlockStart', payload: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tooluse_1', name: 'lookup' } } } },
          { event: 'contentBlockDelta', payload: { contentBlockIndex: 1, delta: { toolUse: { input: '{"q":' } } } },
          { event: 'contentBlockDelta', payload: { contentBlockIndex: 1, delta: { toolUse: { input: '"cats"}' } } } },
          { event: 'contentBlockStop', payload: { contentBlockIndex: 1 } },
          { event: 'contentBlockStart', payload: { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tooluse_2', name: 'lookup' } } } },
          { event: 'contentBlockDelta', payload: { contentBlockIndex: 2, delta: { toolUse: { input: '{"q":"dogs"}' } } } },
          { event: 'contentBlockStop', payload: { contentBlockIndex: 2 } },
          { event: 'messageStop', payload: { stopReason: 'tool_use' } },
          { event: 'metadata', payload: { usage: { inputTokens: 10, outputTokens: 30, totalTokens: 40 }, metrics: { latencyMs: 9 } } },
        ],
      });
      const stream = client.chat.completions.stream({
        model: CLAUDE,
        messages: [{ role: 'user', content: 'find cats and dogs' }],
        tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
      });
      const final = await stream.finalChatCompletion();
      const choice = final.choices[0]!;
      assert.equal(choice.finish_reason, 'tool_calls');
      assert.equal(choice.message.content, 'Let me look.');
      assert.deepEqual(
        choice.message.tool_calls?.map((c) => c.type === 'function' && [c.id, c.function.name, c.function.arguments]),
        [
          ['tooluse_1', 'lookup', '{"q":"cats"}'],
          ['tooluse_2', 'lookup', '{"q":"dogs"}'],
        ],
      );
    });

    it('a corrupted CRC ends the stream with an error: nothing after it reaches the client', async () => {
      const bad = encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ' world' } });
      bad[bad.length - 10]! ^= 0xff; // a payload byte: the message CRC no longer matches
      mock.enqueue('converse-stream', {
        stream: [
          { event: 'messageStart', payload: { role: 'assistant' } },
          { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: 'Hello' } } },
          { raw: bad },
          { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: ' never' } } },
          { event: 'messageStop', payload: { stopReason: 'end_turn' } },
        ],
      });
      const stream = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'x' }], stream: true });
      let text = '';
      await assert.rejects(
        (async () => {
          for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
        })(),
        (e: Error) => {
          assert.ok(e instanceof APIError, String(e));
          assert.match(e.message, /CRC mismatch/);
          return true;
        },
      );
      assert.equal(text, 'Hello');
    });

    it('a corrupted stream seen as raw SSE: an error event in the envelope, then the end (no [DONE])', async () => {
      const bad = encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'x' } });
      bad[9]! ^= 0x01; // the prelude CRC
      mock.enqueue('converse-stream', { stream: [{ event: 'messageStart', payload: { role: 'assistant' } }, { raw: bad }] });
      const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config() }, body: { model: CLAUDE, messages: [{ role: 'user', content: 'x' }], stream: true } });
      assert.equal(res.status, 200);
      const events = (await res.text()).split('\n\n').filter((e) => e !== '');
      assert.equal(events.length, 2);
      const error = JSON.parse(events[1]!.slice('data: '.length)) as { error: { code: string; message: string } };
      assert.equal(error.error.code, 'bad_upstream_stream');
      assert.match(error.error.message, /prelude CRC mismatch/);
    });

    it('an exception message mid-stream becomes an error the SDK throws', async () => {
      mock.enqueue('converse-stream', {
        stream: [
          { event: 'messageStart', payload: { role: 'assistant' } },
          { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: 'partial' } } },
          { exception: 'throttlingException', message: 'Too many tokens, please wait before trying again.' },
        ],
      });
      const stream = await client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'x' }], stream: true });
      await assert.rejects(
        (async () => {
          for await (const _ of stream);
        })(),
        (e: APIError) => {
          assert.match(e.message, /Too many tokens/);
          assert.equal((e.error as { code?: string }).code, 'ThrottlingException');
          return true;
        },
      );
    });

    it('an error before the stream starts is a JSON error with its status', async () => {
      mock.enqueue('converse-stream', { status: 400, errorType: 'ValidationException', message: 'Malformed input request' });
      await assert.rejects(client.chat.completions.create({ model: CLAUDE, messages: [{ role: 'user', content: 'x' }], stream: true }), (e: APIError) => {
        assert.equal(e.status, 400);
        assert.equal(e.code, 'ValidationException');
        return true;
      });
    });
  });

  describe('embeddings through InvokeModel', () => {
    it('Titan v2: dimensions mapped, float and base64 agree, usage from inputTextTokenCount', async () => {
      const floats = await client.embeddings.create({ model: 'amazon.titan-embed-text-v2:0', input: 'hello embeddings', dimensions: 256, encoding_format: 'float' });
      assert.equal(floats.object, 'list');
      assert.equal(floats.model, 'amazon.titan-embed-text-v2:0');
      assert.equal(floats.data.length, 1);
      assert.equal(floats.data[0]!.embedding.length, 256);
      assert.deepEqual(floats.usage, { prompt_tokens: 2, total_tokens: 2 });
      const up = upstream();
      assert.equal(up.path, '/model/amazon.titan-embed-text-v2%3A0/invoke');
      assert.deepEqual(up.json, { inputText: 'hello embeddings', dimensions: 256 });

      const b64 = await client.embeddings.create({ model: 'amazon.titan-embed-text-v2:0', input: 'hello embeddings', dimensions: 256, encoding_format: 'base64' });
      const bytes = Buffer.from(b64.data[0]!.embedding as unknown as string, 'base64');
      assert.deepEqual(Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4)), floats.data[0]!.embedding);
    });

    it('Titan takes one text per call: two inputs → 400 naming input', async () => {
      const res = await gw.call('/embeddings', { headers: { 'x-gateway-config': config() }, body: { model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'] } });
      const e = await assertEnvelope(res, 400);
      assert.equal(e.param, 'input');
      assert.equal(mock.requests.length, 0);
    });

    it('Cohere: a batch, input_type defaulted or passed, usage from the token-count header', async () => {
      const res = await client.embeddings.create({ model: 'cohere.embed-english-v3', input: ['one fish', 'two fish', 'red fish blue fish'] });
      assert.equal(res.data.length, 3);
      assert.deepEqual(res.data.map((d) => d.index), [0, 1, 2]);
      assert.equal(res.data[0]!.embedding.length, 1024);
      assert.deepEqual(res.usage, { prompt_tokens: 8, total_tokens: 8 });
      assert.deepEqual(upstream().json, { texts: ['one fish', 'two fish', 'red fish blue fish'], input_type: 'search_document' });

      mock.reset();
      const byType = await gw.call('/embeddings', {
        headers: { 'x-gateway-config': config() },
        body: { model: 'us.cohere.embed-v4:0', input: 'query', input_type: 'search_query', dimensions: 512, embedding_types: ['float'] },
      });
      assert.equal(byType.status, 200, await byType.clone().text());
      const body = (await byType.json()) as { data: { embedding: number[] }[] };
      assert.equal(body.data[0]!.embedding.length, 512);
      assert.deepEqual(upstream().json, { texts: ['query'], input_type: 'search_query', output_dimension: 512, embedding_types: ['float'] });
    });

    it('a model that is not an embedding family bedrock serves → 400 naming model', async () => {
      const res = await gw.call('/embeddings', { headers: { 'x-gateway-config': config() }, body: { model: CLAUDE, input: 'x' } });
      const e = await assertEnvelope(res, 400);
      assert.equal(e.param, 'model');
    });
  });

  describe('completions and the generic proxy', () => {
    it('/completions is not offered: 400 saying why, no call', async () => {
      const res = await gw.call('/completions', { headers: { 'x-gateway-config': config() }, body: { model: CLAUDE, prompt: 'x' } });
      const e = await assertEnvelope(res, 400);
      assert.match(e.message, /does not serve \/completions/);
      assert.match(e.message, /chat\/completions/);
      assert.equal(mock.requests.length, 0);
    });

    it('the proxy signs the client method, path, query and body and returns the answer unchanged', async () => {
      const payload = JSON.stringify({ model: ARN, query: 'q', documents: ['a'] });
      const res = await gw.call('/rerank?top=2&a=b%20c', {
        headers: { 'x-gateway-config': config(), 'content-type': 'application/json' },
        body: payload,
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(await res.json(), { method: 'POST', path: '/rerank?top=2&a=b%20c', body: payload });

      mock.reset();
      const get = await gw.call('/some/resource', { headers: { 'x-gateway-config': config() } });
      assert.equal(get.status, 200);
      assert.deepEqual(await get.json(), { method: 'GET', path: '/some/resource', body: '' });
      assert.match(String(upstream().headers.authorization), /^AWS4-HMAC-SHA256 /);
    });

    it('the proxy with a body it must keep for a retry signs it too', async () => {
      const cfg = JSON.stringify({ ...JSON.parse(config()), retry: { attempts: 1 } });
      const res = await gw.call('/model/x.y/invoke', { headers: { 'x-gateway-config': cfg, 'content-type': 'application/json' }, body: '{"inputText":"x"}' });
      // A runtime path: the mock's own answer (no such embedding model), reached only past the signature check.
      assert.equal(res.status, 400, await res.clone().text());
      assert.match(res.headers.get('x-amzn-errortype') ?? '', /^ValidationException/);
      assert.deepEqual(upstream().json, { inputText: 'x' });
    });

    it("a provider's error on the proxy is returned as Bedrock sent it", async () => {
      const res = await gw.call('/rerank', {
        headers: { 'x-gateway-config': config({ cloud1_secret_access_key: 'wrong' }), 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(res.status, 403);
      assert.match(res.headers.get('x-amzn-errortype') ?? '', /^InvalidSignatureException/);
      assert.deepEqual(Object.keys((await res.json()) as object), ['message']);
    });
  });
});
