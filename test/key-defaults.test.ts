// A key's defaults on the request path (issue 15 item 8): `defaults.metadata` is merged
// into every request's metadata and wins over the caller's, so what the key's owner set
// (what conditional routing and rate limits read) cannot be changed by the caller; and
// `defaults.allow_config_override: false` refuses a caller's x-gateway-config with 403.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { keyRecord } from './support/keys.js';
import { answeredBy, assertEnvelope, chat, startUpstreams, target, type Json, type Upstream } from './support/routing.js';
import { useGateway } from './support/use-gateway.js';

describe("a key's defaults on the request path", () => {
  const gw = useGateway();
  let A: Upstream, B: Upstream;
  let workspaceId: string;
  /** Routes team "a" to A and everyone else to B. */
  let byTeam: Json;

  before(async () => {
    ({ A, B } = await startUpstreams('A', 'B'));
    workspaceId = (await gw.store.workspaces.default()).id;
    byTeam = {
      strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.team': { $eq: 'a' } }, then: 'a' }], default: 'others' },
      targets: [target(A, { name: 'a' }), target(B, { name: 'others' })],
    };
  });
  afterEach(() => {
    A.reset();
    B.reset();
  });
  after(async () => {
    await Promise.all([A.close(), B.close()]);
  });

  async function keyWith(id: string, defaults: Json): Promise<string> {
    const k = keyRecord({ id, workspaceId, scopes: ['completions.write'], defaults });
    await gw.store.apiKeys.insert(k);
    return `secret-${k.id}`;
  }

  it("defaults.metadata is the request's metadata when the caller sends none", async () => {
    const key = await keyWith('key-team-a', { metadata: { team: 'a' } });
    assert.equal(answeredBy(await chat(gw, byTeam, { headers: { 'x-gateway-api-key': key } })), 'A');
  });

  it("the caller cannot override a key's metadata, and its other values are kept", async () => {
    const key = await keyWith('key-team-a-2', { metadata: { team: 'a' } });
    const withEnv = { ...byTeam, strategy: { ...(byTeam.strategy as Json), conditions: [{ query: { $and: [{ 'metadata.team': 'a' }, { 'metadata.env': 'ci' }] }, then: 'a' }] } };
    const headers = { 'x-gateway-api-key': key, 'x-gateway-metadata': JSON.stringify({ team: 'b', env: 'ci' }) };
    assert.equal(answeredBy(await chat(gw, withEnv, { headers })), 'A');
  });

  it('without key metadata the caller’s metadata routes as before', async () => {
    const key = await keyWith('key-plain', {});
    assert.equal(answeredBy(await chat(gw, byTeam, { headers: { 'x-gateway-api-key': key, 'x-gateway-metadata': '{"team":"a"}' } })), 'A');
    assert.equal(answeredBy(await chat(gw, byTeam, { headers: { 'x-gateway-api-key': key, 'x-gateway-metadata': '{"team":"b"}' } })), 'B');
  });

  it('allow_config_override false: a caller’s x-gateway-config is a 403, and the key’s own config routes', async () => {
    const saved = await gw.call('/configs', { body: { name: 'Enforced', config: target(B) } });
    assert.equal(saved.status, 201);
    const { slug } = (await saved.json()) as { slug: string };
    const key = await keyWith('key-enforced', { config_id: slug, allow_config_override: false });
    assertEnvelope(await chat(gw, target(A), { headers: { 'x-gateway-api-key': key } }), 403, { code: 'config_override_not_allowed', param: 'x-gateway-config' });
    assert.equal(A.requests.length, 0);
    assert.equal(answeredBy(await chat(gw, null, { headers: { 'x-gateway-api-key': key } })), 'B');
  });

  it('allow_config_override true (or absent) lets the caller’s config win, as before', async () => {
    const key = await keyWith('key-overridable', { allow_config_override: true });
    assert.equal(answeredBy(await chat(gw, target(A), { headers: { 'x-gateway-api-key': key } })), 'A');
  });
});
