// Checks the mock upstream with the official `openai` SDK: if the SDK parses it, the mock
// speaks OpenAI's real wire format, so gateway tests built on it exercise realistic bytes.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';

const API_KEY = 'sk-test-mock-0123456789';

describe('mock OpenAI upstream', () => {
  let mock: MockOpenAI;
  let client: OpenAI;

  before(async () => {
    mock = await startMockOpenAI({ apiKey: API_KEY, name: 'alpha' });
    client = new OpenAI({ apiKey: API_KEY, baseURL: mock.url, maxRetries: 0 });
  });
  afterEach(() => mock.reset());
  after(() => mock.close());

  it('answers chat completions with an echo naming the upstream', async () => {
    const res = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello there' },
      ],
    });
    assert.equal(res.object, 'chat.completion');
    assert.equal(res.model, 'gpt-4o-mini');
    assert.match(res.id, /^chatcmpl-/);
    assert.equal(res.choices[0]?.message.role, 'assistant');
    assert.equal(res.choices[0]?.message.content, '[alpha] echo: hello there');
    assert.equal(res.choices[0]?.finish_reason, 'stop');
    assert.deepEqual(
      { p: res.usage?.prompt_tokens, c: res.usage?.completion_tokens, t: res.usage?.total_tokens },
      { p: 4, c: 4, t: 8 },
    );
  });

  it('streams chat completion chunks with a usage chunk, ending in [DONE]', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'one two three' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const c of stream) chunks.push(c);

    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'gpt-4o-mini'));
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
    assert.equal(chunks[0]?.choices[0]?.delta.role, 'assistant');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    assert.equal(text, '[alpha] echo: one two three');
    // role + one delta per word + finish + usage
    assert.equal(chunks.length, 1 + 5 + 1 + 1);
    assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, 'stop');
    const last = chunks.at(-1);
    assert.deepEqual(last?.choices, []);
    assert.equal(last?.usage?.total_tokens, 3 + 5);

    const raw = mock.requests[0];
    assert.equal(raw?.json.stream, true);
  });

  it('answers legacy completions, plain and streamed', async () => {
    const res = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'say this' });
    assert.equal(res.object, 'text_completion');
    assert.equal(res.choices[0]?.text, '[alpha] echo: say this');

    const stream = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'say this', stream: true });
    let text = '';
    let finish: string | null | undefined;
    for await (const c of stream) {
      assert.equal(c.object, 'text_completion');
      text += c.choices[0]?.text ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(text, '[alpha] echo: say this');
    assert.equal(finish, 'stop');
  });

  it('returns deterministic embeddings as floats and as base64 float32', async () => {
    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['a', 'b c'],
      encoding_format: 'float',
    });
    assert.equal(floats.object, 'list');
    assert.equal(floats.data.length, 2);
    assert.deepEqual(floats.data.map((d) => d.index), [0, 1]);
    assert.equal(floats.data[0]?.embedding.length, 8);
    assert.notDeepEqual(floats.data[0]?.embedding, floats.data[1]?.embedding);
    assert.equal(floats.usage.prompt_tokens, 3);

    // Without encoding_format the SDK asks for base64 and decodes the float32 bytes itself.
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b c'] });
    assert.equal(mock.requests[1]?.json.encoding_format, 'base64');
    assert.deepEqual(decoded.data.map((d) => d.embedding), floats.data.map((d) => d.embedding));

    const b64 = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: 'a',
      encoding_format: 'base64',
      dimensions: 4,
    });
    const raw = b64.data[0]?.embedding as unknown as string;
    assert.equal(typeof raw, 'string');
    assert.equal(Buffer.from(raw, 'base64').length, 4 * 4);
  });

  it('surfaces a scripted 429 with Retry-After as an APIError', async () => {
    mock.enqueue('/v1/chat/completions', {
      status: 429,
      headers: { 'retry-after': '7' },
      body: { error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
    });
    await assert.rejects(
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.APIError);
        assert.equal(err.status, 429);
        assert.equal(err.code, 'rate_limit_exceeded');
        assert.equal(err.headers?.get('retry-after'), '7');
        assert.match(err.requestID ?? '', /^req_/);
        return true;
      },
    );
    // The queue is consumed: the default behaviour resumes.
    const ok = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(ok.choices[0]?.message.content, '[alpha] echo: hi');
  });

  it('lets the SDK retry after a scripted 429', async () => {
    const retrying = new OpenAI({ apiKey: API_KEY, baseURL: mock.url, maxRetries: 1 });
    mock.enqueue('/v1/chat/completions', {
      status: 429,
      headers: { 'retry-after-ms': '10' },
      body: { error: { message: 'slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
    });
    const res = await retrying.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'again' }] });
    assert.equal(res.choices[0]?.message.content, '[alpha] echo: again');
    assert.equal(mock.requests.length, 2);
  });

  it('rejects a wrong API key with invalid_api_key and malformed JSON with 400', async () => {
    const wrong = new OpenAI({ apiKey: 'sk-wrong-key-000000', baseURL: mock.url, maxRetries: 0 });
    await assert.rejects(wrong.chat.completions.create({ model: 'm', messages: [] }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.AuthenticationError);
      assert.equal(err.code, 'invalid_api_key');
      assert.ok(!err.message.includes('sk-wrong-key-000000'));
      return true;
    });

    const res = await fetch(`${mock.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: '{"model":',
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: Record<string, unknown> };
    assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
    assert.equal(body.error.type, 'invalid_request_error');
  });

  it('records requests in order with method, path, headers, body and time', async () => {
    const t0 = Date.now();
    await client.embeddings.create({ model: 'e', input: 'x', encoding_format: 'float' });
    await fetch(`${mock.url}/anything?q=1`, { method: 'PUT', body: 'raw' });
    assert.equal(mock.requests.length, 2);
    const [first, second] = mock.requests;
    assert.equal(first?.method, 'POST');
    assert.equal(first?.path, '/v1/embeddings');
    assert.equal(first?.headers.authorization, `Bearer ${API_KEY}`);
    assert.deepEqual(first?.json, { model: 'e', input: 'x', encoding_format: 'float' });
    assert.ok((first?.at ?? 0) >= t0);
    assert.equal(second?.path, '/v1/anything?q=1');
    assert.equal(second?.body.toString(), 'raw');
    assert.equal(second?.json, undefined);
  });

  it('echoes unknown paths, serves binary and accepts multipart uploads', async () => {
    const echo = await fetch(`${mock.url}/files/abc?x=y`, { method: 'DELETE', headers: { 'x-custom': 'v' } });
    assert.equal(echo.status, 200);
    const e = (await echo.json()) as { method: string; path: string; headers: Record<string, string>; body_base64: string };
    assert.equal(e.method, 'DELETE');
    assert.equal(e.path, '/v1/files/abc?x=y');
    assert.equal(e.headers['x-custom'], 'v');
    assert.equal(e.body_base64, '');

    const bin = await fetch(`${mock.url}/binary`);
    assert.equal(bin.headers.get('content-type'), 'application/octet-stream');
    assert.deepEqual([...new Uint8Array(await bin.arrayBuffer())], Array.from({ length: 256 }, (_, i) => i));

    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([Buffer.alloc(100, 1)]), 'data.jsonl');
    const up = await fetch(`${mock.url}/upload`, { method: 'POST', body: form });
    const u = (await up.json()) as { bytes: number; content_type: string };
    assert.match(u.content_type, /^multipart\/form-data; boundary=/);
    assert.equal(u.bytes, mock.requests.at(-1)?.body.length);
    assert.ok(u.bytes > 100);
  });

  it('counts streams the client aborts', async () => {
    mock.enqueue('/v1/chat/completions', {
      sse: Array.from({ length: 20 }, (_, i) =>
        JSON.stringify({
          id: 'chatcmpl-x',
          object: 'chat.completion.chunk',
          created: 0,
          model: 'm',
          choices: [{ index: 0, delta: { content: `${i} ` }, logprobs: null, finish_reason: null }],
        }),
      ),
      chunkDelayMs: 30,
    });
    const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true });
    for await (const c of stream) {
      assert.equal(c.choices[0]?.delta.content, '0 ');
      break; // leaving the loop aborts the SDK's request
    }
    await mock.waitForAbortedStreams(1);
    assert.equal(mock.abortedStreams, 1);
  });

  it('turns scripted destroy into a connection error and delays on request', async () => {
    mock.enqueue('/v1/chat/completions', { destroy: true }, { delayMs: 150, body: { ok: true } });
    await assert.rejects(
      client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
      OpenAI.APIConnectionError,
    );
    const t0 = Date.now();
    const res = await fetch(`${mock.url}/chat/completions`, { method: 'POST' });
    assert.ok(Date.now() - t0 >= 140);
    assert.deepEqual(await res.json(), { ok: true });
    assert.ok(Number(res.headers.get('openai-processing-ms')) >= 140);
  });
});
