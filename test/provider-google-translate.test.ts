// Unit tests of the Gemini translation's pure parts: schema conversion, request mapping,
// answer mapping, the SSE transform, tool-call ids and error bodies.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { toGeminiSchema } from '../src/providers/google/schema.js';
import { geminiChat, toGenerateContent } from '../src/providers/google/chat/request.js';
import { finishReason, toChatCompletion, toLogprobs } from '../src/providers/google/chat/response.js';
import { GeminiStream } from '../src/providers/google/chat/stream.js';
import { signatureOf, toolCallId } from '../src/providers/google/tool-ids.js';
import { googleError } from '../src/providers/google/errors.js';
import type { ChatRequest } from '../src/providers/shared/openai-request.js';

const translate = (body: Partial<ChatRequest>) => toGenerateContent({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], ...body } as ChatRequest, 'google');

function request(body: Partial<ChatRequest>) {
  const r = translate(body);
  assert.ok(r.ok, r.ok ? '' : r.error.message);
  return r.value;
}

function refused(body: Partial<ChatRequest>): { message: string; param: string | null } {
  const r = translate(body);
  assert.ok(!r.ok, 'expected a 400');
  assert.equal(r.error.status, 400);
  return { message: r.error.message, param: r.error.param };
}

describe('JSON Schema → Gemini schema', () => {
  it('types, nullability, unions, enums and formats', () => {
    const r = toGeminiSchema(
      {
        type: 'object',
        properties: {
          a: { type: ['integer', 'null'], format: 'int64', minimum: 0, exclusiveMaximum: 10 },
          b: { oneOf: [{ type: 'string' }, { type: 'number', format: 'double' }] },
          c: { type: ['string', 'boolean'], description: 'either' },
          d: { enum: ['x', 'y', null] },
          e: { enum: [1, 2] },
          f: { type: 'string', format: 'uri', pattern: '^h', minLength: 1, maxLength: 9 },
          g: { type: 'array', items: { type: 'string' }, uniqueItems: true, examples: [['q']] },
          h: { type: 'object', additionalProperties: { type: 'string' } },
        },
        required: ['a', 'zz'],
      },
      'p',
    );
    assert.ok(r.ok);
    assert.deepEqual(r.value, {
      type: 'OBJECT',
      properties: {
        a: { type: 'INTEGER', format: 'int64', nullable: true, minimum: 0 },
        b: { anyOf: [{ type: 'STRING' }, { type: 'NUMBER', format: 'double' }] },
        c: { anyOf: [{ type: 'STRING', description: 'either' }, { type: 'BOOLEAN', description: 'either' }], description: 'either' },
        d: { type: 'STRING', nullable: true, enum: ['x', 'y'] },
        e: {},
        f: { type: 'STRING', minLength: '1', maxLength: '9', pattern: '^h' },
        g: { type: 'ARRAY', items: { type: 'STRING' }, example: ['q'] },
        h: { type: 'OBJECT' },
      },
      propertyOrdering: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'],
      required: ['a'],
    });
  });

  it('inlines $ref (with siblings) and merges allOf', () => {
    const r = toGeminiSchema(
      {
        definitions: { Base: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
        $defs: { Tag: { type: 'string', description: 'a tag' } },
        allOf: [{ $ref: '#/definitions/Base' }, { properties: { tag: { $ref: '#/$defs/Tag', description: 'the tag' } }, required: ['tag'] }],
      },
      'p',
    );
    assert.ok(r.ok);
    assert.deepEqual(r.value, {
      type: 'OBJECT',
      properties: { id: { type: 'STRING' }, tag: { type: 'STRING', description: 'the tag' } },
      propertyOrdering: ['id', 'tag'],
      required: ['id', 'tag'],
    });
  });

  it('refuses what cannot be expressed, naming the place', () => {
    const recursive = toGeminiSchema({ $defs: { Node: { type: 'object', properties: { next: { $ref: '#/$defs/Node' } } } }, $ref: '#/$defs/Node' }, 'response_format.json_schema.schema');
    assert.ok(!recursive.ok);
    assert.equal(recursive.error.param, 'response_format.json_schema.schema');
    assert.match(recursive.error.message, /recursive \$ref '#\/\$defs\/Node'/);
    const dangling = toGeminiSchema({ $ref: '#/$defs/Nope' }, 'p');
    assert.ok(!dangling.ok && /does not name a schema/.test(dangling.error.message));
    const tuple = toGeminiSchema({ type: 'array', items: [{ type: 'string' }] }, 'p');
    assert.ok(!tuple.ok && /tuple/.test(tuple.error.message));
  });
});

describe('chat request → generateContent', () => {
  it('merges consecutive turns of one role and skips empty system and assistant texts', () => {
    const r = request({
      messages: [
        { role: 'system', content: '' },
        { role: 'user', content: 'a' },
        { role: 'user', content: [{ type: 'text', text: 'b' }] },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'c' },
        { role: 'assistant', content: [{ type: 'text', text: 'd' }, { type: 'refusal', refusal: 'no' }] },
      ],
    });
    assert.deepEqual(r.contents, [
      { role: 'user', parts: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] },
      { role: 'model', parts: [{ text: 'd' }, { text: 'no' }] },
    ]);
    assert.equal(r.systemInstruction, undefined);
  });

  it('media parts: data URLs inline (base64 or not), URLs as file references with a guessed type, audio and files', () => {
    const r = request({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:text/plain,hello%20there' } },
            { type: 'image_url', image_url: { url: 'gs://bucket/photo.JPG' } },
            { type: 'image_url', image_url: { url: 'https://example.com/no-extension' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
            { type: 'file', file: { file_id: 'https://generativelanguage.googleapis.com/v1beta/files/abc', filename: 'notes.txt' } },
          ],
        },
      ],
    });
    assert.deepEqual(r.contents[0]!.parts, [
      { inlineData: { mimeType: 'text/plain', data: Buffer.from('hello there').toString('base64') } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'gs://bucket/photo.JPG' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/no-extension' } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { fileData: { fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc', mimeType: 'text/plain' } },
    ]);
    assert.equal(refused({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] }).param, 'messages[0].content[0].image_url.url');
    assert.equal(refused({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'ogg' } }] }] }).param, 'messages[0].content[0].input_audio.format');
    assert.equal(refused({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] } as never] }).param, 'messages[0].content[0].type');
  });

  it('legacy function messages and function_call', () => {
    const r = request({
      messages: [
        { role: 'user', content: 'time?' },
        { role: 'assistant', content: null, function_call: { name: 'now', arguments: '' } },
        { role: 'function', name: 'now', content: '"12:00"' },
      ],
      functions: [{ name: 'now', description: 'the time' }],
      function_call: { name: 'now' },
    });
    assert.deepEqual(r.contents.slice(1), [
      { role: 'model', parts: [{ functionCall: { name: 'now', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'now', response: { output: '12:00' } } }] },
    ]);
    assert.deepEqual(r.tools, [{ functionDeclarations: [{ name: 'now', description: 'the time' }] }]);
    assert.deepEqual(r.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['now'] } });
  });

  it('tool_choice in all its forms; built-in tools; unknown tool types refused', () => {
    const tools = [
      { type: 'function', function: { name: 'a', parameters: { type: 'object', properties: { x: { type: 'string' } } } } },
      { type: 'function', function: { name: 'b' } },
      { type: 'google_search', google_search: {} },
    ];
    assert.deepEqual(request({ tools, tool_choice: 'none' }).toolConfig, { functionCallingConfig: { mode: 'NONE' } });
    assert.deepEqual(request({ tools, tool_choice: 'auto' }).toolConfig, { functionCallingConfig: { mode: 'AUTO' } });
    const narrowed = request({ tools, tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'b' } }] } } });
    assert.deepEqual(narrowed.toolConfig, { functionCallingConfig: { mode: 'ANY' } });
    assert.deepEqual(narrowed.tools, [{ functionDeclarations: [{ name: 'b' }] }, { googleSearch: {} }]);
    assert.equal(refused({ tools, tool_choice: { type: 'function', function: { name: 'zz' } } }).param, 'tool_choice.function.name');
    assert.equal(refused({ tools: [{ type: 'custom', custom: { name: 'c' } }] }).param, 'tools[0].type');
    assert.equal(refused({ tool_choice: { type: 'custom' } }).param, 'tool_choice.type');
  });

  it('generation config: max_completion_tokens wins over max_tokens, a stop string, logprobs, top_k, Gemini’s own fields', () => {
    const r = request({
      max_tokens: 10,
      max_completion_tokens: 20,
      stop: 'STOP',
      logprobs: true,
      top_logprobs: 3,
      top_k: 40,
      temperature: null,
      safety_settings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      cached_content: 'cachedContents/abc',
    });
    assert.deepEqual(r.generationConfig, { topK: 40, maxOutputTokens: 20, stopSequences: ['STOP'], responseLogprobs: true, logprobs: 3 });
    assert.deepEqual(r.safetySettings, [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }]);
    assert.equal(r.cachedContent, 'cachedContents/abc');
    assert.deepEqual(request({ max_tokens: 10 }).generationConfig, { maxOutputTokens: 10 });
  });

  it('thinking: reasoning_effort as a budget (2.5) or a level (3); Anthropic-style thinking', () => {
    assert.deepEqual(request({ reasoning_effort: 'high' }).generationConfig, { thinkingConfig: { thinkingBudget: 24576 } });
    assert.deepEqual(request({ reasoning_effort: 'none' }).generationConfig, { thinkingConfig: { thinkingBudget: 0 } });
    assert.deepEqual(request({ model: 'gemini-3-pro-preview', reasoning_effort: 'low' }).generationConfig, { thinkingConfig: { thinkingLevel: 'low' } });
    assert.deepEqual(request({ thinking: { type: 'enabled', budget_tokens: 2048 } }).generationConfig, {
      thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 },
    });
    assert.equal(refused({ reasoning_effort: 'extreme' }).param, 'reasoning_effort');
  });

  it('fields: dropped by rule, refused otherwise; a null means unset', () => {
    const r = translate({ user: 'u', logit_bias: { '1': 2 }, parallel_tool_calls: false, store: true, metadata: { a: 'b' }, service_tier: 'auto' } as never);
    assert.ok(r.ok);
    assert.equal(r.value.generationConfig, undefined);
    assert.ok(translate({ prediction: null } as never).ok);
    const e = refused({ prediction: { type: 'content', content: 'x' } } as never);
    assert.equal(e.param, 'prediction');
    assert.match(e.message, /not supported by provider 'google'/);
  });

  it('stream flags: a streamed answer, whose usage chunk is stripped unless asked for', () => {
    const asked = geminiChat('google').request({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    assert.ok(asked.ok && asked.value.answer.streamed);
    assert.equal(asked.value.answer.addedUsage, false);
    const unasked = geminiChat('google').request({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true });
    assert.ok(unasked.ok && unasked.value.answer.streamed && unasked.value.answer.addedUsage);
  });
});

