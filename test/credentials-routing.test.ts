// Stored credentials on the request path, on both engines: virtual keys by id
// and slug (header and config), `@slug` providers (header and config),
// integration models (custom_host, disabled, allow_all_models), the cache
// following updates and deletes, workspace isolation, what a config may and
// may not override, blobs that do not decrypt, restarts, and the log.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { engines } from './support/engines.js';
import { startTestGateway } from './support/gateway.js';
import { assertEnvelope } from './support/http.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { createWorkspace, expectJson, workspaceKey } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const chat = (model = 'gpt-4o') => ({ model, messages: [{ role: 'user', content: 'hi' }] });

for (const engine of engines()) {
  describe(`stored credentials on the request path (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let mock: MockOpenAI;
    let other: MockOpenAI;
    let wsB: string;
    let keyB: string;
    const secret = `sk-stored-${randomBytes(8).toString('hex')}`;
    let vkId: string;
    const teamKey = `sk-integration-${randomBytes(8).toString('hex')}`;

    before(async () => {
      mock = await startMockOpenAI({ name: 'main' });
      other = await startMockOpenAI({ name: 'model-host' });
      wsB = await createWorkspace(gw, 'Team B');
      keyB = await workspaceKey(gw, wsB, ['completions.write']);
      const vk = await expectJson(await gw.call('/virtual-keys', { body: { name: 'main', provider: 'openai', key: secret, slug: 'main-openai', custom_host: mock.url } }), 201);
      vkId = vk.id;
    });
    after(async () => {
      await mock.close();
      await other.close();
    });

    /** A chat request; asserts the answer came from `upstream` with `Bearer <key>`. */
    async function reaches(headers: Record<string, string>, key: string, upstream = mock, model = 'gpt-4o'): Promise<void> {
      const before = upstream.requests.length;
      const res = await gw.call('/chat/completions', { headers, body: chat(model) });
      const body = await expectJson(res, 200);
      assert.equal(res.headers.get('x-gateway-provider'), 'openai');
      assert.equal(body.model, model);
      assert.equal(upstream.requests.length, before + 1, 'the upstream was reached once');
      assert.equal(upstream.requests.at(-1)!.headers.authorization, `Bearer ${key}`);
    }

    it('x-gateway-virtual-key takes the id or the slug; the stored key goes upstream, not the client Authorization', async () => {
      await reaches({ 'x-gateway-virtual-key': vkId }, secret);
      await reaches({ 'x-gateway-virtual-key': 'main-openai', authorization: 'Bearer sk-client-own' }, secret);
    });

    it('config virtual_key takes the id or the slug, at the root and in targets', async () => {
      await reaches({ 'x-gateway-config': JSON.stringify({ virtual_key: 'main-openai' }) }, secret);
      await reaches({ 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ virtual_key: vkId }] }) }, secret);
      const res = await gw.call('/chat/completions', { headers: { 'x-gateway-config': JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'main-openai' }] }) }, body: chat() });
      assert.equal(res.headers.get('x-gateway-last-used-option-index'), 'config.targets[0]');
    });

    it('config keys on the target win over stored ones (api_key, override_params); the host does not move', async () => {
      const config = { virtual_key: 'main-openai', api_key: 'sk-config-own', override_params: { model: 'gpt-4o-mini' } };
      await reaches({ 'x-gateway-config': JSON.stringify(config) }, 'sk-config-own', mock, 'gpt-4o-mini');
      const fromConfig = await assertEnvelope(
        await gw.call('/chat/completions', { headers: { 'x-gateway-config': JSON.stringify({ virtual_key: 'main-openai', custom_host: other.url }) }, body: chat() }),
        400,
      );
      assert.equal(fromConfig.param, 'config.custom_host');
      assert.equal(fromConfig.code, 'custom_host_not_allowed');
      const fromHeader = await assertEnvelope(
        await gw.call('/chat/completions', { headers: { 'x-gateway-virtual-key': 'main-openai', 'x-gateway-custom-host': other.url }, body: chat() }),
        400,
      );
      assert.equal(fromHeader.param, 'x-gateway-custom-host');
      assert.equal(other.requests.length, 0, 'the stored key never went to another host');
    });

    it('x-gateway-provider: @slug and config provider "@slug" use an integration provider', async () => {
      await expectJson(
        await gw.call('/integrations', { body: { name: 'Team OpenAI', ai_provider_id: 'openai', key: teamKey, slug: 'team-openai', workspace_id: 'default', configurations: { custom_host: mock.url } } }),
        201,
      );
      await reaches({ 'x-gateway-provider': '@team-openai' }, teamKey);
      await reaches({ 'x-gateway-config': JSON.stringify({ provider: '@team-openai' }) }, teamKey);
      await reaches({ 'x-gateway-config': JSON.stringify({ strategy: { mode: 'loadbalance' }, targets: [{ provider: '@team-openai' }] }) }, teamKey);
      // A virtual key with its own credentials is a provider too.
      await reaches({ 'x-gateway-provider': '@main-openai' }, secret);
    });

    it('integration models: custom_host is the base URL, a disabled model is 412, allow_all_models false admits only listed models', async () => {
      const key = `sk-models-${randomBytes(8).toString('hex')}`;
      const made = await expectJson(
        await gw.call('/integrations', { body: { name: 'Models', ai_provider_id: 'openai', key, slug: 'models-int', workspace_id: 'default', configurations: { custom_host: mock.url } } }),
        201,
      );
      const models = `/integrations/${made.id}/integration-models`;
      await expectJson(
        await gw.call(models, {
          method: 'PUT',
          body: { models: [{ slug: 'hosted-model', enabled: true, configurations: { custom_host: other.url } }, { slug: 'retired-model', enabled: false }], key },
        }),
        200,
      );
      const h = { 'x-gateway-provider': '@models-int' };
      await reaches(h, key, other, 'hosted-model');
      await reaches(h, key, mock, 'any-other-model');
      const before = mock.requests.length + other.requests.length;
      const disabled = await assertEnvelope(await gw.call('/chat/completions', { headers: h, body: chat('retired-model') }), 412);
      assert.equal(disabled.code, 'model_not_allowed');
      assert.match(disabled.message, /retired-model/);

      await expectJson(await gw.call(models, { method: 'PUT', body: { models: [], allow_all_models: false } }), 200);
      const unlisted = await assertEnvelope(await gw.call('/chat/completions', { headers: h, body: chat('any-other-model') }), 412);
      assert.match(unlisted.message, /any-other-model/);
      await reaches(h, key, other, 'hosted-model');
      // The model after override_params is the one checked.
      await reaches({ 'x-gateway-config': JSON.stringify({ provider: '@models-int', override_params: { model: 'hosted-model' } }) }, key, other, 'hosted-model');
      assert.equal(mock.requests.length + other.requests.length, before + 2, 'refused models never reached a provider');
    });

    it('updates and deletes take effect on the next request', async () => {
      const first = `sk-first-${randomBytes(6).toString('hex')}`;
      const second = `sk-second-${randomBytes(6).toString('hex')}`;
      const vk = await expectJson(await gw.call('/virtual-keys', { body: { name: 'rotating', provider: 'openai', key: first, slug: 'rotating', custom_host: mock.url } }), 201);
      const h = { 'x-gateway-virtual-key': 'rotating' };
      await reaches(h, first);
      await expectJson(await gw.call(`/virtual-keys/${vk.id}`, { method: 'PUT', body: { key: second } }), 200);
      await reaches(h, second);

      const intA = `sk-int-a-${randomBytes(6).toString('hex')}`;
      const intB = `sk-int-b-${randomBytes(6).toString('hex')}`;
      const integration = await expectJson(
        await gw.call('/integrations', { body: { name: 'rot', ai_provider_id: 'openai', key: intA, slug: 'rot-int', workspace_id: 'default', configurations: { custom_host: mock.url } } }),
        201,
      );
      await reaches({ 'x-gateway-provider': '@rot-int' }, intA);
      await expectJson(await gw.call(`/integrations/${integration.id}`, { method: 'PUT', body: { key: intB } }), 200);
      await reaches({ 'x-gateway-provider': '@rot-int' }, intB);

      await expectJson(await gw.call(`/virtual-keys/${vk.id}`, { method: 'DELETE' }), 200);
      const gone = await assertEnvelope(await gw.call('/chat/completions', { headers: h, body: chat() }), 400);
      assert.equal(gone.code, 'unknown_virtual_key');
      // A slug looked up before it existed is found once created.
      const late = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-virtual-key': 'late-key' }, body: chat() }), 400);
      assert.equal(late.param, 'x-gateway-virtual-key');
      await expectJson(await gw.call('/virtual-keys', { body: { name: 'late', provider: 'openai', key: first, slug: 'late-key', custom_host: mock.url } }), 201);
      await reaches({ 'x-gateway-virtual-key': 'late-key' }, first);
      await expectJson(await gw.call(`/integrations/${integration.id}`, { method: 'DELETE' }), 200);
      const provGone = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-provider': '@rot-int' }, body: chat() }), 400);
      assert.equal(provGone.code, 'unknown_provider');
    });

    it("another workspace's virtual key or provider answers exactly as an unknown one", async () => {
      const asB = (h: Record<string, string>) => ({ 'x-gateway-api-key': keyB, ...h });
      const cases: [(ref: string) => Record<string, string>, string, string][] = [
        [(r) => ({ 'x-gateway-virtual-key': r }), vkId, '0190aaaa-0000-7000-8000-000000000000'],
        [(r) => ({ 'x-gateway-virtual-key': r }), 'main-openai', 'no-such-key'],
        [(r) => ({ 'x-gateway-provider': `@${r}` }), 'main-openai', 'no-such-key'],
        [(r) => ({ 'x-gateway-config': JSON.stringify({ virtual_key: r }) }), 'main-openai', 'no-such-key'],
        [(r) => ({ 'x-gateway-config': JSON.stringify({ provider: `@${r}` }) }), 'main-openai', 'no-such-key'],
      ];
      const before = mock.requests.length;
      for (const [headers, theirs, unknown] of cases) {
        const a = await assertEnvelope(await gw.call('/chat/completions', { headers: asB(headers(theirs)), body: chat() }), 400);
        const b = await assertEnvelope(await gw.call('/chat/completions', { headers: asB(headers(unknown)), body: chat() }), 400);
        assert.deepEqual({ ...a, message: a.message.replace(theirs, 'REF') }, { ...b, message: b.message.replace(unknown, 'REF') });
      }
      assert.equal(mock.requests.length, before);
    });

    it('an organisation provider stops when its workspace is disabled; an unresolvable secret mapping is a clear 400', async () => {
      const key = `sk-org-${randomBytes(6).toString('hex')}`;
      const org = await expectJson(await gw.call('/integrations', { body: { name: 'org', ai_provider_id: 'openai', key, slug: 'org-shared', configurations: { custom_host: mock.url } } }), 201);
      await expectJson(await gw.call(`/integrations/${org.id}/workspaces`, { method: 'PUT', body: { workspaces: [{ id: 'default', enabled: true }] } }), 200);
      await expectJson(await gw.call('/virtual-keys', { body: { name: 'from org', integration_id: org.id, slug: 'from-org' } }), 201);
      await reaches({ 'x-gateway-provider': '@from-org' }, key);
      await expectJson(await gw.call(`/integrations/${org.id}/workspaces`, { method: 'PUT', body: { workspaces: [{ id: 'default', enabled: false }] } }), 200);
      const off = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-provider': '@from-org' }, body: chat() }), 403);
      assert.equal(off.code, 'integration_not_enabled');

      await expectJson(
        await gw.call('/integrations', {
          body: { name: 'mapped', ai_provider_id: 'openai', slug: 'mapped-int', workspace_id: 'default', secret_mappings: [{ target_field: 'key', secret_reference_id: 'vault-1' }] },
        }),
        201,
      );
      const mapped = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-provider': '@mapped-int' }, body: chat() }), 400);
      assert.equal(mapped.code, 'secret_reference_unavailable');
      assert.match(mapped.message, /vault-1/);
    });

    it('a blob moved to another row does not decrypt: 500 naming the key only, nothing sent upstream', async () => {
      const victim = await expectJson(await gw.call('/virtual-keys', { body: { name: 'victim', provider: 'openai', key: 'sk-victim-key-0000', slug: 'victim', custom_host: mock.url } }), 201);
      const row = await gw.store.db.get<{ credentials: string }>('SELECT credentials FROM virtual_keys WHERE id = ?', [vkId]);
      await gw.store.db.run('UPDATE virtual_keys SET credentials = ? WHERE id = ?', [row!.credentials, victim.id]);
      // Notices are how caches learn of writes; a raw UPDATE sends none.
      gw.store.changes.publish({ kind: 'virtual_key', id: victim.id });
      const before = mock.requests.length;
      const err = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-virtual-key': 'victim' }, body: chat() }), 500);
      assert.equal(err.code, 'credentials_unreadable');
      assert.match(err.message, /victim/);
      assert.ok(!err.message.includes(secret));
      assert.equal(mock.requests.length, before);
    });

    it('a restart keeps them working', async () => {
      await gw.restart();
      await reaches({ 'x-gateway-virtual-key': 'main-openai' }, secret);
      await reaches({ 'x-gateway-provider': '@team-openai' }, teamKey);
    });
  });
}

describe('provider keys never reach the log', { timeout: 30_000 }, () => {
  it('with a trace-level logger, creating, updating and using stored credentials logs no key', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const gw = await startTestGateway({}, {}, pino({ level: 'trace' }, sink));
    const mock = await startMockOpenAI();
    const keys = [`sk-log-a-${randomBytes(8).toString('hex')}`, `sk-log-b-${randomBytes(8).toString('hex')}`, `sk-log-c-${randomBytes(8).toString('hex')}`];
    try {
      const vk = await expectJson(await gw.call('/virtual-keys', { body: { name: 'logged', provider: 'openai', key: keys[0], slug: 'logged', custom_host: mock.url } }), 201);
      assert.equal((await gw.call('/chat/completions', { headers: { 'x-gateway-virtual-key': 'logged' }, body: chat() })).status, 200);
      await expectJson(await gw.call(`/virtual-keys/${vk.id}`, { method: 'PUT', body: { key: keys[1] } }), 200);
      await expectJson(
        await gw.call('/integrations', { body: { name: 'logged', ai_provider_id: 'openai', key: keys[2], slug: 'logged-int', workspace_id: 'default', configurations: { custom_host: mock.url } } }),
        201,
      );
      assert.equal((await gw.call('/chat/completions', { headers: { 'x-gateway-provider': '@logged-int' }, body: chat() })).status, 200);
      // A blob that does not decrypt is logged (by id) without its content.
      const other = await expectJson(await gw.call('/virtual-keys', { body: { name: 'other', provider: 'openai', key: keys[0], slug: 'other' } }), 201);
      const row = await gw.store.db.get<{ credentials: string }>('SELECT credentials FROM virtual_keys WHERE id = ?', [vk.id]);
      await gw.store.db.run('UPDATE virtual_keys SET credentials = ? WHERE id = ?', [row!.credentials, other.id]);
      gw.store.changes.publish({ kind: 'virtual_key', id: other.id });
      assert.equal((await gw.call('/chat/completions', { headers: { 'x-gateway-virtual-key': 'other' }, body: chat() })).status, 500);
    } finally {
      await gw.stop();
      await mock.close();
    }
    const log = lines.join('');
    assert.match(log, /do not decrypt/, 'the log was captured');
    for (const k of keys) assert.ok(!log.includes(k), 'a provider key was logged');
  });
});
