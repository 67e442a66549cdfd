// Requests routed by saved configs, on both engines: x-gateway-config naming a saved
// config by id or slug, the workspace's default config, a key's pinned config
// (defaults.config_id), and the cache in front of them: an update or delete is seen by the
// next request on the same gateway, and by a second gateway on the same database (Postgres:
// change notices, within ~1 s; SQLite files: the 30 s TTL). Another workspace's config is as
// unknown as a missing one.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { engines } from './support/engines.js';
import { assertEnvelope as httpEnvelope } from './support/http.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { keyRecord } from './support/keys.js';
import { answeredBy, assertEnvelope, assertRouted, chat, startUpstreams, target, type Json, type Reply, type Upstream } from './support/routing.js';
import { useGateway } from './support/use-gateway.js';

for (const engine of engines()) {
  describe(`routing by saved configs (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let A: Upstream, B: Upstream, C: Upstream;
    let defaultWs: { id: string };
    let teamB: { id: string };
    /** A workspace key of team-b that may send requests. */
    let teamBKey: string;

    before(async () => {
      ({ A, B, C } = await startUpstreams('A', 'B', 'C'));
      defaultWs = await (await gw.call('/workspaces/default')).json();
      teamB = await (await gw.call('/workspaces', { body: { name: 'Team B', slug: 'team-b' } })).json();
      const k = keyRecord({ id: `key-team-b-${engine.name}`, workspaceId: teamB.id, scopes: ['completions.write', 'configs.create', 'configs.update'] });
      await gw.store.apiKeys.insert(k);
      teamBKey = `secret-${k.id}`;
    });
    afterEach(() => {
      for (const u of [A, B, C]) u.reset();
    });
    after(async () => {
      await Promise.all([A, B, C].map((u) => u.close()));
    });

    async function save(input: Json, on: TestGateway = gw, headers: Record<string, string> = {}): Promise<{ id: string; slug: string }> {
      const res = await on.call('/configs', { body: input, headers });
      assert.equal(res.status, 201, await res.clone().text());
      return res.json();
    }
    async function put(ref: string, input: Json, on: TestGateway = gw): Promise<void> {
      const res = await on.call(`/configs/${ref}`, { method: 'PUT', body: input });
      assert.equal(res.status, 200, await res.clone().text());
    }
    const viaSaved = (ref: string, on: TestGateway = gw, headers: Record<string, string> = {}): Promise<Reply> =>
      chat(on, null, { headers: { 'x-gateway-config': ref, ...headers } });
    /** Repeats a request until `done` holds or `withinMs` pass; returns the last answer. */
    async function until(send: () => Promise<Reply>, done: (r: Reply) => boolean, withinMs: number): Promise<Reply> {
      const started = performance.now();
      for (;;) {
        const r = await send();
        if (done(r) || performance.now() - started > withinMs) return r;
        await sleep(25);
      }
    }
    /**
     * What another gateway on the same database answers after a change: Postgres carries
     * change notices (seen well within a second; polled for up to two); a SQLite file shared
     * by two processes carries none, so the other gateway's entry must live out its 30 s TTL.
     */
    function afterChange(on: TestGateway, send: () => Promise<Reply>, done: (r: Reply) => boolean): Promise<Reply> {
      if (engine.name === 'sqlite') on.clock.advance(31_000);
      return until(send, done, 2000);
    }

    it('x-gateway-config takes a saved config by id and by slug', async () => {
      const saved = await save({ name: 'To A', config: target(A) });
      assertRouted(await viaSaved(saved.id), { status: 200, provider: 'openai', by: 'A' });
      assertRouted(await viaSaved(saved.slug), { status: 200, provider: 'openai', by: 'A' });
      assert.equal(A.requests.length, 2);
      assert.equal(A.requests[0]!.headers.authorization, `Bearer ${A.key}`);
    });

    it('a saved fallback config routes as the same config inline does', async () => {
      const config = { strategy: { mode: 'fallback' }, targets: [target(A), target(B)] };
      const saved = await save({ name: 'Fallback', config });
      A.enqueue('/v1/chat/completions', { status: 500, body: { error: { message: 'down' } } });
      const r = await viaSaved(saved.slug);
      assertRouted(r, { status: 200, index: 'config.targets[1]', by: 'B' });
      A.enqueue('/v1/chat/completions', { status: 500, body: { error: { message: 'down' } } });
      assertRouted(await chat(gw, config), { status: 200, index: 'config.targets[1]', by: 'B' });
    });

    it('an update routes the very next request by the new version', async () => {
      const saved = await save({ name: 'Moving', config: target(A) });
      assert.equal(answeredBy(await viaSaved(saved.slug)), 'A');
      await put(saved.id, { config: target(B) });
      assert.equal(answeredBy(await viaSaved(saved.slug)), 'B');
      assert.equal(answeredBy(await viaSaved(saved.id)), 'B');
    });

    it('unknown, deleted and archived configs are a 400 naming x-gateway-config', async () => {
      const unknown = await viaSaved('pc-nothing-000000');
      assertEnvelope(unknown, 400, { code: 'unknown_config', param: 'x-gateway-config' });
      assert.match(unknown.json.error.message, /pc-nothing-000000/);

      const saved = await save({ name: 'Short-lived', config: target(A) });
      assert.equal(answeredBy(await viaSaved(saved.id)), 'A');
      await put(saved.id, { status: 'archived' });
      assertEnvelope(await viaSaved(saved.id), 400, { code: 'archived_config', param: 'x-gateway-config' });
      await put(saved.id, { status: 'active' });
      assert.equal(answeredBy(await viaSaved(saved.slug)), 'A');
      assert.equal((await gw.call(`/configs/${saved.id}`, { method: 'DELETE' })).status, 200);
      assertEnvelope(await viaSaved(saved.id), 400, { code: 'unknown_config', param: 'x-gateway-config' });
      assertEnvelope(await viaSaved(saved.slug), 400, { code: 'unknown_config', param: 'x-gateway-config' });
      assert.equal(A.requests.length, 2);
    });

    it('a config created after a miss is found at once (misses are cached, and dropped on change)', async () => {
      assertEnvelope(await viaSaved('late-comer'), 400, { code: 'unknown_config' });
      await save({ name: 'Late', slug: 'late-comer', config: target(C) });
      assert.equal(answeredBy(await viaSaved('late-comer')), 'C');
    });

    it("another workspace's config is as unknown as a missing one; its own workspace's key uses it", async () => {
      const theirs = await save({ name: 'Theirs', config: target(C) }, gw, { 'x-gateway-api-key': teamBKey });
      for (const ref of [theirs.id, theirs.slug]) {
        const r = await viaSaved(ref);
        assertEnvelope(r, 400, { code: 'unknown_config', param: 'x-gateway-config' });
        assert.equal(r.json.error.message, `saved config '${ref}' not found`);
      }
      assert.equal(C.requests.length, 0);
      assert.equal(answeredBy(await viaSaved(theirs.slug, gw, { 'x-gateway-api-key': teamBKey })), 'C');
      const mine = await save({ name: 'Mine', config: target(A) });
      assertEnvelope(await viaSaved(mine.id, gw, { 'x-gateway-api-key': teamBKey }), 400, { code: 'unknown_config' });
    });

    it("the workspace's default config routes requests that name neither a config nor a provider", async () => {
      const plain = { 'x-gateway-api-key': teamBKey };
      const before = await chat(gw, null, { headers: plain });
      assertEnvelope(before, 400, { code: 'missing_provider' });

      const def = await save({ name: 'B default', config: target(B), is_default: true }, gw, plain);
      assertRouted(await chat(gw, null, { headers: plain }), { status: 200, by: 'B' });
      const byHeaders = { ...plain, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': A.url, authorization: `Bearer ${A.key}` };
      assert.equal(answeredBy(await chat(gw, null, { headers: byHeaders })), 'A', 'a request naming its provider is routed by its headers');
      assert.equal(answeredBy(await chat(gw, target(C), { headers: plain })), 'C', 'an explicit config wins');
      assert.equal(answeredBy(await chat(gw, null)), undefined, "the default workspace has no default: another workspace's does not apply");

      const next = await save({ name: 'C default', config: target(C), is_default: true }, gw, plain);
      assert.equal(answeredBy(await chat(gw, null, { headers: plain })), 'C', 'the flag moved, and the next request sees it');
      await put(next.id, { is_default: false });
      assertEnvelope(await chat(gw, null, { headers: plain }), 400, { code: 'missing_provider' });
      await put(def.id, { is_default: true });
      assert.equal(answeredBy(await chat(gw, null, { headers: plain })), 'B');
      await put(def.id, { is_default: false });
    });

    it("a key's pinned config (defaults.config_id) applies when the request sends none", async () => {
      const pinned = await save({ name: 'Pinned', config: target(B) });
      const k = keyRecord({ id: `key-pinned-${engine.name}`, workspaceId: defaultWs.id, scopes: ['completions.write'], defaults: { config_id: pinned.slug } });
      await gw.store.apiKeys.insert(k);
      const headers = { 'x-gateway-api-key': `secret-${k.id}` };
      assertRouted(await chat(gw, null, { headers }), { status: 200, by: 'B' });
      const namingProvider = { ...headers, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': A.url, authorization: `Bearer ${A.key}` };
      assert.equal(answeredBy(await chat(gw, null, { headers: namingProvider })), 'B', 'the pinned config routes even a request naming a provider');
      assert.equal(answeredBy(await chat(gw, target(C), { headers })), 'C', 'an explicit x-gateway-config wins');
      const other = await save({ name: 'Other', config: target(A) });
      assert.equal(answeredBy(await viaSaved(other.id, gw, headers)), 'A');
      await put(pinned.id, { config: target(C) });
      assert.equal(answeredBy(await chat(gw, null, { headers })), 'C');

      const byId = keyRecord({ id: `key-pinned-id-${engine.name}`, workspaceId: defaultWs.id, scopes: ['completions.write'], defaults: { config_id: other.id } });
      const dangling = keyRecord({ id: `key-dangling-${engine.name}`, workspaceId: defaultWs.id, scopes: ['completions.write'], defaults: { config_id: 'pc-gone-123456' } });
      await gw.store.apiKeys.insert(byId);
      await gw.store.apiKeys.insert(dangling);
      assert.equal(answeredBy(await chat(gw, null, { headers: { 'x-gateway-api-key': `secret-${byId.id}` } })), 'A');
      assertEnvelope(await chat(gw, null, { headers: { 'x-gateway-api-key': `secret-${dangling.id}` } }), 400, { code: 'unknown_config', param: 'x-gateway-config' });
    });

    it('a second gateway on the same database sees updates and deletes', async () => {
      const gw2 = await startTestGateway(gw.env);
      try {
        const saved = await save({ name: 'Shared', config: target(A) });
        const on2 = (): Promise<Reply> => viaSaved(saved.slug, gw2);
        assert.equal(answeredBy(await on2()), 'A', 'gw2 reads it from the store and caches it');
        await put(saved.id, { config: target(B) });
        if (engine.name === 'sqlite') assert.equal(answeredBy(await on2()), 'A', 'without notices gw2 keeps its entry until the TTL');
        assert.equal(answeredBy(await afterChange(gw2, on2, (r) => answeredBy(r) === 'B')), 'B');

        await put(saved.id, { config: target(C) }, gw2);
        assert.equal(answeredBy(await on2()), 'C', 'the writing gateway sees its own write at once');
        const on1 = (): Promise<Reply> => viaSaved(saved.slug);
        assert.equal(answeredBy(await afterChange(gw, on1, (r) => answeredBy(r) === 'C')), 'C');

        assert.equal((await gw.call(`/configs/${saved.id}`, { method: 'DELETE' })).status, 200);
        assertEnvelope(await afterChange(gw2, on2, (r) => r.status === 400), 400, { code: 'unknown_config', param: 'x-gateway-config' });
      } finally {
        await gw2.stop();
      }
    });

    it('a restart keeps saved configs routing', async () => {
      const saved = await save({ name: 'Survivor', slug: `survivor-${engine.name}`, config: target(A) });
      await put(saved.id, { config: target(C) });
      await gw.restart();
      assertRouted(await viaSaved(saved.slug), { status: 200, by: 'C' });
      assertRouted(await viaSaved(saved.id), { status: 200, by: 'C' });
    });

    it('credentials inside a saved config are sealed at rest, masked in every answer, and sent upstream as they were given', async () => {
      const serviceAccount = { type: 'service_account', private_key: 'PRIVATE-KEY-MATERIAL-0123456789', client_email: 'sa@example.iam' };
      const config = {
        strategy: { mode: 'fallback' },
        targets: [
          target(A, { forward_headers: ['x-trace'] }),
          { provider: 'bedrock', cloud1_access_key_id: 'AKIDSEALEDTEST01', cloud1_secret_access_key: 'bedrock-secret-value-42', cloud1_region: 'us-east-1' },
          { provider: 'vertex-ai', cloud2_region: 'us-central1', cloud2_service_account_json: serviceAccount },
        ],
      };
      const saved = await save({ name: 'With secrets', config });
      const secrets = [A.key, 'AKIDSEALEDTEST01', 'bedrock-secret-value-42', 'PRIVATE-KEY-MATERIAL-0123456789'];

      const rows = JSON.stringify(await gw.store.db.all('SELECT * FROM config_versions'));
      for (const s of secrets) assert.ok(!rows.includes(s), `'${s}' stored in plain text`);

      const shown = [
        await (await gw.call(`/configs/${saved.id}`)).text(),
        await (await gw.call(`/configs/${saved.id}/versions`)).text(),
        await (await gw.call(`/configs/${saved.id}/versions/1`)).text(),
      ];
      for (const text of shown) for (const s of secrets) assert.ok(!text.includes(s), `'${s}' answered: ${text}`);
      const view = JSON.parse(shown[0]!) as { config: { targets: Json[] } };
      assert.equal(view.config.targets[0]!.api_key, '********');
      assert.equal(view.config.targets[1]!.cloud1_secret_access_key, '********');
      assert.equal(view.config.targets[2]!.cloud2_service_account_json, '********');
      assert.equal(view.config.targets[1]!.cloud1_region, 'us-east-1');

      assertRouted(await viaSaved(saved.id), { status: 200, by: 'A' });
      assert.equal(A.requests.at(-1)!.headers.authorization, `Bearer ${A.key}`);

      // The config sent back as GET showed it keeps the stored secrets; a mask where nothing is stored is refused.
      const edited = { ...view.config, targets: [{ ...view.config.targets[0], retry: { attempts: 1 } }, ...view.config.targets.slice(1)] };
      await put(saved.id, { config: edited });
      assertRouted(await viaSaved(saved.id), { status: 200, by: 'A' });
      assert.equal(A.requests.at(-1)!.headers.authorization, `Bearer ${A.key}`);
      const bad = await httpEnvelope(
        await gw.call(`/configs/${saved.id}`, { method: 'PUT', body: { config: { ...edited, targets: [...edited.targets, { ...target(B), api_key: '********' }] } } }),
        400,
      );
      assert.equal(bad.param, 'config.targets[3].api_key');
      const after = JSON.stringify(await gw.store.db.all('SELECT * FROM config_versions'));
      for (const s of secrets) assert.ok(!after.includes(s), `'${s}' stored in plain text after an update`);
    });
  });
}
