// /v1/policies/rate-limits over HTTP, on SQLite and on Postgres: create,
// read with the status filter, list, update (archive and restore, fail_mode), delete;
// every field rule as a 400 naming the field; what workspace keys and keys
// without the scope may not do; a restart keeps every policy.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashKey } from '../src/http/auth.js';
import { engines } from './support/engines.js';
import { assertEnvelope } from './support/http.js';
import { keyRecord } from './support/keys.js';
import { useGateway } from './support/use-gateway.js';

interface PolicyJson {
  object: string;
  id: string;
  name: string | null;
  conditions: { key: string; value: string }[];
  group_by: { key: string }[];
  type: 'requests' | 'tokens';
  unit: 'rpm' | 'rph' | 'rpd' | 'rpw';
  value: number;
  status: 'active' | 'archived';
  fail_mode: 'open' | 'closed';
  workspace_id: string;
  created_at: string;
  last_updated_at: string;
}

interface ListJson<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

const PATH = '/policies/rate-limits';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A valid body; tests override fields. */
const policy = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: '100 RPM per key',
  conditions: [{ key: 'api_key', value: '*' }],
  group_by: [{ key: 'api_key' }],
  type: 'requests',
  unit: 'rpm',
  value: 100,
  ...over,
});

for (const engine of engines()) {
  describe(`rate-limit policies (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let defaultWs: { id: string; slug: string };

    before(async () => {
      defaultWs = (await (await gw.call('/workspaces/default')).json()) as { id: string; slug: string };
    });

    const as = (secret: string) => ({ 'x-gateway-api-key': secret });

    async function create(body: unknown, headers: Record<string, string> = {}): Promise<PolicyJson> {
      const res = await gw.call(PATH, { body, headers });
      assert.equal(res.status, 201, await res.clone().text());
      const made = (await res.json()) as { id: string; object: string };
      assert.deepEqual(Object.keys(made).sort(), ['id', 'object']);
      assert.equal(made.object, 'policy_rate_limits');
      return get(made.id);
    }

    async function get(id: string, headers: Record<string, string> = {}): Promise<PolicyJson> {
      const res = await gw.call(`${PATH}/${id}`, { headers });
      assert.equal(res.status, 200, await res.clone().text());
      return (await res.json()) as PolicyJson;
    }

    async function workspace(name: string): Promise<{ id: string; slug: string }> {
      const res = await gw.call('/workspaces', { body: { name } });
      assert.equal(res.status, 201);
      return (await res.json()) as { id: string; slug: string };
    }

    /** A key of `workspaceId` seeded in the store; returns its id and secret. */
    async function workspaceKey(workspaceId: string, scopes: string[]): Promise<{ id: string; secret: string }> {
      const secret = `ws-key-${Math.random().toString(36).slice(2)}`;
      const rec = keyRecord({ workspaceId, scopes, hash: hashKey(secret) });
      await gw.store.apiKeys.insert(rec);
      return { id: rec.id, secret };
    }

    const count = async (): Promise<number> => (await gw.store.db.all('SELECT id FROM rate_limit_policies')).length;
    const ALL = ['policies.create', 'policies.read', 'policies.list', 'policies.update', 'policies.delete'];

    it('creates a policy in the default workspace and reads it back', async () => {
      const p = await create(policy({ conditions: [{ key: 'workspace_id', value: 'default' }, { key: 'endpoint_type', value: 'chatComplete' }] }));
      assert.equal(p.object, 'policy_rate_limits');
      assert.equal(p.name, '100 RPM per key');
      // A workspace named by slug is stored as its id.
      assert.deepEqual(p.conditions, [
        { key: 'workspace_id', value: defaultWs.id },
        { key: 'endpoint_type', value: 'chatComplete' },
      ]);
      assert.deepEqual(p.group_by, [{ key: 'api_key' }]);
      assert.equal(p.type, 'requests');
      assert.equal(p.unit, 'rpm');
      assert.equal(p.value, 100);
      assert.equal(p.status, 'active');
      assert.equal(p.fail_mode, 'open', 'fails open unless told otherwise');
      assert.equal(p.workspace_id, defaultWs.id);
      assert.match(p.created_at, ISO);
      assert.match(p.last_updated_at, ISO);
    });

    it('accepts tokens, every unit (rpw from 1.13.0), metadata keys, fractional values; name is optional', async () => {
      for (const unit of ['rpm', 'rph', 'rpd', 'rpw']) {
        const p = await create(policy({ type: 'tokens', unit, value: 2500.5, conditions: [{ key: 'metadata.team', value: 'research' }], group_by: [{ key: 'metadata._user' }, { key: 'endpoint_type' }] }));
        assert.equal(p.unit, unit);
        assert.equal(p.type, 'tokens');
        assert.equal(p.value, 2500.5);
        assert.deepEqual(p.group_by, [{ key: 'metadata._user' }, { key: 'endpoint_type' }]);
      }
      const { name: _, ...unnamed } = policy();
      assert.equal((await create(unnamed)).name, null);
      // Portkey clients send organisation_id; one organisation here, so it changes nothing.
      assert.equal((await create(policy({ organisation_id: '00000000-0000-4000-8000-000000000000' }))).workspace_id, defaultWs.id);
    });

    it('an api_key condition names a key of the policy’s workspace', async () => {
      const own = await workspaceKey(defaultWs.id, ['completions.write']);
      const p = await create(policy({ conditions: [{ key: 'api_key', value: own.id }] }));
      assert.deepEqual(p.conditions, [{ key: 'api_key', value: own.id }]);
      const other = await workspace('Keys Elsewhere');
      const foreign = await workspaceKey(other.id, ['completions.write']);
      for (const value of [foreign.id, 'no-such-key']) {
        const e = await assertEnvelope(await gw.call(PATH, { body: policy({ conditions: [{ key: 'api_key', value }] }) }), 400);
        assert.equal(e.param, 'conditions[0].value');
      }
    });

    it('every field rule is a 400 naming the field, and stores nothing', async () => {
      const other = await workspace('Rules Elsewhere');
      const before = await count();
      const cases: [Record<string, unknown>, string][] = [
        [{ ...policy(), conditions: undefined }, 'conditions'],
        [{ ...policy(), group_by: undefined }, 'group_by'],
        [{ ...policy(), type: undefined }, 'type'],
        [{ ...policy(), unit: undefined }, 'unit'],
        [{ ...policy(), value: undefined }, 'value'],
        [policy({ conditions: [] }), 'conditions'],
        [policy({ conditions: 'api_key' }), 'conditions'],
        [policy({ conditions: [{ key: 'colour', value: 'red' }] }), 'conditions[0].key'],
        [policy({ conditions: [{ key: 'metadata.', value: 'x' }] }), 'conditions[0].key'],
        [policy({ conditions: [{ key: `metadata.${'k'.repeat(65)}`, value: 'x' }] }), 'conditions[0].key'],
        [policy({ conditions: [{ key: 'api_key' }] }), 'conditions[0].value'],
        [policy({ conditions: [{ key: 'api_key', value: '' }] }), 'conditions[0].value'],
        [policy({ conditions: [{ key: 'api_key', value: 7 }] }), 'conditions[0].value'],
        [policy({ conditions: [{ key: 'api_key', value: '*', op: 'eq' }] }), 'conditions[0].op'],
        [policy({ conditions: [{ key: 'api_key', value: '*' }, { key: 'api_key', value: '*' }] }), 'conditions[1].key'],
        [policy({ conditions: [{ key: 'endpoint_type', value: 'stream-chatComplete' }] }), 'conditions[0].value'],
        [policy({ conditions: [{ key: 'workspace_id', value: other.id }] }), 'conditions[0].value'],
        [policy({ group_by: [] }), 'group_by'],
        [policy({ group_by: [{ key: 'user' }] }), 'group_by[0].key'],
        [policy({ group_by: [{}] }), 'group_by[0].key'],
        [policy({ group_by: [{ key: 'api_key' }, { key: 'api_key' }] }), 'group_by[1].key'],
        [policy({ type: 'cost' }), 'type'],
        [policy({ unit: 'rps' }), 'unit'],
        [policy({ value: 0 }), 'value'],
        [policy({ value: -5 }), 'value'],
        [policy({ value: '100' }), 'value'],
        [policy({ name: 'n'.repeat(256) }), 'name'],
        [policy({ name: 42 }), 'name'],
        [policy({ colour: 'red' }), 'colour'],
      ];
      for (const [body, param] of cases) {
        const e = await assertEnvelope(await gw.call(PATH, { body }), 400);
        assert.equal(e.param, param, JSON.stringify(body));
        assert.ok(e.message.startsWith(param), e.message);
      }
      assert.equal((await assertEnvelope(await gw.call(PATH, { body: [] }), 400)).param, null);
      await assertEnvelope(await gw.call(PATH, { body: '{"name": ' }), 400);
      assert.equal(await count(), before);
      // A name of exactly 255 characters is fine.
      assert.equal((await create(policy({ name: 'n'.repeat(255) }))).name!.length, 255);
    });

    it('fail_mode: open or closed, set on create and update, shown in reads and lists; anything else is 400 naming it', async () => {
      const p = await create(policy({ fail_mode: 'closed' }));
      assert.equal(p.fail_mode, 'closed');
      const listed = (await (await gw.call(`${PATH}?limit=100`)).json()) as ListJson<PolicyJson>;
      assert.equal(listed.data.find((x) => x.id === p.id)?.fail_mode, 'closed');
      const put = async (body: unknown): Promise<PolicyJson> => {
        const res = await gw.call(`${PATH}/${p.id}`, { method: 'PUT', body });
        assert.equal(res.status, 200, await res.clone().text());
        return (await res.json()) as PolicyJson;
      };
      assert.equal((await put({ fail_mode: 'open' })).fail_mode, 'open');
      assert.equal((await put({ value: 7 })).fail_mode, 'open', 'an update without it keeps it');
      assert.equal((await put({ fail_mode: 'closed' })).fail_mode, 'closed');
      assert.equal((await get(p.id)).fail_mode, 'closed');
      const before = await count();
      for (const bad of ['shut', 'OPEN', null, true]) {
        const created = await assertEnvelope(await gw.call(PATH, { body: policy({ fail_mode: bad }) }), 400);
        assert.equal(created.param, 'fail_mode', created.message);
        assert.ok(created.message.startsWith('fail_mode'), created.message);
        assert.equal((await assertEnvelope(await gw.call(`${PATH}/${p.id}`, { method: 'PUT', body: { fail_mode: bad } }), 400)).param, 'fail_mode');
      }
      assert.equal(await count(), before);
      assert.equal((await get(p.id)).fail_mode, 'closed');
    });

    it('the named workspace must exist and take new objects', async () => {
      assert.equal((await assertEnvelope(await gw.call(PATH, { body: policy({ workspace_id: 'no-such-workspace' }) }), 404)).param, 'workspace_id');
      const archived = await workspace('Archived Policies');
      await gw.call(`/workspaces/${archived.id}`, { method: 'PUT', body: { status: 'archived' } });
      assert.equal((await assertEnvelope(await gw.call(PATH, { body: policy({ workspace_id: archived.slug }) }), 409)).param, 'workspace_id');
      const ws = await workspace('Named Policies');
      const p = await create(policy({ workspace_id: ws.slug, conditions: [{ key: 'workspace_id', value: ws.slug }] }));
      assert.equal(p.workspace_id, ws.id);
      assert.deepEqual(p.conditions, [{ key: 'workspace_id', value: ws.id }]);
    });

    it('reading with a status filter: a policy in the other status is 404', async () => {
      const p = await create(policy());
      assert.equal((await gw.call(`${PATH}/${p.id}?status=active`)).status, 200);
      await assertEnvelope(await gw.call(`${PATH}/${p.id}?status=archived`), 404);
      await gw.call(`${PATH}/${p.id}`, { method: 'PUT', body: { status: 'archived' } });
      assert.equal((await gw.call(`${PATH}/${p.id}?status=archived`)).status, 200);
      await assertEnvelope(await gw.call(`${PATH}/${p.id}?status=active`), 404);
      assert.equal((await get(p.id)).status, 'archived', 'without a filter, either status');
      assert.equal((await assertEnvelope(await gw.call(`${PATH}/${p.id}?status=deleted`), 400)).param, 'status');
      await assertEnvelope(await gw.call(`${PATH}/no-such-policy`), 404);
    });

    it('lists newest first with paging and status, type, unit and workspace filters', async () => {
      const ws = await workspace('Listed Policies');
      const made: PolicyJson[] = [];
      for (let i = 0; i < 5; i++) {
        made.push(await create(policy({ name: `Listed ${i}`, workspace_id: ws.id, type: i % 2 === 0 ? 'requests' : 'tokens', unit: i < 3 ? 'rpm' : 'rpd' })));
      }
      const list = async (q: string): Promise<ListJson<PolicyJson>> => {
        const res = await gw.call(`${PATH}?workspace_id=${ws.id}&${q}`);
        assert.equal(res.status, 200, await res.clone().text());
        return (await res.json()) as ListJson<PolicyJson>;
      };
      const first = await list('limit=2');
      assert.equal(first.object, 'list');
      assert.deepEqual(first.data.map((p) => p.name), ['Listed 4', 'Listed 3']);
      assert.equal(first.has_more, true);
      assert.equal(first.first_id, made[4]!.id);
      assert.equal(first.last_id, made[3]!.id);
      assert.deepEqual(first.data[0], made[4]);
      const second = await list(`limit=2&after=${first.last_id}`);
      assert.deepEqual(second.data.map((p) => p.name), ['Listed 2', 'Listed 1']);

      assert.deepEqual((await list('type=tokens')).data.map((p) => p.name), ['Listed 3', 'Listed 1']);
      assert.deepEqual((await list('unit=rpd')).data.map((p) => p.name), ['Listed 4', 'Listed 3']);

      await gw.call(`${PATH}/${made[2]!.id}`, { method: 'PUT', body: { status: 'archived' } });
      assert.ok(!(await list('')).data.some((p) => p.id === made[2]!.id), 'active only by default');
      assert.deepEqual((await list('status=archived')).data.map((p) => p.id), [made[2]!.id]);
      assert.equal((await list('status=active,archived')).data.length, 5);

      for (const [q, param] of [['status=gone', 'status'], ['type=cost', 'type'], ['unit=rps', 'unit'], ['limit=0', 'limit'], ['limit=101', 'limit']]) {
        assert.equal((await assertEnvelope(await gw.call(`${PATH}?${q}`), 400)).param, param, q);
      }
      assert.equal((await assertEnvelope(await gw.call(`${PATH}?workspace_id=no-such-ws`), 404)).param, 'workspace_id');

      // An organisation key without workspace_id sees every workspace's policies.
      const everywhere = (await (await gw.call(`${PATH}?limit=100`)).json()) as ListJson<PolicyJson>;
      assert.ok(everywhere.data.some((p) => p.workspace_id === ws.id));
      assert.ok(everywhere.data.some((p) => p.workspace_id === defaultWs.id));
    });

    it('updates fields, archives and restores; bad input is 400 and changes nothing', async () => {
      const p = await create(policy());
      const put = (body: unknown) => gw.call(`${PATH}/${p.id}`, { method: 'PUT', body });
      const res = await put({ name: 'Renamed', value: 250, unit: 'rph', type: 'tokens', conditions: [{ key: 'endpoint_type', value: 'embed' }], group_by: [{ key: 'metadata.user' }] });
      assert.equal(res.status, 200, await res.clone().text());
      const updated = (await res.json()) as PolicyJson;
      assert.deepEqual(updated, await get(p.id));
      assert.equal(updated.name, 'Renamed');
      assert.equal(updated.value, 250);
      assert.equal(updated.unit, 'rph');
      assert.equal(updated.type, 'tokens');
      assert.deepEqual(updated.conditions, [{ key: 'endpoint_type', value: 'embed' }]);
      assert.deepEqual(updated.group_by, [{ key: 'metadata.user' }]);
      assert.equal(updated.created_at, p.created_at);

      for (const [body, param] of [
        [{ value: 0 }, 'value'],
        [{ unit: 'rpy' }, 'unit'],
        [{ status: 'deleted' }, 'status'],
        [{ conditions: [] }, 'conditions'],
        [{ conditions: [{ key: 'endpoint_type', value: 'teleport' }] }, 'conditions[0].value'],
        [{ group_by: [{ key: 'api_key' }, { key: 'api_key' }] }, 'group_by[1].key'],
        [{ workspace_id: 'default' }, 'workspace_id'],
      ] as const) {
        assert.equal((await assertEnvelope(await put(body), 400)).param, param, JSON.stringify(body));
      }
      assert.deepEqual(await get(p.id), updated);

      assert.equal(((await (await put({ status: 'archived' })).json()) as PolicyJson).status, 'archived');
      assert.equal(((await (await put({ status: 'active' })).json()) as PolicyJson).status, 'active');
      await assertEnvelope(await gw.call(`${PATH}/no-such-policy`, { method: 'PUT', body: { value: 1 } }), 404);
    });

    it('deletes a policy', async () => {
      const p = await create(policy());
      const del = await gw.call(`${PATH}/${p.id}`, { method: 'DELETE' });
      assert.equal(del.status, 200);
      assert.deepEqual(await del.json(), { id: p.id, object: 'policy_rate_limits', deleted: true });
      await assertEnvelope(await gw.call(`${PATH}/${p.id}`), 404);
      await assertEnvelope(await gw.call(`${PATH}/${p.id}`, { method: 'DELETE' }), 404);
    });

    it('workspace keys act in their own workspace only; other workspaces’ policies are 404', async () => {
      const mine = await workspace('Mine');
      const theirs = await workspace('Theirs');
      const key = await workspaceKey(mine.id, ALL);
      const own = await create(policy({ name: 'own' }), as(key.secret));
      assert.equal(own.workspace_id, mine.id);
      assert.equal((await create(policy({ workspace_id: mine.slug }), as(key.secret))).workspace_id, mine.id);
      const foreign = await create(policy({ workspace_id: theirs.id }));

      const denied = await assertEnvelope(await gw.call(PATH, { headers: as(key.secret), body: policy({ workspace_id: theirs.id }) }), 403);
      assert.equal(denied.param, 'workspace_id');
      await assertEnvelope(await gw.call(`${PATH}?workspace_id=${theirs.slug}`, { headers: as(key.secret) }), 403);

      const list = (await (await gw.call(`${PATH}?limit=100`, { headers: as(key.secret) })).json()) as ListJson<PolicyJson>;
      assert.ok(list.data.length >= 2);
      assert.ok(list.data.every((p) => p.workspace_id === mine.id));
      assert.equal((await gw.call(`${PATH}/${own.id}`, { headers: as(key.secret) })).status, 200);
      await assertEnvelope(await gw.call(`${PATH}/${foreign.id}`, { headers: as(key.secret) }), 404);
      await assertEnvelope(await gw.call(`${PATH}/${foreign.id}`, { headers: as(key.secret), method: 'PUT', body: { value: 1 } }), 404);
      await assertEnvelope(await gw.call(`${PATH}/${foreign.id}`, { headers: as(key.secret), method: 'DELETE' }), 404);
      assert.equal((await get(foreign.id)).value, 100, 'untouched');
    });

    it('each route needs its policies scope: 403 naming it; no key is 401', async () => {
      const p = await create(policy());
      const key = await workspaceKey(defaultWs.id, ['completions.write']);
      for (const [method, path, scope, body] of [
        ['POST', PATH, 'policies.create', policy()],
        ['GET', PATH, 'policies.list', undefined],
        ['GET', `${PATH}/${p.id}`, 'policies.read', undefined],
        ['PUT', `${PATH}/${p.id}`, 'policies.update', { value: 1 }],
        ['DELETE', `${PATH}/${p.id}`, 'policies.delete', undefined],
      ] as const) {
        const e = await assertEnvelope(await gw.call(path, { method, body, headers: as(key.secret) }), 403);
        assert.equal(e.param, scope, `${method} ${path}`);
      }
      assert.equal((await get(p.id)).value, 100);
      assert.equal((await assertEnvelope(await fetch(`${gw.v1}${PATH}`), 401)).code, 'missing_api_key');
      await assertEnvelope(await gw.call(`${PATH}/${p.id}`, { method: 'PATCH', body: {} }), 405);
    });

    it('a restart on the same data keeps every policy', async () => {
      const p = await create(policy({ type: 'tokens', unit: 'rpw', value: 1_000_000, group_by: [{ key: 'metadata.team' }, { key: 'api_key' }], fail_mode: 'closed' }));
      const archived = await create(policy({ name: 'archived' }));
      await gw.call(`${PATH}/${archived.id}`, { method: 'PUT', body: { status: 'archived' } });
      const archivedView = await get(archived.id);
      await gw.restart();
      assert.deepEqual(await get(p.id), p);
      assert.deepEqual(await get(archived.id), archivedView);
    });
  });
}
