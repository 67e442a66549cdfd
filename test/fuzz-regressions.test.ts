// Gateway bugs that fuzzing the running gateway found (issue 14 item 12), each pinned by
// the smallest request that showed it: the gateway answered 5xx (or not in the error
// envelope) for one caller's input, where it must answer 4xx in the envelope and call
// no provider.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { ADMIN_KEY } from './support/gateway.js';
import { assertEnvelope, until } from './support/http.js';
import { useMockOpenAI } from './support/mock-openai.js';
import { useGateway } from './support/use-gateway.js';

describe('inputs fuzzing found', { timeout: 30_000 }, () => {
  const gw = useGateway();
  const upstream = useMockOpenAI();

  const config = (extra: Record<string, unknown> = {}) => JSON.stringify({ provider: 'openai', api_key: 'sk-x', custom_host: upstream().url, ...extra });
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it('a body nested 5,000 deep is a 400, not a stack overflow in the cache key or the param edits (was 500)', async () => {
    const body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"x":${nested(5000)}}`;
    for (const extra of [{ cache: { mode: 'simple' } }, { override_params: { temperature: 0.5 } }, {}]) {
      const e = await assertEnvelope(await gw.call('/chat/completions', { body, headers: { 'x-gateway-config': config(extra) } }), 400);
      assert.match(e.message, /more than 128 levels deep/);
    }
    const embeddings = `{"model":"text-embedding-3-small","input":"hi","x":${nested(5000)}}`;
    await assertEnvelope(await gw.call('/embeddings', { body: embeddings, headers: { 'x-gateway-config': config({ cache: { mode: 'simple' } }) } }), 400);
    const deepConfig = `{"provider":"openai","api_key":"sk-x","custom_host":"${upstream().url}","override_params":{"x":${nested(5000)}}}`;
    const e = await assertEnvelope(await gw.call('/chat/completions', { body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, headers: { 'x-gateway-config': deepConfig } }), 400);
    assert.equal(e.param, 'x-gateway-config');
    assert.equal(upstream().requests.length, 0);
  });

  it('garbage after a request whose answer is streaming does not land inside the stream: the answer ends whole, then the connection closes', async () => {
    const chunk = (content: string, finish: string | null) =>
      JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: finish }] });
    upstream().enqueue('/v1/chat/completions', { sse: [chunk('a', null), chunk('b', 'stop')], chunkDelayMs: 200 });
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const u = new URL(gw.url);
    const socket = net.connect(Number(u.port), u.hostname);
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nx-gateway-api-key: ${ADMIN_KEY}\r\nx-gateway-config: ${config()}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // Sent once the answer has begun: Node's parser fails on it while the stream is under way.
    await until('the answer to begin', () => got.includes('\r\n\r\n'));
    socket.write('GARBAGE\r\n\r\n');
    await closed;
    assert.match(got, /^HTTP\/1\.1 200 /);
    assert.equal(got.match(/HTTP\/1\.1/g)?.length, 1, `a second status line inside the stream:\n${got}`);
    assert.ok(got.includes('data: [DONE]') && got.endsWith('0\r\n\r\n'), `the stream did not end whole:\n${got}`);
  });

  it('nesting up to the bound still goes through, brackets inside strings not counted', async () => {
    const body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"${nested(500)}"}],"x":${nested(120)}}`;
    const res = await gw.call('/chat/completions', { body, headers: { 'x-gateway-config': config({ cache: { mode: 'simple' }, override_params: { temperature: 0.5 } }) } });
    assert.equal(res.status, 200, await res.text());
  });
});
