// /v1/integrations on both engines: workspace and organisation integrations, the
// default provider, secret mappings, pricing adjustments, updates, workspace
// access, integration models, managers' write setting, scoping and restarts.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DEFAULT_SETTINGS } from '../src/store/settings.js';
import { engines } from './support/engines.js';
import { assertEnvelope } from './support/http.js';
import { createWorkspace, expectJson, workspaceKey } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'sk-integration-0123456789abcdEFGH';
const INTEGRATIONS = ['integrations.create', 'integrations.read', 'integrations.list', 'integrations.update', 'integrations.delete'];

for (const engine of engines()) {
  describe(`integrations (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let wsB: string;
    let keyB: string;
    let wsC: string;
    let keyC: string;

    before(async () => {
      wsB = await createWorkspace(gw, 'Team B');
      keyB = await workspaceKey(gw, wsB, [...INTEGRATIONS, 'virtual_keys.create', 'virtual_keys.read']);
      wsC = await createWorkspace(gw, 'Team C');
      keyC = await workspaceKey(gw, wsC, [...INTEGRATIONS, 'virtual_keys.create', 'virtual_keys.read']);
    });

    const create = (body: Record<string, unknown>, headers?: Record<string, string>) => gw.call('/integrations', { body, headers });
    const asB = () => ({ 'x-gateway-api-key': keyB });
    /** Headers with a user key holding the integration scopes, its user an organisation member seated in `ws` with `role`. */
    async function userKeyIn(ws: string, role: string): Promise<Record<string, string>> {
      const userId = `user-${randomBytes(4).toString('hex')}`;
      const at = Math.floor(Date.now() / 1000);
      await gw.store.db.run('INSERT INTO users (id, email, role, created_at, last_updated_at) VALUES (?, ?, ?, ?, ?)', [userId, `${userId}@example.com`, 'member', at, at]);
      await gw.store.db.run('INSERT INTO workspace_members (workspace_id, user_id, role, created_at) VALUES (?, ?, ?, ?)', [ws, userId, role, at]);
      return { 'x-gateway-api-key': await workspaceKey(gw, ws, INTEGRATIONS, { subType: 'user', userId }) };
    }
    const asC = () => ({ 'x-gateway-api-key': keyC });

    it('a workspace integration creates its default provider, named by default_provider_slug (else the integration slug)', async () => {
      const made = await expectJson(
        await create({
          name: 'OpenAI B',
          ai_provider_id: 'openai',
          key: KEY,
          slug: 'openai-b',
          description: 'team b',
          workspace_id: wsB,
          configurations: { custom_host: 'http://127.0.0.1:9/v1', vendor_project: 'p1' },
          default_provider_slug: 'openai-b-main',
          pricing_adjustments: { multiplier: 1.25 },
        }),
        201,
      );
      assert.deepEqual(made, { id: made.id, slug: 'openai-b', object: 'integration', default_provider_slug: 'openai-b-main' });
      const res = await gw.call('/integrations/openai-b');
      const text = await res.clone().text();
      const i = await expectJson(res, 200);
      assert.equal(i.id, made.id);
      assert.equal(i.ai_provider_id, 'openai');
      assert.equal(i.type, 'workspace');
      assert.equal(i.workspace_id, wsB);
      assert.equal(i.description, 'team b');
      assert.equal(i.masked_key, '****EFGH');
      assert.deepEqual(i.configurations, { custom_host: 'http://127.0.0.1:9/v1', vendor_project: 'p1' });
      assert.deepEqual(i.pricing_adjustments, { multiplier: 1.25 });
      assert.equal(i.allow_all_models, true);
      assert.deepEqual(i.secret_mappings, []);
      assert.ok(!text.includes(KEY.slice(0, -4)));

      const provider = await expectJson(await gw.call('/virtual-keys/openai-b-main', { headers: asB() }), 200);
      assert.equal(provider.integration_id, made.id);
      assert.equal(provider.provider, 'openai');
      assert.equal(provider.masked_key, undefined, 'a provider holds no credentials of its own');

      // A workspace key that names no workspace acts in its own; the default provider takes the integration's slug.
      const own = await expectJson(await create({ name: 'Own', ai_provider_id: 'anthropic', key: KEY, slug: 'anthropic-b' }, asB()), 201);
      assert.equal(own.default_provider_slug, 'anthropic-b');
      assert.equal((await expectJson(await gw.call('/integrations/anthropic-b'), 200)).workspace_id, wsB);
      const none = await expectJson(await create({ name: 'No provider', ai_provider_id: 'openai', key: KEY, workspace_id: wsB, create_default_provider: false }), 201);
      assert.equal(none.default_provider_slug, undefined);
    });

    it('slug clashes: 409 naming slug or default_provider_slug, and nothing is created', async () => {
      await expectJson(await create({ name: 'first', ai_provider_id: 'openai', key: KEY, slug: 'clash-one', workspace_id: wsB, default_provider_slug: 'clash-provider' }), 201);
      const slugErr = await assertEnvelope(await create({ name: 'second', ai_provider_id: 'openai', key: KEY, slug: 'clash-one', workspace_id: wsC }), 409);
      assert.equal(slugErr.param, 'slug');
      const provErr = await assertEnvelope(
        await create({ name: 'third', ai_provider_id: 'openai', key: KEY, slug: 'clash-two', workspace_id: wsB, default_provider_slug: 'clash-provider' }),
        409,
      );
      assert.equal(provErr.param, 'default_provider_slug');
      await assertEnvelope(await gw.call('/integrations/clash-two'), 404);
      // The same provider slug in another workspace is fine.
      await expectJson(await create({ name: 'fourth', ai_provider_id: 'openai', key: KEY, slug: 'clash-three', workspace_id: wsC, default_provider_slug: 'clash-provider' }), 201);
    });

    it('refuses bad input with a 400 naming the field', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ ai_provider_id: 'openai', key: KEY }, 'name'],
        [{ name: 'x', key: KEY }, 'ai_provider_id'],
        [{ name: 'x', ai_provider_id: 'nope', key: KEY }, 'ai_provider_id'],
        [{ name: 'x', provider: 'nope', key: KEY }, 'provider'],
        [{ name: 'x', ai_provider_id: 'openai', workspace_id: 'default' }, 'key'],
        [{ name: 'x', ai_provider_id: 'openai', key: KEY, configurations: { custom_host: 'nope' } }, 'configurations.custom_host'],
        [{ name: 'x', ai_provider_id: 'openai', key: KEY, configurations: { mystery: 1 } }, 'configurations.mystery'],
        [{ name: 'x', ai_provider_id: 'bedrock', configurations: { cloud1_access_key_id: 'A' } }, 'configurations.cloud1_secret_access_key'],
        [{ name: 'x', ai_provider_id: 'openai', key: KEY, pricing_adjustments: { multiplier: 0 } }, 'pricing_adjustments.multiplier'],
        [{ name: 'x', ai_provider_id: 'openai', key: KEY, pricing_adjustments: { multiplier: 'x' } }, 'pricing_adjustments.multiplier'],
        [{ name: 'x', ai_provider_id: 'openai', secret_mappings: [{ target_field: 'key', secret_reference_id: 'sr', value_format: 'yaml' }] }, 'secret_mappings[0].value_format'],
        [{ name: 'x', ai_provider_id: 'openai', secret_mappings: [{ target_field: 'key' }] }, 'secret_mappings[0].secret_reference_id'],
        [{ name: 'x', ai_provider_id: 'openai', secret_mappings: [{ target_field: 'password', secret_reference_id: 'sr' }] }, 'secret_mappings[0].target_field'],
        [
          {
            name: 'x',
            ai_provider_id: 'openai',
            secret_mappings: [
              { target_field: 'key', secret_reference_id: 'sr' },
              { target_field: 'key', secret_reference_id: 'sr2' },
            ],
          },
          'secret_mappings[1].target_field',
        ],
        // An organisation integration has no workspace to put a provider in.
        [{ name: 'x', ai_provider_id: 'openai', key: KEY, create_default_provider: true }, 'create_default_provider'],
        [{ name: 'x', ai_provider_id: 'openai', key: KEY, workspace_id: wsB, create_default_provider: false, default_provider_slug: 'p' }, 'default_provider_slug'],
      ];
      for (const [body, param] of cases) {
        const err = await assertEnvelope(await create(body), 400);
        assert.equal(err.param, param, `${JSON.stringify(body)}: ${err.message}`);
      }
    });

    it('secret mappings are stored; a mapped key makes key optional; pricing adjustments are stored', async () => {
      const mappings = [
        { target_field: 'key', secret_reference_id: 'vault-openai', secret_key: 'api_key', value_format: 'string' },
        { target_field: 'configurations.vendor_organization', secret_reference_id: 'vault-org', value_format: 'json' },
      ];
      const made = await expectJson(await create({ name: 'mapped', ai_provider_id: 'openai', slug: 'mapped', workspace_id: wsB, secret_mappings: mappings }), 201);
      const i = await expectJson(await gw.call(`/integrations/${made.id}`), 200);
      assert.deepEqual(i.secret_mappings, mappings);
      assert.equal(i.masked_key, null);
      const aws = await expectJson(
        await create({
          name: 'aws mapped',
          ai_provider_id: 'bedrock',
          configurations: { cloud1_access_key_id: 'AKIA-MAPPED', cloud1_region: 'us-east-1' },
          secret_mappings: [{ target_field: 'configurations.cloud1_secret_access_key', secret_reference_id: 'aws-sr' }],
        }),
        201,
      );
      const awsView = await expectJson(await gw.call(`/integrations/${aws.id}`), 200);
      assert.equal(awsView.type, 'organisation');
      assert.deepEqual(awsView.configurations, { masked_cloud1_access_key_id: '****', cloud1_region: 'us-east-1' });
    });

    it('lists with contract paging, filtered by type and by the workspace that can use them', async () => {
      const org = await expectJson(await create({ name: 'Org OpenAI', ai_provider_id: 'openai', key: KEY, slug: 'org-list' }), 201);
      const all = await expectJson(await gw.call('/integrations?limit=100'), 200);
      assert.equal(all.object, 'list');
      assert.ok(all.data.some((i: { id: string }) => i.id === org.id));
      const orgOnly = await expectJson(await gw.call('/integrations?limit=100&type=organisation'), 200);
      assert.ok(orgOnly.data.length > 0 && orgOnly.data.every((i: { type: string }) => i.type === 'organisation'));
      const wsOnly = await expectJson(await gw.call('/integrations?limit=100&type=workspace'), 200);
      assert.ok(wsOnly.data.length > 0 && wsOnly.data.every((i: { type: string }) => i.type === 'workspace'));
      const forB = await expectJson(await gw.call(`/integrations?limit=100&workspace_id=${wsB}`), 200);
      assert.ok(forB.data.every((i: { workspace_id: string | null }) => i.workspace_id === wsB));
      const page = await expectJson(await gw.call('/integrations?limit=1'), 200);
      assert.equal(page.data.length, 1);
      assert.equal(page.has_more, true);
      const err = await assertEnvelope(await gw.call('/integrations?type=global'), 400);
      assert.equal(err.param, 'type');
      assert.ok(!JSON.stringify(all).includes(KEY.slice(0, -4)));
    });

    it('workspace keys see their own and the enabled organisation integrations; others are 404', async () => {
      const b = await expectJson(await create({ name: 'B only', ai_provider_id: 'openai', key: KEY, slug: 'b-only', workspace_id: wsB }), 201);
      await expectJson(await gw.call('/integrations/b-only', { headers: asB() }), 200);
      await assertEnvelope(await gw.call('/integrations/b-only', { headers: asC() }), 404);
      await assertEnvelope(await gw.call(`/integrations/${b.id}`, { headers: asC() }), 404);
      await assertEnvelope(await gw.call(`/integrations/${b.id}`, { method: 'PUT', headers: asC(), body: { name: 'hijack' } }), 404);
      await assertEnvelope(await gw.call(`/integrations/${b.id}`, { method: 'DELETE', headers: asC() }), 404);
      await assertEnvelope(await gw.call(`/integrations/${b.id}/integration-models`, { headers: asC() }), 404);
      const listC = await expectJson(await gw.call('/integrations?limit=100', { headers: asC() }), 200);
      assert.ok(!listC.data.some((i: { id: string }) => i.id === b.id));
      const denied = await assertEnvelope(await gw.call(`/integrations?workspace_id=${wsB}`, { headers: asC() }), 403);
      assert.equal(denied.param, 'workspace_id');
    });

    it('organisation integrations reach a workspace once enabled there; only organisation keys set that', async () => {
      const org = await expectJson(await create({ name: 'Shared', ai_provider_id: 'openai', key: KEY, slug: 'shared-org' }), 201);
      await assertEnvelope(await gw.call('/integrations/shared-org', { headers: asB() }), 404);
      const notYet = await assertEnvelope(await gw.call('/virtual-keys', { headers: asB(), body: { name: 'p', integration_id: 'shared-org' } }), 403);
      assert.equal(notYet.code, 'integration_not_enabled');
      assert.equal(notYet.param, 'integration_id');

      const forbidden = await assertEnvelope(await gw.call(`/integrations/${org.id}/workspaces`, { method: 'PUT', headers: asB(), body: { workspaces: [{ id: wsB, enabled: true }] } }), 403);
      assert.equal(forbidden.code, 'organisation_key_required');
      const unknown = await assertEnvelope(await gw.call(`/integrations/${org.id}/workspaces`, { method: 'PUT', body: { workspaces: [{ id: 'no-such-ws', enabled: true }] } }), 404);
      assert.equal(unknown.param, 'workspaces[0].id');
      const bad = await assertEnvelope(await gw.call(`/integrations/${org.id}/workspaces`, { method: 'PUT', body: { workspaces: [{ id: wsB }] } }), 400);
      assert.equal(bad.param, 'workspaces[0].enabled');

      const enabled = await expectJson(await gw.call(`/integrations/${org.id}/workspaces`, { method: 'PUT', body: { workspaces: [{ id: wsB, enabled: true }] } }), 200);
      assert.deepEqual(enabled.data, [{ object: 'integration-workspace', id: wsB, enabled: true }]);
      assert.deepEqual((await expectJson(await gw.call(`/integrations/${org.id}/workspaces`), 200)).data, enabled.data);
      const seen = await expectJson(await gw.call('/integrations/shared-org', { headers: asB() }), 200);
      assert.equal(seen.type, 'organisation');
      assert.ok((await expectJson(await gw.call('/integrations?limit=100', { headers: asB() }), 200)).data.some((i: { id: string }) => i.id === org.id));
      // Read only for the workspace.
      await assertEnvelope(await gw.call(`/integrations/${org.id}`, { method: 'PUT', headers: asB(), body: { name: 'mine' } }), 403);

      const provider = await expectJson(await gw.call('/virtual-keys', { headers: asB(), body: { name: 'Shared in B', integration_id: 'shared-org', slug: 'shared' } }), 201);
      const view = await expectJson(await gw.call(`/virtual-keys/${provider.id}`, { headers: asB() }), 200);
      assert.equal(view.integration_id, org.id);
      assert.equal(view.provider, 'openai');
      // Workspace C was never enabled.
      await assertEnvelope(await gw.call('/virtual-keys', { headers: asC(), body: { name: 'p', integration_id: org.id } }), 403);
      // Another workspace's integration does not exist for C.
      const hidden = await assertEnvelope(await gw.call('/virtual-keys', { headers: asC(), body: { name: 'p', integration_id: 'b-only' } }), 404);
      assert.equal(hidden.param, 'integration_id');

      await expectJson(await gw.call(`/integrations/${org.id}/workspaces`, { method: 'PUT', body: { workspaces: [{ id: wsB, enabled: false }] } }), 200);
      await assertEnvelope(await gw.call('/integrations/shared-org', { headers: asB() }), 404);
      // Workspace access belongs to organisation integrations.
      await assertEnvelope(await gw.call('/integrations/b-only/workspaces'), 409);
    });

    it('PUT changes name, description, key (re-encrypted), configurations (merged; null removes) and mappings; bad input changes nothing', async () => {
      const made = await expectJson(
        await create({ name: 'to change', ai_provider_id: 'openai', key: KEY, workspace_id: wsB, configurations: { custom_host: 'http://127.0.0.1:9/v1', vendor_project: 'p' } }),
        201,
      );
      const before = await gw.store.db.get<{ credentials: string }>('SELECT credentials FROM integrations WHERE id = ?', [made.id]);
      const newKey = 'sk-integration-rotated-key-WXYZ';
      const res = await gw.call(`/integrations/${made.id}`, {
        method: 'PUT',
        body: { name: 'changed', description: 'd', key: newKey, configurations: { vendor_project: null, vendor_organization: 'o' }, pricing_adjustments: { multiplier: 0.8 } },
      });
      const text = await res.clone().text();
      const i = await expectJson(res, 200);
      assert.equal(i.name, 'changed');
      assert.equal(i.description, 'd');
      assert.equal(i.masked_key, '****WXYZ');
      assert.deepEqual(i.configurations, { custom_host: 'http://127.0.0.1:9/v1', vendor_organization: 'o' });
      assert.deepEqual(i.pricing_adjustments, { multiplier: 0.8 });
      assert.ok(!text.includes(newKey.slice(0, -4)));
      const after = await gw.store.db.get<{ credentials: string }>('SELECT credentials FROM integrations WHERE id = ?', [made.id]);
      assert.notEqual(after!.credentials, before!.credentials);
      for (const [body, param] of [
        [{ key: null }, 'key'],
        [{ configurations: { custom_host: 'x' } }, 'configurations.custom_host'],
        [{ slug: 'new-slug' }, 'slug'],
        [{ secret_mappings: [{ target_field: 'key', secret_reference_id: 's', value_format: 'xml' }] }, 'secret_mappings[0].value_format'],
      ] as const) {
        const err = await assertEnvelope(await gw.call(`/integrations/${made.id}`, { method: 'PUT', body }), 400);
        assert.equal(err.param, param, err.message);
      }
      // With the key mapped, it may go.
      const mapped = await expectJson(
        await gw.call(`/integrations/${made.id}`, { method: 'PUT', body: { key: null, secret_mappings: [{ target_field: 'key', secret_reference_id: 'vault' }] } }),
        200,
      );
      assert.equal(mapped.masked_key, null);
      assert.equal(mapped.name, 'changed');
    });

    it('DELETE removes the integration with its providers', async () => {
      const made = await expectJson(await create({ name: 'doomed', ai_provider_id: 'openai', key: KEY, workspace_id: wsB, slug: 'doomed' }), 201);
      await expectJson(await gw.call('/virtual-keys/doomed', { headers: asB() }), 200);
      assert.deepEqual(await expectJson(await gw.call(`/integrations/${made.id}`, { method: 'DELETE' }), 200), { id: made.id, object: 'integration', deleted: true });
      await assertEnvelope(await gw.call('/integrations/doomed'), 404);
      await assertEnvelope(await gw.call('/virtual-keys/doomed', { headers: asB() }), 404);
    });

    it('integration models: PUT upserts and answers the list, GET lists, DELETE removes; configurations are checked', async () => {
      const made = await expectJson(await create({ name: 'models', ai_provider_id: 'openai', key: KEY, workspace_id: wsB, slug: 'with-models' }), 201);
      const path = `/integrations/${made.id}/integration-models`;
      const cases: [unknown, string][] = [
        [{}, 'models'],
        [{ models: [{ slug: 'a' }] }, 'models[0].enabled'],
        [{ models: [{ enabled: true }] }, 'models[0].slug'],
        [{ models: [{ slug: 'a', enabled: true }, { slug: 'b', enabled: true, configurations: {} }] }, 'models[1].configurations'],
        [{ models: [{ slug: 'a', enabled: true, configurations: { custom_host: 'not a url' } }] }, 'models[0].configurations.custom_host'],
        [{ models: [{ slug: 'a', enabled: true, configurations: { custom_host: 42 } }] }, 'models[0].configurations.custom_host'],
        [{ models: [{ slug: 'a', enabled: true, configurations: { other: 'x' } }] }, 'models[0].configurations.other'],
        [{ models: [{ slug: 'a', enabled: true }, { slug: 'a', enabled: false }] }, 'models[1].slug'],
        [{ models: [], allow_all_models: 'no' }, 'allow_all_models'],
      ];
      for (const [body, param] of cases) {
        const err = await assertEnvelope(await gw.call(path, { method: 'PUT', body }), 400);
        assert.equal(err.param, param, `${JSON.stringify(body)}: ${err.message}`);
      }
      assert.equal((await expectJson(await gw.call(path), 200)).total, 0);

      const put = await expectJson(
        await gw.call(path, {
          method: 'PUT',
          body: {
            models: [
              { slug: 'gpt-4o', enabled: true, configurations: { custom_host: 'http://127.0.0.1:9/v1' }, pricing_config: { type: 'static' } },
              { slug: 'gpt-3.5', enabled: false },
            ],
            allow_all_models: false,
            // A model's own host receives the integration's key: the key is given again (test/secret-destinations.test.ts).
            key: KEY,
          },
        }),
        200,
      );
      assert.equal(put.total, 2);
      assert.equal(put.allow_all_models, false);
      assert.deepEqual(put.data, [
        { object: 'integration-model', slug: 'gpt-3.5', enabled: false, configurations: null, pricing_config: null },
        { object: 'integration-model', slug: 'gpt-4o', enabled: true, configurations: { custom_host: 'http://127.0.0.1:9/v1' }, pricing_config: { type: 'static' } },
      ]);
      // Upsert: the listed one changes, the other stays.
      await expectJson(await gw.call(path, { method: 'PUT', body: { models: [{ slug: 'gpt-3.5', enabled: true }] } }), 200);
      const listed = await expectJson(await gw.call(path, { headers: asB() }), 200);
      assert.deepEqual(
        listed.data.map((m: { slug: string; enabled: boolean }) => [m.slug, m.enabled]),
        [
          ['gpt-3.5', true],
          ['gpt-4o', true],
        ],
      );
      assert.equal(listed.allow_all_models, false);
      assert.equal((await expectJson(await gw.call(`/integrations/${made.id}`), 200)).allow_all_models, false);
      const removed = await expectJson(await gw.call(`${path}?slugs=gpt-3.5`, { method: 'DELETE' }), 200);
      assert.deepEqual(removed.data.map((m: { slug: string }) => m.slug), ['gpt-4o']);
      assert.equal((await assertEnvelope(await gw.call(path, { method: 'DELETE' }), 400)).param, 'slugs');
      // Writing needs integrations.update.
      const reader = await workspaceKey(gw, wsB, ['integrations.read']);
      const err = await assertEnvelope(await gw.call(path, { method: 'PUT', headers: { 'x-gateway-api-key': reader }, body: { models: [] } }), 403);
      assert.equal(err.param, 'integrations.update');
      await expectJson(await gw.call(path, { headers: { 'x-gateway-api-key': reader } }), 200);
    });

    it("managers write workspace integrations only while managersWriteWsIntegrations is on (organisation setting, workspace override)", async () => {
      const asManager = await userKeyIn(wsB, 'manager');

      const allowed = await expectJson(await create({ name: 'by manager', ai_provider_id: 'openai', key: KEY, create_default_provider: false }, asManager), 201);
      await gw.store.settings.saveOrganisation({
        ...DEFAULT_SETTINGS,
        security_settings: { ...DEFAULT_SETTINGS.security_settings, managersWriteWsIntegrations: false },
      });
      const refused = await assertEnvelope(await create({ name: 'by manager 2', ai_provider_id: 'openai', key: KEY }, asManager), 403);
      assert.match(refused.message, /managersWriteWsIntegrations/);
      await assertEnvelope(await gw.call(`/integrations/${allowed.id}`, { method: 'PUT', headers: asManager, body: { name: 'x' } }), 403);
      await assertEnvelope(await gw.call(`/integrations/${allowed.id}/integration-models`, { method: 'PUT', headers: asManager, body: { models: [] } }), 403);
      await assertEnvelope(await gw.call(`/integrations/${allowed.id}`, { method: 'DELETE', headers: asManager }), 403);
      // Reading stays open; service keys of the workspace are not managers.
      await expectJson(await gw.call(`/integrations/${allowed.id}`, { headers: asManager }), 200);
      await expectJson(await gw.call(`/integrations/${allowed.id}`, { method: 'PUT', headers: asB(), body: { name: 'by service key' } }), 200);

      await gw.store.workspaces.update(wsB, { settings: { security_settings: { managersWriteWsIntegrations: true } } });
      await expectJson(await gw.call(`/integrations/${allowed.id}`, { method: 'PUT', headers: asManager, body: { name: 'override' } }), 200);
      await gw.store.workspaces.update(wsB, { settings: null });
      await gw.store.settings.saveOrganisation(DEFAULT_SETTINGS);
    });

    it("members never write a workspace's integrations, whatever their scopes: the managers' setting is about those above them", async () => {
      const asMember = await userKeyIn(wsB, 'member');
      const theirs = await expectJson(await create({ name: 'by service key', ai_provider_id: 'openai', key: KEY, create_default_provider: false }, asB()), 201);

      const refused = await assertEnvelope(await create({ name: 'by member', ai_provider_id: 'openai', key: KEY, create_default_provider: false }, asMember), 403);
      assert.equal(refused.code, 'permission_denied');
      await assertEnvelope(await gw.call(`/integrations/${theirs.id}`, { method: 'PUT', headers: asMember, body: { name: 'x' } }), 403);
      await assertEnvelope(await gw.call(`/integrations/${theirs.id}/integration-models`, { method: 'PUT', headers: asMember, body: { models: [] } }), 403);
      await assertEnvelope(await gw.call(`/integrations/${theirs.id}`, { method: 'DELETE', headers: asMember }), 403);
      const read = await expectJson(await gw.call(`/integrations/${theirs.id}`, { headers: asMember }), 200);
      assert.equal(read.name, 'by service key');
    });

    it('a restart keeps integrations, their models, workspace access and providers', async () => {
      const made = await expectJson(await create({ name: 'kept', ai_provider_id: 'openai', key: KEY, slug: 'kept-org' }), 201);
      await expectJson(await gw.call(`/integrations/${made.id}/workspaces`, { method: 'PUT', body: { workspaces: [{ id: wsC, enabled: true }] } }), 200);
      await expectJson(await gw.call(`/integrations/${made.id}/integration-models`, { method: 'PUT', body: { models: [{ slug: 'm', enabled: false }] } }), 200);
      await expectJson(await gw.call('/virtual-keys', { headers: asC(), body: { name: 'kept provider', integration_id: made.id, slug: 'kept-provider' } }), 201);
      await gw.restart();
      const i = await expectJson(await gw.call('/integrations/kept-org', { headers: asC() }), 200);
      assert.equal(i.masked_key, '****EFGH');
      assert.equal((await expectJson(await gw.call(`/integrations/${made.id}/integration-models`), 200)).total, 1);
      assert.equal((await expectJson(await gw.call('/virtual-keys/kept-provider', { headers: asC() }), 200)).integration_id, made.id);
    });
  });
}
