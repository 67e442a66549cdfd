// Black-box tests of POST /v1/responses and the stored-response endpoints: the official
// OpenAI SDK (responses.create, responses.stream, retrieve, inputItems.list, delete) against
// a real gateway in front of mocks that speak Anthropic's, Bedrock's (event-stream framing),
// Vertex AI's, the Gemini API's and Cohere's wire formats, and OpenAI's own (native, and an
// OpenAI-compatible provider served over its chat API); storage on SQLite and Postgres.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { engines } from './support/engines.js';
import { startMockAnthropic, type MockAnthropic } from './support/mock-anthropic.js';
import { MOCK_REGION, startMockBedrock, type MockBedrock } from './support/mock-bedrock.js';
import { startMockCohere, type MockCohere } from './support/mock-cohere.js';
import { startMockGemini, type MockGemini } from './support/mock-gemini.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { until } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const ANTHROPIC_KEY = 'sk-ant-test-key';
const CLAUDE = 'claude-sonnet-4-5';

const sdk = (v1: string, headers: Record<string, string>, apiKey = 'unused'): OpenAI =>
  new OpenAI({ apiKey, baseURL: v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, ...headers } });

/** The event types of a stream, in order, and its final Response. */
async function streamed(client: OpenAI, body: Record<string, unknown>): Promise<{ types: string[]; final: any; events: any[] }> {
  const stream = client.responses.stream(body as any);
  const events: any[] = [];
  for await (const e of stream) events.push(e);
  const final = await stream.finalResponse();
  return { types: events.map((e) => e.type), final, events };
}

