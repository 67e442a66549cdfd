// Claude on Vertex AI: the OpenAI SDK against a real gateway, in front of the mock Vertex AI
// (its anthropic publisher speaks rawPredict / streamRawPredict with Anthropic's Messages body).
// The body reshaping and the error reader: src/providers/vertex-ai/chat/request.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { toEvents } from './support/mock-anthropic.js';
import { useMockGemini } from './support/mock-gemini.js';
import { assertEnvelope } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const PROJECT = 'proj-claude';
const REGION = 'us-east5';
const MODEL = 'claude-sonnet-4-5@20250929';
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

const WEATHER_TOOL: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

describe('vertex-ai: anthropic publisher', () => {
  const gw = useGateway();
  const vertex = useMockGemini({ project: PROJECT, location: REGION, staticToken: 'ya29.static' });
  let accounts = 0;

  function account(): Record<string, unknown> {
    const email = `claude-${++accounts}@${PROJECT}.iam.gserviceaccount.com`;
    vertex().addAccount(email, keys.publicKey);
    return { type: 'service_account', project_id: PROJECT, private_key_id: `kid-${accounts}`, private_key: PEM, client_email: email, token_uri: vertex().tokenUri };
  }

  const config = (target: Record<string, unknown>): string =>
    JSON.stringify({ provider: 'vertex-ai', cloud2_region: REGION, custom_host: vertex().vertexBase, ...target });
  const tokenConfig = (target: Record<string, unknown> = {}): string => config({ api_key: 'ya29.static', cloud2_project_id: PROJECT, ...target });

  const sdk = (cfg: string): OpenAI =>
    new OpenAI({ apiKey: 'unused', baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': cfg } });

  const rawPredict = `/v1/projects/${PROJECT}/locations/${REGION}/publishers/anthropic/models/${MODEL}:rawPredict`;

  it('chat: rawPredict with the service account’s token, the Messages body without model and with anthropic_version', async () => {
    const res = await sdk(config({ cloud2_service_account_json: account() })).chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello claude' },
      ],
      max_tokens: 64,
      temperature: 0.5,
    });
    assert.equal(res.object, 'chat.completion');
    assert.equal(res.model, MODEL);
    assert.equal(res.choices[0]!.message.role, 'assistant');
    assert.equal(res.choices[0]!.message.content, '[mock] echo: hello claude');
    assert.equal(res.choices[0]!.finish_reason, 'stop');
    assert.equal(res.usage?.completion_tokens, 4);
    assert.equal(res.usage?.total_tokens, res.usage!.prompt_tokens + 4);

    assert.equal(vertex().exchanges.length, 1);
    const up = vertex().requests[0]!;
    assert.equal(up.path, rawPredict);
    assert.equal(up.headers.authorization, `Bearer ${vertex().exchanges[0]!.issued}`);
    assert.equal(up.headers['x-api-key'], undefined);
    assert.deepEqual(up.json, {
      anthropic_version: 'vertex-2023-10-16',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello claude' }] }],
      max_tokens: 64,
      system: [{ type: 'text', text: 'Be brief.' }],
      temperature: 0.5,
    });
  });

  it('a streamed chat: streamRawPredict with stream: true kept in the body; named events to chunks, usage last', async () => {
    const stream = await sdk(tokenConfig()).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'stream it please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const finishes: (string | null)[] = [];
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
    }
    assert.equal(text, '[mock] echo: stream it please');
    assert.deepEqual(finishes, ['stop']);
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.equal(last.usage?.completion_tokens, 5);
    assert.ok(chunks.slice(0, -1).every((c) => c.usage == null));
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1);

    const up = vertex().requests[0]!;
    assert.equal(up.path, rawPredict.replace(':rawPredict', ':streamRawPredict'));
    assert.equal(up.headers.authorization, 'Bearer ya29.static');
    assert.equal(up.json.stream, true);
    assert.equal(up.json.model, undefined);
    assert.equal(up.json.anthropic_version, 'vertex-2023-10-16');
  });

  it('tool calls: tools as input_schema, tool_use back as tool_calls (whole and streamed), the tool result sent as tool_result', async () => {
    const toolUse = { type: 'tool_use', id: 'toolu_vrtx_01', name: 'get_weather', input: { city: 'Paris' } };
    const answer = {
      id: 'msg_vrtx_01', type: 'message', role: 'assistant', model: MODEL, content: [toolUse],
      stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 20, output_tokens: 9 },
    };
    vertex().enqueue('rawPredict', { body: answer });
    const client = sdk(tokenConfig());
    const ask: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'weather in Paris?' };
    const first = await client.chat.completions.create({ model: MODEL, messages: [ask], tools: [WEATHER_TOOL], tool_choice: 'required' });
    assert.equal(first.choices[0]!.finish_reason, 'tool_calls');
    const call = first.choices[0]!.message.tool_calls![0]!;
    assert.equal(call.type, 'function');
    assert.equal(call.id, 'toolu_vrtx_01');
    assert.equal(call.type === 'function' && call.function.name, 'get_weather');
    assert.deepEqual(call.type === 'function' && JSON.parse(call.function.arguments), { city: 'Paris' });
    assert.deepEqual(vertex().requests[0]!.json.tools, [
      { name: 'get_weather', description: 'Weather in a city', input_schema: WEATHER_TOOL.function.parameters },
    ]);
    assert.deepEqual(vertex().requests[0]!.json.tool_choice, { type: 'any' });

    vertex().enqueue('streamRawPredict', { sse: toEvents(answer) });
    const stream = await client.chat.completions.create({ model: MODEL, messages: [ask], tools: [WEATHER_TOOL], stream: true });
    let args = '';
    let name: string | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta.tool_calls?.[0];
      name ??= delta?.function?.name;
      args += delta?.function?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(name, 'get_weather');
    assert.deepEqual(JSON.parse(args), { city: 'Paris' });
    assert.equal(finish, 'tool_calls');

    const done = await client.chat.completions.create({
      model: MODEL,
      tools: [WEATHER_TOOL],
      messages: [ask, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '18°C and sunny' }],
    });
    assert.equal(done.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(vertex().requests[2]!.json.messages.slice(1), [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_vrtx_01', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_vrtx_01', content: '18°C and sunny' }] },
    ]);
  });

  it('errors keep their status: Claude’s own (Anthropic’s body) and Vertex’s (google.rpc.Status)', async () => {
    const client = sdk(tokenConfig());
    const invalid = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], temperature: 1.5 }).catch((e: unknown) => e);
    assert.ok(invalid instanceof OpenAI.BadRequestError);
    assert.equal(invalid.code, 'invalid_request_error');
    assert.match(invalid.message, /temperature: Input should be less than or equal to 1/);

    vertex().enqueue('rawPredict', { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    const overloaded = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    assert.ok(overloaded instanceof OpenAI.APIError);
    assert.equal(overloaded.status, 529);
    assert.equal(overloaded.code, 'overloaded_error');

    vertex().enqueue('streamRawPredict', {
      status: 429,
      body: { error: { code: 429, message: 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model', status: 'RESOURCE_EXHAUSTED' } },
    });
    const quota = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream: true }).catch((e: unknown) => e);
    assert.ok(quota instanceof OpenAI.RateLimitError);
    assert.equal(quota.code, 'resource_exhausted');
    assert.match(quota.message, /Quota exceeded/);

    const denied = await sdk(tokenConfig({ api_key: 'ya29.unknown' })).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    assert.ok(denied instanceof OpenAI.AuthenticationError);
    assert.equal(denied.code, 'unauthenticated');
  });

  it('a missing project, credential or region: 400 naming the key, before any call', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ api_key: 'ya29.static' }, 'cloud2_project_id'],
      [{ cloud2_project_id: PROJECT }, 'cloud2_service_account_json'],
      [{ api_key: 'ya29.static', cloud2_project_id: PROJECT, cloud2_region: undefined }, 'cloud2_region'],
    ];
    for (const [target, param] of cases) {
      const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': config(target) }, body: { model: MODEL, messages: [{ role: 'user', content: 'x' }] } });
      const e = await assertEnvelope(res, 400);
      assert.equal(e.param, param, e.message);
    }
    assert.equal(vertex().requests.length, 0);
  });

  it('a request Claude cannot answer as asked is refused by the anthropic translation: 400 before any call', async () => {
    const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': tokenConfig() }, body: { model: MODEL, n: 2, messages: [{ role: 'user', content: 'x' }] } });
    const e = await assertEnvelope(res, 400);
    assert.equal(e.param, 'n');
    assert.equal(vertex().requests.length, 0);
  });
});