describe('generateContent answer → chat.completion', () => {
  const ctx = { provider: 'google', model: 'asked-model' };

  it('maps parts, thoughts, code execution, logprobs, ids and times', () => {
    const out = toChatCompletion(
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: 'plan', thought: true },
                { text: 'Result: ' },
                { executableCode: { language: 'PYTHON', code: 'print(1+1)' } },
                { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '2' } },
              ],
            },
            finishReason: 'STOP',
            logprobsResult: {
              chosenCandidates: [{ token: 'Re', logProbability: -0.1 }],
              topCandidates: [{ candidates: [{ token: 'Re', logProbability: -0.1 }, { token: 'An', logProbability: -2.5 }] }],
            },
          },
        ],
        responseId: 'resp-9',
        createTime: '2025-01-02T03:04:05.678Z',
      },
      ctx,
    );
    assert.equal(out.id, 'resp-9');
    assert.equal(out.model, 'asked-model');
    assert.equal(out.created, Math.floor(Date.parse('2025-01-02T03:04:05Z') / 1000));
    assert.equal(out.usage, undefined);
    const choice = (out.choices as any[])[0];
    assert.equal(choice.message.content, 'Result: \n```python\nprint(1+1)\n```\n\n```\n2\n```\n');
    assert.equal(choice.message.reasoning_content, 'plan');
    assert.equal(choice.finish_reason, 'stop');
    assert.deepEqual(choice.logprobs, {
      content: [
        {
          token: 'Re',
          logprob: -0.1,
          bytes: [82, 101],
          top_logprobs: [
            { token: 'Re', logprob: -0.1, bytes: [82, 101] },
            { token: 'An', logprob: -2.5, bytes: [65, 110] },
          ],
        },
      ],
      refusal: null,
    });
    assert.equal(toLogprobs(undefined), null);
  });

  it('finish reasons', () => {
    const table: [string | undefined, boolean, string | null][] = [
      ['STOP', false, 'stop'],
      ['STOP', true, 'tool_calls'],
      ['MAX_TOKENS', true, 'length'],
      ['SAFETY', false, 'content_filter'],
      ['RECITATION', false, 'content_filter'],
      ['PROHIBITED_CONTENT', false, 'content_filter'],
      ['MALFORMED_FUNCTION_CALL', false, 'stop'],
      [undefined, false, null],
    ];
    for (const [reason, tools, want] of table) assert.equal(finishReason(reason, tools), want, String(reason));
  });
});

