// Users, invites, workspace members and auto-created user keys, over HTTP, on both engines.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nextRotation } from '../src/admin/rotation.js';
import { AUTO_KEY_SCOPES } from '../src/admin/user-keys.js';
import { engines } from './support/engines.js';
import { as, createWorkspace, email, expect, expectError, seedKey, type Json } from './support/identity.js';
import { useGateway } from './support/use-gateway.js';

const HOUR_MS = 3_600_000;
const WEEK_S = 7 * 86_400;

for (const engine of engines()) {
  describe(`users, invites and members (${engine.name})`, { timeout: 90_000 }, () => {
    const gw = useGateway(engine);

    const settings = (body: unknown) => expect(gw.call('/organisation/settings', { method: 'PUT', body }), 200);
    const createUser = (body: unknown, headers?: Record<string, string>) => gw.call('/users', { body, headers });
    /** The key works: GET /v1/models is open to every valid key. */
    const works = async (secret: string, status = 200) => {
      const res = await gw.call('/models', { headers: as(secret) });
      await res.arrayBuffer();
      assert.equal(res.status, status);
    };

    describe('users', () => {
      it('POST /users creates a user: email lower-cased, roles any case, workspaces by id or slug', async () => {
        const ws = await createWorkspace(gw);
        const address = email('Mixed.Case');
        const user = await expect(
          createUser({ email: address, first_name: 'Ada', last_name: 'Lovelace', role: 'ADMIN', workspaces: [{ id: ws.slug, role: 'Manager' }] }),
          201,
        );
        assert.equal(user.object, 'user');
        assert.equal(user.email, address.toLowerCase());
        assert.equal(user.role, 'admin');
        assert.equal(user.first_name, 'Ada');
        assert.deepEqual(user.workspaces, [{ id: ws.id, role: 'manager' }]);
        assert.deepEqual(user.api_keys, [], 'auto-create is off by default');
        assert.equal(typeof user.created_at, 'number');
        const read = await expect(gw.call(`/users/${user.id}`), 200);
        assert.deepEqual(read.workspaces, [{ id: ws.id, role: 'manager' }]);
        assert.equal(read.email, user.email);
        const plain = await expect(createUser({ email: email() }), 201);
        assert.equal(plain.role, 'member', 'member by default');
        assert.deepEqual(plain.workspaces, []);
      });

      it('an email is unique regardless of case: 409 naming email', async () => {
        const address = email();
        await expect(createUser({ email: address }), 201);
        await expectError(createUser({ email: address.toUpperCase() }), 409, 'email');
        await expectError(createUser({ email: ` ${address} ` }), 400, 'email');
      });

      it('refuses bad input with a 400 naming the field, and creates nothing', async () => {
        const address = email();
        await expectError(createUser({}), 400, 'email');
        await expectError(createUser({ email: 'not-an-email' }), 400, 'email');
        await expectError(createUser({ email: address, role: 'superuser' }), 400, 'role');
        await expectError(createUser({ email: address, workspaces: [{ id: 'default', role: 'boss' }] }), 400, 'workspaces[0].role');
        await expectError(createUser({ email: address, workspaces: [{ id: 'default' }] }), 400, 'workspaces[0].role');
        await expectError(createUser({ email: address, workspaces: [{ id: 'default', role: 'member' }, { id: 'default', role: 'admin' }] }), 400, 'workspaces[1].id');
        await expectError(createUser({ email: address, nickname: 'x' }), 400, 'nickname');
        await expectError(createUser({ email: address, workspaces: [{ id: 'no-such-workspace', role: 'member' }] }), 404, 'workspaces[0].id');
        const archived = await createWorkspace(gw);
        await expect(gw.call(`/workspaces/${archived.id}`, { method: 'PUT', body: { status: 'archived' } }), 200);
        await expectError(createUser({ email: address, workspaces: [{ id: archived.id, role: 'member' }] }), 409, 'workspaces[0].id');
        assert.equal((await expect(gw.call(`/users?email=${encodeURIComponent(address)}`), 200)).data.length, 0);
      });

      it('GET /users pages newest first and filters by email and role', async () => {
        const made: Json[] = [];
        for (let i = 0; i < 3; i++) made.push(await expect(createUser({ email: email('page'), role: 'owner' }), 201));
        const first = await expect(gw.call('/users?role=OWNER&limit=2'), 200);
        assert.equal(first.object, 'list');
        assert.deepEqual(first.data.map((u: Json) => u.id), [made[2].id, made[1].id]);
        assert.equal(first.has_more, true);
        assert.equal(first.first_id, made[2].id);
        assert.equal(first.last_id, made[1].id);
        const second = await expect(gw.call(`/users?role=owner&limit=2&after=${first.last_id}`), 200);
        assert.deepEqual(second.data.map((u: Json) => u.id), [made[0].id]);
        assert.equal(second.has_more, false);
        const one = await expect(gw.call(`/users?email=${encodeURIComponent(made[0].email.toUpperCase())}`), 200);
        assert.deepEqual(one.data.map((u: Json) => u.id), [made[0].id]);
        await expectError(gw.call('/users?role=boss'), 400, 'role');
        await expectError(gw.call('/users?limit=101'), 400, 'limit');
      });

      it('PUT /users/:id changes names and role; DELETE removes the user', async () => {
        const user = await expect(createUser({ email: email() }), 201);
        const updated = await expect(gw.call(`/users/${user.id}`, { method: 'PUT', body: { first_name: 'Grace', role: 'Admin' } }), 200);
        assert.equal(updated.first_name, 'Grace');
        assert.equal(updated.role, 'admin');
        assert.equal(updated.email, user.email);
        await expectError(gw.call(`/users/${user.id}`, { method: 'PUT', body: { email: email() } }), 400, 'email');
        await expectError(gw.call(`/users/${user.id}`, { method: 'PUT', body: { role: 'root' } }), 400, 'role');
        await expectError(gw.call('/users/no-such-user', { method: 'PUT', body: { first_name: 'x' } }), 404);
        const gone = await expect(gw.call(`/users/${user.id}`, { method: 'DELETE' }), 200);
        assert.deepEqual(gone, { id: user.id, object: 'user', deleted: true, deleted_api_keys: [] });
        await expectError(gw.call(`/users/${user.id}`), 404);
        await expectError(gw.call(`/users/${user.id}`, { method: 'DELETE' }), 404);
      });

      it('deleting a user deletes their keys, which stop working at once', async () => {
        const ws = await createWorkspace(gw);
        const user = await expect(createUser({ email: email(), workspaces: [{ id: ws.id, role: 'member' }] }), 201);
        const secret = await seedKey(gw, { id: `key-of-${user.id}`, workspaceId: ws.id, subType: 'user', userId: user.id });
        await works(secret);
        const gone = await expect(gw.call(`/users/${user.id}`, { method: 'DELETE' }), 200);
        assert.deepEqual(gone.deleted_api_keys, [`key-of-${user.id}`]);
        assert.equal(await gw.store.apiKeys.get(`key-of-${user.id}`), null);
        await works(secret, 401);
      });

      it('needs a key (401), an organisation key and the scope (403); only owners make or touch owners', async () => {
        await expectError(createUser({ email: email() }, { 'x-gateway-api-key': '' }), 401);
        const workspaceKey = await seedKey(gw, { scopes: ['users.create', 'users.list', 'users.read'] });
        await expectError(createUser({ email: email() }, as(workspaceKey)), 403);
        await expectError(gw.call('/users', { headers: as(workspaceKey) }), 403);
        const reader = await seedKey(gw, { type: 'organisation', scopes: ['users.list', 'users.read'] });
        await expect(gw.call('/users', { headers: as(reader) }), 200);
        await expectError(createUser({ email: email() }, as(reader)), 403, 'users.create');
        const noRead = await seedKey(gw, { type: 'organisation', scopes: ['users.list'] });
        const someone = await expect(createUser({ email: email() }), 201);
        await expectError(gw.call(`/users/${someone.id}`, { headers: as(noRead) }), 403, 'users.read');
        await expectError(gw.call(`/users/${someone.id}`, { method: 'PUT', body: { first_name: 'x' }, headers: as(reader) }), 403, 'users.update');
        await expectError(gw.call(`/users/${someone.id}`, { method: 'DELETE', headers: as(reader) }), 403, 'users.delete');

        // An organisation service key acts as an admin: it manages users but not owners.
        const admin = await seedKey(gw, { type: 'organisation', scopes: ['users.create', 'users.update', 'users.delete', 'users.read'] });
        await expect(createUser({ email: email(), role: 'admin' }, as(admin)), 201);
        await expectError(createUser({ email: email(), role: 'owner' }, as(admin)), 403, 'role');
        const owner = await expect(createUser({ email: email(), role: 'owner' }), 201);
        await expectError(gw.call(`/users/${owner.id}`, { method: 'PUT', body: { first_name: 'x' }, headers: as(admin) }), 403);
        await expectError(gw.call(`/users/${someone.id}`, { method: 'PUT', body: { role: 'owner' }, headers: as(admin) }), 403, 'role');
        await expectError(gw.call(`/users/${owner.id}`, { method: 'DELETE', headers: as(admin) }), 403);
        await expect(gw.call(`/users/${someone.id}`, { method: 'PUT', body: { role: 'admin' }, headers: as(admin) }), 200);

        // A user key whose user is an organisation member is no admin, whatever its scopes.
        const member = await expect(createUser({ email: email(), role: 'member' }), 201);
        const memberKey = await seedKey(gw, { type: 'organisation', subType: 'user', userId: member.id, scopes: ['users.create'] });
        await expectError(createUser({ email: email() }, as(memberKey)), 403);
      });
    });

    describe('invites', () => {
      const invite = (body: unknown, headers?: Record<string, string>) => gw.call('/users/invites', { body, headers });
      const accept = (id: string, body: unknown = {}) => gw.call(`/users/invites/${id}/accept`, { method: 'POST', body });

      it('an invite is pending for a week; accepting creates the user and memberships; a second accept is 409', async () => {
        const ws = await createWorkspace(gw);
        const address = email('invited');
        const inv = await expect(invite({ email: address.toUpperCase(), role: 'Admin', workspaces: [{ id: ws.slug, role: 'MANAGER' }] }), 201);
        assert.equal(inv.object, 'invite');
        assert.equal(inv.status, 'pending');
        assert.equal(inv.email, address);
        assert.equal(inv.role, 'admin');
        assert.deepEqual(inv.workspaces, [{ id: ws.id, role: 'manager' }]);
        assert.equal(inv.expires_at, inv.created_at + WEEK_S);
        assert.equal(inv.accepted_at, null);
        assert.deepEqual(await expect(gw.call(`/users/invites/${inv.id}`), 200), inv);
        const listed = await expect(gw.call('/users/invites?status=pending'), 200);
        assert.ok(listed.data.some((i: Json) => i.id === inv.id));

        const user = await expect(accept(inv.id, { first_name: 'Ines' }), 201);
        assert.equal(user.object, 'user');
        assert.equal(user.email, address);
        assert.equal(user.role, 'admin');
        assert.equal(user.first_name, 'Ines');
        assert.equal(user.invite_id, inv.id);
        assert.deepEqual(user.workspaces, [{ id: ws.id, role: 'manager' }]);
        const member = await expect(gw.call(`/workspaces/${ws.id}/users/${user.id}`), 200);
        assert.equal(member.role, 'manager');
        const accepted = await expect(gw.call(`/users/invites/${inv.id}`), 200);
        assert.equal(accepted.status, 'accepted');
        assert.equal(typeof accepted.accepted_at, 'number');
        await expectError(accept(inv.id), 409);
        assert.ok((await expect(gw.call('/users/invites?status=accepted'), 200)).data.some((i: Json) => i.id === inv.id));
      });

      it('refuses an invite for an existing user or a second pending one (409), and bad input (400/404)', async () => {
        const existing = await expect(createUser({ email: email() }), 201);
        await expectError(invite({ email: existing.email }), 409, 'email');
        const address = email();
        await expect(invite({ email: address }), 201);
        await expectError(invite({ email: address }), 409, 'email');
        await expectError(invite({ email: 'nope' }), 400, 'email');
        await expectError(invite({ email: email(), role: 'king' }), 400, 'role');
        await expectError(invite({ email: email(), workspaces: [{ id: 'default', role: 'chief' }] }), 400, 'workspaces[0].role');
        await expectError(invite({ email: email(), workspaces: [{ id: 'missing-ws', role: 'member' }] }), 404, 'workspaces[0].id');
        await expectError(invite({ email: email(), extra: true }), 400, 'extra');
        await expectError(gw.call('/users/invites?status=lost'), 400, 'status');
        await expectError(accept('no-such-invite'), 404);
        await expectError(gw.call('/users/invites/no-such-invite'), 404);
      });

      it('an expired invite cannot be accepted (410) and lists as expired; a new one can be made', async () => {
        const address = email('late');
        const inv = await expect(invite({ email: address }), 201);
        gw.clock.advance(WEEK_S * 1000 + 1000);
        assert.equal((await expect(gw.call(`/users/invites/${inv.id}`), 200)).status, 'expired');
        assert.ok((await expect(gw.call('/users/invites?status=expired'), 200)).data.some((i: Json) => i.id === inv.id));
        assert.ok(!(await expect(gw.call('/users/invites?status=pending'), 200)).data.some((i: Json) => i.id === inv.id));
        await expectError(accept(inv.id), 410);
        await expect(invite({ email: address }), 201);
      });

      it('DELETE revokes an invite; access needs an organisation key with users.* scopes', async () => {
        const inv = await expect(invite({ email: email() }), 201);
        assert.deepEqual(await expect(gw.call(`/users/invites/${inv.id}`, { method: 'DELETE' }), 200), { id: inv.id, object: 'invite', deleted: true });
        await expectError(gw.call(`/users/invites/${inv.id}`, { method: 'DELETE' }), 404);
        await expectError(accept(inv.id), 404);

        await expectError(invite({ email: email() }, { 'x-gateway-api-key': '' }), 401);
        const workspaceKey = await seedKey(gw, { scopes: ['users.create'] });
        await expectError(invite({ email: email() }, as(workspaceKey)), 403);
        const lister = await seedKey(gw, { type: 'organisation', scopes: ['users.list'] });
        await expect(gw.call('/users/invites', { headers: as(lister) }), 200);
        await expectError(invite({ email: email() }, as(lister)), 403, 'users.create');
        const other = await expect(invite({ email: email() }), 201);
        await expectError(gw.call(`/users/invites/${other.id}/accept`, { method: 'POST', headers: as(lister) }), 403, 'users.create');
        await expectError(gw.call(`/users/invites/${other.id}`, { method: 'DELETE', headers: as(lister) }), 403, 'users.delete');
        const admin = await seedKey(gw, { type: 'organisation', scopes: ['users.create'] });
        await expectError(invite({ email: email(), role: 'owner' }, as(admin)), 403, 'role');
      });
    });

    describe('workspace members', () => {
      const add = (ws: string, users: unknown, headers?: Record<string, string>) => gw.call(`/workspaces/${ws}/users`, { body: { users }, headers });

      it('POST adds users with roles (any case); GET lists and reads; PUT changes the role; DELETE removes', async () => {
        const ws = await createWorkspace(gw);
        const a = await expect(createUser({ email: email() }), 201);
        const b = await expect(createUser({ email: email(), role: 'admin' }), 201);
        const added = await expect(add(ws.slug, [{ id: a.id, role: 'MEMBER' }, { id: b.id, role: 'Manager' }]), 201);
        assert.equal(added.object, 'list');
        assert.deepEqual(added.data.map((m: Json) => [m.id, m.role, m.org_role, m.workspace_id]), [
          [a.id, 'member', 'member', ws.id],
          [b.id, 'manager', 'admin', ws.id],
        ]);
        assert.equal(added.data[0].object, 'workspace-user');
        assert.equal(added.data[0].email, a.email);
        assert.equal(added.data[0].source, 'direct');
        assert.deepEqual(added.api_keys, []);

        const list = await expect(gw.call(`/workspaces/${ws.id}/users`), 200);
        assert.deepEqual(list.data.map((m: Json) => m.id), [b.id, a.id]);
        const paged = await expect(gw.call(`/workspaces/${ws.id}/users?limit=1`), 200);
        assert.equal(paged.has_more, true);
        const rest = await expect(gw.call(`/workspaces/${ws.id}/users?limit=1&after=${paged.last_id}`), 200);
        assert.deepEqual(rest.data.map((m: Json) => m.id), [a.id]);
        assert.deepEqual((await expect(gw.call(`/workspaces/${ws.id}/users?role=manager`), 200)).data.map((m: Json) => m.id), [b.id]);
        assert.deepEqual((await expect(gw.call(`/workspaces/${ws.id}/users?email=${encodeURIComponent(a.email)}`), 200)).data.map((m: Json) => m.id), [a.id]);
        await expectError(gw.call(`/workspaces/${ws.id}/users?role=owner`), 400, 'role');

        assert.equal((await expect(gw.call(`/workspaces/${ws.id}/users/${a.id}`), 200)).role, 'member');
        assert.equal((await expect(gw.call(`/workspaces/${ws.id}/users/${a.id}`, { method: 'PUT', body: { role: 'Admin' } }), 200)).role, 'admin');
        assert.equal((await expect(gw.call(`/workspaces/${ws.id}/users/${a.id}`), 200)).role, 'admin');
        assert.deepEqual((await expect(gw.call(`/users/${a.id}`), 200)).workspaces, [{ id: ws.id, role: 'admin' }]);
        const removed = await expect(gw.call(`/workspaces/${ws.id}/users/${a.id}`, { method: 'DELETE' }), 200);
        assert.equal(removed.deleted, true);
        await expectError(gw.call(`/workspaces/${ws.id}/users/${a.id}`), 404);
        await expectError(gw.call(`/workspaces/${ws.id}/users/${a.id}`, { method: 'DELETE' }), 404);
        await expectError(gw.call(`/workspaces/${ws.id}/users/${a.id}`, { method: 'PUT', body: { role: 'member' } }), 404);
      });

      it('refuses duplicates (409), unknown users and workspaces (404), bad input (400), archived workspaces (409)', async () => {
        const ws = await createWorkspace(gw);
        const u = await expect(createUser({ email: email() }), 201);
        await expect(add(ws.id, [{ id: u.id, role: 'member' }]), 201);
        await expectError(add(ws.id, [{ id: u.id, role: 'member' }]), 409, 'users[0].id');
        const v = await expect(createUser({ email: email() }), 201);
        await expectError(add(ws.id, [{ id: v.id, role: 'member' }, { id: v.id, role: 'admin' }]), 400, 'users[1].id');
        await expectError(add(ws.id, [{ id: 'no-such-user', role: 'member' }]), 404, 'users[0].id');
        await expectError(add(ws.id, [{ id: v.id, role: 'owner' }]), 400, 'users[0].role');
        await expectError(add(ws.id, []), 400, 'users');
        await expectError(gw.call(`/workspaces/${ws.id}/users`, { body: {} }), 400, 'users');
        await expectError(gw.call(`/workspaces/${ws.id}/users/${u.id}`, { method: 'PUT', body: { role: 'chief' } }), 400, 'role');
        await expectError(add('no-such-workspace', [{ id: v.id, role: 'member' }]), 404);
        await expectError(gw.call('/workspaces/no-such-workspace/users'), 404);
        assert.equal((await expect(gw.call(`/workspaces/${ws.id}/users`), 200)).data.length, 1, 'nothing added by refused calls');
        await expect(gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { status: 'archived' } }), 200);
        await expectError(add(ws.id, [{ id: v.id, role: 'member' }]), 409);
        // An archived workspace's members are for owners and admins to see.
        await expect(gw.call(`/workspaces/${ws.id}/users`), 200);
        const own = await seedKey(gw, { workspaceId: ws.id, scopes: ['workspaces.read'] });
        await expectError(gw.call(`/workspaces/${ws.id}/users`, { headers: as(own) }), 404);
        await expectError(gw.call(`/workspaces/${ws.id}/users/${u.id}`, { headers: as(own) }), 404);
        await expectError(gw.call(`/workspaces/${ws.id}/settings`, { headers: as(own) }), 404);
        await expect(gw.call(`/workspaces/${ws.id}/settings`), 200);
      });

      it('workspace keys manage their own workspace only, as admin or manager, with the scope', async () => {
        const ws = await createWorkspace(gw);
        const other = await createWorkspace(gw);
        const u = await expect(createUser({ email: email() }), 201);
        await expectError(add(ws.id, [{ id: u.id, role: 'member' }], { 'x-gateway-api-key': '' }), 401);
        const service = await seedKey(gw, { workspaceId: ws.id, scopes: ['workspaces.update', 'workspaces.read'] });
        await expect(add(ws.id, [{ id: u.id, role: 'member' }], as(service)), 201);
        await expect(gw.call(`/workspaces/${ws.id}/users`, { headers: as(service) }), 200);
        await expectError(add(other.id, [{ id: u.id, role: 'member' }], as(service)), 404);
        await expectError(gw.call(`/workspaces/${other.id}/users`, { headers: as(service) }), 404);
        const readOnly = await seedKey(gw, { workspaceId: ws.id, scopes: ['workspaces.read'] });
        await expectError(add(ws.id, [{ id: u.id, role: 'member' }], as(readOnly)), 403, 'workspaces.update');
        await expectError(gw.call(`/workspaces/${ws.id}/users/${u.id}`, { method: 'DELETE', headers: as(readOnly) }), 403, 'workspaces.update');
        const noRead = await seedKey(gw, { workspaceId: ws.id, scopes: [] });
        await expectError(gw.call(`/workspaces/${ws.id}/users`, { headers: as(noRead) }), 403, 'workspaces.read');
        // A user key acts with its user's role in the workspace: a member cannot manage members, a manager can.
        const memberKey = await seedKey(gw, { workspaceId: ws.id, subType: 'user', userId: u.id, scopes: ['workspaces.update', 'workspaces.read'] });
        const v = await expect(createUser({ email: email() }), 201);
        await expectError(add(ws.id, [{ id: v.id, role: 'member' }], as(memberKey)), 403);
        await expect(gw.call(`/workspaces/${ws.id}/users/${u.id}`, { method: 'PUT', body: { role: 'manager' } }), 200);
        await expect(add(ws.id, [{ id: v.id, role: 'member' }], as(memberKey)), 201);
      });

      it('a manager grants no role above their own, and neither changes nor removes a workspace or organisation admin (403)', async () => {
        const ws = await createWorkspace(gw);
        const seated = async (role: string, orgRole = 'member') => expect(createUser({ email: email(), role: orgRole, workspaces: [{ id: ws.id, role }] }), 201);
        const manager = await seated('manager');
        const admin = await seated('admin');
        const orgAdmin = await seated('member', 'admin');
        const member = await seated('member');
        const scopes = ['workspaces.update', 'workspaces.read'];
        const asManager = as(await seedKey(gw, { workspaceId: ws.id, subType: 'user', userId: manager.id, scopes }));
        const asAdmin = as(await seedKey(gw, { workspaceId: ws.id, subType: 'user', userId: admin.id, scopes }));
        const newcomer = await expect(createUser({ email: email() }), 201);
        const role = (u: Json, to: string, headers: Record<string, string>) => gw.call(`/workspaces/${ws.id}/users/${u.id}`, { method: 'PUT', body: { role: to }, headers });
        const remove = (u: Json, headers: Record<string, string>) => gw.call(`/workspaces/${ws.id}/users/${u.id}`, { method: 'DELETE', headers });

        await expectError(add(ws.id, [{ id: newcomer.id, role: 'admin' }], asManager), 403, 'users[0].role');
        await expectError(role(manager, 'admin', asManager), 403, 'role');
        await expectError(role(member, 'admin', asManager), 403, 'role');
        await expectError(role(admin, 'member', asManager), 403, null);
        await expectError(remove(admin, asManager), 403, null);
        // The organisation admin seated as a member stands above any workspace role.
        await expectError(role(orgAdmin, 'member', asAdmin), 403, null);
        await expectError(remove(orgAdmin, asAdmin), 403, null);
        const roles = await expect(gw.call(`/workspaces/${ws.id}/users?limit=100`), 200);
        assert.deepEqual(
          Object.fromEntries(roles.data.map((m: Json) => [m.id, m.role])),
          { [manager.id]: 'manager', [admin.id]: 'admin', [orgAdmin.id]: 'member', [member.id]: 'member' },
          'nothing changed',
        );

        // At or below their own role they may; an admin makes admins.
        await expect(add(ws.id, [{ id: newcomer.id, role: 'manager' }], asManager), 201);
        await expect(role(member, 'manager', asManager), 200);
        await expect(remove(newcomer, asManager), 200);
        await expect(role(member, 'admin', asAdmin), 200);
      });

      it('removing a member deletes their keys of that workspace, not of others', async () => {
        const ws = await createWorkspace(gw);
        const other = await createWorkspace(gw);
        const u = await expect(createUser({ email: email(), workspaces: [{ id: ws.id, role: 'member' }, { id: other.id, role: 'member' }] }), 201);
        const here = await seedKey(gw, { id: `here-${u.id}`, workspaceId: ws.id, subType: 'user', userId: u.id });
        const there = await seedKey(gw, { id: `there-${u.id}`, workspaceId: other.id, subType: 'user', userId: u.id });
        await works(here);
        const removed = await expect(gw.call(`/workspaces/${ws.id}/users/${u.id}`, { method: 'DELETE' }), 200);
        assert.deepEqual(removed.deleted_api_keys, [`here-${u.id}`]);
        await works(here, 401);
        await works(there);
      });
    });

    describe('auto-created user keys', () => {
      /** The key row and that it works; the answer's entry is {id, workspace_id, key}. */
      const checkAuto = async (issued: Json, userId: string, workspaceId: string, opts: { ttlS: number | null; period: 'weekly' | 'monthly' | null }) => {
        assert.deepEqual(Object.keys(issued).sort(), ['id', 'key', 'workspace_id']);
        assert.equal(issued.workspace_id, workspaceId);
        const row = await gw.store.apiKeys.get(issued.id);
        assert.ok(row !== null);
        assert.equal(row.creationMode, 'auto');
        assert.equal(row.type, 'workspace');
        assert.equal(row.subType, 'user');
        assert.equal(row.userId, userId);
        assert.equal(row.workspaceId, workspaceId);
        assert.deepEqual(row.scopes, [...AUTO_KEY_SCOPES]);
        const nowS = Math.floor(gw.clock.now / 1000);
        if (opts.ttlS === null) assert.equal(row.expiresAt, null);
        else assert.ok(Math.abs(row.expiresAt! - (nowS + opts.ttlS)) <= 2, `expires_at ${row.expiresAt} ≈ now + ${opts.ttlS}`);
        if (opts.period === null) assert.equal(row.rotationPolicy, null);
        else {
          assert.equal(row.rotationPolicy?.rotation_period, opts.period);
          assert.equal(row.rotationPolicy?.next_rotation_at, Math.floor(nextRotation(opts.period, gw.clock.now) / 1000));
          assert.equal(row.rotationPolicy?.key_transition_period_ms, 1_800_000);
        }
        assert.ok(!JSON.stringify(row).includes(issued.key), 'the secret is not stored');
        await works(issued.key);
      };

      it('on join (POST /users with workspaces): one key per workspace, TTL and enforced rotation inherited; it expires', async () => {
        await settings({ user_api_key_auto_create: true, user_api_key_ttl: 3600, user_api_key_rotation_period: 'weekly' });
        try {
          const a = await createWorkspace(gw);
          const b = await createWorkspace(gw);
          const user = await expect(createUser({ email: email(), workspaces: [{ id: a.id, role: 'member' }, { id: b.slug, role: 'admin' }] }), 201);
          assert.equal(user.api_keys.length, 2);
          assert.deepEqual(user.api_keys.map((k: Json) => k.workspace_id).sort(), [a.id, b.id].sort());
          for (const k of user.api_keys) await checkAuto(k, user.id, k.workspace_id, { ttlS: 3600, period: 'weekly' });
          await expect(gw.call(`/users/${user.id}`), 200).then((u) => assert.equal(u.api_keys, undefined, 'secrets only in the creating answer'));
          gw.clock.advance(HOUR_MS + 1000);
          await works(user.api_keys[0].key, 401);
          const noWorkspaces = await expect(createUser({ email: email() }), 201);
          assert.deepEqual(noWorkspaces.api_keys, []);
        } finally {
          await settings({ user_api_key_auto_create: false, user_api_key_ttl: null, user_api_key_rotation_period: null });
        }
      });

      it('follows the workspace override: off where the workspace says off, on where it says on', async () => {
        const off = await createWorkspace(gw);
        const on = await createWorkspace(gw);
        await expect(gw.call(`/workspaces/${off.id}`, { method: 'PUT', body: { settings: { user_api_key_auto_create: false } } }), 200);
        await expect(gw.call(`/workspaces/${on.id}`, { method: 'PUT', body: { settings: { user_api_key_auto_create: true } } }), 200);
        await settings({ user_api_key_auto_create: true });
        try {
          const u = await expect(createUser({ email: email(), workspaces: [{ id: off.id, role: 'member' }] }), 201);
          assert.deepEqual(u.api_keys, []);
        } finally {
          await settings({ user_api_key_auto_create: false });
        }
        const v = await expect(createUser({ email: email(), workspaces: [{ id: on.id, role: 'member' }, { id: off.id, role: 'member' }] }), 201);
        assert.equal(v.api_keys.length, 1);
        await checkAuto(v.api_keys[0], v.id, on.id, { ttlS: null, period: null });
      });

      it('on invite acceptance', async () => {
        await settings({ user_api_key_auto_create: true, user_api_key_ttl: 86_400, user_api_key_rotation_period: 'monthly' });
        try {
          const ws = await createWorkspace(gw);
          const inv = await expect(gw.call('/users/invites', { body: { email: email(), workspaces: [{ id: ws.id, role: 'member' }] } }), 201);
          const user = await expect(gw.call(`/users/invites/${inv.id}/accept`, { method: 'POST' }), 201);
          assert.equal(user.api_keys.length, 1);
          await checkAuto(user.api_keys[0], user.id, ws.id, { ttlS: 86_400, period: 'monthly' });
        } finally {
          await settings({ user_api_key_auto_create: false, user_api_key_ttl: null, user_api_key_rotation_period: null });
        }
      });

      it('on workspace add; never a second auto key for the same user and workspace; leaving takes it away', async () => {
        const ws = await createWorkspace(gw);
        await expect(gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { settings: { user_api_key_auto_create: true } } }), 200);
        const u = await expect(createUser({ email: email() }), 201);
        const v = await expect(createUser({ email: email() }), 201);
        const added = await expect(gw.call(`/workspaces/${ws.id}/users`, { body: { users: [{ id: u.id, role: 'member' }, { id: v.id, role: 'manager' }] } }), 201);
        assert.equal(added.api_keys.length, 2);
        const mine = added.api_keys[0];
        await checkAuto(mine, u.id, ws.id, { ttlS: null, period: null });

        // Leaving deletes the key; joining again makes a new one.
        await expect(gw.call(`/workspaces/${ws.id}/users/${u.id}`, { method: 'DELETE' }), 200);
        await works(mine.key, 401);
        const again = await expect(gw.call(`/workspaces/${ws.id}/users`, { body: { users: [{ id: u.id, role: 'member' }] } }), 201);
        assert.equal(again.api_keys.length, 1);
        assert.notEqual(again.api_keys[0].id, mine.id);

        // A user who already holds an auto key there does not get another.
        const w = await expect(createUser({ email: email() }), 201);
        await seedKey(gw, { workspaceId: ws.id, subType: 'user', userId: w.id, creationMode: 'auto' });
        const none = await expect(gw.call(`/workspaces/${ws.id}/users`, { body: { users: [{ id: w.id, role: 'member' }] } }), 201);
        assert.deepEqual(none.api_keys, []);
      });

      it('deleting the user deletes the auto key', async () => {
        const ws = await createWorkspace(gw);
        await expect(gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { settings: { user_api_key_auto_create: true } } }), 200);
        const u = await expect(createUser({ email: email(), workspaces: [{ id: ws.id, role: 'member' }] }), 201);
        await works(u.api_keys[0].key);
        const gone = await expect(gw.call(`/users/${u.id}`, { method: 'DELETE' }), 200);
        assert.deepEqual(gone.deleted_api_keys, [u.api_keys[0].id]);
        await works(u.api_keys[0].key, 401);
      });
    });

    it('a restart keeps users, memberships and invites', async () => {
      const ws = await createWorkspace(gw);
      const u = await expect(createUser({ email: email(), role: 'admin', workspaces: [{ id: ws.id, role: 'manager' }] }), 201);
      const inv = await expect(gw.call('/users/invites', { body: { email: email(), workspaces: [{ id: ws.id, role: 'member' }] } }), 201);
      const user = await expect(gw.call(`/users/${u.id}`), 200);
      const members = await expect(gw.call(`/workspaces/${ws.id}/users`), 200);
      const invite = await expect(gw.call(`/users/invites/${inv.id}`), 200);
      await gw.restart();
      assert.deepEqual(await expect(gw.call(`/users/${u.id}`), 200), user);
      assert.deepEqual(await expect(gw.call(`/workspaces/${ws.id}/users`), 200), members);
      assert.deepEqual(await expect(gw.call(`/users/invites/${inv.id}`), 200), invite);
      await expect(gw.call(`/users/invites/${inv.id}/accept`, { method: 'POST' }), 201);
    });
  });
}
