// Black-box tests of the anthropic provider: the official OpenAI SDK pointed at a real
// gateway in front of a mock that speaks Anthropic's Messages API wire format.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockAnthropic, type MockAnthropic } from './support/mock-anthropic.js';
import { assertEnvelope, readEvents } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'sk-ant-test-key';
const MODEL = 'claude-sonnet-4-5';

describe('anthropic provider', () => {
  const gw = useGateway();
  let mock: MockAnthropic;
  let fragmented: MockAnthropic;
  let client: OpenAI;
  let routed: Record<string, string>;

  const sdk = (headers: Record<string, string>, apiKey = KEY): OpenAI =>
    new OpenAI({ apiKey, baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, ...headers } });
  const upstream = (): any => {
    assert.equal(mock.requests.length, 1, 'one upstream request');
    return mock.requests[0]!.json;
  };

  before(async () => {
    [mock, fragmented] = await Promise.all([
      startMockAnthropic({ apiKey: KEY }),
      // CRLF framing cut into 7-byte writes: events and even UTF-8 characters span reads.
      startMockAnthropic({ apiKey: KEY, crlf: true, fragment: 7 }),
    ]);
    routed = { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': mock.url };
    client = sdk(routed);
  });
  afterEach(() => {
    mock.reset();
    fragmented.reset();
  });
  after(async () => {
    await Promise.all([mock.close(), fragmented.close()]);
  });

  describe('chat', () => {
    it('answers as a chat.completion; Anthropic sees its own headers, path and body', async () => {
      const res = await client.chat.completions.create({
        model: MODEL,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'developer', content: [{ type: 'text', text: 'no jokes' }] },
          { role: 'user', content: 'hello there' },
        ],
        temperature: 0.2,
        top_p: 0.9,
        user: 'user-42',
        seed: 7,
      });
      assert.equal(res.object, 'chat.completion');
      assert.match(res.id, /^msg_/);
      assert.equal(res.model, MODEL);
      assert.deepEqual(res.choices[0]!.message.content, '[claude-mock] echo: hello there');
      assert.equal(res.choices[0]!.finish_reason, 'stop');
      assert.equal(res.usage!.completion_tokens, 4);
      assert.equal(res.usage!.total_tokens, res.usage!.prompt_tokens + 4);

      const up = mock.requests[0]!;
      assert.equal(up.path, '/v1/messages');
      assert.equal(up.headers['x-api-key'], KEY);
      assert.equal(up.headers['anthropic-version'], '2023-06-01');
      assert.equal(up.headers.authorization, undefined);
      assert.deepEqual(up.json, {
        model: MODEL,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
        max_tokens: 4096,
        system: [
          { type: 'text', text: 'be brief' },
          { type: 'text', text: 'no jokes' },
        ],
        temperature: 0.2,
        top_p: 0.9,
        metadata: { user_id: 'user-42' },
      });
    });

    it('takes the custom host with or without /v1, and the key from a config target', async () => {
      const viaV1 = sdk({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': `${mock.url}/v1/` });
      await viaV1.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'a' }] });
      const config = JSON.stringify({ provider: 'anthropic', api_key: KEY, custom_host: mock.url });
      const viaConfig = sdk({ 'x-gateway-config': config }, 'not-the-anthropic-key');
      await viaConfig.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'b' }] });
      assert.deepEqual(mock.requests.map((r) => [r.path, r.headers['x-api-key']]), [
        ['/v1/messages', KEY],
        ['/v1/messages', KEY],
      ]);
    });

    it('max_completion_tokens is max_tokens; stop is stop_sequences; finish reasons come back', async () => {
      const stopped = await client.chat.completions.create({
        model: MODEL, messages: [{ role: 'user', content: 'one two three' }], stop: 'two', max_tokens: 50,
      });
      assert.equal(stopped.choices[0]!.message.content, '[claude-mock] echo: one ');
      assert.equal(stopped.choices[0]!.finish_reason, 'stop');
      assert.deepEqual(mock.requests[0]!.json.stop_sequences, ['two']);
      mock.reset();
      const cut = await client.chat.completions.create({
        model: MODEL, messages: [{ role: 'user', content: 'one two three' }], max_completion_tokens: 2,
      });
      assert.equal(cut.choices[0]!.finish_reason, 'length');
      assert.equal(upstream().max_tokens, 2);
    });

    it('consecutive same-role messages merge; image parts become image blocks', async () => {
      await client.chat.completions.create({
        model: MODEL,
        messages: [
          { role: 'user', content: 'first' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
            ],
          },
          { role: 'assistant', content: 'ok' },
          { role: 'assistant', content: 'more' },
          { role: 'user', content: 'again' },
        ],
      });
      assert.deepEqual(upstream().messages, [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'first' },
            { type: 'text', text: 'look' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'ok' }, { type: 'text', text: 'more' }] },
        { role: 'user', content: [{ type: 'text', text: 'again' }] },
      ]);
    });

    it('response_format json_schema goes as output_config.format and the JSON comes back as content', async () => {
      const schema = { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'], additionalProperties: false };
      const res = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'hi' }],
        response_format: { type: 'json_schema', json_schema: { name: 'echo', schema, strict: true } },
      });
      assert.deepEqual(JSON.parse(res.choices[0]!.message.content!), { echo: 'hi' });
      assert.deepEqual(upstream().output_config, { format: { type: 'json_schema', schema } });
    });

    it('cache reads count as cached prompt tokens', async () => {
      mock.enqueue({
        message: {
          content: [{ type: 'text', text: 'hi' }],
          usage: { input_tokens: 10, cache_creation_input_tokens: 20, cache_read_input_tokens: 300, output_tokens: 5 },
        },
      });
      const res = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] });
      assert.deepEqual(res.usage, { prompt_tokens: 330, completion_tokens: 5, total_tokens: 335, prompt_tokens_details: { cached_tokens: 300 } });
    });
  });

  describe('tools', () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
    ];
    const calls = {
      message: {
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: {} },
        ],
        stop_reason: 'tool_use',
      },
    };

    it('tool_use blocks come back as tool_calls; tool results go back as tool_result blocks', async () => {
      mock.enqueue(calls);
      const first = await client.chat.completions.create({
        model: MODEL, messages: [{ role: 'user', content: 'weather?' }], tools, tool_choice: 'required', parallel_tool_calls: false,
      });
      const msg = first.choices[0]!.message;
      assert.equal(first.choices[0]!.finish_reason, 'tool_calls');
      assert.equal(msg.content, 'Checking.');
      assert.deepEqual(msg.tool_calls, [
        { id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_01B', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      ]);
      const sent = upstream();
      assert.deepEqual(sent.tools, [
        { name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } }, description: 'Weather' },
        { name: 'get_time', input_schema: { type: 'object', properties: {} } },
      ]);
      assert.deepEqual(sent.tool_choice, { type: 'any', disable_parallel_tool_use: true });

      mock.reset();
      const second = await client.chat.completions.create({
        model: MODEL,
        tools,
        tool_choice: { type: 'function', function: { name: 'get_time' } },
        messages: [
          { role: 'user', content: 'weather?' },
          msg as OpenAI.ChatCompletionAssistantMessageParam,
          { role: 'tool', tool_call_id: 'toolu_01A', content: 'sunny' },
          { role: 'tool', tool_call_id: 'toolu_01B', content: [{ type: 'text', text: '12:00' }] },
          { role: 'user', content: 'thanks' },
        ],
      });
      assert.equal(second.choices[0]!.message.content, '[claude-mock] echo: thanks');
      const back = upstream();
      assert.deepEqual(back.tool_choice, { type: 'tool', name: 'get_time' });
      assert.deepEqual(back.messages.slice(1), [
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01A', content: 'sunny' },
            { type: 'tool_result', tool_use_id: 'toolu_01B', content: [{ type: 'text', text: '12:00' }] },
            { type: 'text', text: 'thanks' },
          ],
        },
      ]);
    });

    it('streams tool calls as indexed tool_calls deltas', async () => {
      mock.enqueue(calls);
      const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'w' }], tools, stream: true });
      const acc: { id?: string; name?: string; args: string }[] = [];
      let text = '';
      let finish: string | null = null;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (!choice) continue;
        text += choice.delta.content ?? '';
        for (const tc of choice.delta.tool_calls ?? []) {
          const slot = (acc[tc.index] ??= { args: '' });
          if (tc.id) slot.id = tc.id;
          if (tc.function?.name) slot.name = tc.function.name;
          slot.args += tc.function?.arguments ?? '';
        }
        finish = choice.finish_reason ?? finish;
      }
      assert.equal(text, 'Checking.');
      assert.equal(finish, 'tool_calls');
      assert.deepEqual(acc, [
        { id: 'toolu_01A', name: 'get_weather', args: '{"city":"Paris"}' },
        { id: 'toolu_01B', name: 'get_time', args: '{}' },
      ]);
    });

    it('legacy functions answer with function_call', async () => {
      mock.enqueue({ message: { content: [{ type: 'tool_use', id: 'toolu_01C', name: 'get_time', input: { tz: 'UTC' } }], stop_reason: 'tool_use' } });
      const res = await gw.call('/chat/completions', {
        headers: { ...routed, authorization: `Bearer ${KEY}` },
        body: { model: MODEL, messages: [{ role: 'user', content: 't' }], functions: [{ name: 'get_time' }], function_call: { name: 'get_time' } },
      });
      const body = (await res.json()) as any;
      assert.equal(res.status, 200);
      assert.deepEqual(body.choices[0].message.function_call, { name: 'get_time', arguments: '{"tz":"UTC"}' });
      assert.equal(body.choices[0].finish_reason, 'function_call');
      assert.deepEqual(upstream().tool_choice, { type: 'tool', name: 'get_time', disable_parallel_tool_use: true });
    });
  });

  describe('streaming', () => {
    it('text deltas, finish chunk, usage chunk last, then [DONE]', async () => {
      const res = await gw.call('/chat/completions', {
        headers: { ...routed, authorization: `Bearer ${KEY}` },
        body: { model: MODEL, messages: [{ role: 'user', content: 'one two three' }], stream: true, stream_options: { include_usage: true } },
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      const events = await readEvents(res);
      assert.equal(events.at(-1)!.data, '[DONE]');
      const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
      assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id && c.model === MODEL));
      assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
      assert.equal(text, '[claude-mock] echo: one two three');
      const usage = chunks.at(-1);
      assert.deepEqual(usage.choices, []);
      assert.equal(usage.usage.completion_tokens, 5);
      assert.equal(chunks.at(-2).choices[0].finish_reason, 'stop');
    });

    it('without include_usage there is no usage chunk', async () => {
      const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true });
      const chunks = [];
      for await (const c of stream) chunks.push(c);
      assert.ok(chunks.every((c) => c.choices.length === 1 && c.usage === undefined));
    });

    it('survives CRLF framing split across reads', async () => {
      const c = sdk({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': fragmented.url });
      const stream = await c.chat.completions.create({
        model: MODEL, messages: [{ role: 'user', content: 'héllo wörld ✓ done' }], stream: true, stream_options: { include_usage: true },
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        usage = chunk.usage ?? usage;
      }
      assert.equal(text, '[claude-mock] echo: héllo wörld ✓ done');
      assert.equal(usage?.completion_tokens, 6);
    });

    it('an error event mid-stream reaches the SDK as an APIError', async () => {
      mock.enqueue({
        events: [
          { type: 'message_start', message: { id: 'msg_x', type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } },
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'partial' } },
          { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        ],
      });
      const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true });
      let text = '';
      await assert.rejects(
        (async () => {
          for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
        })(),
        (e: unknown) => e instanceof OpenAI.APIError && e.message.includes('Overloaded') && (e.error as any)?.code === 'overloaded_error',
      );
      assert.equal(text, 'partial');
    });

    it('a stream cut before message_stop ends in an error, not a silent [DONE]', async () => {
      mock.enqueue({
        events: [
          { type: 'message_start', message: { id: 'msg_y', type: 'message', role: 'assistant', model: MODEL, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } },
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'half' } },
        ],
      });
      const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true });
      await assert.rejects(
        (async () => {
          for await (const _ of stream);
        })(),
        (e: unknown) => e instanceof OpenAI.APIError && /before message_stop/.test(e.message),
      );
    });
  });

  describe('thinking', () => {
    const headers = (): Record<string, string> => ({ ...routed, authorization: `Bearer ${KEY}`, 'x-gateway-strict-compat-compliance': 'false' });

    it('is refused with strict compliance (the default), before Anthropic is called', async () => {
      const res = await gw.call('/chat/completions', {
        headers: { ...routed, authorization: `Bearer ${KEY}` },
        body: { model: MODEL, messages: [{ role: 'user', content: 'x' }], thinking: { type: 'enabled', budget_tokens: 1024 } },
      });
      assert.equal((await assertEnvelope(res, 400)).param, 'thinking');
      assert.equal(mock.requests.length, 0);
    });

    it('passes through; reasoning_content and signed thinking_blocks come back and can be sent back', async () => {
      const res = await gw.call('/chat/completions', {
        headers: headers(),
        body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], thinking: { type: 'enabled', budget_tokens: 2048 } },
      });
      const body = (await res.json()) as any;
      assert.equal(res.status, 200, JSON.stringify(body));
      const sent = upstream();
      assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 2048 });
      assert.equal(sent.max_tokens, 4096 + 2048);
      const msg = body.choices[0].message;
      assert.equal(msg.content, '[claude-mock] echo: hi');
      assert.equal(msg.reasoning_content, 'The user wants an echo.');
      assert.deepEqual(msg.thinking_blocks, [{ type: 'thinking', thinking: 'The user wants an echo.', signature: 'sig_EqQBCgIYAhIM' }]);

      mock.reset();
      const again = await gw.call('/chat/completions', {
        headers: headers(),
        body: {
          model: MODEL,
          thinking: { type: 'enabled', budget_tokens: 2048 },
          messages: [{ role: 'user', content: 'hi' }, msg, { role: 'user', content: 'more' }],
        },
      });
      assert.equal(again.status, 200);
      assert.deepEqual(upstream().messages[1].content, [
        { type: 'thinking', thinking: 'The user wants an echo.', signature: 'sig_EqQBCgIYAhIM' },
        { type: 'text', text: '[claude-mock] echo: hi' },
      ]);
    });

    it('streams reasoning_content deltas, then the signed block', async () => {
      const res = await gw.call('/chat/completions', {
        headers: headers(),
        body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], thinking: { type: 'enabled', budget_tokens: 1024 }, stream: true },
      });
      const chunks = (await readEvents(res)).slice(0, -1).map((e) => JSON.parse(e.data));
      const deltas = chunks.map((c) => c.choices[0].delta);
      assert.equal(deltas.map((d) => d.reasoning_content ?? '').join(''), 'The user wants an echo.');
      assert.deepEqual(deltas.flatMap((d) => d.thinking_blocks ?? []), [
        { type: 'thinking', thinking: 'The user wants an echo.', signature: 'sig_EqQBCgIYAhIM' },
      ]);
      assert.equal(deltas.map((d) => d.content ?? '').join(''), '[claude-mock] echo: hi');
    });
  });

  describe('errors and other endpoints', () => {
    it("Anthropic's errors keep their status, with Anthropic's type as the code", async () => {
      const wrong = sdk({ 'x-gateway-config': JSON.stringify({ provider: 'anthropic', api_key: 'sk-ant-wrong', custom_host: mock.url }) });
      await assert.rejects(wrong.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }), (e: unknown) => {
        assert.ok(e instanceof OpenAI.APIError);
        assert.equal(e.status, 401);
        assert.equal(e.message, '401 invalid x-api-key');
        assert.equal(e.code, 'authentication_error');
        return true;
      });
      mock.enqueue({ status: 529, error: { type: 'overloaded_error', message: 'Overloaded' } });
      const res = await gw.call('/chat/completions', { headers: { ...routed, authorization: `Bearer ${KEY}` }, body: { model: MODEL, messages: [{ role: 'user', content: 'x' }] } });
      const env = await assertEnvelope(res, 529);
      assert.deepEqual([env.code, env.message], ['overloaded_error', 'Overloaded']);
      mock.enqueue({ status: 429, error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' }, headers: { 'retry-after': '17' } });
      const limited = await gw.call('/chat/completions', { headers: { ...routed, authorization: `Bearer ${KEY}` }, body: { model: MODEL, messages: [{ role: 'user', content: 'x' }] } });
      assert.equal(limited.headers.get('retry-after'), '17');
      assert.equal((await assertEnvelope(limited, 429)).code, 'rate_limit_error');
      // Anthropic's range check on temperature (0..1) reaches the client as Anthropic worded it.
      const hot = await gw.call('/chat/completions', { headers: { ...routed, authorization: `Bearer ${KEY}` }, body: { model: MODEL, messages: [{ role: 'user', content: 'x' }], temperature: 1.5 } });
      assert.match((await assertEnvelope(hot, 400)).message, /^temperature:/);
    });

    it('a missing or malformed credential is a 400 naming it, before any request', async () => {
      const noKey = await gw.call('/chat/completions', {
        headers: { 'x-gateway-provider': 'anthropic' },
        body: { model: MODEL, messages: [{ role: 'user', content: 'x' }] },
      });
      assert.equal((await assertEnvelope(noKey, 400)).param, 'api_key');
      const basic = await gw.call('/chat/completions', {
        headers: { ...routed, authorization: 'Basic dXNlcjpwYXNz' },
        body: { model: MODEL, messages: [{ role: 'user', content: 'x' }] },
      });
      assert.equal((await assertEnvelope(basic, 400)).param, 'Authorization');
      const badArgs = await gw.call('/chat/completions', {
        headers: { ...routed, authorization: `Bearer ${KEY}` },
        body: { model: MODEL, messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] },
      });
      assert.equal((await assertEnvelope(badArgs, 400)).param, 'messages[0].tool_calls[0].function.arguments');
      assert.equal(mock.requests.length, 0);
    });

    it('completions and embeddings are a 400 naming the endpoint', async () => {
      const headers = { ...routed, authorization: `Bearer ${KEY}` };
      const c = await gw.call('/completions', { headers, body: { model: MODEL, prompt: 'x' } });
      assert.match((await assertEnvelope(c, 400)).message, /does not serve \/completions/);
      const e = await gw.call('/embeddings', { headers, body: { model: MODEL, input: 'x' } });
      assert.match((await assertEnvelope(e, 400)).message, /does not serve \/embeddings/);
      assert.equal(mock.requests.length, 0);
    });

    it("pass-through mode sends the client's own body to /v1/messages and relays Anthropic's answer", async () => {
      const native = { model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'raw' }] };
      const res = await gw.call('/chat/completions', {
        headers: { ...routed, authorization: `Bearer ${KEY}`, 'x-gateway-config': JSON.stringify({ passthrough: true }) },
        body: native,
      });
      const body = (await res.json()) as any;
      assert.equal(res.status, 200);
      assert.equal(body.type, 'message');
      assert.equal(mock.requests[0]!.path, '/v1/messages');
      assert.equal(mock.requests[0]!.body.toString(), JSON.stringify(native));
    });

    it('the generic proxy passes through with the credential and version headers', async () => {
      const headers = { ...routed, authorization: `Bearer ${KEY}`, 'anthropic-beta': 'token-counting-2024-11-01' };
      const batches = await gw.call('/messages/batches?limit=5', { headers });
      assert.equal(batches.status, 200);
      assert.deepEqual(await batches.json(), { data: [], has_more: false, first_id: null, last_id: null });
      const count = await gw.call('/messages/count_tokens', { headers, body: { model: MODEL, messages: [{ role: 'user', content: 'a b c' }] } });
      assert.equal(count.status, 200);
      assert.deepEqual(Object.keys((await count.json()) as object), ['input_tokens']);
      assert.deepEqual(mock.requests.map((r) => [r.method, r.path, r.headers['x-api-key'], r.headers['anthropic-version'], r.headers['anthropic-beta']]), [
        ['GET', '/v1/messages/batches?limit=5', KEY, '2023-06-01', 'token-counting-2024-11-01'],
        ['POST', '/v1/messages/count_tokens', KEY, '2023-06-01', 'token-counting-2024-11-01'],
      ]);
      const missing = await gw.call('/nowhere', { headers });
      const raw = (await missing.json()) as any;
      assert.equal(missing.status, 404);
      assert.equal(raw.type, 'error', "Anthropic's own error body, unchanged");
    });
  });
});
