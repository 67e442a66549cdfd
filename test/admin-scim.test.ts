// SCIM group → workspace mappings and SCIM provisioning (users, groups, membership), over HTTP, on both engines.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engines } from './support/engines.js';
import { as, createWorkspace, email, expect, expectError, seedKey, type Json } from './support/identity.js';
import { useGateway } from './support/use-gateway.js';

const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

for (const engine of engines()) {
  describe(`SCIM (${engine.name})`, { timeout: 90_000 }, () => {
    const gw = useGateway(engine);

    let n = 0;
    const groupName = (tag = 'group') => `${tag}-${++n}-${Date.now()}`;
    const map = (body: unknown, headers?: Record<string, string>) => gw.call('/scim/workspaces', { body, headers });
    const scimUser = async (address = email('scim')): Promise<Json> =>
      expect(gw.call('/scim/v2/Users', { body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: address, name: { givenName: 'S', familyName: 'Cim' } } }), 201);
    const patch = (groupId: string, Operations: unknown, headers?: Record<string, string>) =>
      gw.call(`/scim/v2/Groups/${groupId}`, { method: 'PATCH', body: { schemas: [PATCH_OP], Operations }, headers });
    const members = async (wsId: string): Promise<Json[]> => (await expect(gw.call(`/workspaces/${wsId}/users`), 200)).data;
    const works = async (secret: string, status = 200) => {
      const res = await gw.call('/models', { headers: as(secret) });
      await res.arrayBuffer();
      assert.equal(res.status, status);
    };

    describe('mappings', () => {
      it('scim_group_name creates a missing group; the same mapping again returns the existing one (200)', async () => {
        const ws = await createWorkspace(gw);
        const name = groupName();
        const m = await expect(map({ scim_group_name: name, workspace_id: ws.slug, role: 'ADMIN' }), 201);
        assert.deepEqual(Object.keys(m).sort(), ['api_keys', 'id', 'role', 'scim_group', 'scim_group_id', 'workspace_id']);
        assert.equal(m.workspace_id, ws.id);
        assert.equal(m.scim_group, name);
        assert.equal(m.role, 'admin');
        assert.equal(typeof m.scim_group_id, 'string');
        const again = await expect(map({ scim_group_name: name, workspace_id: ws.id, role: 'admin' }), 200);
        assert.equal(again.id, m.id);
        const byId = await expect(map({ scim_group_id: m.scim_group_id, workspace_id: ws.id, role: 'Admin' }), 200);
        assert.equal(byId.id, m.id);
        const listed = await expect(gw.call(`/scim/workspaces?scim_group_id=${m.scim_group_id}`), 200);
        assert.deepEqual(listed.data, [{ id: m.id, workspace_id: ws.id, scim_group: name, scim_group_id: m.scim_group_id, role: 'admin' }]);
      });

      it('a group maps to many workspaces with one role; another role is a 400 naming role', async () => {
        const a = await createWorkspace(gw);
        const b = await createWorkspace(gw);
        const c = await createWorkspace(gw);
        const first = await expect(map({ scim_group_name: groupName(), workspace_id: a.id, role: 'manager' }), 201);
        const second = await expect(map({ scim_group_id: first.scim_group_id, workspace_id: b.id, role: 'MANAGER' }), 201);
        assert.notEqual(second.id, first.id);
        assert.equal(second.scim_group, first.scim_group);
        const refused = await expectError(map({ scim_group_id: first.scim_group_id, workspace_id: c.id, role: 'member' }), 400, 'role');
        assert.match(refused.error.message, /single role/);
        await expectError(map({ scim_group_id: first.scim_group_id, workspace_id: a.id, role: 'admin' }), 400, 'role');
        await expectError(map({ scim_group_name: first.scim_group, workspace_id: c.id, role: 'admin' }), 400, 'role');
      });

      it('exactly one of scim_group_name / scim_group_id; required workspace_id and role; unknown ids 404', async () => {
        const ws = await createWorkspace(gw);
        const m = await expect(map({ scim_group_name: groupName(), workspace_id: ws.id, role: 'member' }), 201);
        await expectError(map({ scim_group_name: groupName(), scim_group_id: m.scim_group_id, workspace_id: ws.id, role: 'member' }), 400, 'scim_group_id');
        await expectError(map({ workspace_id: ws.id, role: 'member' }), 400, 'scim_group_name');
        await expectError(map({ scim_group_name: groupName(), role: 'member' }), 400, 'workspace_id');
        await expectError(map({ scim_group_name: groupName(), workspace_id: ws.id }), 400, 'role');
        await expectError(map({ scim_group_name: groupName(), workspace_id: ws.id, role: 'owner' }), 400, 'role');
        await expectError(map({ scim_group_name: '', workspace_id: ws.id, role: 'member' }), 400, 'scim_group_name');
        await expectError(map({ scim_group_name: groupName(), workspace_id: ws.id, role: 'member', extra: 1 }), 400, 'extra');
        await expectError(map({ scim_group_id: 'no-such-group', workspace_id: ws.id, role: 'member' }), 404, 'scim_group_id');
        await expectError(map({ scim_group_name: groupName(), workspace_id: 'no-such-workspace', role: 'member' }), 404, 'workspace_id');
        const archived = await createWorkspace(gw);
        await expect(gw.call(`/workspaces/${archived.id}`, { method: 'PUT', body: { status: 'archived' } }), 200);
        await expectError(map({ scim_group_name: groupName(), workspace_id: archived.id, role: 'member' }), 409, 'workspace_id');
      });

      it('GET filters by workspace_id (id or slug), scim_group_id and role, and pages', async () => {
        const ws = await createWorkspace(gw);
        const made: Json[] = [];
        for (const role of ['admin', 'member', 'member']) made.push(await expect(map({ scim_group_name: groupName(), workspace_id: ws.id, role }), 201));
        const all = await expect(gw.call(`/scim/workspaces?workspace_id=${ws.slug}`), 200);
        assert.equal(all.object, 'list');
        assert.deepEqual(all.data.map((m: Json) => m.id), [made[2].id, made[1].id, made[0].id]);
        const members = await expect(gw.call(`/scim/workspaces?workspace_id=${ws.id}&role=MEMBER&limit=1`), 200);
        assert.deepEqual(members.data.map((m: Json) => m.id), [made[2].id]);
        assert.equal(members.has_more, true);
        const next = await expect(gw.call(`/scim/workspaces?workspace_id=${ws.id}&role=member&limit=1&after=${members.last_id}`), 200);
        assert.deepEqual(next.data.map((m: Json) => m.id), [made[1].id]);
        assert.equal(next.has_more, false);
        await expectError(gw.call('/scim/workspaces?role=boss'), 400, 'role');
        await expectError(gw.call('/scim/workspaces?workspace_id=no-such-workspace'), 404, 'workspace_id');
      });

      it('DELETE removes a mapping (404 after); access needs an organisation key with users.update / users.list', async () => {
        const ws = await createWorkspace(gw);
        const m = await expect(map({ scim_group_name: groupName(), workspace_id: ws.id, role: 'member' }), 201);
        assert.deepEqual(await expect(gw.call(`/scim/workspaces/${m.id}`, { method: 'DELETE' }), 200), { id: m.id, object: 'scim_workspace_mapping', deleted: true });
        await expectError(gw.call(`/scim/workspaces/${m.id}`, { method: 'DELETE' }), 404);
        assert.deepEqual((await expect(gw.call(`/scim/workspaces?scim_group_id=${m.scim_group_id}`), 200)).data, []);
        // The group stays: it can be mapped again by id.
        await expect(map({ scim_group_id: m.scim_group_id, workspace_id: ws.id, role: 'admin' }), 201);

        await expectError(map({ scim_group_name: groupName(), workspace_id: ws.id, role: 'member' }, { 'x-gateway-api-key': '' }), 401);
        const workspaceKey = await seedKey(gw, { workspaceId: ws.id, scopes: ['users.update', 'users.list'] });
        await expectError(map({ scim_group_name: groupName(), workspace_id: ws.id, role: 'member' }, as(workspaceKey)), 403);
        await expectError(gw.call('/scim/workspaces', { headers: as(workspaceKey) }), 403);
        const lister = await seedKey(gw, { type: 'organisation', scopes: ['users.list'] });
        await expect(gw.call('/scim/workspaces', { headers: as(lister) }), 200);
        await expectError(map({ scim_group_name: groupName(), workspace_id: ws.id, role: 'member' }, as(lister)), 403, 'users.update');
        await expectError(gw.call(`/scim/workspaces/${m.id}`, { method: 'DELETE', headers: as(lister) }), 403, 'users.update');
        const none = await seedKey(gw, { type: 'organisation', scopes: [] });
        await expectError(gw.call('/scim/workspaces', { headers: as(none) }), 403, 'users.list');
        const updater = await seedKey(gw, { type: 'organisation', scopes: ['users.update'] });
        await expect(map({ scim_group_name: groupName(), workspace_id: ws.id, role: 'member' }, as(updater)), 201);
      });
    });

    describe('provisioning', () => {
      it('POST /scim/v2/Users provisions a member: RFC 7643 shape, 409 for a taken email, 400 without one', async () => {
        const address = email('prov');
        const u = await expect(
          gw.call('/scim/v2/Users', {
            body: {
              schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
              userName: 'jdoe',
              externalId: 'okta-123',
              name: { givenName: 'Jane', familyName: 'Doe' },
              emails: [{ value: email('secondary'), primary: false }, { value: address.toUpperCase(), primary: true, type: 'work' }],
              active: true,
            },
          }),
          201,
        );
        assert.deepEqual(u.schemas, ['urn:ietf:params:scim:schemas:core:2.0:User']);
        assert.equal(u.userName, address, 'userName is the primary email');
        assert.deepEqual(u.emails, [{ value: address, primary: true }]);
        assert.deepEqual(u.name, { givenName: 'Jane', familyName: 'Doe' });
        assert.equal(u.active, true);
        assert.equal(u.meta.resourceType, 'User');
        assert.equal(u.meta.location, `/v1/scim/v2/Users/${u.id}`);
        const user = await expect(gw.call(`/users/${u.id}`), 200);
        assert.equal(user.role, 'member');
        assert.equal(user.email, address);
        await expectError(gw.call('/scim/v2/Users', { body: { userName: address } }), 409, 'email');
        await expectError(gw.call('/scim/v2/Users', { body: { name: { givenName: 'x' } } }), 400, 'userName');
        await expectError(gw.call('/scim/v2/Users', { body: { userName: 'no-email' } }), 400, 'emails');
        await expectError(gw.call('/scim/v2/Users', { body: { userName: 'x', emails: [{ value: 'bad' }] } }), 400, 'emails[0].value');
      });

      it('group membership makes workspace membership with the mapped role; leaving the group removes it', async () => {
        const a = await createWorkspace(gw);
        const b = await createWorkspace(gw);
        const name = groupName('engineering');
        const m = await expect(map({ scim_group_name: name, workspace_id: a.id, role: 'manager' }), 201);
        await expect(map({ scim_group_name: name, workspace_id: b.id, role: 'manager' }), 201);
        const u = await scimUser();
        const v = await scimUser();

        // The identity provider pushes the group a mapping already created by name: it is adopted.
        const g = await expect(gw.call('/scim/v2/Groups', { body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: name, members: [{ value: u.id }] } }), 200);
        assert.equal(g.id, m.scim_group_id);
        assert.equal(g.displayName, name);
        assert.deepEqual(g.members, [{ value: u.id, display: u.userName }]);
        assert.equal(g.meta.resourceType, 'Group');
        for (const ws of [a, b]) {
          const list = await members(ws.id);
          assert.deepEqual(list.map((x: Json) => [x.id, x.role, x.source]), [[u.id, 'manager', 'scim']]);
        }

        const added = await expect(patch(g.id, [{ op: 'Add', path: 'members', value: [{ value: v.id, display: 'v' }] }]), 200);
        assert.deepEqual(added.members.map((x: Json) => x.value).sort(), [u.id, v.id].sort());
        assert.equal((await members(a.id)).length, 2);

        // A member added by hand stays when they leave the group; one who came through the group goes.
        await expect(gw.call(`/workspaces/${b.id}/users/${v.id}`, { method: 'PUT', body: { role: 'admin' } }), 200);
        const direct = await scimUser();
        await expect(gw.call(`/workspaces/${a.id}/users`, { body: { users: [{ id: direct.id, role: 'member' }] } }), 201);
        await expect(patch(g.id, [{ op: 'add', path: 'members', value: [{ value: direct.id }] }]), 200);
        assert.equal((await expect(gw.call(`/workspaces/${a.id}/users/${direct.id}`), 200)).role, 'member', 'an existing membership is left as it is');
        await expect(patch(g.id, [{ op: 'remove', path: `members[value eq "${u.id}"]` }, { op: 'Remove', path: 'members', value: [{ value: direct.id }] }]), 200);
        assert.deepEqual((await members(a.id)).map((x: Json) => x.id).sort(), [v.id, direct.id].sort());
        await expectError(gw.call(`/workspaces/${b.id}/users/${u.id}`), 404);

        // Replace sets the whole list; remove without a value empties the group.
        await expect(patch(g.id, [{ op: 'replace', path: 'members', value: [{ value: u.id }] }]), 200);
        assert.deepEqual((await members(b.id)).map((x: Json) => x.id), [u.id], 'v leaves b: it came through the group, whatever its role now');
        const emptied = await expect(patch(g.id, [{ op: 'remove', path: 'members' }]), 200);
        assert.deepEqual(emptied.members, []);
        assert.deepEqual((await members(b.id)).map((x: Json) => x.id), []);
        assert.deepEqual((await members(a.id)).map((x: Json) => x.id), [direct.id]);
      });

      it('a user in two groups mapped to one workspace stays while either group maps there', async () => {
        const ws = await createWorkspace(gw);
        const u = await scimUser();
        const one = await expect(gw.call('/scim/v2/Groups', { body: { displayName: groupName('one'), members: [{ value: u.id }] } }), 201);
        const two = await expect(gw.call('/scim/v2/Groups', { body: { displayName: groupName('two'), members: [{ value: u.id }] } }), 201);
        // A mapping made after the group has members seats them.
        await expect(map({ scim_group_id: one.id, workspace_id: ws.id, role: 'member' }), 201);
        const m2 = await expect(map({ scim_group_id: two.id, workspace_id: ws.id, role: 'member' }), 201);
        assert.deepEqual((await members(ws.id)).map((x: Json) => x.id), [u.id]);
        await expect(patch(one.id, [{ op: 'remove', path: 'members', value: [{ value: u.id }] }]), 200);
        assert.deepEqual((await members(ws.id)).map((x: Json) => x.id), [u.id], 'group two still maps here');
        // Deleting the last mapping that gave the membership removes it.
        await expect(gw.call(`/scim/workspaces/${m2.id}`, { method: 'DELETE' }), 200);
        assert.deepEqual(await members(ws.id), []);
      });

      it('PATCH without a path, displayName replace, and the refusals', async () => {
        const u = await scimUser();
        const g = await expect(gw.call('/scim/v2/Groups', { body: { displayName: groupName('rename') } }), 201);
        const renamed = groupName('renamed');
        const out = await expect(patch(g.id, [{ op: 'replace', value: { displayName: renamed } }, { op: 'add', value: { members: [{ value: u.id }] } }]), 200);
        assert.equal(out.displayName, renamed);
        assert.deepEqual(out.members.map((x: Json) => x.value), [u.id]);
        await expect(patch(g.id, [{ op: 'replace', path: 'displayName', value: `${renamed}-2` }]), 200);
        const taken = await expect(gw.call('/scim/v2/Groups', { body: { displayName: groupName('taken') } }), 201);
        await expectError(patch(g.id, [{ op: 'replace', path: 'displayName', value: taken.displayName }]), 409, 'displayName');

        await expectError(patch('no-such-group', [{ op: 'add', path: 'members', value: [] }]), 404);
        await expectError(patch(g.id, []), 400, 'Operations');
        await expectError(gw.call(`/scim/v2/Groups/${g.id}`, { method: 'PATCH', body: { schemas: [PATCH_OP] } }), 400, 'Operations');
        await expectError(patch(g.id, [{ op: 'move', path: 'members' }]), 400, 'Operations[0].op');
        await expectError(patch(g.id, [{ op: 'add', path: 'owners', value: [] }]), 400, 'Operations[0].path');
        await expectError(patch(g.id, [{ op: 'add', path: 'members', value: 'me' }]), 400, 'Operations[0].value');
        await expectError(patch(g.id, [{ op: 'add', path: 'members', value: [{ value: u.id }, { value: 'ghost' }] }]), 404, 'Operations[0].value[1].value');
        await expectError(patch(g.id, [{ op: 'replace', path: 'displayName', value: '' }]), 400, 'Operations[0].value');
        await expectError(gw.call('/scim/v2/Groups', { body: { displayName: groupName(), members: [{ value: 'ghost' }] } }), 404, 'members[0].value');
        await expectError(gw.call('/scim/v2/Groups', { body: { members: [] } }), 400, 'displayName');
        const after = await expect(patch(g.id, [{ op: 'add', path: 'members', value: [] }]), 200);
        assert.deepEqual(after.members.map((x: Json) => x.value), [u.id], 'refused patches changed nothing');
      });

      it('provisioning needs an organisation admin key with users.create / users.update', async () => {
        const g = await expect(gw.call('/scim/v2/Groups', { body: { displayName: groupName() } }), 201);
        await expectError(gw.call('/scim/v2/Users', { body: { userName: email() }, headers: { 'x-gateway-api-key': '' } }), 401);
        const workspaceKey = await seedKey(gw, { scopes: ['users.create', 'users.update'] });
        await expectError(gw.call('/scim/v2/Users', { body: { userName: email() }, headers: as(workspaceKey) }), 403);
        const updater = await seedKey(gw, { type: 'organisation', scopes: ['users.update'] });
        await expectError(gw.call('/scim/v2/Users', { body: { userName: email() }, headers: as(updater) }), 403, 'users.create');
        await expectError(gw.call('/scim/v2/Groups', { body: { displayName: groupName() }, headers: as(updater) }), 403, 'users.create');
        await expect(patch(g.id, [{ op: 'add', path: 'members', value: [] }], as(updater)), 200);
        const creator = await seedKey(gw, { type: 'organisation', scopes: ['users.create'] });
        await expect(gw.call('/scim/v2/Users', { body: { userName: email() }, headers: as(creator) }), 201);
        await expectError(patch(g.id, [{ op: 'add', path: 'members', value: [] }], as(creator)), 403, 'users.update');
      });

      it('auto-created keys on SCIM provisioning: one per user and workspace, gone when the group no longer maps the user there', async () => {
        await expect(gw.call('/organisation/settings', { method: 'PUT', body: { user_api_key_auto_create: true, user_api_key_ttl: 600, user_api_key_rotation_period: 'weekly' } }), 200);
        try {
          const ws = await createWorkspace(gw);
          const u = await scimUser();
          const one = await expect(gw.call('/scim/v2/Groups', { body: { displayName: groupName('k1') } }), 201);
          const two = await expect(gw.call('/scim/v2/Groups', { body: { displayName: groupName('k2') } }), 201);
          assert.deepEqual((await expect(map({ scim_group_id: one.id, workspace_id: ws.id, role: 'member' }), 201)).api_keys, []);
          await expect(map({ scim_group_id: two.id, workspace_id: ws.id, role: 'member' }), 201);

          const joined = await expect(patch(one.id, [{ op: 'add', path: 'members', value: [{ value: u.id }] }]), 200);
          assert.equal(joined.api_keys.length, 1);
          const issued = joined.api_keys[0];
          assert.equal(issued.workspace_id, ws.id);
          const row = await gw.store.apiKeys.get(issued.id);
          assert.equal(row?.creationMode, 'auto');
          assert.equal(row?.userId, u.id);
          assert.equal(row?.subType, 'user');
          assert.ok(row?.expiresAt !== null && Math.abs(row!.expiresAt! - (Math.floor(gw.clock.now / 1000) + 600)) <= 2);
          assert.equal(row?.rotationPolicy?.rotation_period, 'weekly');
          await works(issued.key);

          // Joining a second group that maps the same workspace makes no second key.
          assert.deepEqual((await expect(patch(two.id, [{ op: 'add', path: 'members', value: [{ value: u.id }] }]), 200)).api_keys, []);
          // A mapping made for a group with members seats them, with their keys.
          const other = await createWorkspace(gw);
          const mapped = await expect(map({ scim_group_id: two.id, workspace_id: other.id, role: 'member' }), 201);
          assert.deepEqual(mapped.api_keys.map((k: Json) => k.workspace_id), [other.id]);
          await works(mapped.api_keys[0].key);

          await expect(patch(one.id, [{ op: 'remove', path: 'members', value: [{ value: u.id }] }]), 200);
          await works(issued.key);
          await expect(patch(two.id, [{ op: 'remove', path: `members[value eq "${u.id}"]` }]), 200);
          await works(issued.key, 401);
          await works(mapped.api_keys[0].key, 401);
          assert.equal(await gw.store.apiKeys.get(issued.id), null);

          // Provisioning into a group at creation also seats and issues.
          const w = await scimUser();
          const three = await expect(gw.call('/scim/v2/Groups', { body: { displayName: groupName('k3') } }), 201);
          await expect(map({ scim_group_id: three.id, workspace_id: ws.id, role: 'member' }), 201);
          const adopted = await expect(gw.call('/scim/v2/Groups', { body: { displayName: three.displayName, members: [{ value: w.id }] } }), 200);
          assert.equal(adopted.api_keys.length, 1);
          await works(adopted.api_keys[0].key);
        } finally {
          await expect(gw.call('/organisation/settings', { method: 'PUT', body: { user_api_key_auto_create: false, user_api_key_ttl: null, user_api_key_rotation_period: null } }), 200);
        }
      });
    });

    it('a restart keeps groups, their members and mappings', async () => {
      const ws = await createWorkspace(gw);
      const u = await scimUser();
      const g = await expect(gw.call('/scim/v2/Groups', { body: { displayName: groupName('kept'), members: [{ value: u.id }] } }), 201);
      const m = await expect(map({ scim_group_id: g.id, workspace_id: ws.id, role: 'manager' }), 201);
      const list = await expect(gw.call(`/scim/workspaces?workspace_id=${ws.id}`), 200);
      const seated = await members(ws.id);
      await gw.restart();
      assert.deepEqual(await expect(gw.call(`/scim/workspaces?workspace_id=${ws.id}`), 200), list);
      assert.deepEqual(await members(ws.id), seated);
      assert.equal((await expect(map({ scim_group_id: g.id, workspace_id: ws.id, role: 'manager' }), 200)).id, m.id);
      const out = await expect(patch(g.id, [{ op: 'add', path: 'members', value: [] }]), 200);
      assert.deepEqual(out.members.map((x: Json) => x.value), [u.id]);
    });
  });
}
