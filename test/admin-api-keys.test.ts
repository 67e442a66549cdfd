// Black-box tests of /v1/api-keys on both engines: creation of each key type with the
// secret shown once and stored only hashed, access control (scopes, workspaces, scope
// escalation), updates, manual and scheduled rotation with transition periods, the
// organisation's enforced rotation period and key TTL, deletion taking effect at once
// (across processes on Postgres), and a restart keeping everything.
//
// Organisation settings and users are written straight into the store here: their
// management routes belong to the identity work.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { nextRotation } from '../src/admin/rotation.js';
import { hashKey } from '../src/http/auth.js';
import { DEFAULT_SETTINGS, type OrgSettings } from '../src/store/settings.js';
import { engines } from './support/engines.js';
import { ADMIN_KEY, startTestGateway, type TestGateway } from './support/gateway.js';
import { assertEnvelope } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const PREFIX = 'sy-test-';
const MINUTE = 60_000;
const DAY = 86_400_000;

interface Created {
  id: string;
  key: string;
}

type View = Record<string, unknown> & { id: string; key: string; type: string; scopes: string[]; rotation_policy: Record<string, unknown> | null };

const ALL_KEY_SCOPES = ['api_keys.create', 'api_keys.read', 'api_keys.list', 'api_keys.update', 'api_keys.delete'];

