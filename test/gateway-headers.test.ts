// Every x-gateway-* value that becomes part of an upstream call is checked when the
// request arrives: a bad one is a 400 naming the header and nothing is sent upstream,
// where before undici refused it and the client got 502 upstream_unreachable.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { ADMIN_KEY } from './support/gateway.js';
import { envelopeOf } from './support/http.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { useGateway } from './support/use-gateway.js';

/** A request through node:http, which sends headers as given: repeated, and bytes fetch would refuse. */
function send(url: string, method: string, headers: http.OutgoingHttpHeaders, body?: string): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (s: string) => (text += s));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('x-gateway-* headers that would reach the provider', () => {
  const gw = useGateway();
  let mock: MockOpenAI;
  let routed: Record<string, string>;
  const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

  before(async () => {
    mock = await startMockOpenAI();
    routed = { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url, authorization: 'Bearer sk-test', 'content-type': 'application/json' };
  });
  afterEach(() => mock.reset());
  after(() => mock.close());

  /** Asserts a 400 naming `param` and that nothing reached the provider. */
  function refused(r: { status: number; text: string }, param: string): void {
    assert.equal(r.status, 400, r.text);
    assert.equal(envelopeOf(r.text).param, param);
    assert.equal(mock.requests.length, 0, 'the provider was called');
  }

  for (const [why, host] of [
    ['a space in it', 'http://exa mple.com/v1'],
    ['no scheme', '127.0.0.1:9/v1'],
    ['a javascript: scheme', 'javascript:alert(1)'],
    ['an ftp: scheme', 'ftp://127.0.0.1/v1'],
    ['a raw non-ASCII byte', 'http://ex\u00e9mple.com/v1'],
    ['a tab', 'http://example.com/\tv1'],
  ] as const) {
    it(`x-gateway-custom-host with ${why} is a 400`, async () => {
      refused(await send(`${gw.v1}/chat/completions`, 'POST', { ...routed, 'x-gateway-custom-host': host }, chat), 'x-gateway-custom-host');
    });
  }

  for (const name of ['x-gateway-provider', 'x-gateway-custom-host', 'x-gateway-metadata', 'x-gateway-config']) {
    it(`${name} sent twice is a 400 naming it, not one joined value`, async () => {
      const value = routed[name] ?? (name === 'x-gateway-metadata' ? '{"a":"1"}' : '{"provider":"openai"}');
      refused(await send(`${gw.v1}/chat/completions`, 'POST', { ...routed, [name]: [value, value] }, chat), name);
    });
  }

  for (const name of ['expect', 'connection', 'transfer-encoding', 'not a name']) {
    it(`x-gateway-forward-headers naming "${name}" is a 400`, async () => {
      refused(await send(`${gw.v1}/chat/completions`, 'POST', { ...routed, 'x-gateway-forward-headers': `x-trace, ${name}` }, chat), 'x-gateway-forward-headers');
    });
  }

  it('the generic proxy does not pass on a client’s Expect: 100-continue (undici refuses to send it)', async () => {
    const r = await send(`${gw.v1}/echo`, 'POST', { ...routed, expect: '100-continue', 'content-type': 'text/plain' }, 'hello');
    assert.equal(r.status, 200, r.text);
    assert.equal(mock.requests.length, 1);
    assert.equal(mock.requests[0]!.headers.expect, undefined);
  });

  it('valid values still go through', async () => {
    const r = await send(`${gw.v1}/chat/completions`, 'POST', { ...routed, 'x-gateway-forward-headers': 'x-trace', 'x-trace': 'abc' }, chat);
    assert.equal(r.status, 200, r.text);
    assert.equal(mock.requests[0]!.headers['x-trace'], 'abc');
  });
});
