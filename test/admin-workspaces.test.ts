// /v1/workspaces over HTTP, on SQLite and on Postgres: create, list with the
// status filter (archived only for owners and admins), read, archive, delete,
// and what workspace keys may and may not do.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashKey } from '../src/http/auth.js';
import { engines } from './support/engines.js';
import { assertEnvelope } from './support/http.js';
import { keyRecord } from './support/keys.js';
import { useGateway } from './support/use-gateway.js';

interface WorkspaceJson {
  object: string;
  id: string;
  slug: string;
  name: string;
  description: string | null;
  status: 'active' | 'archived';
  is_default: boolean;
  metadata: Record<string, string> | null;
  created_at: number;
}

interface ListJson<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

for (const engine of engines()) {
  describe(`workspaces (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);

    async function create(body: unknown): Promise<WorkspaceJson> {
      const res = await gw.call('/workspaces', { body });
      assert.equal(res.status, 201, await res.clone().text());
      return (await res.json()) as WorkspaceJson;
    }

    /** A key of `workspaceId` with these scopes, seeded in the store; returns its secret. */
    async function workspaceKey(workspaceId: string, scopes: string[], subType: 'service' | 'user' = 'service'): Promise<string> {
      const secret = `ws-key-${Math.random().toString(36).slice(2)}`;
      await gw.store.apiKeys.insert(keyRecord({ workspaceId, scopes, subType, hash: hashKey(secret) }));
      return secret;
    }

    const as = (secret: string) => ({ 'x-gateway-api-key': secret });

    it('creates a workspace with a generated slug, and reads it by id and by slug', async () => {
      const ws = await create({ name: 'Research Team', description: 'models under study', metadata: { team: 'r' } });
      assert.equal(ws.object, 'workspace');
      assert.match(ws.slug, /^research-team-[0-9a-f]{6}$/);
      assert.equal(ws.status, 'active');
      assert.equal(ws.is_default, false);
      assert.ok(Number.isInteger(ws.created_at));
      for (const ref of [ws.id, ws.slug]) {
        const res = await gw.call(`/workspaces/${ref}`);
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), ws);
      }
    });

    it('a chosen slug is kept; a taken one is 409; bad input is 400 naming the field and stores nothing', async () => {
      const ws = await create({ name: 'Slugged', slug: 'slugged-ws' });
      assert.equal(ws.slug, 'slugged-ws');
      const dup = await assertEnvelope(await gw.call('/workspaces', { body: { name: 'Other', slug: 'slugged-ws' } }), 409);
      assert.equal(dup.param, 'slug');
      const before = (await gw.store.db.all('SELECT id FROM workspaces')).length;
      for (const [body, param] of [
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: 'x', slug: 'Bad Slug' }, 'slug'],
        [{ name: 'x', colour: 'red' }, 'colour'],
        [{ name: 'x', metadata: { k: 1 } }, 'metadata.k'],
      ] as const) {
        const e = await assertEnvelope(await gw.call('/workspaces', { body }), 400);
        assert.equal(e.param, param, JSON.stringify(body));
      }
      assert.equal((await gw.store.db.all('SELECT id FROM workspaces')).length, before);
      await assertEnvelope(await gw.call('/workspaces', { body: '{"name": ' }), 400);
    });

    it('archiving hides a workspace from active lists; archived ones are listed on request', async () => {
      const ws = await create({ name: 'To Archive' });
      const archived = await gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { status: 'archived' } });
      assert.equal(archived.status, 200);
      assert.equal(((await archived.json()) as WorkspaceJson).status, 'archived');

      const ids = async (q: string): Promise<string[]> => {
        const res = await gw.call(`/workspaces${q}`);
        assert.equal(res.status, 200);
        return ((await res.json()) as ListJson<WorkspaceJson>).data.map((w) => w.id);
      };
      assert.ok(!(await ids('')).includes(ws.id));
      assert.ok(!(await ids('?status=active')).includes(ws.id));
      assert.ok((await ids('?status=archived')).includes(ws.id));
      const both = await ids('?status=active,archived&limit=100');
      assert.ok(both.includes(ws.id));
      assert.ok(both.length > (await ids('?status=archived')).length);
      const bad = await assertEnvelope(await gw.call('/workspaces?status=deleted'), 400);
      assert.equal(bad.param, 'status');

      // Restored, it lists as active again.
      await gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { status: 'active' } });
      assert.ok((await ids('')).includes(ws.id));
    });

    it('lists page newest first with limit and after', async () => {
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await create({ name: `Paged ${i}` }));
      const first = (await (await gw.call('/workspaces?limit=2')).json()) as ListJson<WorkspaceJson>;
      assert.equal(first.object, 'list');
      assert.deepEqual(first.data.map((w) => w.name), ['Paged 4', 'Paged 3']);
      assert.equal(first.has_more, true);
      assert.equal(first.first_id, made[4]!.id);
      assert.equal(first.last_id, made[3]!.id);
      const second = (await (await gw.call(`/workspaces?limit=2&after=${first.last_id}`)).json()) as ListJson<WorkspaceJson>;
      assert.deepEqual(second.data.map((w) => w.name), ['Paged 2', 'Paged 1']);
      for (const q of ['limit=0', 'limit=101', 'limit=abc']) {
        assert.equal((await assertEnvelope(await gw.call(`/workspaces?${q}`), 400)).param, 'limit');
      }
    });

    it('the default workspace can be neither archived nor deleted; an unknown one is 404', async () => {
      assert.equal((await assertEnvelope(await gw.call('/workspaces/default', { method: 'PUT', body: { status: 'archived' } }), 409)).param, 'status');
      await assertEnvelope(await gw.call('/workspaces/default', { method: 'DELETE' }), 409);
      await assertEnvelope(await gw.call('/workspaces/no-such-workspace'), 404);
      await assertEnvelope(await gw.call('/workspaces/no-such-workspace', { method: 'PUT', body: { name: 'x' } }), 404);
      await assertEnvelope(await gw.call('/workspaces/no-such-workspace', { method: 'DELETE' }), 404);
    });

    it('an empty workspace is deleted; one that holds keys is 409 and stays', async () => {
      const empty = await create({ name: 'Empty' });
      const del = await gw.call(`/workspaces/${empty.id}`, { method: 'DELETE' });
      assert.equal(del.status, 200);
      assert.deepEqual(await del.json(), { id: empty.id, object: 'workspace', deleted: true });
      await assertEnvelope(await gw.call(`/workspaces/${empty.id}`), 404);

      const busy = await create({ name: 'Busy' });
      await workspaceKey(busy.id, ['completions.write']);
      await assertEnvelope(await gw.call(`/workspaces/${busy.id}`, { method: 'DELETE' }), 409);
      assert.equal((await gw.call(`/workspaces/${busy.id}`)).status, 200);
    });

    it('workspace keys see only their own workspace and cannot create, change or delete workspaces', async () => {
      const mine = await create({ name: 'Mine' });
      const theirs = await create({ name: 'Theirs' });
      const key = await workspaceKey(mine.id, ['workspaces.read', 'workspaces.list', 'workspaces.create', 'workspaces.update', 'workspaces.delete']);

      const list = (await (await gw.call('/workspaces?limit=100', { headers: as(key) })).json()) as ListJson<WorkspaceJson>;
      assert.deepEqual(list.data.map((w) => w.id), [mine.id]);
      assert.equal((await gw.call(`/workspaces/${mine.slug}`, { headers: as(key) })).status, 200);
      await assertEnvelope(await gw.call(`/workspaces/${theirs.id}`, { headers: as(key) }), 404);
      await assertEnvelope(await gw.call('/workspaces', { headers: as(key), body: { name: 'Nope' } }), 403);
      await assertEnvelope(await gw.call(`/workspaces/${mine.id}`, { headers: as(key), method: 'PUT', body: { name: 'Renamed' } }), 403);
      await assertEnvelope(await gw.call(`/workspaces/${mine.id}`, { headers: as(key), method: 'DELETE' }), 403);
      // Archived workspaces are for owners and admins only.
      await assertEnvelope(await gw.call('/workspaces?status=archived', { headers: as(key) }), 403);
    });

    it('a key without the scope gets 403 naming it; no key gets 401', async () => {
      const ws = await create({ name: 'Scoped' });
      const key = await workspaceKey(ws.id, ['completions.write']);
      const e = await assertEnvelope(await gw.call('/workspaces', { headers: as(key) }), 403);
      assert.equal(e.param, 'workspaces.list');
      const res = await fetch(`${gw.v1}/workspaces`);
      assert.equal((await assertEnvelope(res, 401)).code, 'missing_api_key');
    });

    it('unknown management paths are 404 and wrong methods 405, in the envelope', async () => {
      await assertEnvelope(await gw.call('/workspaces/a/b/c'), 404);
      await assertEnvelope(await gw.call('/workspaces', { method: 'PATCH', body: {} }), 405);
    });

    it('a restart on the same data keeps every workspace', async () => {
      const ws = await create({ name: 'Durable', metadata: { tier: 'gold' } });
      await gw.restart();
      const res = await gw.call(`/workspaces/${ws.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), ws);
    });
  });
}