for (const engine of engines()) {
  describe(`/v1/api-keys (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine, { env: { API_KEY_PREFIX: PREFIX } });
    // Tests below start gateways of their own, each on a database of its own.
    after(() => engine.cleanup());

    const as = (secret: string): Record<string, string> => ({ 'x-gateway-api-key': secret });

    async function create(path: string, body: unknown, g: TestGateway = gw, headers: Record<string, string> = {}): Promise<Created> {
      const res = await g.call(`/api-keys/${path}`, { body, headers });
      const text = await res.text();
      assert.equal(res.status, 201, text);
      const out = JSON.parse(text) as Created & { object: string };
      assert.deepEqual(Object.keys(out).sort(), ['id', 'key', 'object']);
      assert.equal(out.object, 'api-key');
      return out;
    }

    async function view(id: string, g: TestGateway = gw): Promise<View> {
      const res = await g.call(`/api-keys/${id}`);
      const text = await res.text();
      assert.equal(res.status, 200, text);
      return JSON.parse(text) as View;
    }

    /** Whether a secret authenticates now (GET /v1/models answers every valid key). */
    async function works(secret: string, g: TestGateway = gw): Promise<boolean> {
      const res = await fetch(`${g.v1}/models?limit=1`, { headers: as(secret) });
      await res.arrayBuffer();
      assert.ok(res.status === 200 || res.status === 401, `status ${res.status}`);
      return res.status === 200;
    }

    /** A user who joined through POST /v1/users (by default an organisation member, a member of the default workspace); the user's id. */
    async function addUser(name: string, workspaces = [{ id: 'default', role: 'member' }], role = 'member'): Promise<string> {
      const res = await gw.call('/users', { body: { email: `${name}-${Date.now()}@example.com`, role, workspaces } });
      const text = await res.text();
      assert.equal(res.status, 201, text);
      return (JSON.parse(text) as { id: string }).id;
    }

    async function newWorkspace(name: string): Promise<{ id: string; slug: string }> {
      const res = await gw.call('/workspaces', { body: { name } });
      assert.equal(res.status, 201);
      return (await res.json()) as { id: string; slug: string };
    }

    async function allRowsText(g: TestGateway = gw): Promise<string> {
      return JSON.stringify(await g.store.db.all('SELECT * FROM api_keys'));
    }

    async function keyCount(): Promise<number> {
      return gw.store.apiKeys.count();
    }

    /** Runs fn with these organisation settings (PUT /v1/organisation/settings), then puts the defaults back. */
    async function withSettings(patch: Partial<OrgSettings>, fn: () => Promise<void>): Promise<void> {
      const put = async (body: Partial<OrgSettings>): Promise<void> => {
        const res = await gw.call('/organisation/settings', { method: 'PUT', body });
        assert.equal(res.status, 200, await res.text());
      };
      await put(patch);
      try {
        await fn();
      } finally {
        await put(Object.fromEntries(Object.keys(patch).map((k) => [k, DEFAULT_SETTINGS[k as keyof OrgSettings]])));
      }
    }

    it('creates each key type; the secret (API_KEY_PREFIX + random) is answered once and stored only as its SHA-256', async () => {
      const userCreate = await addUser('user-create');
      const ws = await newWorkspace('Create Types');
      const org = await create('organisation/service', { name: 'Org svc', scopes: ['workspaces.list', 'api_keys.list'], description: 'ops' });
      const svc = await create('workspace/service', {
        name: 'WS svc',
        scopes: ['completions.write', 'completions.write'],
        workspace_id: ws.slug,
        metadata: { team: 'a' },
        defaults: { config_id: 'cfg-1', metadata: { env: 'prod' } },
      });
      const user = await create('workspace/user', { name: 'User key', scopes: ['logs.view'], user_id: userCreate });

      for (const k of [org, svc, user]) {
        assert.ok(k.key.startsWith(PREFIX) && k.key.length > PREFIX.length + 40, k.key);
        assert.ok(await works(k.key));
      }

      const o = await view(org.id);
      assert.equal(o.object, 'api-key');
      assert.equal(o.type, 'organisation-service');
      assert.equal(o.workspace_id, null);
      assert.equal(o.description, 'ops');
      assert.equal(o.key, `****${org.key.slice(-4)}`);
      assert.deepEqual(o.scopes, ['workspaces.list', 'api_keys.list']);
      assert.equal(o.status, 'active');
      assert.equal(o.creation_mode, 'api');
      assert.equal(o.expires_at, null);
      assert.equal(o.rotation_policy, null);
      assert.equal(o.key_transition_expires_at, null);
      assert.equal(o.last_rotated_at, null);
      assert.equal(o.last_reset_at, null);
      assert.equal(o.created_at, Math.floor(gw.clock.now / 1000));

      const s = await view(svc.id);
      assert.equal(s.type, 'workspace-service');
      assert.equal(s.workspace_id, ws.id);
      assert.deepEqual(s.scopes, ['completions.write']);
      assert.deepEqual(s.metadata, { team: 'a' });
      assert.deepEqual(s.defaults, { config_id: 'cfg-1', metadata: { env: 'prod' } });

      const u = await view(user.id);
      assert.equal(u.type, 'workspace-user');
      assert.equal(u.user_id, userCreate);
      assert.equal(u.workspace_id, (await gw.store.workspaces.default()).id);

      // Never again: not in a read, a list, nor the database.
      const list = await (await gw.call('/api-keys?limit=100')).text();
      const rows = await allRowsText();
      for (const k of [org, svc, user]) {
        assert.ok(list.includes(k.id));
        assert.ok(!list.includes(k.key) && !rows.includes(k.key), 'the secret appears nowhere after creation');
        const row = await gw.store.db.get<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE id = ?', [k.id]);
        assert.equal(row!.key_hash, hashKey(k.key));
      }
    });

    it('refuses bad input with a 400 naming the field, and creates nothing', async () => {
      const userBad = await addUser('user-bad');
      const before = await keyCount();
      const cases: [string, unknown, string][] = [
        ['workspace/service', { scopes: ['logs.view'] }, 'name'],
        ['workspace/service', { name: 'x' }, 'scopes'],
        ['workspace/service', { name: 'x', scopes: [] }, 'scopes'],
        ['workspace/service', { name: 'x', scopes: ['logs.view', 'logs.destroy'] }, 'scopes[1]'],
        ['workspace/service', { name: 'x', scopes: ['logs.view'], colour: 'red' }, 'colour'],
        ['workspace/service', { name: 'x', scopes: ['logs.view'], expires_at: Math.floor(gw.clock.now / 1000) - 1 }, 'expires_at'],
        ['workspace/service', { name: 'x', scopes: ['logs.view'], expires_at: '2030-01-01' }, 'expires_at'],
        ['workspace/service', { name: 'x', scopes: ['logs.view'], user_id: userBad }, 'user_id'],
        ['workspace/user', { name: 'x', scopes: ['logs.view'] }, 'user_id'],
        ['organisation/service', { name: 'x', scopes: ['logs.view'], workspace_id: 'default' }, 'workspace_id'],
        ['organisation/user', { name: 'x', scopes: ['logs.view'], user_id: userBad }, 'sub_type'],
        ['team/service', { name: 'x', scopes: ['logs.view'] }, 'type'],
        ['workspace/robot', { name: 'x', scopes: ['logs.view'] }, 'sub_type'],
        ['workspace/service', { name: 'x', scopes: ['logs.view'], rotation_policy: {} }, 'rotation_policy'],
        ['workspace/service', { name: 'x', scopes: ['logs.view'], rotation_policy: { rotation_period: 'daily' } }, 'rotation_policy.rotation_period'],
        ['workspace/service', { name: 'x', scopes: ['logs.view'], rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 29 * MINUTE } }, 'rotation_policy.key_transition_period_ms'],
        ['workspace/service', { name: 'x', scopes: ['logs.view'], rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 7 * DAY } }, 'rotation_policy.key_transition_period_ms'],
        ['workspace/service', { name: 'x', scopes: ['logs.view'], rotation_policy: { next_rotation_at: 'soon' } }, 'rotation_policy.next_rotation_at'],
        ['workspace/service', { name: 'x', scopes: ['logs.view'], rotation_policy: { next_rotation_at: '2099-01-01T10:00:00' } }, 'rotation_policy.next_rotation_at'],
        ['workspace/service', { name: 'x', scopes: ['logs.view'], rotation_policy: { next_rotation_at: '2001-01-01' } }, 'rotation_policy.next_rotation_at'],
        ['workspace/service', { name: 'x', scopes: ['logs.view'], defaults: { config: 'x' } }, 'defaults.config'],
      ];
      for (const [path, body, param] of cases) {
        const err = await assertEnvelope(await gw.call(`/api-keys/${path}`, { body }), 400);
        assert.equal(err.param, param, `${path} ${JSON.stringify(body)}: ${err.message}`);
        assert.ok(err.message.includes(param), err.message);
      }
      const unknownUser = await assertEnvelope(await gw.call('/api-keys/workspace/user', { body: { name: 'x', scopes: ['logs.view'], user_id: 'nobody' } }), 404);
      assert.equal(unknownUser.param, 'user_id');
      const unknownWs = await assertEnvelope(await gw.call('/api-keys/workspace/service', { body: { name: 'x', scopes: ['logs.view'], workspace_id: 'nowhere' } }), 404);
      assert.equal(unknownWs.param, 'workspace_id');
      assert.equal(await keyCount(), before);
    });

    it('a rotation policy: next_rotation_at normalised to UTC midnight, or the period’s next rotation; the transition defaults to 30 minutes', async () => {
      const day = new Date(gw.clock.now + 10 * DAY).toISOString().slice(0, 10);
      const dated = await create('workspace/service', {
        name: 'Dated',
        scopes: ['logs.view'],
        rotation_policy: { next_rotation_at: `${day}T15:42:00Z`, key_transition_period_ms: 2 * 3_600_000 },
      });
      assert.deepEqual((await view(dated.id)).rotation_policy, {
        rotation_period: null,
        next_rotation_at: `${day}T00:00:00.000Z`,
        key_transition_period_ms: 7_200_000,
      });
      const monthly = await create('workspace/service', { name: 'Monthly', scopes: ['logs.view'], rotation_policy: { rotation_period: 'monthly' } });
      assert.deepEqual((await view(monthly.id)).rotation_policy, {
        rotation_period: 'monthly',
        next_rotation_at: new Date(nextRotation('monthly', gw.clock.now)).toISOString(),
        key_transition_period_ms: 1_800_000,
      });
    });

    describe('access', () => {
      let other: { id: string; slug: string };
      let mine: Created;
      let theirs: Created;

      before(async () => {
        other = await newWorkspace('Other Team');
        mine = await create('workspace/service', { name: 'Key admin', scopes: [...ALL_KEY_SCOPES, 'logs.view', 'api_keys.rotate'] });
        theirs = await create('workspace/service', { name: 'Theirs', scopes: ['logs.view'], workspace_id: other.id });
      });

      it("a workspace key cannot see or change another workspace's keys (404) nor create keys there (403)", async () => {
        for (const [method, path, body] of [
          ['GET', `/api-keys/${theirs.id}`, undefined],
          ['PUT', `/api-keys/${theirs.id}`, { name: 'mine now' }],
          ['DELETE', `/api-keys/${theirs.id}`, undefined],
          ['POST', `/api-keys/${theirs.id}/rotate`, {}],
          ['POST', `/api-keys/${theirs.id}/rotated-key`, {}],
          // Organisation keys are no workspace's.
          ['GET', '/api-keys/bootstrap-admin', undefined],
        ] as const) {
          await assertEnvelope(await gw.call(path, { method, body, headers: as(mine.key) }), 404);
        }
        assert.ok(await works(theirs.key));
        assert.equal((await view(theirs.id)).name, 'Theirs');

        const elsewhere = await assertEnvelope(
          await gw.call('/api-keys/workspace/service', { body: { name: 'x', scopes: ['logs.view'], workspace_id: other.slug }, headers: as(mine.key) }),
          403,
        );
        assert.equal(elsewhere.param, 'workspace_id');
        await assertEnvelope(await gw.call('/api-keys/organisation/service', { body: { name: 'x', scopes: ['logs.view'] }, headers: as(mine.key) }), 403);
        await assertEnvelope(await gw.call(`/api-keys?workspace_id=${other.id}`, { headers: as(mine.key) }), 403);
      });

      it('a workspace key lists only its own workspace’s keys; an organisation key filters by workspace and type', async () => {
        const listed = (await (await gw.call('/api-keys?limit=100', { headers: as(mine.key) })).json()) as { data: View[] };
        const defaultWs = (await gw.store.workspaces.default()).id;
        assert.ok(listed.data.length > 0);
        assert.ok(listed.data.every((k) => k.workspace_id === defaultWs && k.type.startsWith('workspace-')));
        assert.ok(listed.data.some((k) => k.id === mine.id));

        const inOther = (await (await gw.call(`/api-keys?workspace_id=${other.slug}`)).json()) as { data: View[] };
        assert.deepEqual(inOther.data.map((k) => k.id), [theirs.id]);
        const orgKeys = (await (await gw.call('/api-keys?type=organisation-service&limit=100')).json()) as { data: View[] };
        assert.ok(orgKeys.data.some((k) => k.id === 'bootstrap-admin'));
        assert.ok(orgKeys.data.every((k) => k.type === 'organisation-service'));
        const err = await assertEnvelope(await gw.call('/api-keys?type=admin'), 400);
        assert.equal(err.param, 'type');
      });

      it('lists page newest first with limit and after', async () => {
        const ws = await newWorkspace('Paging');
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) ids.push((await create('workspace/service', { name: `p${i}`, scopes: ['logs.view'], workspace_id: ws.id })).id);
        const first = (await (await gw.call(`/api-keys?workspace_id=${ws.id}&limit=2`)).json()) as { data: View[]; has_more: boolean; first_id: string; last_id: string };
        assert.deepEqual(first.data.map((k) => k.id), [ids[2], ids[1]]);
        assert.equal(first.has_more, true);
        assert.equal(first.first_id, ids[2]);
        assert.equal(first.last_id, ids[1]);
        const second = (await (await gw.call(`/api-keys?workspace_id=${ws.id}&limit=2&after=${first.last_id}`)).json()) as { data: View[]; has_more: boolean };
        assert.deepEqual(second.data.map((k) => k.id), [ids[0]]);
        assert.equal(second.has_more, false);
      });

      it('a key without the scope → 403 naming it', async () => {
        const weak = await create('workspace/service', { name: 'Weak', scopes: ['completions.write'] });
        for (const [method, path, body, scope] of [
          ['GET', '/api-keys', undefined, 'api_keys.list'],
          ['GET', `/api-keys/${mine.id}`, undefined, 'api_keys.read'],
          ['POST', '/api-keys/workspace/service', { name: 'x', scopes: ['completions.write'] }, 'api_keys.create'],
          ['PUT', `/api-keys/${mine.id}`, { name: 'x' }, 'api_keys.update'],
          ['DELETE', `/api-keys/${mine.id}`, undefined, 'api_keys.delete'],
          ['POST', `/api-keys/${mine.id}/rotate`, {}, 'api_keys.rotate'],
        ] as const) {
          const err = await assertEnvelope(await gw.call(path, { method, body, headers: as(weak.key) }), 403);
          assert.equal(err.param, scope, `${method} ${path}`);
        }
        assert.ok(await works(mine.key));
      });

      it('nobody but an admin grants a scope it does not hold, or takes the secret of a stronger key (403)', async () => {
        const err = await assertEnvelope(
          await gw.call('/api-keys/workspace/service', { body: { name: 'x', scopes: ['logs.view', 'configs.delete'] }, headers: as(mine.key) }),
          403,
        );
        assert.equal(err.param, 'scopes[1]');
        assert.match(err.message, /configs\.delete/);
        const child = await create('workspace/service', { name: 'Child', scopes: ['logs.view'] }, gw, as(mine.key));
        const widen = await assertEnvelope(await gw.call(`/api-keys/${child.id}`, { method: 'PUT', body: { scopes: ['logs.view', 'workspaces.delete'] }, headers: as(mine.key) }), 403);
        assert.equal(widen.param, 'scopes[1]');
        assert.deepEqual((await view(child.id)).scopes, ['logs.view']);

        const stronger = await create('workspace/service', { name: 'Stronger', scopes: ['logs.view', 'configs.delete'] });
        await assertEnvelope(await gw.call(`/api-keys/${stronger.id}/rotate`, { body: {}, headers: as(mine.key) }), 403);
        assert.ok(await works(stronger.key));
        // Its own kind it may rotate.
        const rotated = await gw.call(`/api-keys/${child.id}/rotate`, { body: {}, headers: as(mine.key) });
        assert.equal(rotated.status, 200);
      });

      it('a user key is made only for a member of the workspace, by that user or a key of at least their role, never above the caller’s scopes', async () => {
        const team = await newWorkspace('Minting');
        const seat = (role: string) => [{ id: team.id, role }];
        const orgAdmin = await addUser('mint-org-admin', seat('member'), 'admin');
        const wsAdmin = await addUser('mint-ws-admin', seat('admin'));
        const manager = await addUser('mint-manager', seat('manager'));
        const member = await addUser('mint-member', seat('member'));
        const outsider = await addUser('mint-outsider', []);
        const scopes = ['api_keys.create', 'api_keys.update', 'api_keys.delete', 'api_keys.rotate', 'logs.view'];
        const userKey = (user: string, by?: string) =>
          gw.call('/api-keys/workspace/user', { body: { name: 'k', scopes: ['logs.view'], user_id: user, workspace_id: team.id }, headers: by === undefined ? {} : as(by) });
        const keyOf = async (user: string) => create('workspace/user', { name: 'own', scopes, user_id: user, workspace_id: team.id });
        const memberKey = await keyOf(member);
        const managerKey = await keyOf(manager);
        const service = await create('workspace/service', { name: 'svc', scopes, workspace_id: team.id });
        const before = await keyCount();

        // Not a member of the workspace (or no such user): 404, as a workspace key sees no users outside it.
        const out = await assertEnvelope(await userKey(outsider), 404);
        assert.equal(out.param, 'user_id');
        assert.match(out.message, /not a member/);
        assert.equal((await assertEnvelope(await userKey(outsider, service.key), 404)).param, 'user_id');
        // Above the caller: the new key would act with the user's roles (an organisation admin's sees every log).
        for (const [user, by] of [
          [orgAdmin, service.key],
          [wsAdmin, managerKey.key],
          [manager, memberKey.key],
        ] as const) {
          const e = await assertEnvelope(await userKey(user, by), 403);
          assert.equal(e.param, 'user_id');
          assert.equal(e.code, 'permission_denied');
        }
        // Never more scopes than the caller holds; a member's key makes no service key (those act as workspace admins).
        const wider = await assertEnvelope(
          await gw.call('/api-keys/workspace/user', { body: { name: 'k', scopes: ['configs.delete'], user_id: member }, headers: as(memberKey.key) }),
          403,
        );
        assert.equal(wider.param, 'scopes[0]');
        const svc = await assertEnvelope(await gw.call('/api-keys/workspace/service', { body: { name: 'k', scopes: ['logs.view'] }, headers: as(memberKey.key) }), 403);
        assert.equal(svc.param, 'sub_type');
        assert.equal(await keyCount(), before, 'nothing was made');

        // The user themself, and keys of at least their role, may.
        for (const [user, by] of [
          [member, memberKey.key],
          [member, managerKey.key],
          [manager, managerKey.key],
          [wsAdmin, service.key],
          [orgAdmin, ADMIN_KEY],
        ] as const) {
          const res = await userKey(user, by);
          assert.equal(res.status, 201, await res.text());
        }

        // Nor does a key change, delete or rotate a key above it; its own and those below it, it may.
        for (const [method, path, body] of [
          ['PUT', `/api-keys/${service.id}`, { name: 'mine now' }],
          ['DELETE', `/api-keys/${service.id}`, undefined],
          ['POST', `/api-keys/${managerKey.id}/rotate`, {}],
        ] as const) {
          assert.equal((await assertEnvelope(await gw.call(path, { method, body, headers: as(memberKey.key) }), 403)).code, 'permission_denied', `${method} ${path}`);
        }
        assert.ok(await works(service.key) && (await works(managerKey.key)));
        assert.equal((await gw.call(`/api-keys/${memberKey.id}`, { method: 'PUT', body: { name: 'renamed' }, headers: as(memberKey.key) })).status, 200);
        assert.equal((await gw.call(`/api-keys/${memberKey.id}`, { method: 'PUT', body: { name: 'by the manager' }, headers: as(managerKey.key) })).status, 200);
        // Rotating hands over the new secret: a manager is not the member's owner, nor an admin.
        await assertEnvelope(await gw.call(`/api-keys/${memberKey.id}/rotate`, { body: {}, headers: as(managerKey.key) }), 403);
        assert.equal((await gw.call(`/api-keys/${memberKey.id}/rotate`, { body: {}, headers: as(service.key) })).status, 200);
      });

      it('updates name, description, scopes, expiry, policy, defaults and metadata; type and user are fixed; scope changes apply at once', async () => {
        const k = await create('workspace/service', { name: 'Before', scopes: ['api_keys.list', 'logs.view'], expires_at: Math.floor(gw.clock.now / 1000) + 3600 });
        assert.equal((await gw.call('/api-keys', { headers: as(k.key) })).status, 200);
        const res = await gw.call(`/api-keys/${k.id}`, {
          method: 'PUT',
          body: {
            name: 'After',
            description: 'now described',
            scopes: ['logs.view'],
            expires_at: null,
            rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 3_600_000 },
            defaults: { config_id: 'cfg-2' },
            metadata: { owner: 'ops' },
          },
        });
        assert.equal(res.status, 200);
        const v = (await res.json()) as View;
        assert.equal(v.name, 'After');
        assert.equal(v.description, 'now described');
        assert.deepEqual(v.scopes, ['logs.view']);
        assert.equal(v.expires_at, null);
        assert.deepEqual(v.rotation_policy, {
          rotation_period: 'weekly',
          next_rotation_at: new Date(nextRotation('weekly', gw.clock.now)).toISOString(),
          key_transition_period_ms: 3_600_000,
        });
        assert.deepEqual(v.defaults, { config_id: 'cfg-2' });
        assert.deepEqual(v.metadata, { owner: 'ops' });
        assert.equal(v.key, `****${k.key.slice(-4)}`);
        assert.deepEqual(await view(k.id), v);
        // The key lost api_keys.list: refused on its very next call (caches hear of the change).
        await assertEnvelope(await gw.call('/api-keys', { headers: as(k.key) }), 403);
        assert.ok(await works(k.key), 'the secret is untouched');

        assert.equal((await gw.call(`/api-keys/${k.id}`, { method: 'PUT', body: { rotation_policy: null } })).status, 200);
        assert.equal((await view(k.id)).rotation_policy, null);
        for (const [body, param] of [
          [{ type: 'organisation-service' }, 'type'],
          [{ user_id: 'someone' }, 'user_id'],
          [{ workspace_id: 'default' }, 'workspace_id'],
          [{ scopes: ['logs.nothing'] }, 'scopes[0]'],
          [{ expires_at: 5 }, 'expires_at'],
          [{ rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 8 * DAY } }, 'rotation_policy.key_transition_period_ms'],
        ] as const) {
          const err = await assertEnvelope(await gw.call(`/api-keys/${k.id}`, { method: 'PUT', body }), 400);
          assert.equal(err.param, param);
        }
        assert.equal((await view(k.id)).name, 'After');
        await assertEnvelope(await gw.call('/api-keys/no-such-key', { method: 'PUT', body: { name: 'x' } }), 404);
      });
    });

    it('the bootstrap admin key cannot be deleted, narrowed or rotated (409), but may be renamed', async () => {
      await assertEnvelope(await gw.call('/api-keys/bootstrap-admin', { method: 'DELETE' }), 409);
      await assertEnvelope(await gw.call('/api-keys/bootstrap-admin', { method: 'PUT', body: { scopes: ['logs.view'] } }), 409);
      await assertEnvelope(await gw.call('/api-keys/bootstrap-admin', { method: 'PUT', body: { expires_at: Math.floor(gw.clock.now / 1000) + 60 } }), 409);
      await assertEnvelope(await gw.call('/api-keys/bootstrap-admin/rotate', { body: {} }), 409);
      const renamed = await gw.call('/api-keys/bootstrap-admin', { method: 'PUT', body: { name: 'Break glass' } });
      assert.equal(renamed.status, 200);
      const v = (await renamed.json()) as View;
      assert.equal(v.name, 'Break glass');
      assert.equal(v.type, 'organisation-service');
      assert.equal(v.creation_mode, 'bootstrap');
      assert.ok(v.scopes.includes('api_keys.rotate') && v.scopes.includes('completions.write'), 'an admin key shows every scope');
      assert.equal((await gw.call('/api-keys')).status, 200);
    });

    it('rotation: a new secret, same id; the old one works for the transition only; no second rotation meanwhile', async () => {
      const k = await create('workspace/service', { name: 'Rotating', scopes: ['logs.view'] });
      const short = await assertEnvelope(await gw.call(`/api-keys/${k.id}/rotate`, { body: { key_transition_period_ms: 29 * MINUTE } }), 400);
      assert.equal(short.param, 'key_transition_period_ms');
      assert.ok(await works(k.key));

      const rotatedAt = gw.clock.now;
      const res = await gw.call(`/api-keys/${k.id}/rotate`, { body: {} });
      assert.equal(res.status, 200);
      const r = (await res.json()) as { id: string; key: string; key_transition_expires_at: string };
      assert.deepEqual(Object.keys(r).sort(), ['id', 'key', 'key_transition_expires_at']);
      assert.equal(r.id, k.id);
      assert.notEqual(r.key, k.key);
      assert.ok(r.key.startsWith(PREFIX));
      assert.equal(r.key_transition_expires_at, new Date(Math.floor((rotatedAt + 30 * MINUTE) / 1000) * 1000).toISOString());
      assert.ok(await works(k.key), 'old secret during the transition');
      assert.ok(await works(r.key), 'new secret');

      const v = await view(k.id);
      assert.equal(v.key, `****${r.key.slice(-4)}`);
      assert.equal(v.last_rotated_at, Math.floor(rotatedAt / 1000));
      assert.equal(v.key_transition_expires_at, r.key_transition_expires_at);
      const rows = await allRowsText();
      assert.ok(!rows.includes(r.key) && !rows.includes(k.key));

      const again = await assertEnvelope(await gw.call(`/api-keys/${k.id}/rotate`, { body: {} }), 409);
      assert.equal(again.code, 'rotation_in_progress');

      gw.clock.advance(29 * MINUTE);
      assert.ok(await works(k.key), 'still inside the transition');
      gw.clock.advance(MINUTE + 1000);
      assert.equal(await works(k.key), false, 'the old secret ends with the transition');
      assert.ok(await works(r.key));
      assert.equal((await view(k.id)).key_transition_expires_at, null);

      // Transition over: rotating again is fine, with a longer transition this time.
      const third = await gw.call(`/api-keys/${k.id}/rotate`, { body: { key_transition_period_ms: 2 * 3_600_000 } });
      assert.equal(third.status, 200);
      const t = (await third.json()) as { key: string; key_transition_expires_at: string };
      assert.equal(Date.parse(t.key_transition_expires_at), Math.floor((gw.clock.now + 2 * 3_600_000) / 1000) * 1000);
      assert.ok(await works(r.key) && (await works(t.key)));
    });

    it('a key rotates itself without api_keys.rotate; its old secret may do it once', async () => {
      const k = await create('workspace/service', { name: 'Self', scopes: ['completions.write'] });
      const res = await gw.call(`/api-keys/${k.id}/rotate`, { body: {}, headers: as(k.key) });
      assert.equal(res.status, 200);
      const r = (await res.json()) as { key: string };
      await assertEnvelope(await gw.call(`/api-keys/${k.id}/rotate`, { body: {}, headers: as(r.key) }), 409);
      assert.ok(await works(r.key));
    });

    it('the organisation’s enforced rotation period: given to user keys without a policy, a different one refused (400); the TTL caps user keys', async () => {
      const userPolicy = await addUser('user-policy');
      const ttl = 30 * 86_400;
      await withSettings({ user_api_key_rotation_period: 'monthly', user_api_key_ttl: ttl }, async () => {
        const now = Math.floor(gw.clock.now / 1000);
        const k = await create('workspace/user', { name: 'Enforced', scopes: ['logs.view'], user_id: userPolicy });
        const v = await view(k.id);
        assert.deepEqual(v.rotation_policy, {
          rotation_period: 'monthly',
          next_rotation_at: new Date(nextRotation('monthly', gw.clock.now)).toISOString(),
          key_transition_period_ms: 1_800_000,
        });
        assert.equal(v.expires_at, now + ttl);

        // Same period explicitly, with its own transition: accepted.
        const same = await create('workspace/user', {
          name: 'Same',
          scopes: ['logs.view'],
          user_id: userPolicy,
          rotation_policy: { rotation_period: 'monthly', key_transition_period_ms: 3_600_000 },
          expires_at: now + 3600,
        });
        assert.equal((await view(same.id)).expires_at, now + 3600);

        const before = await keyCount();
        for (const [body, param] of [
          [{ rotation_policy: { rotation_period: 'weekly' } }, 'rotation_policy.rotation_period'],
          [{ rotation_policy: { rotation_period: null, next_rotation_at: new Date(gw.clock.now + 3 * DAY).toISOString() } }, 'rotation_policy.rotation_period'],
          [{ rotation_policy: { rotation_period: 'monthly', key_transition_period_ms: 28 * DAY } }, 'rotation_policy.key_transition_period_ms'],
          [{ expires_at: now + ttl + 1 }, 'expires_at'],
          [{ expires_at: null }, 'expires_at'],
        ] as const) {
          const err = await assertEnvelope(await gw.call('/api-keys/workspace/user', { body: { name: 'x', scopes: ['logs.view'], user_id: userPolicy, ...body } }), 400);
          assert.equal(err.param, param, JSON.stringify(body));
        }
        assert.equal(await keyCount(), before);

        for (const [body, param] of [
          [{ rotation_policy: { rotation_period: 'weekly' } }, 'rotation_policy.rotation_period'],
          [{ rotation_policy: null }, 'rotation_policy'],
          [{ expires_at: null }, 'expires_at'],
        ] as const) {
          const err = await assertEnvelope(await gw.call(`/api-keys/${k.id}`, { method: 'PUT', body }), 400);
          assert.equal(err.param, param, JSON.stringify(body));
        }
        assert.deepEqual((await view(k.id)).rotation_policy, v.rotation_policy);

        // Service keys are not user keys: no policy forced on them, any period allowed.
        const svc = await create('workspace/service', { name: 'Svc', scopes: ['logs.view'] });
        const sv = await view(svc.id);
        assert.equal(sv.rotation_policy, null);
        assert.equal(sv.expires_at, null);
        assert.equal((await gw.call(`/api-keys/${svc.id}`, { method: 'PUT', body: { rotation_policy: { rotation_period: 'weekly' } } })).status, 200);
      });
    });

    it('deleting a key refuses it at once', async () => {
      const k = await create('workspace/service', { name: 'Doomed', scopes: ['logs.view'] });
      assert.ok(await works(k.key));
      const res = await gw.call(`/api-keys/${k.id}`, { method: 'DELETE' });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { id: k.id, object: 'api-key', deleted: true });
      assert.equal(await works(k.key), false);
      await assertEnvelope(await gw.call(`/api-keys/${k.id}`), 404);
      await assertEnvelope(await gw.call(`/api-keys/${k.id}`, { method: 'DELETE' }), 404);
    });

    it('scheduled rotation: a due key gets a new secret sealed for its owner, claimed once; the schedule moves on', async () => {
      // A gateway of its own: its clock jumps days ahead.
      const g = await startTestGateway({ ...(await engine.fresh()), API_KEY_PREFIX: PREFIX });
      try {
        const k = await create('workspace/service', { name: 'Weekly', scopes: ['logs.view'], rotation_policy: { rotation_period: 'weekly', key_transition_period_ms: 3_600_000 } }, g);
        const bystander = await create('workspace/service', { name: 'Bystander', scopes: ['logs.view'] }, g);
        const due = Date.parse((await view(k.id, g)).rotation_policy!.next_rotation_at as string);
        assert.equal(await g.rotateDueKeys(), 0, 'nothing is due yet');
        await assertEnvelope(await g.call(`/api-keys/${k.id}/rotated-key`, { body: {} }), 404);

        g.clock.now = due + 1000;
        assert.equal(await g.rotateDueKeys(), 1);
        assert.equal(await g.rotateDueKeys(), 0, 'rotated once, not again');
        const v = await view(k.id, g);
        assert.equal(v.last_rotated_at, Math.floor(g.clock.now / 1000));
        assert.equal(v.rotation_policy!.next_rotation_at, new Date(nextRotation('weekly', g.clock.now)).toISOString());
        assert.equal(v.key_transition_expires_at, new Date(Math.floor((g.clock.now + 3_600_000) / 1000) * 1000).toISOString());
        assert.notEqual(v.key, `****${k.key.slice(-4)}`);
        const sealed = await g.store.db.get<{ rotated_key: string | null }>('SELECT rotated_key FROM api_keys WHERE id = ?', [k.id]);
        assert.ok(sealed?.rotated_key != null);
        assert.ok(await works(k.key, g), 'old secret during the transition');

        // Not the key itself: its old secret still works, and whoever holds that would lock the owner out. (This one
        // lacks api_keys.rotate, refused before its body is read; one that holds it is refused below, 'not by the key'.)
        const own = await assertEnvelope(await g.call(`/api-keys/${k.id}/rotated-key`, { body: {}, headers: as(k.key) }), 403);
        assert.equal(own.code, 'missing_scope');
        // Nor a key without api_keys.rotate; the key's owners (who manage the workspace's keys) or an admin may.
        await assertEnvelope(await g.call(`/api-keys/${k.id}/rotated-key`, { body: {}, headers: as(bystander.key) }), 403);
        const claim = await g.call(`/api-keys/${k.id}/rotated-key`, { body: {} });
        assert.equal(claim.status, 200);
        const c = (await claim.json()) as { id: string; key: string; key_transition_expires_at: string };
        assert.equal(c.id, k.id);
        assert.ok(c.key.startsWith(PREFIX));
        assert.equal(c.key_transition_expires_at, v.key_transition_expires_at);
        assert.equal(v.key, `****${c.key.slice(-4)}`);
        assert.ok(await works(c.key, g));
        assert.ok(!(await allRowsText(g)).includes(c.key), 'the new secret was never stored in plain text');
        await assertEnvelope(await g.call(`/api-keys/${k.id}/rotated-key`, { body: {} }), 404);
        await assertEnvelope(await g.call(`/api-keys/${k.id}/rotate`, { body: {} }), 409);

        g.clock.advance(3_600_000 + 1000);
        assert.equal(await works(k.key, g), false);
        assert.ok(await works(c.key, g));
        assert.ok(await works(bystander.key, g));

        // A one-off date rotates once and leaves no schedule.
        const once = await create('workspace/service', { name: 'Once', scopes: ['logs.view'], rotation_policy: { next_rotation_at: new Date(g.clock.now + 2 * DAY).toISOString() } }, g);
        g.clock.advance(3 * DAY);
        assert.equal(await g.rotateDueKeys(), 1, 'the one-off; the weekly key is next due on Monday');
        assert.equal((await view(once.id, g)).rotation_policy!.next_rotation_at, null);
        g.clock.advance(30 * DAY);
        assert.equal(await g.rotateDueKeys(), 1, 'only the weekly key: the one-off left no schedule');
      } finally {
        await g.stop();
      }
    });

    it("a user key's rotated secret is claimed by its user (another key of theirs) or an admin: not by the key, nor by a manager", async () => {
      const g = await startTestGateway({ ...(await engine.fresh()), API_KEY_PREFIX: PREFIX });
      try {
        const user = async (role: string): Promise<string> =>
          ((await (await g.call('/users', { body: { email: `${role}-${Date.now()}@example.com`, workspaces: [{ id: 'default', role }] } })).json()) as { id: string }).id;
        const member = await user('member');
        const manager = await user('manager');
        const weekly = { rotation_period: 'weekly' };
        // It holds api_keys.rotate: its own claim passes the scope check and is refused for being its own.
        const rotating = await create('workspace/user', { name: 'Rotating', scopes: ['api_keys.rotate', 'logs.view'], user_id: member, rotation_policy: weekly }, g);
        const sameUser = await create('workspace/user', { name: 'Same user', scopes: ['api_keys.rotate', 'logs.view'], user_id: member }, g);
        const managers = await create('workspace/user', { name: 'Manager', scopes: ['api_keys.rotate', 'logs.view'], user_id: manager }, g);
        g.clock.now = Date.parse((await view(rotating.id, g)).rotation_policy!.next_rotation_at as string) + 1000;
        assert.equal(await g.rotateDueKeys(), 1);

        const claim = (secret: string) => g.call(`/api-keys/${rotating.id}/rotated-key`, { body: {}, headers: as(secret) });
        assert.equal((await assertEnvelope(await claim(rotating.key), 403)).code, 'permission_denied');
        await assertEnvelope(await claim(managers.key), 403);
        const res = await claim(sameUser.key);
        assert.equal(res.status, 200);
        assert.ok(await works(((await res.json()) as { key: string }).key, g));
      } finally {
        await g.stop();
      }
    });

    it('a restart on the same data keeps keys, their secrets and a rotation in transition', async () => {
      const dataEnv = { ...(await engine.fresh()), API_KEY_PREFIX: PREFIX };
      const g1 = await startTestGateway(dataEnv);
      let k: Created;
      let r: { key: string };
      try {
        k = await create('workspace/service', { name: 'Survivor', scopes: ['logs.view'], rotation_policy: { rotation_period: 'monthly' } }, g1);
        r = (await (await g1.call(`/api-keys/${k.id}/rotate`, { body: {} })).json()) as { key: string };
      } finally {
        await g1.stop();
      }
      const g2 = await startTestGateway(dataEnv);
      try {
        const v = await view(k.id, g2);
        assert.equal(v.name, 'Survivor');
        assert.equal(v.key, `****${r.key.slice(-4)}`);
        assert.equal(v.rotation_policy!.rotation_period, 'monthly');
        assert.ok(await works(k.key, g2), 'the old secret, still in its transition');
        assert.ok(await works(r.key, g2));
        g2.clock.advance(30 * MINUTE + 1000);
        assert.equal(await works(k.key, g2), false);
        assert.ok(await works(r.key, g2));
      } finally {
        await g2.stop();
      }
    });

    it('two gateways on one database: a due key is rotated by exactly one of them', async () => {
      const shared = { ...(await engine.fresh()), API_KEY_PREFIX: PREFIX };
      const a = await startTestGateway(shared);
      const b = await startTestGateway(shared);
      try {
        const keys = await Promise.all(
          [1, 2, 3].map((i) => create('workspace/service', { name: `Due ${i}`, scopes: ['logs.view'], rotation_policy: { rotation_period: 'weekly' } }, a)),
        );
        const due = Date.parse((await view(keys[0]!.id, a)).rotation_policy!.next_rotation_at as string);
        a.clock.now = b.clock.now = due + 1000;
        const [x, y] = await Promise.all([a.rotateDueKeys(), b.rotateDueKeys()]);
        assert.equal(x + y, 3);
        const claims = await Promise.all(keys.map((k) => b.call(`/api-keys/${k.id}/rotated-key`, { body: {} })));
        for (const c of claims) assert.equal(c.status, 200);
        for (const c of claims) assert.ok(await works(((await c.json()) as { key: string }).key, a));
      } finally {
        await a.stop();
        await b.stop();
      }
    });

    if (engine.name === 'postgres') {
      it('a key deleted on one gateway is refused by another on the same Postgres within a second (LISTEN/NOTIFY)', async () => {
        const shared = await engine.fresh();
        const a = await startTestGateway(shared);
        const b = await startTestGateway(shared);
        try {
          const k = await create('workspace/service', { name: 'Shared', scopes: ['logs.view'] }, a);
          assert.ok(await works(k.key, b));
          assert.ok(await works(k.key, b), 'now cached in b, for 30 s of its clock, which stands still');
          assert.equal((await a.call(`/api-keys/${k.id}`, { method: 'DELETE' })).status, 200);
          const t0 = Date.now();
          let refused = false;
          while (!refused && Date.now() - t0 < 2000) {
            refused = !(await works(k.key, b));
            if (!refused) await sleep(50);
          }
          assert.ok(refused, 'b refused the deleted key within 2 s');
        } finally {
          await a.stop();
          await b.stop();
        }
      });
    }
  });
}
