// Black-box tests of /v1/configs on both engines: create (validated as inline configs are),
// read by id and slug, versions, update, delete, the default flag, lists and their paging,
// and the refusals: 400 naming the path, 403 scope or workspace, 404 another workspace's
// config, 409 slug taken. A restart on the same data keeps configs and their versions.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engines } from './support/engines.js';
import { assertEnvelope } from './support/http.js';
import { keyRecord } from './support/keys.js';
import { useGateway } from './support/use-gateway.js';

type Json = Record<string, any>;

const ALL_SCOPES = ['configs.create', 'configs.read', 'configs.list', 'configs.update', 'configs.delete'];

/** A valid config body, told apart by its host. */
const body = (host = 'http://127.0.0.1:9/v1'): Json => ({ provider: 'openai', custom_host: host, api_key: 'sk-test' });

for (const engine of engines()) {
  describe(`saved configs API (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let defaultWs: Json;
    let teamB: Json;
    /** Secrets of seeded keys: workspace keys of the default workspace and of team-b, one with only configs.read. */
    const keys = { mine: '', theirs: '', readOnly: '', orgService: '' };

    before(async () => {
      defaultWs = await (await gw.call('/workspaces/default')).json();
      const created = await gw.call('/workspaces', { body: { name: 'Team B', slug: 'team-b' } });
      assert.equal(created.status, 201);
      teamB = await created.json();
      const seed = async (name: keyof typeof keys, workspaceId: string, scopes: string[], type: 'workspace' | 'organisation' = 'workspace') => {
        const k = keyRecord({ id: `key-${name}-${engine.name}`, workspaceId, scopes, type });
        await gw.store.apiKeys.insert(k);
        keys[name] = `secret-${k.id}`;
      };
      await seed('mine', defaultWs.id, ALL_SCOPES);
      await seed('theirs', teamB.id, ALL_SCOPES);
      await seed('readOnly', defaultWs.id, ['configs.read']);
      await seed('orgService', defaultWs.id, ALL_SCOPES, 'organisation');
    });

    const as = (secret: string) => ({ 'x-gateway-api-key': secret });
    async function create(input: Json, headers: Record<string, string> = {}): Promise<Json> {
      const res = await gw.call('/configs', { body: input, headers });
      assert.equal(res.status, 201, await res.clone().text());
      return res.json();
    }
    async function read(ref: string, headers: Record<string, string> = {}): Promise<Json> {
      const res = await gw.call(`/configs/${ref}`, { headers });
      assert.equal(res.status, 200, await res.clone().text());
      return res.json();
    }
    async function put(ref: string, input: Json, headers: Record<string, string> = {}): Promise<Json> {
      const res = await gw.call(`/configs/${ref}`, { method: 'PUT', body: input, headers });
      assert.equal(res.status, 200, await res.clone().text());
      return res.json();
    }
    async function listIds(query = '', headers: Record<string, string> = {}): Promise<string[]> {
      const res = await gw.call(`/configs${query}`, { headers });
      assert.equal(res.status, 200, await res.clone().text());
      return ((await res.json()) as Json).data.map((c: Json) => c.id);
    }

    it('creates a config: {id, slug, version_id}; reads it by id and by slug with its body', async () => {
      const cfg = { strategy: { mode: 'fallback' }, targets: [body('http://a.test/v1'), body('http://b.test/v1')] };
      const made = await create({ name: 'Fallback pair', config: cfg, description: 'two hosts' });
      assert.deepEqual(Object.keys(made).sort(), ['id', 'object', 'slug', 'version_id']);
      assert.equal(made.object, 'config');
      assert.match(made.slug, /^pc-fallback-pair-[0-9a-f]{6}$/);
      const byId = await read(made.id);
      assert.deepEqual(await read(made.slug), byId);
      assert.equal(byId.object, 'config');
      assert.equal(byId.id, made.id);
      assert.equal(byId.slug, made.slug);
      assert.equal(byId.name, 'Fallback pair');
      assert.equal(byId.description, 'two hosts');
      assert.equal(byId.workspace_id, defaultWs.id, 'an organisation key without workspace_id acts in the default workspace');
      assert.equal(byId.is_default, false);
      assert.equal(byId.status, 'active');
      assert.equal(byId.version_id, made.version_id);
      assert.equal(byId.version, 1);
      const masked = { ...cfg, targets: cfg.targets.map((t) => ({ ...t, api_key: '********' })) };
      assert.deepEqual(byId.config, masked, 'the body comes back as an object, as given, its credentials masked');
      assert.ok(Number.isInteger(byId.created_at) && Math.abs(byId.created_at - Date.now() / 1000) < 60, 'Unix seconds');
      assert.equal(byId.last_updated_at, byId.created_at);
    });

    it('an invalid config is a 400 naming its path, and nothing is stored', async () => {
      const before = await listIds('?limit=100');
      const bad = { strategy: { mode: 'fallback' }, targets: [body(), { ...body(), retry: { attempts: 9 } }] };
      const e = await assertEnvelope(await gw.call('/configs', { body: { name: 'bad', config: bad } }), 400);
      assert.equal(e.param, 'config.targets[1].retry.attempts');
      assert.match(e.message, /config\.targets\[1\]\.retry\.attempts/);
      const unknownKey = await assertEnvelope(await gw.call('/configs', { body: { name: 'bad', config: { ...body(), colour: 'blue' } } }), 400);
      assert.equal(unknownKey.param, 'config.colour');
      const noGroup = await assertEnvelope(await gw.call('/configs', { body: { name: 'bad', config: {} } }), 400);
      assert.equal(noGroup.param, 'config');
      assert.equal((await assertEnvelope(await gw.call('/configs', { body: { name: 'bad', config: 'x' } }), 400)).param, 'config');
      assert.equal((await assertEnvelope(await gw.call('/configs', { body: { config: body() } }), 400)).param, 'name');
      assert.equal((await assertEnvelope(await gw.call('/configs', { body: { name: 'x' } }), 400)).param, 'config');
      assert.equal((await assertEnvelope(await gw.call('/configs', { body: { name: 'x', config: body(), isDefault: 1 } }), 400)).param, 'isDefault');
      assert.equal((await assertEnvelope(await gw.call('/configs', { body: { name: 'x', config: body(), slug: 'Bad Slug' } }), 400)).param, 'slug');
      const uuidSlug = { name: 'x', config: body(), slug: '01900000-0000-7000-8000-000000000000' };
      assert.equal((await assertEnvelope(await gw.call('/configs', { body: uuidSlug }), 400)).param, 'slug');
      assert.deepEqual(await listIds('?limit=100'), before);
    });

    it('validate checks a body as a save would, naming the path, and stores nothing; configs.read suffices', async () => {
      const before = await listIds('?limit=100');
      const good = await gw.call('/configs/validate', { body: { config: body() }, headers: as(keys.readOnly) });
      assert.equal(good.status, 200, await good.clone().text());
      assert.deepEqual(await good.json(), { object: 'config.validation', valid: true });
      const bad = { strategy: { mode: 'fallback' }, targets: [body(), { ...body(), retry: { attempts: 9 } }] };
      assert.equal((await assertEnvelope(await gw.call('/configs/validate', { body: { config: bad } }), 400)).param, 'config.targets[1].retry.attempts');
      assert.equal((await assertEnvelope(await gw.call('/configs/validate', { body: { config: {} } }), 400)).param, 'config');
      assert.equal((await assertEnvelope(await gw.call('/configs/validate', { body: { name: 'x' } }), 400)).param, 'config');
      const noScope = keyRecord({ id: `key-noscope-${engine.name}`, workspaceId: defaultWs.id, scopes: ['logs.list'], type: 'workspace' });
      await gw.store.apiKeys.insert(noScope);
      await assertEnvelope(await gw.call('/configs/validate', { body: { config: body() }, headers: as(`secret-${noScope.id}`) }), 403);
      assert.deepEqual(await listIds('?limit=100'), before);
    });

    it('a chosen slug is used; taken in the same workspace it is 409, while another workspace may have its own', async () => {
      const made = await create({ name: 'Chosen', slug: 'chosen-slug', config: body('http://mine.test/v1') });
      assert.equal(made.slug, 'chosen-slug');
      const e = await assertEnvelope(await gw.call('/configs', { body: { name: 'again', slug: 'chosen-slug', config: body() }, headers: as(keys.mine) }), 409);
      assert.equal(e.param, 'slug');
      // Before, this was a 409: team-b's key learnt that some workspace had the slug.
      const theirs = await create({ name: 'Theirs', slug: 'chosen-slug', config: body('http://theirs.test/v1') }, as(keys.theirs));
      assert.equal(theirs.slug, 'chosen-slug');
      assert.notEqual(theirs.id, made.id);
      // A slug names the config of the caller's workspace; organisation keys name another with workspace_id.
      assert.equal((await read('chosen-slug', as(keys.theirs))).id, theirs.id);
      assert.equal((await read('chosen-slug', as(keys.mine))).id, made.id);
      assert.equal((await read('chosen-slug')).id, made.id, 'an organisation key: the default workspace');
      assert.equal((await read('chosen-slug?workspace_id=team-b')).id, theirs.id);
      assert.equal((await read(`chosen-slug?workspace_id=${teamB.id}`, as(keys.orgService))).config.custom_host, 'http://theirs.test/v1');
      await assertEnvelope(await gw.call('/configs/chosen-slug?workspace_id=team-b', { headers: as(keys.mine) }), 403);
      // The request path (saved-configs.ts) looks an x-gateway-config slug up in the key's workspace.
      assert.equal((await gw.store.configs.find('chosen-slug', teamB.id))?.id, theirs.id);
      assert.equal((await gw.store.configs.find('chosen-slug', defaultWs.id))?.id, made.id);
    });

    it('a new body is a new version; versions list newest first and page; one version by id or number', async () => {
      const made = await create({ name: 'Versioned', config: body('http://v1.test/v1') });
      const v2 = await put(made.id, { config: body('http://v2.test/v1') });
      assert.equal(v2.version, 2);
      assert.notEqual(v2.version_id, made.version_id);
      assert.equal(v2.config.custom_host, 'http://v2.test/v1');
      const v3 = await put(made.slug, { config: body('http://v3.test/v1'), name: 'Versioned again' });
      assert.equal(v3.version, 3);
      assert.equal(v3.name, 'Versioned again');
      assert.equal(v3.slug, made.slug, 'the slug stays');
      const current = await read(made.id);
      assert.equal(current.version_id, v3.version_id);
      assert.equal(current.config.custom_host, 'http://v3.test/v1');

      const all = await (await gw.call(`/configs/${made.slug}/versions`)).json();
      assert.equal(all.object, 'list');
      assert.deepEqual(
        all.data.map((v: Json) => [v.version, v.id, v.config.custom_host]),
        [
          [3, v3.version_id, 'http://v3.test/v1'],
          [2, v2.version_id, 'http://v2.test/v1'],
          [1, made.version_id, 'http://v1.test/v1'],
        ],
      );
      assert.equal(all.has_more, false);
      assert.equal(all.data[0].config_id, made.id);
      assert.equal(all.data[0].version_id, v3.version_id);
      const first = await (await gw.call(`/configs/${made.id}/versions?limit=2`)).json();
      assert.deepEqual([first.data.length, first.has_more, first.first_id, first.last_id], [2, true, v3.version_id, v2.version_id]);
      const rest = await (await gw.call(`/configs/${made.id}/versions?limit=2&after=${first.last_id}`)).json();
      assert.deepEqual([rest.data.map((v: Json) => v.version), rest.has_more], [[1], false]);

      const one = await (await gw.call(`/configs/${made.id}/versions/${v2.version_id}`)).json();
      assert.deepEqual(one, all.data[1]);
      assert.deepEqual(await (await gw.call(`/configs/${made.slug}/versions/1`)).json(), all.data[2]);
      await assertEnvelope(await gw.call(`/configs/${made.id}/versions/9`), 404);
      await assertEnvelope(await gw.call(`/configs/${made.id}/versions/00000000-0000-7000-8000-000000000000`), 404);
    });

    it('name, description and status change in place: no new version', async () => {
      const made = await create({ name: 'In place', config: body() });
      const updated = await put(made.id, { name: 'Renamed', description: 'now described', status: 'archived' });
      assert.deepEqual([updated.name, updated.description, updated.status, updated.version, updated.version_id], ['Renamed', 'now described', 'archived', 1, made.version_id]);
      assert.equal((await put(made.id, { status: 'active', description: null })).description, null);
      const versions = await (await gw.call(`/configs/${made.id}/versions`)).json();
      assert.equal(versions.data.length, 1);
    });

    it('an invalid new body is a 400 naming its path and leaves the config as it was', async () => {
      const made = await create({ name: 'Kept', config: body('http://kept.test/v1') });
      const e = await assertEnvelope(await gw.call(`/configs/${made.id}`, { method: 'PUT', body: { config: { ...body(), cb_config: { failure_threshold: 0, cooldown_interval: 30000 } } } }), 400);
      assert.equal(e.param, 'config.cb_config.failure_threshold');
      assert.equal((await assertEnvelope(await gw.call(`/configs/${made.id}`, { method: 'PUT', body: { status: 'gone' } }), 400)).param, 'status');
      assert.equal((await assertEnvelope(await gw.call(`/configs/${made.id}`, { method: 'PUT', body: { workspace_id: teamB.id } }), 400)).param, 'workspace_id');
      const after = await read(made.id);
      assert.deepEqual([after.version, after.config.custom_host], [1, 'http://kept.test/v1']);
    });

    it('one default per workspace: a new default takes the flag; archived configs are never the default', async () => {
      const first = await create({ name: 'Default one', config: body(), is_default: true });
      assert.equal((await read(first.id)).is_default, true);
      const second = await create({ name: 'Default two', config: body(), is_default: true });
      assert.equal((await read(second.id)).is_default, true);
      assert.equal((await read(first.id)).is_default, false, 'the flag moved');
      const theirs = await create({ name: 'Their default', config: body(), is_default: true }, as(keys.theirs));
      assert.equal((await read(second.id)).is_default, true, "another workspace's default is its own");
      assert.equal((await read(theirs.id)).is_default, true);

      assert.equal((await put(first.id, { is_default: true })).is_default, true);
      assert.equal((await read(second.id)).is_default, false);
      assert.equal((await put(first.id, { status: 'archived' })).is_default, false, 'archiving drops the flag');
      const e = await assertEnvelope(await gw.call(`/configs/${first.id}`, { method: 'PUT', body: { is_default: true } }), 400);
      assert.equal(e.param, 'is_default');
      await assertEnvelope(await gw.call(`/configs/${second.id}`, { method: 'PUT', body: { is_default: true, status: 'archived' } }), 400);
      assert.equal((await put(second.id, { is_default: false })).is_default, false);
    });

    it('deletes a config and its versions: then 404, and its slug is free again', async () => {
      const made = await create({ name: 'Doomed', slug: 'doomed', config: body() });
      await put(made.id, { config: body('http://2.test/v1') });
      const res = await gw.call(`/configs/${made.slug}`, { method: 'DELETE' });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { object: 'config', id: made.id, deleted: true });
      await assertEnvelope(await gw.call(`/configs/${made.id}`), 404);
      await assertEnvelope(await gw.call(`/configs/${made.id}/versions`), 404);
      await assertEnvelope(await gw.call(`/configs/${made.id}`, { method: 'DELETE' }), 404);
      assert.ok(!(await listIds('?limit=100')).includes(made.id));
      await create({ name: 'Reborn', slug: 'doomed', config: body() });
    });

    it("workspace keys: their own workspace only; another workspace's config is 404 to read, update, delete", async () => {
      const mine = await create({ name: 'Mine', config: body() }, as(keys.mine));
      assert.equal((await read(mine.id, as(keys.mine))).workspace_id, defaultWs.id);
      const theirs = await create({ name: 'Theirs', config: body() }, as(keys.theirs));
      assert.equal((await read(theirs.slug, as(keys.theirs))).workspace_id, teamB.id);
      const viaSlug = await create({ name: 'Theirs by slug', config: body(), workspace_id: 'team-b' }, as(keys.theirs));
      assert.equal((await read(viaSlug.id)).workspace_id, teamB.id);

      for (const ref of [theirs.id, theirs.slug]) {
        const e = await assertEnvelope(await gw.call(`/configs/${ref}`, { headers: as(keys.mine) }), 404);
        assert.equal(e.code, 'not_found');
        await assertEnvelope(await gw.call(`/configs/${ref}`, { method: 'PUT', body: { name: 'hijacked' }, headers: as(keys.mine) }), 404);
        await assertEnvelope(await gw.call(`/configs/${ref}/versions`, { headers: as(keys.mine) }), 404);
        await assertEnvelope(await gw.call(`/configs/${ref}/versions/1`, { headers: as(keys.mine) }), 404);
        await assertEnvelope(await gw.call(`/configs/${ref}`, { method: 'DELETE', headers: as(keys.mine) }), 404);
      }
      assert.equal((await read(theirs.id)).name, 'Theirs', 'untouched');

      const denied = await assertEnvelope(await gw.call('/configs', { body: { name: 'x', config: body(), workspace_id: teamB.id }, headers: as(keys.mine) }), 403);
      assert.equal(denied.param, 'workspace_id');
      await assertEnvelope(await gw.call('/configs', { body: { name: 'x', config: body(), workspace_id: 'team-b' }, headers: as(keys.mine) }), 403);

      const mineListed = await listIds('?limit=100', as(keys.mine));
      assert.ok(mineListed.includes(mine.id));
      assert.ok(!mineListed.includes(theirs.id));
      const theirsListed = await listIds('?limit=100', as(keys.theirs));
      assert.ok(theirsListed.includes(theirs.id) && theirsListed.includes(viaSlug.id));
      assert.ok(!theirsListed.includes(mine.id));
      await assertEnvelope(await gw.call(`/configs?workspace_id=${teamB.id}`, { headers: as(keys.mine) }), 403);
    });

    it('organisation keys list every workspace, or one named by workspace_id (id or slug); org service keys act anywhere', async () => {
      const a = await create({ name: 'Org A', config: body() });
      const b = await create({ name: 'Org B', config: body(), workspace_id: teamB.id }, as(keys.orgService));
      assert.equal((await read(b.id, as(keys.orgService))).workspace_id, teamB.id);
      const everything = await listIds('?limit=100');
      assert.ok(everything.includes(a.id) && everything.includes(b.id));
      for (const ref of [teamB.id, 'team-b']) {
        const onlyB = await listIds(`?limit=100&workspace_id=${ref}`);
        assert.ok(onlyB.includes(b.id) && !onlyB.includes(a.id));
      }
      await assertEnvelope(await gw.call('/configs?workspace_id=nowhere'), 404);
      await assertEnvelope(await gw.call('/configs', { body: { name: 'x', config: body(), workspace_id: 'nowhere' } }), 404);
      const archived = await (await gw.call('/workspaces', { body: { name: 'Shelved', slug: `shelved-${engine.name}` } })).json();
      assert.equal((await gw.call(`/workspaces/${archived.id}`, { method: 'PUT', body: { status: 'archived' } })).status, 200);
      const shelved = await assertEnvelope(await gw.call('/configs', { body: { name: 'x', config: body(), workspace_id: archived.id } }), 409);
      assert.equal(shelved.param, 'workspace_id', 'an archived workspace takes no new configs');
    });

    it('list items: newest first, the summary without the body, paged with limit and after', async () => {
      const ws = await (await gw.call('/workspaces', { body: { name: 'Paging', slug: `paging-${engine.name}` } })).json();
      const made: string[] = [];
      for (let i = 0; i < 3; i++) made.push((await create({ name: `P${i}`, config: body(), workspace_id: ws.id })).id);
      const page1 = await (await gw.call(`/configs?workspace_id=${ws.id}&limit=2`)).json();
      assert.deepEqual(page1.data.map((c: Json) => c.id), [made[2], made[1]]);
      assert.deepEqual([page1.has_more, page1.first_id, page1.last_id], [true, made[2], made[1]]);
      assert.equal(page1.data[0].config, undefined);
      assert.deepEqual(
        Object.keys(page1.data[0]).sort(),
        ['created_at', 'description', 'id', 'is_default', 'last_updated_at', 'name', 'object', 'slug', 'status', 'version', 'version_id', 'workspace_id'],
      );
      const page2 = await (await gw.call(`/configs?workspace_id=${ws.id}&limit=2&after=${page1.last_id}`)).json();
      assert.deepEqual([page2.data.map((c: Json) => c.id), page2.has_more], [[made[0]], false]);
      assert.equal((await assertEnvelope(await gw.call('/configs?limit=0'), 400)).param, 'limit');
    });

    it('each action needs its scope: 403 naming it', async () => {
      const made = await create({ name: 'Scoped', config: body() });
      const ro = as(keys.readOnly);
      assert.equal((await read(made.id, ro)).id, made.id, 'configs.read suffices to read');
      const cases: [string, string, Json | undefined, string][] = [
        ['POST', '/configs', { name: 'x', config: body() }, 'configs.create'],
        ['GET', '/configs', undefined, 'configs.list'],
        ['PUT', `/configs/${made.id}`, { name: 'x' }, 'configs.update'],
        ['DELETE', `/configs/${made.id}`, undefined, 'configs.delete'],
      ];
      for (const [method, path, input, scope] of cases) {
        const e = await assertEnvelope(await gw.call(path, { method, body: input, headers: ro }), 403);
        assert.deepEqual([e.code, e.param], ['missing_scope', scope], `${method} ${path}`);
      }
      const none = keyRecord({ id: `key-none-${engine.name}`, workspaceId: defaultWs.id, scopes: ['completions.write'] });
      await gw.store.apiKeys.insert(none);
      const e = await assertEnvelope(await gw.call(`/configs/${made.id}`, { headers: as(`secret-${none.id}`) }), 403);
      assert.equal(e.param, 'configs.read');
      await assertEnvelope(await gw.call(`/configs/${made.id}/versions`, { headers: as(`secret-${none.id}`) }), 403);
      await assertEnvelope(await gw.call('/configs', { headers: { 'x-gateway-api-key': 'nobody' } }), 401);
      assert.equal((await read(made.id)).name, 'Scoped');
    });

    it('a restart on the same data keeps configs, their versions and the default flag', async () => {
      const made = await create({ name: 'Durable', slug: `durable-${engine.name}`, config: body('http://one.test/v1'), workspace_id: teamB.id, is_default: true });
      await put(made.id, { config: body('http://two.test/v1') });
      const bySlug = `${made.slug}?workspace_id=${teamB.id}`;
      const before = await read(bySlug);
      const versionsBefore = await (await gw.call(`/configs/${made.id}/versions`)).json();
      await gw.restart();
      assert.deepEqual(await read(bySlug), before);
      assert.deepEqual(await (await gw.call(`/configs/${made.id}/versions`)).json(), versionsBefore);
      assert.deepEqual([before.version, before.is_default, before.workspace_id], [2, true, teamB.id]);
    });
  });
}
