// Black-box tests of /v1/guardrails on both engines: create, read by id and slug, update
// (new checks or actions are a new version), delete; the list's current_page, page_size
// and ids; the refusals (400 naming the field with nothing stored, 403 scope or workspace,
// 404 another workspace's guardrail, 409 slug taken); organisation guardrails; and the
// default-guardrail settings of the organisation and of a workspace.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engines } from './support/engines.js';
import { as, createWorkspace, expect, expectError, seedKey, type Json } from './support/identity.js';
import { useGateway } from './support/use-gateway.js';

const ALL_SCOPES = ['guardrails.create', 'guardrails.read', 'guardrails.list', 'guardrails.update', 'guardrails.delete'];

const REGEX = { id: 'default.regexMatch', parameters: { rule: '\\d{4}', not: true } };
const WORDS = { id: 'default.wordCount', parameters: { minWords: 1, maxWords: 500 } };

/** A valid create body. */
const guardrail = (name: string, extra: Json = {}): Json => ({ name, checks: [REGEX], actions: { deny: true, on_fail: { feedback: { value: -1, weight: 1 } } }, ...extra });

for (const engine of engines()) {
  describe(`guardrails API (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let defaultWs: Json;
    let teamA: Json;
    let teamB: Json;
    /** Secrets: workspace keys of team A and team B with every guardrails scope, and of team A with only read and list. */
    const keys = { a: '', b: '', aReadOnly: '' };

    before(async () => {
      defaultWs = await gw.store.workspaces.default();
      teamA = await createWorkspace(gw, 'Team A');
      teamB = await createWorkspace(gw, 'Team B');
      keys.a = await seedKey(gw, { workspaceId: teamA.id, scopes: ALL_SCOPES });
      keys.b = await seedKey(gw, { workspaceId: teamB.id, scopes: ALL_SCOPES });
      keys.aReadOnly = await seedKey(gw, { workspaceId: teamA.id, scopes: ['guardrails.read', 'guardrails.list'] });
    });

    const create = (body: Json, headers?: Record<string, string>) => expect(gw.call('/guardrails', { body, headers }), 201);
    const read = (ref: string, headers?: Record<string, string>) => expect(gw.call(`/guardrails/${ref}`, { headers }), 200);
    const put = (ref: string, body: Json, headers?: Record<string, string>) => gw.call(`/guardrails/${ref}`, { method: 'PUT', body, headers });
    const list = (query: string, headers?: Record<string, string>) => expect(gw.call(`/guardrails?${query}`, { headers }), 200);
    const total = async (): Promise<number> => (await list('')).total;

    it('creates a guardrail: {id, slug, version_id}; reads it by id and by slug with its checks and actions', async () => {
      const made = await create(guardrail('No card numbers', { checks: [REGEX, WORDS] }));
      assert.deepEqual(Object.keys(made).sort(), ['id', 'object', 'slug', 'version_id']);
      assert.equal(made.object, 'guardrail');
      assert.match(made.slug, /^pg-no-card-numbers-[0-9a-f]{6}$/);
      const byId = await read(made.id);
      assert.deepEqual(await read(made.slug), byId);
      assert.deepEqual(byId, {
        object: 'guardrail',
        id: made.id,
        slug: made.slug,
        name: 'No card numbers',
        workspace_id: defaultWs.id,
        status: 'active',
        version: 1,
        version_id: made.version_id,
        checks: [REGEX, WORDS],
        actions: { deny: true, on_fail: { feedback: { value: -1, weight: 1 } } },
        created_at: byId.created_at,
        last_updated_at: byId.created_at,
      });
      assert.ok(Math.abs(byId.created_at - Date.now() / 1000) < 60, 'Unix seconds');
      const plain = await create({ name: 'No actions', checks: [WORDS] });
      assert.deepEqual((await read(plain.id)).actions, {}, 'actions default to none');
    });

    it('refuses bad bodies with a 400 naming the field, and stores nothing', async () => {
      const count = await total();
      const refused = async (body: unknown, param: string) => expectError(gw.call('/guardrails', { body }), 400, param);
      await refused({ checks: [REGEX] }, 'name');
      await refused({ name: 'x' }, 'checks');
      await refused({ name: 'x', checks: [] }, 'checks');
      await refused({ name: 'x', checks: 'default.regexMatch' }, 'checks');
      await refused({ name: 'x', checks: [REGEX, { id: 'regexMatch', parameters: {} }] }, 'checks[1].id');
      await refused({ name: 'x', checks: [{ id: 'default.', parameters: {} }] }, 'checks[0].id');
      await refused({ name: 'x', checks: [{ id: 'default.regex match', parameters: {} }] }, 'checks[0].id');
      await refused({ name: 'x', checks: [{ id: 7, parameters: {} }] }, 'checks[0].id');
      await refused({ name: 'x', checks: [{ id: 'default.notNull' }] }, 'checks[0].parameters');
      await refused({ name: 'x', checks: [{ id: 'default.notNull', parameters: [] }] }, 'checks[0].parameters');
      await refused({ name: 'x', checks: [{ ...REGEX, colour: 'red' }] }, 'checks[0].colour');
      await refused({ name: 'x', checks: ['default.notNull'] }, 'checks[0]');
      await refused({ name: 'x', checks: Array.from({ length: 33 }, () => WORDS) }, 'checks');
      // Judged by the checks' registry, as a config's checks are.
      await refused({ name: 'x', checks: [WORDS, { id: 'default.noSuchCheck', parameters: {} }] }, 'checks[1].id');
      await refused({ name: 'x', checks: [{ id: 'default.regexMatch', parameters: { rule: '(a)\\1' } }] }, 'checks[0].parameters.rule');
      await refused({ name: 'x', checks: [{ id: 'default.wordCount', parameters: { minWords: 'five' } }] }, 'checks[0].parameters.minWords');
      await refused({ name: 'x', checks: [{ id: 'default.contains', parameters: { words: ['a'], operator: 'some' } }] }, 'checks[0].parameters.operator');
      await refused(guardrail('x', { actions: { deny: 'yes' } }), 'actions.deny');
      await refused(guardrail('x', { actions: { on_fail: { feedback: { value: 'bad' } } } }), 'actions.on_fail.feedback.value');
      await refused(guardrail('x', { actions: { onFail: 'block' } }), 'actions.onFail');
      await refused(guardrail('x', { slug: 'Bad Slug' }), 'slug');
      await refused(guardrail('x', { slug: '01900000-0000-7000-8000-000000000000' }), 'slug');
      await refused(guardrail('x', { colour: 'red' }), 'colour');
      await refused(guardrail('x', { workspace_id: teamA.id, organisation_id: 'org' }), 'organisation_id');
      const e = await expectError(gw.call('/guardrails', { body: { name: 'x', checks: [{ id: 'regexMatch', parameters: {} }] } }), 400, 'checks[0].id');
      assert.match(e.error.message, /^checks\[0\]\.id: must be a check id: <provider>\.<check>/);
      assert.equal(await total(), count);
    });

    it('checks or actions changed make a new version; name and status change in place; a bad update changes nothing', async () => {
      const made = await create(guardrail('Versioned'));
      let g = await expect(put(made.id, { name: 'Renamed' }), 200);
      assert.deepEqual([g.name, g.version, g.version_id], ['Renamed', 1, made.version_id]);
      g = await expect(put(made.slug, { checks: [WORDS] }), 200);
      assert.deepEqual([g.version, g.checks, g.actions.deny], [2, [WORDS], true]);
      assert.notEqual(g.version_id, made.version_id);
      const v2 = g.version_id;
      g = await expect(put(made.id, { actions: { deny: false, async: true } }), 200);
      assert.deepEqual([g.version, g.checks, g.actions], [3, [WORDS], { deny: false, async: true }]);
      assert.notEqual(g.version_id, v2);
      g = await expect(put(made.id, { status: 'archived' }), 200);
      assert.deepEqual([g.status, g.version], ['archived', 3]);

      await expectError(put(made.id, { checks: [{ id: 'nope', parameters: {} }] }), 400, 'checks[0].id');
      await expectError(put(made.id, { checks: [WORDS, { id: 'default.wordCount', parameters: { maxWords: -1 } }] }), 400, 'checks[1].parameters.maxWords');
      await expectError(put(made.id, { checks: [] }), 400, 'checks');
      await expectError(put(made.id, { status: 'gone' }), 400, 'status');
      await expectError(put(made.id, { slug: 'renamed' }), 400, 'slug');
      await expectError(put(made.id, { workspace_id: teamA.id }), 400, 'workspace_id');
      assert.deepEqual(await read(made.id), g);
    });

    it('deletes by id or slug; then it is 404', async () => {
      const made = await create(guardrail('Short-lived'));
      assert.deepEqual(await expect(gw.call(`/guardrails/${made.slug}`, { method: 'DELETE' }), 200), { object: 'guardrail', id: made.id, deleted: true });
      await expectError(gw.call(`/guardrails/${made.id}`), 404);
      await expectError(gw.call(`/guardrails/${made.id}`, { method: 'DELETE' }), 404);
      await expectError(put(made.id, { name: 'back' }), 404);
    });

    it('lists newest first, paged by current_page (0-based) and page_size, with the total', async () => {
      const ws = await createWorkspace(gw, 'Paging');
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await create(guardrail(`page ${i}`, { workspace_id: ws.id }))).id);
      const newest = [...made].reverse();
      const pages: Json[] = [];
      for (let p = 0; p < 3; p++) pages.push(await list(`workspace_id=${ws.id}&page_size=2&current_page=${p}`));
      assert.deepEqual(
        pages.map((p) => [p.object, p.total, p.has_more, p.data.map((g: Json) => g.id)]),
        [
          ['list', 5, true, newest.slice(0, 2)],
          ['list', 5, true, newest.slice(2, 4)],
          ['list', 5, false, newest.slice(4)],
        ],
      );
      const first = pages[0].data[0];
      assert.deepEqual(Object.keys(first).sort(), ['created_at', 'id', 'last_updated_at', 'name', 'object', 'slug', 'status', 'version', 'version_id', 'workspace_id']);
      assert.deepEqual((await list(`workspace_id=${ws.slug}&page_size=2&current_page=3`)).data, []);
      const all = await list(`workspace_id=${ws.id}`);
      assert.deepEqual([all.data.length, all.has_more], [5, false], 'page_size defaults to 20, current_page to 0');

      for (const [query, param] of [
        ['current_page=-1', 'current_page'],
        ['current_page=x', 'current_page'],
        ['current_page=1000000', 'current_page'],
        ['page_size=0', 'page_size'],
        ['page_size=101', 'page_size'],
        ['page_size=2.5', 'page_size'],
      ]) {
        await expectError(gw.call(`/guardrails?${query}`), 400, param);
      }
    });

    it('ids filters the list to those guardrails (comma-separated, spaces and repeats allowed); unknown ids match nothing', async () => {
      const ws = await createWorkspace(gw, 'Ids');
      const [x, y, z] = [await create(guardrail('x', { workspace_id: ws.id })), await create(guardrail('y', { workspace_id: ws.id })), await create(guardrail('z', { workspace_id: ws.id }))];
      const picked = await list(`ids=${x.id},%20${z.id},${x.id},00000000-0000-7000-8000-000000000000`);
      assert.deepEqual([picked.total, picked.data.map((g: Json) => g.id)], [2, [z.id, x.id]]);
      const paged = await list(`ids=${x.id},${y.id},${z.id}&page_size=1&current_page=1`);
      assert.deepEqual([paged.total, paged.has_more, paged.data.map((g: Json) => g.id)], [3, true, [y.id]]);
      // Another workspace's id is filtered out for its keys, like any guardrail they cannot see.
      assert.deepEqual((await list(`ids=${x.id}`, as(keys.a))).data, []);
      await expectError(gw.call('/guardrails?ids='), 400, 'ids');
      await expectError(gw.call(`/guardrails?ids=${x.id},,${y.id}`), 400, 'ids');
      const many = Array.from({ length: 101 }, (_, i) => `id-${i}`).join(',');
      await expectError(gw.call(`/guardrails?ids=${many}`), 400, 'ids');
    });

    it("workspace keys see only their own workspace's guardrails: another's is 404, naming it is 403", async () => {
      const mine = await create(guardrail('Mine', { slug: 'shared-slug' }), as(keys.a));
      const theirs = await create(guardrail('Theirs', { slug: 'shared-slug' }), as(keys.b));
      assert.equal((await read(mine.id)).workspace_id, teamA.id, 'a workspace key acts in its own workspace');
      assert.equal((await read('shared-slug', as(keys.a))).id, mine.id, 'a slug names the guardrail of the caller’s workspace');
      assert.equal((await read('shared-slug', as(keys.b))).id, theirs.id);
      assert.equal((await read(`shared-slug?workspace_id=${teamB.slug}`)).id, theirs.id, 'an organisation key names the workspace');

      await expectError(gw.call(`/guardrails/${theirs.id}`, { headers: as(keys.a) }), 404);
      await expectError(put(theirs.id, { name: 'taken over' }, as(keys.a)), 404);
      await expectError(gw.call(`/guardrails/${theirs.id}`, { method: 'DELETE', headers: as(keys.a) }), 404);
      await expectError(gw.call(`/guardrails/shared-slug?workspace_id=${teamB.id}`, { headers: as(keys.a) }), 403);
      await expectError(gw.call('/guardrails', { body: guardrail('Elsewhere', { workspace_id: teamB.id }), headers: as(keys.a) }), 403, 'workspace_id');
      await expectError(gw.call(`/guardrails?workspace_id=${teamB.id}`, { headers: as(keys.a) }), 403);
      assert.equal((await read(theirs.id)).name, 'Theirs');

      const listed = (await list('page_size=100', as(keys.a))).data.map((g: Json) => g.workspace_id);
      assert.ok(listed.length > 0 && listed.every((w: string | null) => w === teamA.id || w === null), JSON.stringify(listed));

      const again = await expectError(gw.call('/guardrails', { body: guardrail('Again', { slug: 'shared-slug' }), headers: as(keys.a) }), 409, 'slug');
      assert.match(again.error.message, /in this workspace/);
    });

    it('scopes: each route needs its own; a key holding read and list only reads', async () => {
      const made = await create(guardrail('Scoped'), as(keys.a));
      await read(made.id, as(keys.aReadOnly));
      await list('', as(keys.aReadOnly));
      await expectError(gw.call('/guardrails', { body: guardrail('no'), headers: as(keys.aReadOnly) }), 403, 'guardrails.create');
      await expectError(put(made.id, { name: 'no' }, as(keys.aReadOnly)), 403, 'guardrails.update');
      await expectError(gw.call(`/guardrails/${made.id}`, { method: 'DELETE', headers: as(keys.aReadOnly) }), 403, 'guardrails.delete');
      const none = await seedKey(gw, { workspaceId: teamA.id, scopes: ['configs.read'] });
      await expectError(gw.call(`/guardrails/${made.id}`, { headers: as(none) }), 403, 'guardrails.read');
      await expectError(gw.call('/guardrails', { headers: as(none) }), 403, 'guardrails.list');
    });

    it("organisation guardrails: made by organisation keys with organisation_id, read by every workspace's keys, changed only by organisation keys", async () => {
      const org = await create(guardrail('Org-wide', { organisation_id: 'my-org', slug: 'org-wide' }));
      const viewed = await read(org.id, as(keys.a));
      assert.equal(viewed.workspace_id, null);
      assert.equal((await read('org-wide', as(keys.b))).id, org.id, "a slug names the organisation's guardrail too");
      assert.ok((await list('page_size=100', as(keys.b))).data.some((g: Json) => g.id === org.id), "the organisation's are in every workspace's list");
      assert.ok((await list(`page_size=100&ids=${org.id}&workspace_id=${teamB.id}`)).total === 1);

      await expectError(put(org.id, { name: 'mine now' }, as(keys.a)), 403);
      await expectError(gw.call(`/guardrails/${org.id}`, { method: 'DELETE', headers: as(keys.a) }), 403);
      await expectError(gw.call('/guardrails', { body: guardrail('Not mine', { organisation_id: 'my-org' }), headers: as(keys.a) }), 403);
      assert.equal((await expect(put(org.id, { name: 'Org-wide, renamed' }), 200)).name, 'Org-wide, renamed');

      // A workspace's own slug wins over the organisation's of the same name, within that workspace.
      const local = await create(guardrail('Local', { slug: 'org-wide' }), as(keys.a));
      assert.equal((await read('org-wide', as(keys.a))).id, local.id);
      assert.equal((await read('org-wide', as(keys.b))).id, org.id);
      const taken = await expectError(gw.call('/guardrails', { body: guardrail('Twice', { organisation_id: 'my-org', slug: 'org-wide' }) }), 409, 'slug');
      assert.match(taken.error.message, /among the organisation's/);
    });

    it('default guardrails: the organisation names its own; a workspace adds its own or the organisation’s; each must exist and be active', async () => {
      const orgInput = await create(guardrail('Org input', { organisation_id: 'my-org', slug: 'org-input' }));
      const orgOutput = await create(guardrail('Org output', { organisation_id: 'my-org' }));
      const wsOwn = await create(guardrail('A output', { slug: 'a-output' }), as(keys.a));
      const bOwn = await create(guardrail('B only'), as(keys.b));
      const settings = (body: Json) => gw.call('/organisation/settings', { method: 'PUT', body });
      const wsSettings = (ws: string, value: Json) => gw.call(`/workspaces/${ws}`, { method: 'PUT', body: { settings: value } });

      const org = await expect(settings({ default_input_guardrails: ['org-input', orgInput.id], default_output_guardrails: [orgOutput.id] }), 200);
      assert.deepEqual([org.default_input_guardrails, org.default_output_guardrails], [[orgInput.id], [orgOutput.id]], 'stored by id, once');

      const before = await expect(gw.call('/organisation/settings'), 200);
      await expectError(settings({ default_input_guardrails: [wsOwn.id] }), 400, 'default_input_guardrails[0]');
      await expectError(settings({ default_output_guardrails: [orgOutput.id, 'no-such-guardrail'] }), 400, 'default_output_guardrails[1]');
      const inputOnly = await create(guardrail('Needs team', { organisation_id: 'my-org', checks: [{ id: 'default.requiredMetadataKeys', parameters: { metadataKeys: ['team'] } }] }));
      const side = await expectError(settings({ default_output_guardrails: [orgOutput.id, inputOnly.id] }), 400, 'default_output_guardrails[1]');
      assert.match(side.error.message, /does not run after the request/);
      await expectError(settings({ default_input_guardrails: 'org-input' }), 400, 'default_input_guardrails');
      await expectError(settings({ default_input_guardrails: Array.from({ length: 17 }, () => 'org-input') }), 400, 'default_input_guardrails');
      assert.deepEqual(await expect(gw.call('/organisation/settings'), 200), before);

      await expect(wsSettings(teamA.id, { default_output_guardrails: ['a-output', orgInput.id] }), 200);
      const eff = await expect(gw.call(`/workspaces/${teamA.id}/settings`), 200);
      assert.deepEqual(eff.default_input_guardrails, [orgInput.id]);
      assert.deepEqual(eff.default_output_guardrails, [orgOutput.id, wsOwn.id, orgInput.id], "the organisation's first, then the workspace's");
      assert.deepEqual(eff.overrides, { default_output_guardrails: [wsOwn.id, orgInput.id] });
      assert.deepEqual((await expect(gw.call(`/workspaces/${teamB.id}/settings`), 200)).default_output_guardrails, [orgOutput.id]);
      const refused = gw.call(`/workspaces/${teamA.id}`, { method: 'PUT', body: { description: 'not saved', settings: { default_input_guardrails: [bOwn.id] } } });
      await expectError(refused, 400, 'settings.default_input_guardrails[0]');
      const unchanged = await expect(gw.call(`/workspaces/${teamA.id}/settings`), 200);
      assert.deepEqual(unchanged, eff, "another workspace's guardrail is no default here, and nothing of the PUT was saved");
      assert.notEqual((await expect(gw.call(`/workspaces/${teamA.id}`), 200)).description, 'not saved');

      // A default is neither deleted nor archived while it is one.
      const deleting = await expectError(gw.call(`/guardrails/${wsOwn.id}`, { method: 'DELETE', headers: as(keys.a) }), 409);
      assert.match(deleting.error.message, new RegExp(`workspace '${teamA.slug}'`));
      const archiving = await expectError(put(orgInput.id, { status: 'archived' }), 409);
      assert.match(archiving.error.message, /organisation, workspace/);
      assert.equal((await read(orgInput.id)).status, 'active');

      await expect(wsSettings(teamA.id, { default_output_guardrails: null }), 200);
      await expect(gw.call(`/guardrails/${wsOwn.id}`, { method: 'DELETE', headers: as(keys.a) }), 200);
      await expect(settings({ default_input_guardrails: [] }), 200);
      await expect(put(orgInput.id, { status: 'archived' }), 200);
      await expectError(settings({ default_input_guardrails: ['org-input'] }), 400, 'default_input_guardrails[0]');
      await expect(settings({ default_output_guardrails: [] }), 200);
    });

    it('a workspace holding guardrails is not deleted (409)', async () => {
      const ws = await createWorkspace(gw, 'Holds one');
      await create(guardrail('Kept', { workspace_id: ws.id }));
      const e = await expectError(gw.call(`/workspaces/${ws.id}`, { method: 'DELETE' }), 409);
      assert.match(e.error.message, /guardrails/);
    });

    it('guardrails survive a restart on the same data', async () => {
      const made = await create(guardrail('Durable', { checks: [REGEX, WORDS] }));
      const seen = await read(made.id);
      await gw.restart();
      assert.deepEqual(await read(made.id), seen);
    });
  });
}
