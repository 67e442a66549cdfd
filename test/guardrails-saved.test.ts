// Saved guardrails on the request path (guardrails/saved.ts), over a real store on
// both engines: a guardrail is read and compiled once per workspace and reference,
// then answered synchronously with the same hooks; a change notice drops it; a
// workspace's slug wins over the organisation's; "not found" is cached too; the
// defaults come first, marked; a request with neither costs nothing but a hit; the
// caches are bounded, evictions told.
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileHooks, MAX_REQUEST_CHECKS, NO_HOOKS, type HookConfig, type Hooks } from '../src/guardrails/hooks.js';
import { SavedGuardrails } from '../src/guardrails/saved.js';
import type { Result } from '../src/shared/errors.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';
import { engines } from './support/engines.js';

const hooksOf = (c: HookConfig): Hooks => {
  const h = compileHooks(c, { left: 500 });
  if (!h.ok) assert.fail(h.problem.message);
  return h.value;
};
const NO_DIGITS = { id: 'default.regexMatch', parameters: { rule: '\\d', not: true } };

for (const engine of engines()) {
  describe(`saved guardrails cache (${engine.name})`, { timeout: 60_000 }, () => {
    let store: Store;
    let dir: string;
    let ws: string;
    let reads: number;

    beforeEach(async () => {
      const env = await engine.fresh();
      dir = env.GATEWAY_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'switchyard-saved-guardrails-'));
      store = await openStore({ dataDir: dir, databaseUrl: env.DATABASE_URL });
      await store.migrate();
      ws = (await store.workspaces.default()).id;
      reads = 0;
      const findFor = store.guardrails.findFor.bind(store.guardrails);
      store.guardrails.findFor = (ref, workspaceId) => {
        reads++;
        return findFor(ref, workspaceId);
      };
    });
    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    after(() => engine.cleanup());

    const value = async (r: Result<Hooks> | Promise<Result<Hooks>>): Promise<Hooks> => {
      const v = await r;
      if (!v.ok) assert.fail(v.error.message);
      return v.value;
    };

    it('reads and compiles a guardrail once, then answers synchronously with the same hooks', async () => {
      const g = await store.guardrails.create({ slug: 'no-digits', workspaceId: ws, name: 'No digits', checks: [NO_DIGITS], actions: { deny: true } });
      const saved = new SavedGuardrails(store);
      const config = hooksOf({ input_guardrails: ['no-digits'] });
      const first = await value(saved.resolve(ws, config));
      assert.equal(first.before[0]!.id, g.id);
      assert.equal(first.before[0]!.deny, true);
      const again = saved.resolve(ws, config);
      assert.ok(!(again instanceof Promise), 'a hit is synchronous');
      assert.equal((await value(again)).before[0], first.before[0], 'compiled once');
      assert.equal(reads, 1);
      // A change drops it: the next request reads the new version.
      await store.guardrails.update(g.id, { actions: { deny: false } });
      assert.equal((await value(saved.resolve(ws, config))).before[0]!.deny, false);
      assert.equal(reads, 2);
    });

    it(`refuses a config whose saved guardrails bring a request past ${MAX_REQUEST_CHECKS} checks (400 too_many_checks)`, async () => {
      // A guardrail of 40 checks is within the bound; named twice, 80 are not.
      await store.guardrails.create({ slug: 'forty', workspaceId: ws, name: 'Forty', checks: Array.from({ length: 40 }, () => NO_DIGITS), actions: {} });
      const saved = new SavedGuardrails(store);
      assert.equal((await value(saved.resolve(ws, hooksOf({ input_guardrails: ['forty'] })))).before[0]!.checks.length, 40);
      const twice = await saved.resolve(ws, hooksOf({ input_guardrails: ['forty'], output_guardrails: ['forty'] }));
      assert.ok(!twice.ok);
      assert.equal(twice.error.code, 'too_many_checks');
      assert.equal(twice.error.param, 'input_guardrails[0]');
      assert.match(twice.error.message, /to 80, more than the 64/);
      // Defaults that pass the bound with the config's own checks are the settings' fault, not the caller's: a 500.
      const many = await store.guardrails.create({ slug: 'sixty', workspaceId: null, name: 'Sixty', checks: Array.from({ length: 60 }, () => NO_DIGITS), actions: {} });
      await store.settings.saveOrganisation({ ...(await store.settings.organisation()), default_input_guardrails: [many.id] });
      const own = await new SavedGuardrails(store).resolve(ws, hooksOf({ input_guardrails: Array.from({ length: 5 }, () => ({ 'default.notNull': {} })) }));
      assert.ok(!own.ok);
      assert.deepEqual([own.error.status, own.error.code], [500, 'default_guardrail_unavailable']);
    });

    it('caches "not found" too, until a guardrail is created', async () => {
      const saved = new SavedGuardrails(store);
      const config = hooksOf({ output_guardrails: ['later'] });
      for (let i = 0; i < 3; i++) {
        const r = await saved.resolve(ws, config);
        assert.ok(!r.ok && r.error.param === 'output_guardrails[0]' && r.error.code === 'unknown_guardrail');
      }
      assert.equal(reads, 1);
      await store.guardrails.create({ slug: 'later', workspaceId: ws, name: 'Later', checks: [NO_DIGITS], actions: {} });
      assert.equal((await value(saved.resolve(ws, config))).after.length, 1);
    });

    it("a workspace's slug wins over the organisation's; the organisation's serves the rest", async () => {
      const other = (await store.workspaces.create({ slug: 'other', name: 'Other', description: null, metadata: null, settings: null, defaults: null })).id;
      const org = await store.guardrails.create({ slug: 'words', workspaceId: null, name: 'Org', checks: [NO_DIGITS], actions: {} });
      const own = await store.guardrails.create({ slug: 'words', workspaceId: ws, name: 'Own', checks: [NO_DIGITS], actions: {} });
      const saved = new SavedGuardrails(store);
      const config = hooksOf({ input_guardrails: ['words'] });
      assert.equal((await value(saved.resolve(ws, config))).before[0]!.id, own.id);
      assert.equal((await value(saved.resolve(other, config))).before[0]!.id, org.id);
    });

    it('holds at most max entries per cache, telling of each eviction', async () => {
      const evicted: string[] = [];
      const saved = new SavedGuardrails(store, { max: 2, onEvict: (key) => evicted.push(key) });
      for (const ref of ['a', 'b', 'c']) await saved.resolve(ws, hooksOf({ input_guardrails: [ref] }));
      assert.deepEqual(evicted, [`${ws}\na`]);
      // The evicted one is read again.
      await saved.resolve(ws, hooksOf({ input_guardrails: ['a'] }));
      assert.equal(reads, 4);
    });

    it('defaults come first and are marked; without defaults or names the hooks pass unchanged', async () => {
      const saved = new SavedGuardrails(store);
      const plain = hooksOf({ input_guardrails: [{ 'default.notNull': {} }] });
      assert.equal(await value(saved.resolve(ws, plain)), plain);
      assert.equal(await value(saved.resolve(ws, NO_HOOKS)), NO_HOOKS);
      const d = await store.guardrails.create({ slug: 'd', workspaceId: null, name: 'Default', checks: [NO_DIGITS], actions: {} });
      await store.settings.saveOrganisation({ ...(await store.settings.organisation()), default_input_guardrails: [d.id] });
      const withDefault = await value(saved.resolve(ws, plain));
      assert.deepEqual(
        withDefault.before.map((h) => [h.id, h.isDefault ?? false]),
        [
          [d.id, true],
          [plain.before[0]!.id, false],
        ],
      );
      assert.deepEqual(withDefault.after, []);
    });
  });
}
