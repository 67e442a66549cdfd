// Every config value that becomes part of an upstream URL or header is checked when the
// config is read (x-gateway-config, a saved config, a virtual key's or integration's
// fields): a bad one is a 400 naming its path and nothing is sent upstream, where before
// undici refused it and the client got 502 upstream_unreachable. The header side of the
// same rules is test/gateway-headers.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertEnvelope } from './support/http.js';
import { useMockOpenAI } from './support/mock-openai.js';
import { expectJson } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'sk-config-values-0123456789abcd';
const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

/** Values no upstream URL may be, each with why. */
const BAD_HOSTS: readonly (readonly [string, string])[] = [
  ['CR/LF', 'http://127.0.0.1:9/v1\r\nx-injected: 1'],
  ['a tab', 'http://127.0.0.1:9/\tv1'],
  ['a raw non-ASCII character', 'http://ex\u00e9mple.com/v1'],
  ['no scheme', '127.0.0.1:9/v1'],
  ['a javascript: scheme', 'javascript:alert(1)'],
];

/** Values no header may carry, each with why. */
const BAD_HEADER_VALUES: readonly (readonly [string, string])[] = [
  ['CR/LF', 'sk-a\r\nx-injected: 1'],
  ['NUL', 'sk-a\u0000b'],
  ['a character past \\xff', 'sk-\u0100'],
  ['an emoji', 'sk-\u{1f600}'],
];

/** JSON text a header can carry: every character past ASCII escaped, as a client must send it. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

describe('config values that would reach the provider', () => {
  const gw = useGateway();
  const upstream = useMockOpenAI();

  /** Asserts a 400 naming `param` and that nothing reached the provider. */
  async function refused(res: Response, param: string): Promise<void> {
    const e = await assertEnvelope(res, 400);
    assert.equal(e.param, param, e.message);
    assert.equal(upstream().requests.length, 0, 'the provider was called');
  }

  const withConfig = (config: unknown, headers: Record<string, string> = {}) =>
    gw.call('/chat/completions', { body: chat, headers: { 'x-gateway-config': asciiJson(config), ...headers } });

  for (const [why, host] of BAD_HOSTS) {
    it(`x-gateway-config: a custom_host with ${why} is a 400 naming its path`, async () => {
      await refused(await withConfig({ provider: 'openai', api_key: KEY, custom_host: host }), 'custom_host');
      await refused(await withConfig({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: KEY, custom_host: host }] }), 'targets[0].custom_host');
      const embedding = { provider: 'openai', api_key: KEY, custom_host: host };
      await refused(await withConfig({ provider: 'openai', api_key: KEY, custom_host: upstream().url, cache: { mode: 'semantic', embedding } }), 'cache.embedding.custom_host');
    });
  }

  for (const [why, value] of BAD_HEADER_VALUES) {
    it(`x-gateway-config: api_key, Authorization or a header-valued provider key with ${why} is a 400 naming its path`, async () => {
      const target = { provider: 'openai', custom_host: upstream().url };
      await refused(await withConfig({ ...target, api_key: value }), 'api_key');
      await refused(await withConfig({ strategy: { mode: 'single' }, targets: [{ ...target, Authorization: value }] }), 'targets[0].Authorization');
      await refused(await withConfig({ ...target, api_key: KEY, vendor_organization: value }), 'vendor_organization');
      await refused(await withConfig({ provider: 'bedrock', cloud1_access_key_id: 'AKIAEXAMPLEEXAMPLE', cloud1_secret_access_key: 's', cloud1_session_token: value }), 'cloud1_session_token');
    });
  }

  for (const name of ['expect', 'connection', 'Transfer-Encoding', 'proxy-authorization', 'host', 'content-length', 'not a name']) {
    it(`x-gateway-config: forward_headers naming "${name}" is a 400 naming its path`, async () => {
      await refused(await withConfig({ provider: 'openai', api_key: KEY, custom_host: upstream().url, forward_headers: ['x-trace', name] }), 'forward_headers[1]');
    });
  }

  it('valid values still reach the provider: a header value may hold spaces and obs-text', async () => {
    const config = { provider: 'openai', api_key: KEY, custom_host: upstream().url, vendor_organization: 'org caf\u00e9', forward_headers: ['X-Trace'] };
    const res = await withConfig(config, { 'x-trace': 'abc' });
    assert.equal(res.status, 200, await res.text());
    assert.equal(upstream().requests.length, 1);
    assert.equal(upstream().requests[0]!.headers['x-trace'], 'abc');
    assert.equal(upstream().requests[0]!.headers.authorization, `Bearer ${KEY}`);
  });

  it('a saved config is checked when written: a 400 naming config.<path>', async () => {
    const save = (config: unknown) => gw.call('/configs', { body: { name: 'bad', config } });
    await refused(await save({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: KEY, custom_host: BAD_HOSTS[0]![1] }] }), 'config.targets[0].custom_host');
    await refused(await save({ provider: 'openai', custom_host: upstream().url, api_key: BAD_HEADER_VALUES[0]![1] }), 'config.api_key');
    await refused(await save({ provider: 'openai', api_key: KEY, custom_host: upstream().url, forward_headers: ['keep-alive'] }), 'config.forward_headers[0]');
  });

  for (const [why, value] of BAD_HEADER_VALUES) {
    it(`a virtual key or integration whose key has ${why} is a 400 naming key`, async () => {
      await refused(await gw.call('/virtual-keys', { body: { name: 'bad', provider: 'openai', key: value } }), 'key');
      await refused(await gw.call('/integrations', { body: { name: 'bad', ai_provider_id: 'openai', key: value } }), 'key');
    });
  }

  for (const [why, host] of BAD_HOSTS) {
    it(`a virtual key, integration or integration model whose custom_host has ${why} is a 400 naming it`, async () => {
      await refused(await gw.call('/virtual-keys', { body: { name: 'bad', provider: 'openai', key: KEY, custom_host: host } }), 'custom_host');
      await refused(await gw.call('/integrations', { body: { name: 'bad', ai_provider_id: 'openai', key: KEY, configurations: { custom_host: host } } }), 'configurations.custom_host');
      const made = await expectJson(await gw.call('/integrations', { body: { name: 'models', ai_provider_id: 'openai', key: KEY } }), 201);
      const models = { models: [{ slug: 'gpt-4o-mini', enabled: true, configurations: { custom_host: host } }] };
      await refused(await gw.call(`/integrations/${made.id}/integration-models`, { method: 'PUT', body: models }), 'models[0].configurations.custom_host');
    });
  }

  it('a stored key with a valid value still reaches the provider', async () => {
    const vk = await expectJson(await gw.call('/virtual-keys', { body: { name: 'good', provider: 'openai', key: KEY, custom_host: upstream().url } }), 201);
    const res = await gw.call('/chat/completions', { body: chat, headers: { 'x-gateway-virtual-key': vk.slug } });
    assert.equal(res.status, 200, await res.text());
    assert.equal(upstream().requests[0]!.headers.authorization, `Bearer ${KEY}`);
  });
});
