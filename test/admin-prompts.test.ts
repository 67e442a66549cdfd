// Black-box tests of /v1/prompts and /v1/prompts/partials on both engines: create, read by
// id, slug and slug@version, list (paged, filtered), update (a new immutable version; `patch`
// takes missing version fields from the latest), makeDefault, labels, delete; partials
// included in renders (default and pinned versions, missing, cycles); POST /prompts/:id/render;
// and access control: scopes, workspace isolation, per-prompt roles, membersWritePrompts.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { engines } from './support/engines.js';
import { as, createWorkspace, email, expect, expectError, seedKey, type Json } from './support/identity.js';
import { useGateway } from './support/use-gateway.js';

const SCOPES = ['prompts.create', 'prompts.read', 'prompts.list', 'prompts.update', 'prompts.delete', 'prompts.render'];

const TEMPLATE = JSON.stringify([
  { role: 'system', content: 'You are {{persona}}. {{>house-style}}' },
  { role: 'user', content: '{{question}}' },
]);

for (const engine of engines()) {
  describe(`prompts API (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let teamA: Json;
    let teamB: Json;
    const keys = { a: '', b: '', aReader: '' };

    before(async () => {
      teamA = await createWorkspace(gw, 'Prompt team A');
      teamB = await createWorkspace(gw, 'Prompt team B');
      keys.a = await seedKey(gw, { workspaceId: teamA.id, scopes: SCOPES });
      keys.b = await seedKey(gw, { workspaceId: teamB.id, scopes: SCOPES });
      keys.aReader = await seedKey(gw, { workspaceId: teamA.id, scopes: ['prompts.read', 'prompts.list'] });
      await expect(gw.call('/prompts/partials', { headers: as(keys.a), body: { name: 'House style', slug: 'house-style', string: 'Be brief.' } }), 201);
    });

    const call = (path: string, key: string, init: { method?: string; body?: unknown } = {}) => gw.call(path, { ...init, headers: as(key) });
    const create = (body: Json, key = keys.a) => expect(call('/prompts', key, { body }), 201);
    const read = (ref: string, key = keys.a) => expect(call(`/prompts/${ref}`, key), 200);
    const put = (ref: string, body: Json, key = keys.a) => call(`/prompts/${ref}`, key, { method: 'PUT', body });
    const render = (ref: string, body: Json, key = keys.a) => call(`/prompts/${ref}/render`, key, { body });

    it('creates a prompt: {id, slug, version_id}; reads it by id and slug with version 1 as its default', async () => {
      const made = await create({ name: 'Support answer', string: TEMPLATE, parameters: { temperature: 0.3 }, model: 'gpt-4o-mini', version_description: 'first' });
      assert.deepEqual(Object.keys(made).sort(), ['id', 'object', 'slug', 'version_id']);
      assert.match(made.slug, /^pp-support-answer-[0-9a-f]{6}$/);
      const got = await read(made.id);
      assert.deepEqual(await read(made.slug), got);
      assert.equal(got.object, 'prompt');
      assert.equal(got.workspace_id, teamA.id);
      assert.equal(got.version, 1);
      assert.equal(got.version_id, made.version_id);
      assert.equal(got.latest_version, 1);
      assert.equal(got.string, TEMPLATE);
      assert.deepEqual(got.parameters, { temperature: 0.3 });
      assert.equal(got.model, 'gpt-4o-mini');
      assert.equal(got.version_description, 'first');
      assert.deepEqual(got.labels, {});
    });

    it('refuses bad bodies with a 400 naming the field, and stores nothing', async () => {
      const before = (await expect(call('/prompts?limit=100', keys.a), 200)).data.length;
      await expectError(call('/prompts', keys.a, { body: { string: 'x' } }), 400, 'name');
      await expectError(call('/prompts', keys.a, { body: { name: 'x' } }), 400, 'string');
      await expectError(call('/prompts', keys.a, { body: { name: 'x', string: '{{#open}}' } }), 400, 'string');
      await expectError(call('/prompts', keys.a, { body: { name: 'x', string: 'x', parameters: [] } }), 400, 'parameters');
      await expectError(call('/prompts', keys.a, { body: { name: 'x', string: 'x', access: { run: 'owner' } } }), 400, 'access.run');
      await expectError(call('/prompts', keys.a, { body: { name: 'x', string: 'x', virtual_key: 'no-such-key' } }), 400, 'virtual_key');
      await expectError(call('/prompts', keys.a, { body: { name: 'x', string: 'x', config_id: 'no-such-config' } }), 400, 'config_id');
      await expectError(call('/prompts', keys.a, { body: { name: 'x', string: 'x', slug: 'partials' } }), 400, 'slug');
      await expectError(call('/prompts/partials', keys.a, { body: { name: 'x', string: 'x', model: 'm' } }), 400);
      assert.equal((await expect(call('/prompts?limit=100', keys.a), 200)).data.length, before);
      await create({ name: 'taken', slug: 'taken-slug', string: 'x' });
      await expectError(call('/prompts', keys.a, { body: { name: 'again', slug: 'taken-slug', string: 'y' } }), 409, 'slug');
    });

    it('PUT makes an immutable version: replaced fields without patch, the latest version’s with patch: true; makeDefault publishes it', async () => {
      const p = await create({ name: 'versions', slug: 'versioned', string: 'v1 {{x}}', parameters: { temperature: 0.1 }, model: 'm1', metadata: { team: 'a' } });
      // Without patch: fields left out are replaced (empty), and string is needed.
      await expectError(put(p.id, { model: 'm2' }), 400, 'string');
      const v2 = await expect(put(p.id, { string: 'v2 {{x}}' }), 200);
      assert.equal(v2.object, 'prompt.version');
      assert.equal(v2.version, 2);
      assert.deepEqual([v2.parameters, v2.model, v2.metadata], [{}, null, null]);
      // With patch: fields left out come from the latest version (v2), not the default (v1).
      const v3 = await expect(put(p.id, { patch: true, parameters: { temperature: 0.7 }, version_description: 'warmer' }), 200);
      assert.deepEqual([v3.version, v3.string, v3.parameters, v3.model, v3.version_description], [3, 'v2 {{x}}', { temperature: 0.7 }, null, 'warmer']);
      const v4 = await expect(put(p.id, { patch: true, model: 'm4' }), 200);
      assert.deepEqual([v4.string, v4.parameters, v4.model], ['v2 {{x}}', { temperature: 0.7 }, 'm4']);
      // New versions are drafts: the default stays version 1 until published.
      let got = await read('versioned');
      assert.deepEqual([got.version, got.string, got.latest_version], [1, 'v1 {{x}}', 4]);
      // Versions stay as they were made.
      const old = await expect(call(`/prompts/${p.id}/versions/1`, keys.a), 200);
      assert.deepEqual([old.string, old.parameters, old.model, old.metadata], ['v1 {{x}}', { temperature: 0.1 }, 'm1', { team: 'a' }]);
      const listed = await expect(call(`/prompts/${p.id}/versions?limit=2`, keys.a), 200);
      assert.deepEqual(listed.data.map((v: Json) => v.version), [4, 3]);
      assert.equal(listed.has_more, true);
      const rest = await expect(call(`/prompts/${p.id}/versions?limit=2&after=${listed.last_id}`, keys.a), 200);
      assert.deepEqual(rest.data.map((v: Json) => v.version), [2, 1]);
      await expect(call(`/prompts/${p.id}/makeDefault`, keys.a, { method: 'PUT', body: { version: 3 } }), 200);
      got = await read('versioned');
      assert.deepEqual([got.version, got.version_id, got.string], [3, v3.id, 'v2 {{x}}']);
      await expectError(call(`/prompts/${p.id}/makeDefault`, keys.a, { method: 'PUT', body: { version: 9 } }), 404, 'version');
      // A change of name alone makes no version.
      const renamed = await expect(put(p.id, { name: 'renamed' }), 200);
      assert.deepEqual([renamed.object, renamed.name, renamed.latest_version], ['prompt', 'renamed', 4]);
      // Reads by slug@version, slug@latest.
      assert.equal((await read('versioned@2')).string, 'v2 {{x}}');
      assert.equal((await read('versioned@latest')).model, 'm4');
      await expectError(call('/prompts/versioned@7', keys.a), 404);
    });

    it('labels: production, staging and custom labels name versions for reads and renders; a number or latest is no label', async () => {
      const p = await create({ name: 'labelled', slug: 'labelled', string: 'one {{x}}' });
      await expect(put(p.id, { string: 'two {{x}}' }), 200);
      await expect(call(`/prompts/${p.id}/labels/production`, keys.a, { method: 'PUT', body: { version: 1 } }), 200);
      await expect(call(`/prompts/${p.id}/labels/canary-eu`, keys.a, { method: 'PUT', body: { version: 2 } }), 200);
      const got = await read(p.id);
      assert.deepEqual(Object.keys(got.labels), ['canary-eu', 'production']);
      assert.equal((await read('labelled@canary-eu')).string, 'two {{x}}');
      const rendered = await expect(render('labelled@production', { variables: { x: 'a' } }), 200);
      assert.deepEqual(rendered.data.messages, [{ role: 'user', content: 'one a' }]);
      // Moved, then taken off.
      await expect(call(`/prompts/${p.id}/labels/production`, keys.a, { method: 'PUT', body: { version: 2 } }), 200);
      assert.equal((await read('labelled@production')).string, 'two {{x}}');
      await expect(call(`/prompts/${p.id}/labels/production`, keys.a, { method: 'DELETE' }), 200);
      await expectError(call('/prompts/labelled@production', keys.a), 404);
      await expectError(call(`/prompts/${p.id}/labels/production`, keys.a, { method: 'DELETE' }), 404);
      await expectError(call(`/prompts/${p.id}/labels/latest`, keys.a, { method: 'PUT', body: { version: 1 } }), 400, 'label');
      await expectError(call(`/prompts/${p.id}/labels/Bad Label`, keys.a, { method: 'PUT', body: { version: 1 } }), 400, 'label');
    });

    it('lists page newest first, filtered by workspace, search and status; a workspace key sees its own only', async () => {
      for (const n of ['alpha one', 'alpha two', 'beta']) await create({ name: `list ${n}`, string: 'x' });
      const alpha = await expect(call('/prompts?search=list%20alpha', keys.a), 200);
      assert.deepEqual(alpha.data.map((p: Json) => p.name), ['list alpha two', 'list alpha one']);
      const page = await expect(call('/prompts?search=list&limit=2', keys.a), 200);
      assert.equal(page.has_more, true);
      const next = await expect(call(`/prompts?search=list&limit=2&after=${page.last_id}`, keys.a), 200);
      assert.deepEqual(next.data.map((p: Json) => p.name), ['list alpha one']);
      const beta = page.data[0];
      await expect(put(beta.id, { status: 'archived' }), 200);
      assert.deepEqual((await expect(call('/prompts?search=list&status=archived', keys.a), 200)).data.map((p: Json) => p.id), [beta.id]);
      await expectError(call('/prompts?status=gone', keys.a), 400, 'status');
      // Wildcards in the search are text.
      assert.deepEqual((await expect(call('/prompts?search=%25', keys.a), 200)).data, []);
      assert.equal((await expect(call('/prompts?search=list', keys.b), 200)).data.length, 0, "another workspace's prompts are not listed");
      await expectError(call(`/prompts?workspace_id=${teamA.id}`, keys.b), 403);
      const orgWide = await expect(gw.call(`/prompts?workspace_id=${teamA.id}&search=list`), 200);
      assert.equal(orgWide.data.length, 3);
    });

    it("render answers {success, data}: the version's parameters, root hyperparameters over them, max_tokens as max_completion_tokens", async () => {
      const p = await create({ name: 'render me', string: TEMPLATE, parameters: { temperature: 0.3, max_tokens: 50 }, model: 'gpt-4o-mini' });
      const r = await expect(render(p.id, { variables: { persona: 'a "helper"', question: 'Why?\n' }, temperature: 1, top_p: 0.5, stream: true }), 200);
      assert.deepEqual(r, {
        success: true,
        data: {
          temperature: 1,
          max_completion_tokens: 50,
          model: 'gpt-4o-mini',
          top_p: 0.5,
          stream: true,
          messages: [
            { role: 'system', content: 'You are a "helper". Be brief.' },
            { role: 'user', content: 'Why?\n' },
          ],
        },
      });
      const limited = await expect(render(p.id, { variables: { persona: 'x', question: 'y' }, max_tokens: 9 }), 200);
      assert.equal(limited.data.max_completion_tokens, 9);
      assert.equal('max_tokens' in limited.data, false);
      const missing = await expectError(render(p.id, { variables: { persona: 'x' } }), 400, 'variables.question');
      assert.equal(missing.error.code, 'missing_variable');
      await expectError(render(p.id, { variables: 'x' }), 400, 'variables');
      await expectError(render('no-such-prompt', {}), 404);
      await expectError(render(p.id, {}, keys.b), 404);
      await expectError(render(p.id, { variables: {} }, keys.aReader), 403, 'prompts.render');
    });

    it('partials: versioned, included at their default or a pinned version; a missing partial or a cycle is a 400', async () => {
      const partial = await expect(call('/prompts/partials', keys.a, { body: { name: 'Sign-off', slug: 'sign-off', string: 'Regards, {{who}}' } }), 201);
      assert.equal(partial.object, 'prompt.partial');
      const v2 = await expect(call('/prompts/partials/sign-off', keys.a, { method: 'PUT', body: { string: 'Cheers, {{who}}' } }), 200);
      assert.deepEqual([v2.object, v2.version], ['prompt.partial.version', 2]);
      const p = await create({ name: 'with partials', string: '{{>sign-off}} | {{>sign-off@2}}' });
      const r = await expect(render(p.id, { variables: { who: 'Ann' } }), 200);
      assert.deepEqual(r.data.messages, [{ role: 'user', content: 'Regards, Ann | Cheers, Ann' }]);
      await expect(call('/prompts/partials/sign-off/makeDefault', keys.a, { method: 'PUT', body: { version: 2 } }), 200);
      assert.equal((await expect(render(p.id, { variables: { who: 'Bo' } }), 200)).data.messages[0].content, 'Cheers, Bo | Cheers, Bo');
      const got = await expect(call('/prompts/partials/sign-off', keys.a), 200);
      assert.deepEqual([got.version, got.string, got.latest_version], [2, 'Cheers, {{who}}', 2]);
      assert.equal((await expect(call('/prompts/partials?limit=100', keys.a), 200)).data.some((x: Json) => x.slug === 'sign-off'), true);
      assert.equal((await expect(call('/prompts/partials/versions', keys.a), 404)).error.code, 'not_found', 'a partial named versions does not exist');
      // A partial in another workspace is not found.
      await expect(call('/prompts/partials', keys.b, { body: { name: 'B only', slug: 'b-only', string: 'b' } }), 201);
      const missing = await expectError(render((await create({ name: 'uses b', string: '{{>b-only}}' })).id, {}), 400, 'string');
      assert.equal(missing.error.code, 'unknown_partial');
      // A cycle through partials.
      await expect(call('/prompts/partials', keys.a, { body: { name: 'ping', slug: 'ping', string: 'ping {{>pong}}' } }), 201);
      await expect(call('/prompts/partials', keys.a, { body: { name: 'pong', slug: 'pong', string: 'pong {{>ping}}' } }), 201);
      const cycle = await expectError(render((await create({ name: 'loops', string: '{{>ping}}' })).id, {}), 400, 'string');
      assert.equal(cycle.error.code, 'partial_cycle');
      await expect(call('/prompts/partials/pong', keys.a, { method: 'DELETE' }), 200);
      await expectError(call('/prompts/partials/pong', keys.a), 404);
    });

    it('delete removes a prompt and its versions; another workspace cannot see or delete it', async () => {
      const p = await create({ name: 'doomed', string: 'x' });
      await expectError(call(`/prompts/${p.id}`, keys.b, { method: 'DELETE' }), 404);
      await expectError(call(`/prompts/${p.id}`, keys.aReader, { method: 'DELETE' }), 403, 'prompts.delete');
      await expect(call(`/prompts/${p.id}`, keys.a, { method: 'DELETE' }), 200);
      await expectError(call(`/prompts/${p.id}`, keys.a), 404);
      await expectError(call(`/prompts/${p.id}/versions`, keys.a), 404);
      assert.equal(await gw.store.prompts.version(p.id, '1'), null, 'versions deleted too');
    });

    it("access: a prompt's roles for read, render and update; the workspace's membersWritePrompts", async () => {
      const user = async (role: string): Promise<string> => {
        const made = await expect(gw.call('/users', { body: { email: email('prompts'), role: 'member', workspaces: [{ id: teamA.id, role }] } }), 201);
        return seedKey(gw, { workspaceId: teamA.id, subType: 'user', userId: made.id, scopes: SCOPES });
      };
      const member = await user('member');
      const manager = await user('manager');
      const p = await create({ name: 'guarded', string: 'hi {{x}}', access: { read: 'member', render: 'manager', update: 'admin' } });
      assert.deepEqual((await read(p.id)).access, { read: 'member', render: 'manager', update: 'admin' });
      await read(p.id, member);
      const denied = await expectError(render(p.id, { variables: { x: 1 } }, member), 403);
      assert.match(denied.error.message, /render of prompt .* needs workspace manager/);
      await expect(render(p.id, { variables: { x: 1 } }, manager), 200);
      await expectError(put(p.id, { name: 'no' }, manager), 403);
      await expect(put(p.id, { name: 'by service key' }), 200, );
      // Members may write prompts until the workspace says otherwise.
      await create({ name: 'by a member', string: 'x' }, member);
      await expect(gw.call(`/workspaces/${teamA.id}`, { method: 'PUT', body: { settings: { security_settings: { membersWritePrompts: false } } } }), 200);
      await expectError(call('/prompts', member, { body: { name: 'refused', string: 'x' } }), 403);
      await create({ name: 'by a manager', string: 'x' }, manager);
      await expect(gw.call(`/workspaces/${teamA.id}`, { method: 'PUT', body: { settings: { security_settings: { membersWritePrompts: null } } } }), 200);
      await create({ name: 'by a member again', string: 'x' }, member);
    });
  });
}
