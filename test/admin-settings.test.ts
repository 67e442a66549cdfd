// Organisation settings and workspace overrides, over HTTP, on both engines.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engines } from './support/engines.js';
import { as, createWorkspace, expect, expectError, seedKey } from './support/identity.js';
import { useGateway } from './support/use-gateway.js';

const DEFAULTS = {
  object: 'organisation_settings',
  user_api_key_auto_create: false,
  user_api_key_ttl: null,
  user_api_key_rotation_period: null,
  session_settings: { max_session_ttl: 86_400 },
  security_settings: {
    membersViewAllData: true,
    managersViewAllData: true,
    organisationAdminsViewLogs: true,
    organisationAdminsViewLogMetadata: true,
    managersWriteWsIntegrations: true,
    managersWriteWsMcpIntegrations: true,
    managersWriteMcpServers: true,
    membersWritePrompts: true,
  },
  log_bodies: true,
  default_input_guardrails: [],
  default_output_guardrails: [],
};

for (const engine of engines()) {
  describe(`organisation settings (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);

    const put = (body: unknown, headers?: Record<string, string>) => gw.call('/organisation/settings', { method: 'PUT', body, headers });

    it('answers the defaults before anything is set', async () => {
      assert.deepEqual(await expect(gw.call('/organisation/settings'), 200), DEFAULTS);
    });

    it('PUT changes only the fields it names, nested objects included', async () => {
      const first = await expect(put({ user_api_key_ttl: 3600, security_settings: { membersViewAllData: false } }), 200);
      assert.equal(first.user_api_key_ttl, 3600);
      assert.equal(first.security_settings.membersViewAllData, false);
      assert.equal(first.security_settings.managersViewAllData, true);
      const second = await expect(put({ session_settings: { max_session_ttl: 900 }, user_api_key_rotation_period: 'monthly', user_api_key_auto_create: true }), 200);
      assert.equal(second.security_settings.membersViewAllData, false, 'an earlier change stays');
      assert.equal(second.user_api_key_ttl, 3600);
      assert.deepEqual(second.session_settings, { max_session_ttl: 900 });
      assert.deepEqual(await expect(gw.call('/organisation/settings'), 200), second);
      const cleared = await expect(put({ user_api_key_ttl: null, user_api_key_rotation_period: null, user_api_key_auto_create: false }), 200);
      assert.equal(cleared.user_api_key_ttl, null);
      assert.equal(cleared.user_api_key_rotation_period, null);
    });

    it('refuses bad values with a 400 naming the field, and changes nothing', async () => {
      const before = await expect(gw.call('/organisation/settings'), 200);
      await expectError(put({ session_settings: { max_session_ttl: 899 } }), 400, 'session_settings.max_session_ttl');
      await expectError(put({ session_settings: { max_session_ttl: 900.5 } }), 400, 'session_settings.max_session_ttl');
      await expectError(put({ session_settings: { idle_ttl: 900 } }), 400, 'session_settings.idle_ttl');
      await expectError(put({ user_api_key_ttl: 59 }), 400, 'user_api_key_ttl');
      await expectError(put({ user_api_key_rotation_period: 'daily' }), 400, 'user_api_key_rotation_period');
      await expectError(put({ user_api_key_auto_create: 'yes' }), 400, 'user_api_key_auto_create');
      await expectError(put({ security_settings: { membersViewAllData: 'no' } }), 400, 'security_settings.membersViewAllData');
      await expectError(put({ security_settings: { membersViewEverything: false } }), 400, 'security_settings.membersViewEverything');
      await expectError(put({ favourite_colour: 'blue' }), 400, 'favourite_colour');
      await expectError(put({ user_api_key_ttl: 600, bogus: 1 }), 400, 'bogus');
      await expectError(put([1]), 400);
      assert.deepEqual(await expect(gw.call('/organisation/settings'), 200), before);
    });

    it('needs a key, an organisation key, and the scope', async () => {
      await expectError(gw.call('/organisation/settings', { headers: { 'x-gateway-api-key': '' } }), 401);
      await expectError(gw.call('/organisation/settings', { headers: as('not-a-key') }), 401);
      const workspaceKey = await seedKey(gw, { scopes: ['organisation_settings.read', 'organisation_settings.update'] });
      await expectError(gw.call('/organisation/settings', { headers: as(workspaceKey) }), 403);
      await expectError(put({ user_api_key_ttl: 600 }, as(workspaceKey)), 403);
      const reader = await seedKey(gw, { type: 'organisation', scopes: ['organisation_settings.read'] });
      await expect(gw.call('/organisation/settings', { headers: as(reader) }), 200);
      await expectError(put({ user_api_key_ttl: 600 }, as(reader)), 403, 'organisation_settings.update');
      const none = await seedKey(gw, { type: 'organisation', scopes: [] });
      await expectError(gw.call('/organisation/settings', { headers: as(none) }), 403, 'organisation_settings.read');
      const writer = await seedKey(gw, { type: 'organisation', scopes: ['organisation_settings.update'] });
      assert.equal((await expect(put({ user_api_key_ttl: 600 }, as(writer)), 200)).user_api_key_ttl, 600);
      await expect(put({ user_api_key_ttl: null }), 200);
    });

    it('a workspace overrides auto-create and security settings; GET /workspaces/:id/settings merges them', async () => {
      await expect(put({ user_api_key_auto_create: false, security_settings: { membersViewAllData: false } }), 200);
      const ws = await createWorkspace(gw);
      const plain = await expect(gw.call(`/workspaces/${ws.id}/settings`), 200);
      assert.equal(plain.object, 'workspace_settings');
      assert.equal(plain.workspace_id, ws.id);
      assert.equal(plain.user_api_key_auto_create, false);
      assert.deepEqual(plain.overrides, {});

      const updated = await expect(
        gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { settings: { user_api_key_auto_create: true, security_settings: { managersViewAllData: false } } } }),
        200,
      );
      assert.deepEqual(updated.settings, { user_api_key_auto_create: true, security_settings: { managersViewAllData: false } });
      const eff = await expect(gw.call(`/workspaces/${ws.slug}/settings`), 200);
      assert.equal(eff.user_api_key_auto_create, true, 'the workspace overrides the organisation');
      assert.equal(eff.security_settings.managersViewAllData, false);
      assert.equal(eff.security_settings.membersViewAllData, false, 'inherited from the organisation');
      const org = await expect(gw.call('/organisation/settings'), 200);
      assert.deepEqual(eff.session_settings, org.session_settings, "not overridable: the organisation's");

      // A later PUT merges into the overrides; null removes one.
      await expect(gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { settings: { security_settings: { membersViewAllData: true } } } }), 200);
      let now = await expect(gw.call(`/workspaces/${ws.id}/settings`), 200);
      assert.deepEqual(now.overrides, { user_api_key_auto_create: true, security_settings: { managersViewAllData: false, membersViewAllData: true } });
      assert.equal(now.security_settings.membersViewAllData, true);
      await expect(gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { settings: { user_api_key_auto_create: null } } }), 200);
      await expect(put({ user_api_key_auto_create: true }), 200);
      now = await expect(gw.call(`/workspaces/${ws.id}/settings`), 200);
      assert.equal(now.user_api_key_auto_create, true, 'inherits again once the override is gone');
      await expect(gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { settings: { user_api_key_auto_create: false } } }), 200);
      assert.equal((await expect(gw.call(`/workspaces/${ws.id}/settings`), 200)).user_api_key_auto_create, false);
      await expect(gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { settings: null } }), 200);
      now = await expect(gw.call(`/workspaces/${ws.id}/settings`), 200);
      assert.deepEqual(now.overrides, {});
      assert.equal(now.user_api_key_auto_create, true);
      await expect(put({ user_api_key_auto_create: false, security_settings: { membersViewAllData: true } }), 200);
    });

    it('refuses workspace overrides of anything else, naming the field', async () => {
      const ws = await createWorkspace(gw);
      const bad = (settings: unknown) => gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { settings } });
      await expectError(bad({ session_settings: { max_session_ttl: 1000 } }), 400, 'settings.session_settings');
      await expectError(bad({ user_api_key_ttl: 100 }), 400, 'settings.user_api_key_ttl');
      await expectError(bad({ security_settings: { bogus: true } }), 400, 'settings.security_settings.bogus');
      await expectError(bad({ security_settings: { managersViewAllData: 1 } }), 400, 'settings.security_settings.managersViewAllData');
      await expectError(bad({ user_api_key_auto_create: 'on' }), 400, 'settings.user_api_key_auto_create');
      await expectError(bad('on'), 400, 'settings');
      assert.deepEqual((await expect(gw.call(`/workspaces/${ws.id}/settings`), 200)).overrides, {});
    });

    it('GET /workspaces/:id/settings: 404 unknown or another workspace, 403 without the scope', async () => {
      const ws = await createWorkspace(gw);
      const other = await createWorkspace(gw);
      await expectError(gw.call('/workspaces/no-such-workspace/settings'), 404);
      const own = await seedKey(gw, { workspaceId: ws.id, scopes: ['workspaces.read'] });
      await expect(gw.call(`/workspaces/${ws.id}/settings`, { headers: as(own) }), 200);
      await expectError(gw.call(`/workspaces/${other.id}/settings`, { headers: as(own) }), 404);
      const scopeless = await seedKey(gw, { workspaceId: ws.id, scopes: [] });
      await expectError(gw.call(`/workspaces/${ws.id}/settings`, { headers: as(scopeless) }), 403, 'workspaces.read');
      await expectError(gw.call(`/workspaces/${ws.id}/settings`, { headers: { 'x-gateway-api-key': '' } }), 401);
    });

    it('a restart keeps organisation settings and workspace overrides', async () => {
      await expect(put({ user_api_key_ttl: 7200, session_settings: { max_session_ttl: 1800 }, security_settings: { managersWriteMcpServers: false } }), 200);
      const ws = await createWorkspace(gw);
      await expect(gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { settings: { security_settings: { organisationAdminsViewLogs: false } } } }), 200);
      const org = await expect(gw.call('/organisation/settings'), 200);
      const eff = await expect(gw.call(`/workspaces/${ws.id}/settings`), 200);
      await gw.restart();
      assert.deepEqual(await expect(gw.call('/organisation/settings'), 200), org);
      assert.deepEqual(await expect(gw.call(`/workspaces/${ws.id}/settings`), 200), eff);
    });
  });
}
