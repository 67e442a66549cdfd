// Output guardrails acting on streamed answers, with the official OpenAI SDK as
// the client: a denying check ends the stream with an error event the SDK
// raises (held-back text never reaches the client, no [DONE]); without deny the
// results arrive as a last chunk before the usage chunk and [DONE]; a stream
// without output guardrails is not held back at all; translated streams
// (Anthropic) are judged the same way; an output transform is a 400 for a stream.
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { MAX_CHECKED_ANSWER_BYTES } from '../src/pipeline/guardrails.js';
import { ADMIN_KEY } from './support/gateway.js';
import { expectJson } from './support/tenants.js';
import { startMockAnthropic, type MockAnthropic } from './support/mock-anthropic.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { startMockServer, type MockServer } from './support/mock-server.js';
import { logOf } from './support/logs.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'sk-upstream-guardrails-stream';
const ANTHROPIC_KEY = 'sk-ant-guardrails-stream';
type Json = Record<string, any>;

describe('output guardrails on streamed answers', () => {
  const gw = useGateway();
  let mock: MockOpenAI;
  let anthropic: MockAnthropic;
  let client: OpenAI;

  const config = (hooks: Json): Json => ({ provider: 'openai', api_key: KEY, custom_host: mock.url, ...hooks });
  const opts = (hooks: Json, traceId = randomUUID()) => ({ headers: { 'x-gateway-config': JSON.stringify(config(hooks)), 'x-gateway-trace-id': traceId } });
  const ask = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content }], stream: true as const });

  /** A stream the SDK reads until it raises the gateway's error event: the text before it, and the error. */
  async function cutShort(started: Promise<AsyncIterable<OpenAI.ChatCompletionChunk>>): Promise<{ text: string; err: InstanceType<typeof OpenAI.APIError> }> {
    let text = '';
    try {
      for await (const chunk of await started) text += chunk.choices[0]?.delta.content ?? '';
    } catch (err) {
      assert.ok(err instanceof OpenAI.APIError, String(err));
      return { text, err };
    }
    return assert.fail(`expected the stream to end in an error; it ended whole: ${JSON.stringify(text)}`);
  }

  /** The raw SSE text of a streamed chat answer. */
  async function rawStream(hooks: Json, body: Json): Promise<{ status: number; text: string }> {
    const res = await gw.call('/chat/completions', { method: 'POST', body, headers: { 'x-gateway-config': JSON.stringify(config(hooks)) } });
    return { status: res.status, text: await res.text() };
  }

  before(async () => {
    [mock, anthropic] = await Promise.all([startMockOpenAI({ apiKey: KEY }), startMockAnthropic({ apiKey: ANTHROPIC_KEY })]);
    client = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY } });
  });
  afterEach(() => mock.reset());
  after(async () => {
    await Promise.all([mock.close(), anthropic.close()]);
  });

  it('a denying check ends the stream with an error event the SDK raises; the held-back text never arrives', async () => {
    const traceId = randomUUID();
    const hooks = { guardrails_stream_window: 5, output_guardrails: [{ id: 'no-secret', deny: true, 'default.contains': { words: ['secret'], operator: 'none' } }] };
    const { text, err } = await cutShort(client.chat.completions.create(ask('alpha beta gamma secret delta epsilon'), opts(hooks, traceId)));
    assert.match(err.message, /guardrail checks defined in the config failed/);
    assert.equal((err.error as Json).type, 'hooks_failed');
    assert.ok(text.startsWith('[mock] echo: alpha'), `text judged and released before the denial: ${JSON.stringify(text)}`);
    assert.ok(!text.includes('secret'), text);
    const log = await logOf(gw, traceId);
    assert.equal(log.status, 446);
    const [hook] = log.hook_results.after_request_hooks;
    assert.equal(hook.id, 'no-secret');
    assert.equal(hook.deny, true);
  });

  it('never a [DONE] after a denial at the end of the stream', async () => {
    // endsWith judges only the whole text: the denial comes at the end, after the window let text through.
    const hooks = { guardrails_stream_window: 1, output_guardrails: [{ deny: true, 'default.endsWith': { suffix: 'never' } }] };
    const r = await rawStream(hooks, ask('hello there'));
    assert.equal(r.status, 200);
    assert.match(r.text, /"hooks_failed"/);
    assert.doesNotMatch(r.text, /\[DONE\]/);
    const events = r.text.trim().split('\n\n');
    assert.equal(JSON.parse(events.at(-1)!.slice('data: '.length)).error.code, 'hooks_failed', 'the error event is last');
  });

  it('without deny: hook_results arrive in a last chunk before [DONE], the SDK reading it as a chunk', async () => {
    const traceId = randomUUID();
    const hooks = { output_guardrails: [{ id: 'words', 'default.wordCount': { maxWords: 2 } }] };
    const stream = await client.chat.completions.create(ask('one two three'), opts(hooks, traceId));
    let text = '';
    let results: Json | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if ((chunk as Json).hook_results !== undefined) {
        assert.deepEqual(chunk.choices, []);
        results = (chunk as Json).hook_results;
      }
    }
    assert.equal(text, '[mock] echo: one two three');
    assert.ok(results !== undefined, 'a hook_results chunk');
    assert.equal(results.after_request_hooks[0].id, 'words');
    assert.equal(results.after_request_hooks[0].verdict, false);
    const log = await logOf(gw, traceId);
    assert.equal(log.status, 200);
    assert.equal(log.hook_results.after_request_hooks[0].checks[0].verdict, false);
  });

  it('the results chunk comes before the usage chunk the client asked for, and added usage is still stripped', async () => {
    const hooks = { output_guardrails: [{ 'default.notNull': {} }] };
    const asked = await rawStream(hooks, { ...ask('count me'), stream_options: { include_usage: true } });
    const events = asked.text.trim().split('\n\n');
    assert.equal(events.at(-1), 'data: [DONE]');
    assert.ok(JSON.parse(events.at(-2)!.slice(6)).usage.total_tokens > 0, 'usage last');
    assert.ok(JSON.parse(events.at(-3)!.slice(6)).hook_results !== undefined, 'then the results');
    const unasked = await rawStream(hooks, ask('count me'));
    assert.doesNotMatch(unasked.text, /"usage"/, 'the usage the gateway asked for is stripped');
    assert.match(unasked.text, /"hook_results"/);
    assert.match(unasked.text, /data: \[DONE\]\n\n$/);
  });

  it('an output transform on a streamed request is a 400 naming stream; the provider is not called', async () => {
    const hooks = { output_guardrails: [{ 'default.regexReplace': { rule: 'mock', redactText: 'x' } }] };
    const res = await gw.call('/chat/completions', { method: 'POST', body: ask('hi'), headers: { 'x-gateway-config': JSON.stringify(config(hooks)) } });
    const body = await expectJson(res, 400);
    assert.equal(body.error.param, 'stream');
    assert.match(body.error.message, /output_guardrails\[0\] rewrites the answer \(default\.regexReplace\)/);
    assert.equal(mock.requests.length, 0);
  });

  it('judges a translated stream (Anthropic): a denial ends it with the error event', async () => {
    const hooks = { provider: 'anthropic', api_key: ANTHROPIC_KEY, custom_host: anthropic.url, output_guardrails: [{ deny: true, 'default.contains': { words: ['forbidden'], operator: 'none' } }] };
    const { text } = await cutShort(client.chat.completions.create({ ...ask('say forbidden things'), model: 'claude-3-5-haiku-latest', max_tokens: 50 }, opts(hooks)));
    assert.ok(!text.includes('forbidden'), text);
    const ok = await client.chat.completions.create({ ...ask('say nice things'), model: 'claude-3-5-haiku-latest', max_tokens: 50 }, opts(hooks));
    let said = '';
    for await (const chunk of ok) said += chunk.choices[0]?.delta.content ?? '';
    assert.equal(said, '[claude-mock] echo: say nice things');
  });

  it('a stream whose text passes what output guardrails judge (10 MiB) ends with a 502 answer_too_large_for_guardrails event; the log says 502', async () => {
    const piece = 'z'.repeat(64 * 1024);
    const long = await startMockServer<never>(async (_rec, _req, res: http.ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i * piece.length <= MAX_CHECKED_ANSWER_BYTES + piece.length; i++) {
        const more = res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
        if (!more) await new Promise((resolve) => res.once('drain', resolve));
        if (res.destroyed) return;
      }
      res.end('data: [DONE]\n\n');
    });
    try {
      const traceId = randomUUID();
      const cfg = { provider: 'openai', api_key: KEY, custom_host: `${long.url}/v1`, output_guardrails: [{ 'default.contains': { words: ['never'], operator: 'none' } }] };
      const { text, err } = await cutShort(client.chat.completions.create(ask('x'), { headers: { 'x-gateway-config': JSON.stringify(cfg), 'x-gateway-trace-id': traceId } }));
      assert.equal((err.error as Json).code, 'answer_too_large_for_guardrails');
      assert.ok(text.length <= MAX_CHECKED_ANSWER_BYTES, `${text.length} characters went out`);
      const log = await logOf(gw, traceId);
      assert.equal(log.status, 502);
    } finally {
      await long.close();
    }
  });

  describe('what is held back', () => {
    /** An upstream that sends one chunk, then waits for the test to let it send the rest (or for 2 s, so a held stream cannot hang the test). */
    let gated: MockServer<never>;
    let sent = 0;
    let open: () => void = () => {};

    before(async () => {
      gated = await startMockServer<never>(async (_rec, _req, res: http.ServerResponse) => {
        sent = 0;
        const gate = new Promise<void>((resolve) => {
          open = resolve;
          setTimeout(resolve, 2000).unref();
        });
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (content: string) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
        res.write(chunk('first '));
        sent = 1;
        await gate;
        res.write(chunk('second'));
        sent = 2;
        res.end('data: [DONE]\n\n');
      });
    });
    after(() => gated.close());

    async function firstContent(hooks: Json): Promise<number> {
      const cfg = { provider: 'openai', api_key: KEY, custom_host: `${gated.url}/v1`, ...hooks };
      const stream = await client.chat.completions.create(ask('x'), { headers: { 'x-gateway-config': JSON.stringify(cfg) } });
      let sentThen = -1;
      for await (const chunk of stream) {
        if (sentThen === -1 && (chunk.choices[0]?.delta.content ?? '') !== '') {
          sentThen = sent;
          open();
        }
      }
      return sentThen;
    }

    it('without output guardrails, the first chunk reaches the client before the provider sends the second', async () => {
      assert.equal(await firstContent({ input_guardrails: [{ 'default.notNull': {} }] }), 1);
    });

    it('with them, text within the window is held until it is judged', async () => {
      assert.equal(await firstContent({ output_guardrails: [{ 'default.notNull': {} }] }), 2);
    });

    it('async output hooks hold nothing back: they never change the answer', async () => {
      assert.equal(await firstContent({ after_request_hooks: [{ id: 'later', async: true, checks: [{ id: 'default.notNull', parameters: {} }] }] }), 1);
    });
  });
});
