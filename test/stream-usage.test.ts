// Asking providers for stream usage (src/providers/shared/stream-usage.ts and the adapters):
// only streams of chat and text completions whose client did not ask; the client's body is
// left as it is (the cache key was made from it); translators' streams then end with the
// usage chunk, which the relay strips; Azure OpenAI only where its API version takes the option.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import type { CallInput, ProviderCall, RelayedCall } from '../src/providers/contract.js';
import { findAdapter, prepareCall, type Adapter } from '../src/providers/registry.js';
import type { TargetSettings } from '../src/providers/settings.js';
import { wantsUsage, withUsage } from '../src/providers/shared/stream-usage.js';
import type { Endpoint } from '../src/shared/endpoint.js';
import { stripAddedUsage } from '../src/pipeline/usage-strip.js';

const messages = [{ role: 'user', content: 'hi' }];

async function adapter(name: string): Promise<Adapter> {
  let found = findAdapter(name);
  if (found instanceof Promise) found = await found;
  assert.ok(found.ok);
  return found.value;
}

async function prepare(name: string, body: Record<string, unknown>, settings: TargetSettings = { api_key: 'k' }, endpoint: Endpoint = 'chat'): Promise<ProviderCall> {
  const input: CallInput<TargetSettings> = {
    target: { provider: name, settings, clientAuthorization: undefined, customHost: 'http://127.0.0.1:9/v1' },
    endpoint,
    path: endpoint === 'chat' ? '/chat/completions' : '/completions',
    body,
  };
  let call = prepareCall(await adapter(name), input);
  if (call instanceof Promise) call = await call;
  assert.ok(call.ok, call.ok ? '' : call.error.message);
  return call.value;
}

/** A call relayed as the provider answers it (OpenAI's wire format): the kind that may ask for usage. */
function relayed(call: ProviderCall): RelayedCall {
  assert.equal(call.kind, 'relayed');
  return call as RelayedCall;
}

async function collect(stream: Readable): Promise<string> {
  let text = '';
  stream.on('data', (b: Buffer) => (text += b.toString('utf8')));
  await once(stream, 'end');
  return text;
}

describe('asking for stream usage', () => {
  it('streams of chat and text completions without include_usage, nothing else', () => {
    assert.equal(wantsUsage('chat', { messages, stream: true }), true);
    assert.equal(wantsUsage('completions', { prompt: 'x', stream: true, stream_options: { include_usage: false } }), true);
    assert.equal(wantsUsage('chat', { messages, stream: true, stream_options: { include_usage: true } }), false);
    assert.equal(wantsUsage('chat', { messages }), false);
    assert.equal(wantsUsage('embeddings', { input: 'x', stream: true }), false);
    assert.equal(wantsUsage('proxy', { stream: true }), false);
    assert.equal(wantsUsage('chat', null), false);
    const body = { messages, stream: true, stream_options: { include_obfuscation: false } };
    assert.deepEqual(withUsage(body).stream_options, { include_obfuscation: false, include_usage: true });
    assert.deepEqual(body.stream_options, { include_obfuscation: false }); // a copy: the client's body is untouched
  });

  it('an OpenAI-family provider gets the body with the option, and the call says it was added', async () => {
    const body = { model: 'm', messages, stream: true };
    const call = relayed(await prepare('openai', body));
    assert.equal(call.addedUsage, true);
    assert.deepEqual(JSON.parse(call.body as string), { ...body, stream_options: { include_usage: true } });
    assert.equal((body as Record<string, unknown>).stream_options, undefined);
    const asked = relayed(await prepare('openai', { ...body, stream_options: { include_usage: true } }));
    assert.deepEqual([asked.addedUsage, asked.body], [false, undefined]); // the client's own bytes go
    const notAsked = relayed(await prepare('mistral-ai', body));
    assert.deepEqual([notAsked.addedUsage, notAsked.body], [false, undefined]);
  });

  it('a translated stream ends with the usage chunk, which the stripper takes out again where the client did not ask', async () => {
    const call = await prepare('anthropic', { model: 'claude-3-5-haiku-latest', max_tokens: 10, messages, stream: true });
    assert.ok(call.kind === 'translated' && call.answer.streamed);
    const answer = call.answer;
    assert.equal(answer.addedUsage, true);
    const events = [
      { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-3-5-haiku-latest', content: [], usage: { input_tokens: 3, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
      { type: 'message_stop' },
    ];
    const sse = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
    const translated = () => Readable.from([Buffer.from(sse)]).pipe(answer.stream());
    const full = await collect(translated());
    assert.match(full, /"choices":\[\],"usage":\{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5/);
    const stripped = await collect(stripAddedUsage(translated()));
    assert.ok(!stripped.includes('usage') && stripped.endsWith('data: [DONE]\n\n'), stripped);
  });

  it('Azure OpenAI: asked from API version 2024-09-01-preview on and in the v1 API, not before', async () => {
    const body = { model: 'gpt-4o', messages, stream: true };
    const azure = async (api_version: string) => relayed(await prepare('azure-openai', body, { api_key: 'k', deployment_id: 'dep', api_version }));
    for (const v of ['2024-10-21', '2024-09-01-preview', '2025-04-01-preview']) {
      const call = await azure(v);
      assert.equal(call.addedUsage, true, v);
      assert.deepEqual(JSON.parse(call.body as string).stream_options, { include_usage: true }, v);
    }
    for (const v of ['2024-06-01', '2024-08-01-preview']) assert.deepEqual([(await azure(v)).addedUsage, (await azure(v)).body], [false, undefined], v);
    const v1 = await azure('v1');
    assert.deepEqual(JSON.parse(v1.body as string), { ...body, model: 'dep', stream_options: { include_usage: true } });
  });
});
