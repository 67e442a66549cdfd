// Black-box tests of the google provider (Gemini API): the OpenAI SDK against a real gateway,
// in front of a mock that speaks Gemini's wire format and checks what Google checks.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockGemini, vector, type MockGemini } from './support/mock-gemini.js';
import { assertEnvelope, readEvents } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'AIza-test-key';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('google (Gemini API)', () => {
  const gw = useGateway();
  let mock: MockGemini;
  let client: OpenAI;
  let headers: Record<string, string>;

  before(async () => {
    mock = await startMockGemini({ apiKey: KEY });
    headers = { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': 'google', 'x-gateway-custom-host': mock.geminiBase };
    client = new OpenAI({ apiKey: KEY, baseURL: gw.v1, maxRetries: 0, defaultHeaders: headers });
  });
  afterEach(() => mock.reset());
  after(async () => {
    await mock.close();
  });

  it('chat: every role and the sampling parameters reach Gemini as its own request; the answer comes back as OpenAI’s', async () => {
    const res = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'developer', content: [{ type: 'text', text: 'answer in English' }] },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is in these?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.webp?size=2' } },
          ],
        },
      ],
      temperature: 0.3,
      top_p: 0.9,
      max_tokens: 50,
      max_completion_tokens: 64,
      stop: ['END'],
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      n: 2,
      user: 'someone',
    });

    const up = mock.requests[0]!;
    assert.equal(up.path, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(up.headers['x-goog-api-key'], KEY);
    assert.equal(up.headers.authorization, undefined);
    assert.deepEqual(up.json, {
      contents: [
        { role: 'user', parts: [{ text: 'first question' }] },
        { role: 'model', parts: [{ text: 'first answer' }] },
        {
          role: 'user',
          parts: [
            { text: 'what is in these?' },
            { inlineData: { mimeType: 'image/png', data: PNG } },
            { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp?size=2' } },
          ],
        },
      ],
      systemInstruction: { parts: [{ text: 'be brief' }, { text: 'answer in English' }] },
      generationConfig: {
        temperature: 0.3,
        topP: 0.9,
        maxOutputTokens: 64,
        stopSequences: ['END'],
        candidateCount: 2,
        seed: 7,
        presencePenalty: 0.5,
        frequencyPenalty: -0.5,
      },
    });

    assert.equal(res.object, 'chat.completion');
    assert.equal(res.model, 'gemini-2.5-flash');
    assert.ok(res.id.length > 0);
    assert.equal(res.choices.length, 2);
    assert.deepEqual(
      res.choices.map((c) => [c.index, c.message.role, c.message.content, c.finish_reason]),
      [
        [0, 'assistant', '[mock] echo: what is in these?', 'stop'],
        [1, 'assistant', '[mock] echo: what is in these?', 'stop'],
      ],
    );
    // 2 + 3 + 2 + 2 + 4 words of text prompt; 6 words per candidate.
    assert.deepEqual([res.usage?.prompt_tokens, res.usage?.completion_tokens, res.usage?.total_tokens], [13, 12, 25]);
  });

  it('the key may come from the config instead of the Authorization header', async () => {
    const res = await gw.call('/chat/completions', {
      headers: { 'x-gateway-config': JSON.stringify({ provider: 'google', api_key: KEY, custom_host: mock.geminiBase }) },
      body: { model: 'gemini-2.0-flash', messages: [{ role: 'user', content: 'hi' }] },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-gateway-provider'), 'google');
    assert.equal(mock.requests[0]!.headers['x-goog-api-key'], KEY);
  });

  it('tools: declarations and tool_choice go as Gemini’s; parallel function calls come back as tool_calls; results go back as functionResponse', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'weather in a city',
          parameters: {
            type: 'object',
            properties: { city: { type: 'string' }, unit: { type: ['string', 'null'], enum: ['C', 'F', null] } },
            required: ['city', 'unit'],
            additionalProperties: false,
          },
          strict: true,
        },
      },
      { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
    ];
    mock.enqueue('generateContent', {
      body: {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { functionCall: { name: 'get_weather', args: { city: 'Paris', unit: 'C' } }, thoughtSignature: 'c2lnbmF0dXJlLW9uZQ==' },
                { functionCall: { name: 'get_weather', args: { city: 'Oslo', unit: null } } },
              ],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 10, totalTokenCount: 30 },
        modelVersion: 'gemini-3-pro-preview',
      },
    });
    const first = await client.chat.completions.create({
      model: 'gemini-3-pro-preview',
      messages: [{ role: 'user', content: 'weather in Paris and Oslo?' }],
      tools,
      tool_choice: 'required',
      parallel_tool_calls: true,
    });
    assert.deepEqual(mock.requests[0]!.json.tools, [
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'weather in a city',
            parameters: {
              type: 'OBJECT',
              properties: { city: { type: 'STRING' }, unit: { type: 'STRING', nullable: true, enum: ['C', 'F'] } },
              propertyOrdering: ['city', 'unit'],
              required: ['city', 'unit'],
            },
          },
          { name: 'now' },
        ],
      },
    ]);
    assert.deepEqual(mock.requests[0]!.json.toolConfig, { functionCallingConfig: { mode: 'ANY' } });

    const choice = first.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    const calls = choice.message.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[];
    assert.deepEqual(
      calls.map((c) => [c.type, c.function.name, JSON.parse(c.function.arguments)]),
      [
        ['function', 'get_weather', { city: 'Paris', unit: 'C' }],
        ['function', 'get_weather', { city: 'Oslo', unit: null }],
      ],
    );
    assert.notEqual(calls[0]!.id, calls[1]!.id);
    for (const c of calls) assert.match(c.id, /^[A-Za-z0-9_-]+$/);

    // The next turn: Gemini 3 (the mock, as Google) refuses function calls without their
    // thought signature and a function response count that differs from the calls'.
    await client.chat.completions.create({
      model: 'gemini-3-pro-preview',
      messages: [
        { role: 'user', content: 'weather in Paris and Oslo?' },
        { role: 'assistant', content: null, tool_calls: calls },
        { role: 'tool', tool_call_id: calls[1]!.id, content: '{"temp": -3}' },
        { role: 'tool', tool_call_id: calls[0]!.id, content: 'sunny, 21 degrees' },
        { role: 'user', content: 'thanks; which is warmer?' },
      ],
      tools,
      tool_choice: { type: 'function', function: { name: 'now' } },
    });
    const second = mock.requests[1]!.json;
    assert.deepEqual(second.contents, [
      { role: 'user', parts: [{ text: 'weather in Paris and Oslo?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris', unit: 'C' } }, thoughtSignature: 'c2lnbmF0dXJlLW9uZQ==' },
          { functionCall: { name: 'get_weather', args: { city: 'Oslo', unit: null } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temp: -3 } } },
          { functionResponse: { name: 'get_weather', response: { output: 'sunny, 21 degrees' } } },
          { text: 'thanks; which is warmer?' },
        ],
      },
    ]);
    assert.deepEqual(second.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['now'] } });
  });

  it('without the thought signature Gemini 3 refuses the turn, with its status and message', async () => {
    const res = await client.chat.completions
      .create({
        model: 'gemini-3-pro-preview',
        messages: [
          { role: 'user', content: 'time?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_plain', type: 'function', function: { name: 'now', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'call_plain', content: '12:00' },
        ],
      })
      .catch((e: unknown) => e);
    assert.ok(res instanceof OpenAI.BadRequestError);
    assert.match(res.message, /missing a thought_signature/);
    assert.equal((res.error as { code?: string }).code, 'invalid_argument');
  });

  it('response_format: json_object asks for JSON; json_schema sends the converted schema', async () => {
    const obj = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'as json' }],
      response_format: { type: 'json_object' },
    });
    assert.deepEqual(JSON.parse(obj.choices[0]!.message.content!), { echo: 'as json' });
    assert.deepEqual(mock.requests[0]!.json.generationConfig, { responseMimeType: 'application/json' });

    await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'a person' }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'person',
          strict: true,
          schema: {
            type: 'object',
            properties: {
              name: { type: 'string', description: 'full name' },
              born: { type: 'string', format: 'date-time' },
              email: { type: 'string', format: 'email' },
              pets: { type: 'array', items: { $ref: '#/$defs/pet' }, maxItems: 3 },
            },
            required: ['name', 'pets'],
            additionalProperties: false,
            $defs: { pet: { type: 'object', properties: { kind: { const: 'cat' }, age: { anyOf: [{ type: 'integer' }, { type: 'null' }] } } } },
          },
        },
      },
    });
    assert.deepEqual(mock.requests[1]!.json.generationConfig, {
      responseMimeType: 'application/json',
      responseSchema: {
        type: 'OBJECT',
        properties: {
          name: { type: 'STRING', description: 'full name' },
          born: { type: 'STRING', format: 'date-time' },
          email: { type: 'STRING' },
          pets: {
            type: 'ARRAY',
            items: {
              type: 'OBJECT',
              properties: { kind: { type: 'STRING', enum: ['cat'] }, age: { type: 'INTEGER', nullable: true } },
              propertyOrdering: ['kind', 'age'],
            },
            maxItems: '3',
          },
        },
        propertyOrdering: ['name', 'born', 'email', 'pets'],
        required: ['name', 'pets'],
      },
    });
  });

  it('streaming: text deltas become chunks, usage comes last with include_usage, the stream ends with [DONE]', async () => {
    const stream = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'one two three' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const finishes: (string | null)[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      assert.equal(chunk.object, 'chat.completion.chunk');
      if (chunk.usage) {
        assert.deepEqual(chunk.choices, []);
        usage = chunk.usage;
        continue;
      }
      text += chunk.choices[0]!.delta.content ?? '';
      finishes.push(chunk.choices[0]!.finish_reason);
    }
    assert.equal(text, '[mock] echo: one two three');
    assert.ok(chunks >= 6, `${chunks} chunks`);
    assert.deepEqual(finishes.filter((f) => f !== null), ['stop']);
    assert.equal(finishes.at(-1), 'stop');
    assert.deepEqual([usage?.prompt_tokens, usage?.completion_tokens, usage?.total_tokens], [3, 5, 8]);
    assert.equal(mock.requests[0]!.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');

    // On the wire: SSE framing, the first chunk names the role, [DONE] last; no usage chunk unless asked.
    const res = await fetch(`${gw.v1}/chat/completions`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'a b' }], stream: true }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = (await readEvents(res)).map((e) => e.data);
    assert.equal(events.at(-1), '[DONE]');
    const parsed = events.slice(0, -1).map((d) => JSON.parse(d));
    assert.equal(parsed[0].choices[0].delta.role, 'assistant');
    assert.ok(parsed.every((c) => c.choices.length === 1 && c.usage === undefined));
  });

  it('streaming: a function call arrives as a tool_calls delta and the stream finishes with tool_calls', async () => {
    mock.enqueue('streamGenerateContent', {
      sse: [
        { candidates: [{ content: { role: 'model', parts: [{ text: 'Let me check. ' }] }, index: 0 }], responseId: 'r-1', modelVersion: 'gemini-2.5-pro' },
        {
          candidates: [
            {
              content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Rome' } } }, { functionCall: { name: 'now', args: {} } }] },
              finishReason: 'STOP',
              index: 0,
            },
          ],
          usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 12, thoughtsTokenCount: 30, cachedContentTokenCount: 4, totalTokenCount: 51 },
          responseId: 'r-1',
          modelVersion: 'gemini-2.5-pro',
        },
      ],
      chunkDelayMs: 20,
    });
    const stream = client.chat.completions.stream({
      model: 'gemini-2.5-pro',
      messages: [{ role: 'user', content: 'weather in Rome' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      stream_options: { include_usage: true },
    });
    const done = await stream.finalChatCompletion();
    const msg = done.choices[0]!.message;
    assert.equal(done.id, 'r-1');
    assert.equal(done.model, 'gemini-2.5-pro');
    assert.equal(msg.content, 'Let me check. ');
    assert.equal(done.choices[0]!.finish_reason, 'tool_calls');
    assert.deepEqual(
      (msg.tool_calls as OpenAI.ChatCompletionMessageFunctionToolCall[]).map((c) => [c.function.name, c.function.arguments]),
      [
        ['get_weather', '{"city":"Rome"}'],
        ['now', '{}'],
      ],
    );
    assert.deepEqual(done.usage, {
      prompt_tokens: 9,
      completion_tokens: 42,
      total_tokens: 51,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 30 },
    });
  });

  it('finish reasons and blocked prompts: MAX_TOKENS → length, SAFETY and RECITATION → content_filter, a blocked prompt → an empty filtered choice', async () => {
    const answer = (finishReason: string) => ({
      body: { candidates: [{ content: { role: 'model', parts: [{ text: 'partial' }] }, finishReason, index: 0 }] },
    });
    mock.enqueue('generateContent', answer('MAX_TOKENS'), answer('SAFETY'), answer('RECITATION'), answer('OTHER'), {
      body: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } },
    });
    const reasons: (string | null)[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] });
      reasons.push(r.choices[0]!.finish_reason);
      if (i === 4) {
        assert.equal(r.choices[0]!.message.content, null);
        assert.equal(r.usage?.prompt_tokens, 5);
      }
    }
    assert.deepEqual(reasons, ['length', 'content_filter', 'content_filter', 'stop', 'content_filter']);
  });

  it('usage: cached, reasoning and tool-use prompt tokens are reported in OpenAI’s fields', async () => {
    mock.enqueue('generateContent', {
      body: {
        candidates: [{ content: { role: 'model', parts: [{ text: 'thinking…', thought: true }, { text: '42' }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 60, candidatesTokenCount: 2, thoughtsTokenCount: 40, toolUsePromptTokenCount: 8, totalTokenCount: 150 },
      },
    });
    const res = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'q' }], reasoning_effort: 'low' });
    assert.deepEqual(mock.requests[0]!.json.generationConfig, { thinkingConfig: { thinkingBudget: 1024 } });
    assert.equal(res.choices[0]!.message.content, '42');
    assert.equal((res.choices[0]!.message as unknown as { reasoning_content: string }).reasoning_content, 'thinking…');
    assert.deepEqual(res.usage, {
      prompt_tokens: 108,
      completion_tokens: 42,
      total_tokens: 150,
      prompt_tokens_details: { cached_tokens: 60 },
      completion_tokens_details: { reasoning_tokens: 40 },
    });
  });

  describe('errors', () => {
    it('Google’s own errors come back in the envelope with its status: a wrong key, a quota error', async () => {
      const bad = await fetch(`${gw.v1}/chat/completions`, {
        method: 'POST',
        headers: { ...headers, authorization: 'Bearer AIza-wrong', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }),
      });
      const e = await assertEnvelope(bad, 400);
      assert.equal(e.message, 'API key not valid. Please pass a valid API key.');
      assert.equal(e.code, 'invalid_argument');

      mock.enqueue('streamGenerateContent', {
        status: 429,
        body: { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } },
      });
      const limited = await client.chat.completions
        .create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true })
        .catch((err: unknown) => err);
      assert.ok(limited instanceof OpenAI.RateLimitError);
      assert.equal(limited.status, 429);
      assert.match(limited.message, /Resource has been exhausted/);
    });

    it('an error event inside a stream becomes an error event that ends the stream, no [DONE]', async () => {
      mock.enqueue('streamGenerateContent', {
        sse: [
          { candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] }, index: 0 }] },
          { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } },
        ],
      });
      const res = await fetch(`${gw.v1}/chat/completions`, {
        method: 'POST',
        headers: { ...headers, authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      });
      const events = (await readEvents(res)).map((e) => e.data);
      assert.equal(events.length, 2);
      assert.equal(JSON.parse(events[0]!).choices[0].delta.content, 'Hel');
      assert.deepEqual(JSON.parse(events[1]!), {
        error: { message: 'The model is overloaded. Please try again later.', type: 'upstream_error', code: 'unavailable', param: null },
      });
    });

    it('refused by the gateway before any call, naming what is wrong', async () => {
      const cases: [Record<string, string>, string, unknown, string][] = [
        [{}, '/chat/completions', { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }, 'api_key'],
        [{ authorization: `Bearer ${KEY}` }, '/completions', { model: 'gemini-2.5-flash', prompt: 'hi' }, 'provider'],
        [{ authorization: `Bearer ${KEY}` }, '/chat/completions', { messages: [{ role: 'user', content: 'hi' }] }, 'model'],
        [{ authorization: `Bearer ${KEY}` }, '/chat/completions', { model: '../files/x', messages: [{ role: 'user', content: 'hi' }] }, 'model'],
        [{ authorization: `Bearer ${KEY}` }, '/chat/completions', { model: 'g', messages: [{ role: 'user', content: 'hi' }], modalities: ['audio'] }, 'modalities'],
        [
          { authorization: `Bearer ${KEY}` },
          '/chat/completions',
          { model: 'g', messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'nope', content: 'x' }] },
          'messages[1].tool_call_id',
        ],
        [
          { authorization: `Bearer ${KEY}` },
          '/chat/completions',
          { model: 'g', messages: [{ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] },
          'messages[0].tool_calls[0].function.arguments',
        ],
        [{ authorization: `Bearer ${KEY}` }, '/embeddings', { model: 'text-embedding-004', input: [1, 2, 3] }, 'input'],
      ];
      for (const [extra, path, body, param] of cases) {
        const res = await gw.call(path, { headers: { 'x-gateway-provider': 'google', 'x-gateway-custom-host': mock.geminiBase, ...extra }, body });
        const e = await assertEnvelope(res, 400);
        assert.equal(e.param, param, e.message);
      }
      assert.equal(mock.requests.length, 0);
    });
  });

  it('embeddings: batchEmbedContents with outputDimensionality; floats or base64 back', async () => {
    const floats = await client.embeddings.create({ model: 'gemini-embedding-001', input: ['alpha', 'beta'], dimensions: 4 });
    assert.equal(mock.requests[0]!.path, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
    assert.deepEqual(mock.requests[0]!.json, {
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'alpha' }] }, outputDimensionality: 4 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'beta' }] }, outputDimensionality: 4 },
      ],
    });
    assert.equal(floats.object, 'list');
    assert.equal(floats.model, 'gemini-embedding-001');
    assert.deepEqual(
      floats.data.map((d) => [d.index, d.embedding]),
      [
        [0, vector('alpha', 4)],
        [1, vector('beta', 4)],
      ],
    );

    const b64 = await client.embeddings.create({ model: 'gemini-embedding-001', input: 'alpha', encoding_format: 'base64' });
    const raw = Buffer.from(b64.data[0]!.embedding as unknown as string, 'base64');
    const decoded = Array.from({ length: raw.length / 4 }, (_, i) => raw.readFloatLE(i * 4));
    assert.deepEqual(decoded, vector('alpha', 8));
  });

  it('generic proxy: Gemini’s own path and body pass through with the key, the answer unchanged', async () => {
    const body = { contents: [{ role: 'user', parts: [{ text: 'raw call' }] }] };
    const res = await fetch(`${gw.v1}/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200);
    const answer = (await res.json()) as { candidates: { content: { parts: { text: string }[] } }[] };
    assert.equal(answer.candidates[0]!.content.parts[0]!.text, '[mock] echo: raw call');
    assert.equal(mock.requests[0]!.path, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(mock.requests[0]!.headers['x-goog-api-key'], KEY);
    assert.deepEqual(mock.requests[0]!.json, body);
  });
});