for (const engine of engines()) {
  describe(`responses over chat, stored (${engine.name})`, () => {
    const gw = useGateway(engine);
    let mock: MockAnthropic;
    let client: OpenAI;
    const upstream = (i = 0): any => mock.requests[i]!.json;

    before(async () => {
      mock = await startMockAnthropic({ apiKey: ANTHROPIC_KEY });
      client = sdk(gw.v1, { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': mock.url }, ANTHROPIC_KEY);
    });
    afterEach(() => mock.reset());
    after(() => mock.close());

    it('responses.create: a Response with output text and usage; stored, retrieved, its input listed, deleted', async () => {
      const res = await client.responses.create({ model: CLAUDE, instructions: 'be brief', input: 'hello there', max_output_tokens: 50, temperature: 0.3, metadata: { team: 'a' } });
      assert.equal(res.object, 'response');
      assert.match(res.id, /^resp_sy/);
      assert.equal(res.status, 'completed');
      assert.equal(res.output_text, '[claude-mock] echo: hello there');
      assert.equal(res.instructions, 'be brief');
      assert.deepEqual(res.metadata, { team: 'a' });
      assert.equal(res.usage!.output_tokens, 4);
      assert.equal(res.usage!.total_tokens, res.usage!.input_tokens + 4);
      assert.deepEqual(upstream().system, [{ type: 'text', text: 'be brief' }]);
      assert.equal(upstream().max_tokens, 50);
      assert.equal(upstream().temperature, 0.3);

      const got = await client.responses.retrieve(res.id);
      assert.equal(got.id, res.id);
      assert.equal(got.output_text, res.output_text);
      assert.deepEqual(got.usage, res.usage);
      const items = await client.responses.inputItems.list(res.id);
      assert.equal(items.data.length, 1);
      const item = items.data[0] as any;
      assert.equal(item.role, 'user');
      assert.deepEqual(item.content, [{ type: 'input_text', text: 'hello there' }]);
      assert.match(item.id, /^msg_/);

      await client.responses.delete(res.id);
      await assert.rejects(client.responses.retrieve(res.id), (e: any) => e.status === 404);
      await assert.rejects(client.responses.delete(res.id), (e: any) => e.status === 404);
    });

    it('responses.stream: the Responses events in OpenAI order, sequence numbers, the final Response stored as completed', async () => {
      const { types, final, events } = await streamed(client, { model: CLAUDE, input: 'stream me' });
      assert.equal(types[0], 'response.created');
      assert.equal(types[1], 'response.in_progress');
      assert.deepEqual(types.slice(2, 4), ['response.output_item.added', 'response.content_part.added']);
      assert.ok(types.includes('response.output_text.delta'));
      assert.deepEqual(types.slice(-4), ['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
      assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
      assert.equal(final.output_text, '[claude-mock] echo: stream me');
      assert.equal(final.status, 'completed');
      assert.ok(final.usage.output_tokens > 0);
      // Stored before the stream's end: retrievable at once.
      const got = await client.responses.retrieve(final.id);
      assert.equal(got.status, 'completed');
      assert.equal(got.output_text, final.output_text);
      assert.equal(upstream().stream, true);
    });

    it('responses.create with stream: true yields the same events through the SDK iterator', async () => {
      const stream = await client.responses.create({ model: CLAUDE, input: 'iterate', stream: true });
      let text = '';
      let completed: any = null;
      for await (const e of stream) {
        if (e.type === 'response.output_text.delta') text += e.delta;
        if (e.type === 'response.completed') completed = e.response;
      }
      assert.equal(text, '[claude-mock] echo: iterate');
      assert.equal(completed.usage.output_tokens, 3);
    });

    it('previous_response_id: the earlier turns go upstream, their instructions do not; store false keeps nothing', async () => {
      const first = await client.responses.create({ model: CLAUDE, instructions: 'turn one rules', input: 'my name is Ada' });
      const second = await client.responses.create({ model: CLAUDE, previous_response_id: first.id, input: 'what is my name?', store: false });
      assert.equal(second.previous_response_id, first.id);
      const sent = upstream(1);
      assert.equal(sent.system, undefined, 'instructions are not carried over');
      assert.deepEqual(
        sent.messages.map((m: any) => [m.role, m.content[0].text]),
        [['user', 'my name is Ada'], ['assistant', '[claude-mock] echo: my name is Ada'], ['user', 'what is my name?']],
      );
      await assert.rejects(client.responses.retrieve(second.id), (e: any) => e.status === 404, 'store: false');
      const third = await client.responses.create({ model: CLAUDE, previous_response_id: second.id, input: 'x' }).catch((e) => e);
      assert.equal(third.status, 400);
      assert.equal(third.error.param, 'previous_response_id');
    });

    it('function tools: a function_call item, its output sent back on the chain as tool_use and tool_result', async () => {
      mock.enqueue({ message: { content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } }], stop_reason: 'tool_use' } });
      const tools = [{ type: 'function' as const, name: 'weather', description: 'the weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
      const first = await client.responses.create({ model: CLAUDE, input: 'weather in Oslo?', tools, tool_choice: 'auto' });
      const call = first.output.find((o) => o.type === 'function_call') as any;
      assert.equal(call.call_id, 'toolu_1');
      assert.equal(call.name, 'weather');
      assert.deepEqual(JSON.parse(call.arguments), { city: 'Oslo' });
      assert.equal(upstream(0).tools[0].name, 'weather');
      const second = await client.responses.create({
        model: CLAUDE,
        previous_response_id: first.id,
        tools,
        input: [{ type: 'function_call_output', call_id: 'toolu_1', output: 'sunny' }],
      });
      assert.equal(second.status, 'completed');
      const messages = upstream(1).messages;
      assert.equal(messages[1].content[0].type, 'tool_use');
      assert.deepEqual(messages[2].content[0], { type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' });
      const listed = await client.responses.inputItems.list(second.id);
      assert.equal((listed.data[0] as any).type, 'function_call_output');
    });

    it('a streamed function call: output_item.added, arguments deltas and done', async () => {
      mock.enqueue({ message: { content: [{ type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Rome' } }], stop_reason: 'tool_use' } });
      const { types, final, events } = await streamed(client, { model: CLAUDE, input: 'weather?', tools: [{ type: 'function', name: 'weather', parameters: { type: 'object' } }] });
      assert.ok(types.includes('response.function_call_arguments.delta'));
      const done = events.find((e) => e.type === 'response.function_call_arguments.done');
      assert.deepEqual(JSON.parse(done.arguments), { city: 'Rome' });
      const call = final.output.find((o: any) => o.type === 'function_call');
      assert.equal(call.call_id, 'toolu_2');
      assert.deepEqual(JSON.parse(call.arguments), { city: 'Rome' });
    });

    it('input_items pages: limit, order, after, before; include keeps image URLs', async () => {
      const input = ['one', 'two', 'three'].map((t) => ({ role: 'user' as const, content: [{ type: 'input_text' as const, text: t }] }));
      const image = { role: 'user' as const, content: [{ type: 'input_image' as const, image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' as const }] };
      mock.enqueue({ message: { content: [{ type: 'text', text: 'ok' }] } });
      const res = await client.responses.create({ model: CLAUDE, input: [...input, image] });
      const texts = (page: any) => page.data.map((i: any) => i.content[0].text ?? i.content[0].type);
      const first = await client.responses.inputItems.list(res.id, { limit: 2 });
      assert.deepEqual(texts(first), ['one', 'two']);
      assert.equal(first.has_more, true);
      const next = await client.responses.inputItems.list(res.id, { limit: 2, after: (first.data[1] as any).id });
      assert.deepEqual(texts(next), ['three', 'input_image']);
      assert.equal(next.has_more, false);
      const desc = await client.responses.inputItems.list(res.id, { order: 'desc', limit: 1 });
      assert.deepEqual(texts(desc), ['input_image']);
      // The SDK's list params have no `before` (the spec's query has).
      const before = await (await gw.call(`/responses/${res.id}/input_items?before=${(next.data[0] as any).id}`, { method: 'GET' })).json();
      assert.deepEqual(texts(before), ['one', 'two']);
      assert.equal((next.data[1] as any).content[0].image_url, null, 'image URLs only with include');
      const withUrls = await client.responses.inputItems.list(res.id, { include: ['message.input_image.image_url'] });
      assert.equal((withUrls.data[3] as any).content[0].image_url, 'data:image/png;base64,iVBORw0KGgo=');
      const bad = await gw.call(`/responses/${res.id}/input_items?limit=0`, { method: 'GET' });
      assert.equal(bad.status, 400);
      const badInclude = await gw.call(`/responses/${res.id}?include=nope`, { method: 'GET' });
      assert.equal(badInclude.status, 400);
    });

    it('a stream the provider cuts short is stored failed, with the error message (Errors rule 3)', async () => {
      mock.enqueue({ events: [{ type: 'message_start', message: { id: 'msg_x', type: 'message', role: 'assistant', model: CLAUDE, content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 0 } } }, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'half' } }] });
      const stream = await client.responses.create({ model: CLAUDE, input: 'cut', stream: true });
      let id = '';
      const failed = await (async () => {
        try {
          for await (const e of stream) if (e.type === 'response.created') id = e.response.id;
        } catch (e) {
          return e as any;
        }
        return null;
      })();
      assert.ok(failed !== null, 'the SDK raises the error event');
      assert.equal(failed.error.code, 'incomplete_stream');
      const got: any = await client.responses.retrieve(id);
      assert.equal(got.status, 'failed');
      assert.match(got.error.message, /ended/);
      assert.equal(got.output[0].content[0].text, 'half');
    });

    it('bad requests are 400s naming the field; another workspace cannot see a stored response', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ model: CLAUDE }, 'input'],
        [{ model: CLAUDE, input: 'x', truncation: 'sometimes' }, 'truncation'],
        [{ model: CLAUDE, input: 'x', metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
        [{ model: CLAUDE, input: 'x', tools: [{ type: 'web_search' }] }, 'tools[0].type'],
        [{ model: CLAUDE, input: [{ type: 'item_reference', id: 'x' }] }, 'input[0].type'],
        [{ model: CLAUDE, input: 'x', previous_response_id: 'resp_not_ours' }, 'previous_response_id'],
      ];
      for (const [body, param] of cases) {
        const res = await gw.call('/responses', { headers: { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': mock.url, authorization: `Bearer ${ANTHROPIC_KEY}` }, body });
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal((await res.json()).error.param, param);
      }
      const res = await client.responses.create({ model: CLAUDE, input: 'mine' });
      const ws = await (await gw.call('/workspaces', { body: { name: 'other' } })).json();
      const key = await (await gw.call('/api-keys/workspace/service', { body: { name: 'k', workspace_id: ws.id, scopes: ['completions.write'] } })).json();
      const other = new OpenAI({ apiKey: 'x', baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': key.key } });
      await assert.rejects(other.responses.retrieve(res.id), (e: any) => e.status === 404);
      await assert.rejects(other.responses.delete(res.id), (e: any) => e.status === 404);
      assert.equal((await client.responses.retrieve(res.id)).id, res.id);
    });
  });
}

describe('responses: every provider over its chat API', () => {
  const gw = useGateway();
  let bedrock: MockBedrock;
  let gemini: MockGemini;
  let cohere: MockCohere;
  const CREDS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
  const PROJECT = 'proj-1';
  const REGION = 'us-central1';

  before(async () => {
    [bedrock, gemini, cohere] = await Promise.all([startMockBedrock(CREDS), startMockGemini({ apiKey: 'g-key', project: PROJECT, location: REGION }), startMockCohere({ apiKey: 'co-key' })]);
    gemini.addStaticToken('ya29.static');
  });
  afterEach(() => {
    bedrock.reset();
    gemini.reset();
    cohere.reset();
  });
  after(async () => {
    await Promise.all([bedrock.close(), gemini.close(), cohere.close()]);
  });

  const targets = (): [string, OpenAI, string][] => [
    ['bedrock', sdk(gw.v1, { 'x-gateway-config': JSON.stringify({ provider: 'bedrock', custom_host: bedrock.url, cloud1_access_key_id: CREDS.accessKeyId, cloud1_secret_access_key: CREDS.secretAccessKey, cloud1_region: MOCK_REGION }) }), 'anthropic.claude-3-5-sonnet-20240620-v1:0'],
    ['vertex-ai', sdk(gw.v1, { 'x-gateway-config': JSON.stringify({ provider: 'vertex-ai', api_key: 'ya29.static', cloud2_project_id: PROJECT, cloud2_region: REGION, custom_host: gemini.vertexBase }) }), 'gemini-2.5-flash'],
    ['google', sdk(gw.v1, { 'x-gateway-provider': 'google', 'x-gateway-custom-host': gemini.geminiBase }, 'g-key'), 'gemini-2.5-flash'],
    ['cohere', sdk(gw.v1, { 'x-gateway-provider': 'cohere', 'x-gateway-custom-host': cohere.url }, 'co-key'), 'command-r-plus'],
  ];

  it('responses.create and responses.stream answer through Bedrock (event-stream), Vertex AI, Gemini and Cohere', async () => {
    for (const [name, client, model] of targets()) {
      const res = await client.responses.create({ model, instructions: 'be brief', input: `hello ${name}` });
      assert.equal(res.status, 'completed', name);
      assert.match(res.output_text, new RegExp(`hello ${name}`), name);
      assert.ok(res.usage!.input_tokens > 0 && res.usage!.output_tokens > 0, `${name} usage`);
      const { types, final } = await streamed(client, { model, input: `stream ${name}` });
      assert.equal(types[0], 'response.created', name);
      assert.equal(types.at(-1), 'response.completed', name);
      assert.match(final.output_text, new RegExp(`stream ${name}`), name);
      assert.ok(final.usage.output_tokens > 0, `${name} stream usage`);
      assert.equal((await client.responses.retrieve(final.id)).output_text, final.output_text, `${name} stored`);
      const chained = await client.responses.create({ model, previous_response_id: res.id, input: 'again' });
      assert.equal(chained.status, 'completed', `${name} chained`);
    }
  });

  it('text.format json_schema reaches Gemini as its response schema', async () => {
    const [, client, model] = targets()[2]!;
    await client.responses.create({ model, input: 'json please', text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } } } } });
    const sent = gemini.requests[0]!.json as any;
    assert.equal(sent.generationConfig.responseMimeType, 'application/json');
    assert.ok(sent.generationConfig.responseSchema !== undefined);
  });
});

describe('responses: OpenAI natively, and an OpenAI-compatible provider over chat', () => {
  const gw = useGateway();
  let openai: MockOpenAI;
  before(async () => {
    openai = await startMockOpenAI({ apiKey: 'sk-oa' });
  });
  afterEach(() => openai.reset());
  after(() => openai.close());

  it('openai: POST /responses relayed to its Responses API as sent', async () => {
    openai.enqueue('/v1/responses', { body: { id: 'resp_abc', object: 'response', status: 'completed', model: 'gpt-4o', output: [] } });
    const client = sdk(gw.v1, { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url }, 'sk-oa');
    const res = await client.responses.create({ model: 'gpt-4o', input: 'hi' });
    assert.equal(res.id, 'resp_abc');
    assert.equal(openai.requests[0]!.path, '/v1/responses');
    assert.deepEqual(openai.requests[0]!.json, { model: 'gpt-4o', input: 'hi' });
  });

  it("openai continuing a chain the gateway stored: the earlier turns in input, the gateway's id not sent", async () => {
    const compatible = sdk(gw.v1, { 'x-gateway-provider': 'openai-compatible', 'x-gateway-custom-host': openai.url }, 'sk-oa');
    const first = await compatible.responses.create({ model: 'gpt-4o', input: 'remember 7' });
    openai.enqueue('/v1/responses', { body: { id: 'resp_abc', object: 'response', status: 'completed', model: 'gpt-4o', output: [] } });
    const native = sdk(gw.v1, { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url }, 'sk-oa');
    await native.responses.create({ model: 'gpt-4o', previous_response_id: first.id, input: 'which number?' });
    const sent = openai.requests[1]!.json as any;
    assert.equal(openai.requests[1]!.path, '/v1/responses');
    assert.equal(sent.previous_response_id, undefined);
    assert.deepEqual(sent.input.map((i: any) => i.role), ['user', 'assistant', 'user']);
    assert.equal(sent.input[1].content[0].text, first.output_text);
  });

  it('a client that leaves mid-stream: the response is stored as far as it came, incomplete', async () => {
    const chunk = (content: string) => JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] });
    openai.enqueue('/v1/chat/completions', { sse: [chunk('first '), chunk('second '), chunk('third')], chunkDelayMs: 400 });
    const client = sdk(gw.v1, { 'x-gateway-provider': 'openai-compatible', 'x-gateway-custom-host': openai.url }, 'sk-oa');
    const stream = await client.responses.create({ model: 'm', input: 'long answer', stream: true });
    let id = '';
    for await (const e of stream) {
      if (e.type === 'response.created') id = e.response.id;
      if (e.type === 'response.output_text.delta') break; // leaves
    }
    assert.equal(openai.requests[0]!.path, '/v1/chat/completions');
    let got: any = null;
    await until('the cut response is stored', async () => {
      got = await client.responses.retrieve(id).catch(() => null);
      return got !== null;
    });
    assert.equal(got.status, 'incomplete');
    assert.match(got.output[0].content[0].text, /^first/);
  });

  it("truncation: 'disabled' is a 400 when the input overflows the model's window; 'auto' drops the oldest turns", async () => {
    const client = sdk(gw.v1, { 'x-gateway-provider': 'openai-compatible', 'x-gateway-custom-host': openai.url }, 'sk-oa');
    const words = (n: number, w: string) => Array.from({ length: n }, () => w).join(' ');
    // gpt-4: 8192 tokens in the catalog.
    const first = await client.responses.create({ model: 'gpt-4', input: words(5000, 'apple') });
    const over = await client.responses.create({ model: 'gpt-4', previous_response_id: first.id, input: words(4000, 'pear') }).catch((e) => e);
    assert.equal(over.status, 400);
    assert.equal(over.error.code, 'context_length_exceeded');
    const n = openai.requests.length;
    const auto = await client.responses.create({ model: 'gpt-4', previous_response_id: first.id, input: words(4000, 'pear'), truncation: 'auto' });
    assert.equal(auto.status, 'completed');
    const sent = openai.requests[n]!.json as any;
    assert.equal(sent.messages.length, 1, 'the first turn was dropped');
    assert.match(sent.messages[0].content, /^pear/);
  });
});
