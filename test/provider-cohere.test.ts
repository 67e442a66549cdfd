// Black-box tests of the Cohere adapter's chat side: the official OpenAI SDK against a real
// gateway in front of a mock Cohere that checks requests as Cohere does. Each test reads
// what Cohere received (the translated request) and what the client got back.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { KEY, useCohere } from './support/cohere-fixture.js';
import { assertEnvelope } from './support/http.js';

describe('cohere: chat completions', () => {
  const co = useCohere();

  /** The one request Cohere received. */
  const upstream = () => {
    assert.equal(co.mock.requests.length, 1, `Cohere got ${co.mock.requests.length} requests`);
    return co.mock.requests[0]!;
  };

  it('maps messages of every role and the sampling parameters; answers in OpenAI shape', async () => {
    const { data: res, response } = await co.client.chat.completions
      .create({
        model: 'command-a-03-2025',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'developer', content: [{ type: 'text', text: 'answer in English' }] },
          { role: 'user', content: 'first question', name: 'ann' },
          { role: 'assistant', content: 'first answer' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is in this picture' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
            ],
          },
        ],
        temperature: 0.5,
        top_p: 0.9,
        max_tokens: 10,
        max_completion_tokens: 50,
        stop: 'END',
        seed: 7,
        frequency_penalty: 0.1,
        presence_penalty: 0.2,
        user: 'user-1',
        parallel_tool_calls: false,
        n: 1,
        // Cohere's own parameters go through as sent.
        ...({ k: 5, safety_mode: 'STRICT' } as object),
      })
      .withResponse();

    const up = upstream();
    assert.equal(up.method, 'POST');
    assert.equal(up.path, '/v2/chat');
    assert.equal(up.headers.authorization, `Bearer ${KEY}`);
    assert.match(up.headers['content-type'] ?? '', /^application\/json/);
    for (const name of Object.keys(up.headers)) assert.ok(!name.startsWith('x-gateway-'), `${name} reached Cohere`);
    assert.deepEqual(up.json, {
      k: 5,
      safety_mode: 'STRICT',
      model: 'command-a-03-2025',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'system', content: [{ type: 'text', text: 'answer in English' }] },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is in this picture' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
          ],
        },
      ],
      max_tokens: 50,
      stop_sequences: ['END'],
      temperature: 0.5,
      seed: 7,
      frequency_penalty: 0.1,
      presence_penalty: 0.2,
      p: 0.9,
    });

    assert.equal(response.headers.get('x-gateway-provider'), 'cohere');
    assert.equal(res.object, 'chat.completion');
    assert.equal(res.model, 'command-a-03-2025');
    assert.match(res.id, /^[0-9a-f-]{36}$/, "Cohere's generation id is kept");
    assert.equal(res.choices.length, 1);
    assert.equal(res.choices[0]!.message.role, 'assistant');
    assert.equal(res.choices[0]!.message.content, '[cohere] echo: what is in this picture');
    assert.equal(res.choices[0]!.finish_reason, 'stop');
    // The mock counts words: 14 in, 7 out, and reads 10 tokens more than it bills (its preamble):
    // usage reports the tokens read, not the billed 14.
    assert.deepEqual(res.usage, { prompt_tokens: 24, completion_tokens: 7, total_tokens: 31 });
  });

  it('top_p outside Cohere\'s 0.01–0.99 is brought inside it', async () => {
    await co.client.chat.completions.create({ model: 'command-r', messages: [{ role: 'user', content: 'hi' }], top_p: 1 });
    assert.equal(upstream().json.p, 0.99);
  });

  it('response_format: json_object, and json_schema with its schema', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    await co.client.chat.completions.create({ model: 'command-r', messages: [{ role: 'user', content: 'json please' }], response_format: { type: 'json_object' } });
    await co.client.chat.completions.create({
      model: 'command-r',
      messages: [{ role: 'user', content: 'json please' }],
      response_format: { type: 'json_schema', json_schema: { name: 'person', schema, strict: true } },
    });
    await co.client.chat.completions.create({ model: 'command-r', messages: [{ role: 'user', content: 'text' }], response_format: { type: 'text' } });
    assert.deepEqual(
      co.mock.requests.map((r) => r.json.response_format),
      [{ type: 'json_object' }, { type: 'json_object', json_schema: schema }, { type: 'text' }],
    );
  });

  const weather = {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'Weather in a city',
      parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      strict: true,
    },
  };
  const clock = { type: 'function' as const, function: { name: 'get_time' } };

  it('tools: definitions and calls go over, tool results come back, and the conversation continues', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather in Paris' }];
    const first = await co.client.chat.completions.create({ model: 'command-a-03-2025', messages, tools: [weather, clock], tool_choice: 'auto' });
    const sent = upstream().json;
    assert.deepEqual(sent.tools, [
      { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: weather.function.parameters } },
      // No parameters in OpenAI's definition: Cohere needs a schema, an empty one is sent.
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
    ]);
    assert.equal(sent.strict_tools, true);
    assert.equal(sent.tool_choice, undefined, "'auto' is Cohere's default: not sent");

    const choice = first.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, 'I will call get_weather.', "Cohere's tool plan is the text beside the calls");
    const call = choice.message.tool_calls![0]!;
    assert.equal(call.type, 'function');
    assert.match(call.id, /^get_weather_/);
    assert.deepEqual(call.type === 'function' ? [call.function.name, JSON.parse(call.function.arguments)] : [], ['get_weather', { q: 'weather in Paris' }]);

    co.mock.reset();
    messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: '18°C and sunny' });
    const second = await co.client.chat.completions.create({ model: 'command-a-03-2025', messages, tools: [weather, clock] });
    assert.deepEqual(upstream().json.messages.slice(1), [
      { role: 'assistant', tool_calls: [{ id: call.id, type: 'function', function: call.type === 'function' ? call.function : {} }], tool_plan: 'I will call get_weather.' },
      { role: 'tool', tool_call_id: call.id, content: '18°C and sunny' },
    ]);
    assert.equal(second.choices[0]!.message.content, '[cohere] tool said: 18°C and sunny');
    assert.equal(second.choices[0]!.finish_reason, 'stop');
  });

  it('tool_choice: none, required, a named function, allowed_tools; an unknown name is refused', async () => {
    const ask = (tool_choice: OpenAI.ChatCompletionToolChoiceOption) =>
      co.client.chat.completions.create({ model: 'command-r', messages: [{ role: 'user', content: 'hi' }], tools: [weather, clock], tool_choice });
    await ask('none');
    await ask('required');
    await ask({ type: 'function', function: { name: 'get_time' } });
    await ask({ type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'get_weather' } }] } });
    assert.deepEqual(
      co.mock.requests.map((r) => [r.json.tool_choice, r.json.tools.map((t: any) => t.function.name)]),
      [
        ['NONE', ['get_weather', 'get_time']],
        ['REQUIRED', ['get_weather', 'get_time']],
        // Cohere cannot name a function: only that one is offered, and a call is required.
        ['REQUIRED', ['get_time']],
        [undefined, ['get_weather']],
      ],
    );
    co.mock.reset();
    const res = await co.gw.call('/chat/completions', {
      headers: co.routed,
      body: { model: 'command-r', messages: [{ role: 'user', content: 'hi' }], tools: [weather], tool_choice: { type: 'function', function: { name: 'nope' } } },
    });
    const e = await assertEnvelope(res, 400);
    assert.equal(e.param, 'tool_choice.function.name');
    assert.equal(co.mock.requests.length, 0);
  });

  it('parallel tool calls in one answer keep their order and ids', async () => {
    co.mock.enqueue('/v2/chat', {
      body: {
        id: 'gen-1',
        finish_reason: 'TOOL_CALL',
        message: {
          role: 'assistant',
          tool_calls: [
            { id: 'a1', type: 'function', function: { name: 'get_weather', arguments: '{"q":"Paris"}' } },
            { id: 'b2', type: 'function', function: { name: 'get_weather', arguments: '{"q":"Rome"}' } },
          ],
        },
        usage: { billed_units: { input_tokens: 3, output_tokens: 4 } },
      },
    });
    const res = await co.client.chat.completions.create({ model: 'command-r', messages: [{ role: 'user', content: 'both cities' }], tools: [weather] });
    const msg = res.choices[0]!.message;
    assert.equal(msg.content, null);
    assert.deepEqual(
      msg.tool_calls!.map((c) => (c.type === 'function' ? [c.id, c.function.arguments] : [])),
      [
        ['a1', '{"q":"Paris"}'],
        ['b2', '{"q":"Rome"}'],
      ],
    );
    assert.equal(res.id, 'gen-1');
    // Only billed units reported: they are the usage.
    assert.deepEqual(res.usage, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it('legacy functions: definitions, function_call, the function role, and a function_call answer', async () => {
    const res = await co.gw.call('/chat/completions', {
      headers: co.routed,
      body: {
        model: 'command-r',
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"q":"Oslo"}' } },
          { role: 'function', name: 'get_weather', content: '-3°C' },
          { role: 'user', content: 'and now Paris' },
        ],
        functions: [weather.function],
        function_call: { name: 'get_weather' },
      },
    });
    assert.equal(res.status, 200);
    const sent = upstream().json;
    assert.deepEqual(sent.messages.slice(1, 3), [
      { role: 'assistant', tool_calls: [{ id: 'call_fn_1', type: 'function', function: { name: 'get_weather', arguments: '{"q":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_fn_1', content: '-3°C' },
    ]);
    assert.equal(sent.tool_choice, 'REQUIRED');
    assert.deepEqual(sent.tools.map((t: any) => t.function.name), ['get_weather']);
    const body = (await res.json()) as OpenAI.ChatCompletion;
    assert.equal(body.choices[0]!.finish_reason, 'function_call');
    assert.deepEqual(body.choices[0]!.message.function_call, { name: 'get_weather', arguments: '{"q":"and now Paris"}' });
    assert.equal(body.choices[0]!.message.tool_calls, undefined);

    co.mock.reset();
    const orphan = await co.gw.call('/chat/completions', {
      headers: co.routed,
      body: { model: 'command-r', messages: [{ role: 'function', name: 'f', content: 'x' }] },
    });
    assert.equal((await assertEnvelope(orphan, 400)).param, 'messages[0].name');
  });

  it('content Cohere cannot take is refused, naming the field, before any call', async () => {
    const cases: [unknown[], string][] = [
      [[{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }, { role: 'user', content: 'hi' }], 'messages[0].content[0].type'],
      [[{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }], 'messages[0].content[0].type'],
      [[{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }], 'messages[0].content[0].image_url.url'],
      [[{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'max' } }] }], 'messages[0].content[0].image_url.detail'],
      [[{ role: 'user', content: 'a' }, { role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'x', input: '' } }] }], 'messages[1].tool_calls[0].type'],
    ];
    for (const [messages, param] of cases) {
      const res = await co.gw.call('/chat/completions', { headers: co.routed, body: { model: 'command-r', messages } });
      assert.equal((await assertEnvelope(res, 400)).param, param);
    }
    const res = await co.gw.call('/chat/completions', {
      headers: co.routed,
      body: { model: 'command-r', messages: [{ role: 'user', content: 'a' }], tools: [{ type: 'custom', custom: { name: 'x' } }] },
    });
    assert.equal((await assertEnvelope(res, 400)).param, 'tools[0].type');
    assert.equal(co.mock.requests.length, 0);
  });

  it('parameters whose effect Cohere cannot give are refused, naming them', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ n: 2 }, 'n'],
      [{ logit_bias: { '50256': -100 } }, 'logit_bias'],
      [{ logprobs: true, top_logprobs: 3 }, 'top_logprobs'],
      [{ modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }, 'modalities'],
      [{ audio: { voice: 'alloy', format: 'wav' } }, 'audio'],
      [{ prediction: { type: 'content', content: 'x' } }, 'prediction'],
      [{ web_search_options: {} }, 'web_search_options'],
    ];
    for (const [params, param] of cases) {
      const res = await co.gw.call('/chat/completions', { headers: co.routed, body: { model: 'command-r', messages: [{ role: 'user', content: 'a' }], ...params } });
      const e = await assertEnvelope(res, 400);
      assert.equal(e.param, param);
      assert.match(e.message, /cohere/);
    }
    assert.equal(co.mock.requests.length, 0);
  });

  it('logprobs: asked for, and the chunks\' log probabilities returned per text piece', async () => {
    co.mock.enqueue('/v2/chat', {
      body: {
        id: 'g',
        finish_reason: 'COMPLETE',
        message: { role: 'assistant', content: [{ type: 'text', text: 'Hi there' }] },
        logprobs: [
          { text: 'Hi', token_ids: [1], logprobs: [-0.5] },
          { text: ' there', token_ids: [2, 3], logprobs: [-0.25, -0.25] },
        ],
      },
    });
    const res = await co.client.chat.completions.create({ model: 'command-r', messages: [{ role: 'user', content: 'hi' }], logprobs: true, top_logprobs: 0 });
    assert.equal(upstream().json.logprobs, true);
    assert.equal(upstream().json.top_logprobs, undefined);
    assert.deepEqual(res.choices[0]!.logprobs, {
      content: [
        { token: 'Hi', logprob: -0.5, bytes: [72, 105], top_logprobs: [] },
        { token: ' there', logprob: -0.5, bytes: [32, 116, 104, 101, 114, 101], top_logprobs: [] },
      ],
      refusal: null,
    });
    // No usage reported at all: zeros, not a missing field.
    assert.deepEqual(res.usage, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('reasoning: reasoning_effort and thinking go over; thinking text comes back as reasoning_content', async () => {
    co.mock.enqueue('/v2/chat', {
      body: {
        id: 'g',
        finish_reason: 'COMPLETE',
        message: { role: 'assistant', content: [{ type: 'thinking', thinking: 'Let me think.' }, { type: 'text', text: '42' }] },
        usage: { tokens: { input_tokens: 5, output_tokens: 9 }, cached_tokens: 4 },
      },
    });
    const res = await co.client.chat.completions.create({ model: 'command-a-reasoning-08-2025', messages: [{ role: 'user', content: 'q' }], reasoning_effort: 'high' });
    assert.deepEqual(upstream().json.thinking, { type: 'enabled' });
    const msg = res.choices[0]!.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
    assert.equal(msg.content, '42');
    assert.equal(msg.reasoning_content, 'Let me think.');
    assert.deepEqual(res.usage, { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14, prompt_tokens_details: { cached_tokens: 4 } });

    co.mock.reset();
    await co.client.chat.completions.create({ model: 'command-a-reasoning-08-2025', messages: [{ role: 'user', content: 'q' }], reasoning_effort: 'none' });
    assert.deepEqual(upstream().json.thinking, { type: 'disabled' });

    co.mock.reset();
    const res2 = await co.gw.call('/chat/completions', {
      headers: { ...co.routed, 'x-gateway-strict-compat-compliance': 'false' },
      body: { model: 'command-a-reasoning-08-2025', messages: [{ role: 'user', content: 'q' }], thinking: { type: 'enabled', budget_tokens: 2048 } },
    });
    assert.equal(res2.status, 200);
    assert.deepEqual(upstream().json.thinking, { type: 'enabled', token_budget: 2048 }, "Anthropic's budget_tokens is Cohere's token_budget");
  });

  it("finish reasons: MAX_TOKENS and TIMEOUT are 'length', STOP_SEQUENCE 'stop', ERROR a 502", async () => {
    const answer = (finish_reason: string) => ({ body: { id: 'g', finish_reason, message: { role: 'assistant', content: [{ type: 'text', text: 'cut' }] } } });
    co.mock.enqueue('/v2/chat', answer('MAX_TOKENS'), answer('TIMEOUT'), answer('STOP_SEQUENCE'), answer('ERROR'));
    const ask = () => co.gw.call('/chat/completions', { headers: co.routed, body: { model: 'command-r', messages: [{ role: 'user', content: 'q' }] } });
    for (const expected of ['length', 'length', 'stop']) {
      const res = await ask();
      assert.equal(((await res.json()) as OpenAI.ChatCompletion).choices[0]!.finish_reason, expected);
    }
    const e = await assertEnvelope(await ask(), 502);
    assert.match(e.message, /generation failed/);
  });

  describe('errors', () => {
    it("Cohere's errors keep their status and message in the contract's envelope", async () => {
      const wrongKey = await co.gw.call('/chat/completions', {
        headers: { ...co.routed, authorization: 'Bearer co-wrong' },
        body: { model: 'command-r', messages: [{ role: 'user', content: 'q' }] },
      });
      const e = await assertEnvelope(wrongKey, 401);
      assert.equal(e.message, 'invalid api token');
      assert.equal(e.type, 'authentication_error');

      // Cohere checks the range OpenAI's clients may exceed (its temperature stops at 1).
      const hot = await co.gw.call('/chat/completions', { headers: co.routed, body: { model: 'command-r', messages: [{ role: 'user', content: 'q' }], temperature: 1.5 } });
      assert.equal((await assertEnvelope(hot, 400)).message, 'invalid request: temperature must be between 0 and 1');

      const noModel = await co.gw.call('/chat/completions', { headers: co.routed, body: { messages: [{ role: 'user', content: 'q' }] } });
      assert.equal((await assertEnvelope(noModel, 400)).message, 'invalid request: model must be specified');

      co.mock.enqueue(
        '/v2/chat',
        { status: 429, body: { id: 'x', message: "You are using a Trial key, which is limited to 10 API calls / minute." } },
        { status: 498, body: { message: 'blocked output: please adjust your prompt and try again' } },
        { status: 503, raw: { text: '<html>upstream unavailable</html>', contentType: 'text/html' } },
        { status: 500, raw: { text: '', contentType: 'text/plain' } },
      );
      const ask = () => co.gw.call('/chat/completions', { headers: co.routed, body: { model: 'command-r', messages: [{ role: 'user', content: 'q' }] } });
      assert.match((await assertEnvelope(await ask(), 429)).message, /Trial key/);
      assert.match((await assertEnvelope(await ask(), 498)).message, /blocked output/);
      assert.equal((await assertEnvelope(await ask(), 503)).message, '<html>upstream unavailable</html>');
      assert.equal((await assertEnvelope(await ask(), 500)).message, 'cohere answered 500 without a message');
    });

    it('a 200 that is not JSON is a 502', async () => {
      co.mock.enqueue('/v2/chat', { raw: { text: 'not json', contentType: 'application/json' } });
      const res = await co.gw.call('/chat/completions', { headers: co.routed, body: { model: 'command-r', messages: [{ role: 'user', content: 'q' }] } });
      assert.match((await assertEnvelope(res, 502)).message, /not valid JSON/);
    });

    it('the OpenAI SDK sees an APIError with the status', async () => {
      const bad = new OpenAI({
        apiKey: 'co-wrong',
        baseURL: co.gw.v1,
        maxRetries: 0,
        defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': 'cohere', 'x-gateway-custom-host': co.mock.url },
      });
      await assert.rejects(
        bad.chat.completions.create({ model: 'command-r', messages: [{ role: 'user', content: 'q' }] }),
        (e: unknown) => e instanceof OpenAI.APIError && e.status === 401 && /invalid api token/.test(e.message),
      );
    });
  });

  describe('credentials and endpoints', () => {
    const chatBody = { model: 'command-r', messages: [{ role: 'user', content: 'q' }] };

    it('api_key and custom_host from a config', async () => {
      const config = JSON.stringify({ provider: 'cohere', api_key: KEY, custom_host: co.mock.url });
      const res = await co.gw.call('/chat/completions', { headers: { 'x-gateway-config': config }, body: chatBody });
      assert.equal(res.status, 200);
      assert.equal(upstream().headers.authorization, `Bearer ${KEY}`);
    });

    it('a missing or malformed credential is a 400 naming it, and nothing is sent', async () => {
      const none = await co.gw.call('/chat/completions', { headers: { 'x-gateway-provider': 'cohere', 'x-gateway-custom-host': co.mock.url }, body: chatBody });
      assert.equal((await assertEnvelope(none, 400)).param, 'api_key');
      const spaced = await co.gw.call('/chat/completions', {
        headers: { 'x-gateway-config': JSON.stringify({ provider: 'cohere', api_key: 'co key', custom_host: co.mock.url }) },
        body: chatBody,
      });
      assert.equal((await assertEnvelope(spaced, 400)).param, 'api_key');
      const basic = await co.gw.call('/chat/completions', { headers: { ...co.routed, authorization: 'Basic Y286a2V5' }, body: chatBody });
      assert.equal((await assertEnvelope(basic, 400)).param, 'Authorization');
      assert.equal(co.mock.requests.length, 0);
    });

    it('/completions is refused: Cohere\'s Generate API is deprecated', async () => {
      await assert.rejects(
        co.client.completions.create({ model: 'command', prompt: 'say hi' }),
        (e: unknown) => e instanceof OpenAI.BadRequestError && /deprecated/.test(e.message) && /chat\/completions/.test(e.message),
      );
      assert.equal(co.mock.requests.length, 0);
    });
  });
});