describe('Gemini SSE → OpenAI chunks', () => {
  async function run(input: (string | Buffer)[]): Promise<string[]> {
    const s = new GeminiStream({ provider: 'google', model: 'm' });
    const out: string[] = [];
    s.on('data', (d: Buffer) => out.push(d.toString('utf8')));
    const ended = new Promise((resolve) => s.on('end', resolve));
    for (const piece of input) s.write(piece);
    s.end();
    await ended;
    return out.join('').split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
  }

  const ev = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;

  it('reassembles events split anywhere, even inside a UTF-8 character; a last event without its blank line counts', async () => {
    const text = ev({ candidates: [{ content: { parts: [{ text: 'héllo ' }] } }], responseId: 'r' }) +
      `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'wörld' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2, totalTokenCount: 3 } })}`;
    const bytes = Buffer.from(text, 'utf8');
    const pieces: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 7) pieces.push(bytes.subarray(i, i + 7));
    const events = await run(pieces);
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.deepEqual(chunks.map((c) => c.id), ['r', 'r', 'r']);
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: 'héllo ' });
    assert.deepEqual(chunks[1].choices[0], { index: 0, delta: { content: 'wörld' }, logprobs: null, finish_reason: 'stop' });
    assert.deepEqual(chunks[2].choices, []);
    assert.equal(chunks[2].usage.total_tokens, 3);
  });

  it('a blocked prompt is a whole answer; an unreadable event or a cut stream ends in an error, no [DONE]', async () => {
    const blocked = await run([ev({ promptFeedback: { blockReason: 'OTHER' }, usageMetadata: { promptTokenCount: 2 } })]);
    assert.equal(blocked.length, 3);
    assert.deepEqual(JSON.parse(blocked[0]!).choices[0].finish_reason, 'content_filter');
    assert.equal(JSON.parse(blocked[1]!).usage.prompt_tokens, 2);
    assert.equal(blocked[2], '[DONE]');
    const garbled = await run([ev({ candidates: [{ content: { parts: [{ text: 'a' }] } }] }), 'data: {not json\n\n']);
    assert.deepEqual([garbled.length, JSON.parse(garbled[1]!).error.code], [2, 'bad_upstream_stream']);
    const cut = await run([ev({ candidates: [{ content: { parts: [{ text: 'a' }] } }] })]);
    assert.deepEqual([cut.length, JSON.parse(cut[1]!).error.code], [2, 'incomplete_stream']);
  });

  it('tool calls get increasing indexes across events, and the candidate finishes with tool_calls', async () => {
    const call = (name: string) => ({ candidates: [{ content: { parts: [{ functionCall: { name, args: { n: name } } }] } }] });
    const events = await run([ev(call('a')), ev(call('b')), ev({ candidates: [{ finishReason: 'STOP' }] })]);
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.deepEqual(chunks[0].choices[0].delta.role, 'assistant');
    assert.equal(chunks[0].choices[0].delta.content, null);
    assert.deepEqual(
      chunks.slice(0, 2).map((c) => c.choices[0].delta.tool_calls.map((t: any) => [t.index, t.function.name, t.function.arguments])),
      [[[0, 'a', '{"n":"a"}']], [[1, 'b', '{"n":"b"}']]],
    );
    assert.equal(chunks[2].choices[0].finish_reason, 'tool_calls');
  });
});

describe('tool-call ids and errors', () => {
  it('a thought signature survives the round trip through an id made of [A-Za-z0-9_-]', () => {
    const sig = Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256)).toString('base64');
    const id = toolCallId(sig);
    assert.match(id, /^call_[0-9a-f]{24}_ts_[A-Za-z0-9_-]+$/);
    assert.equal(signatureOf(id), sig);
    assert.equal(signatureOf(toolCallId(undefined)), undefined);
    assert.equal(signatureOf('call_from_elsewhere'), undefined);
  });

  it('Google error bodies, bare or in an array; anything else quoted', () => {
    const e = googleError(404, Buffer.from(JSON.stringify([{ error: { code: 404, message: 'models/x is not found', status: 'NOT_FOUND' } }])));
    assert.deepEqual(e.toJSON(), { error: { message: 'models/x is not found', type: 'not_found_error', code: 'not_found', param: null } });
    const html = googleError(502, Buffer.from('<html>Bad Gateway</html>'));
    assert.equal(html.status, 502);
    assert.match(html.message, /Bad Gateway/);
  });
});
