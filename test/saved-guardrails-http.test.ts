// Saved guardrails on the request path, on both engines, with the official OpenAI SDK
// as the client: a config names one by slug or id and its saved checks and actions run
// (446 when it denies, the provider never called); a change to it reaches the next
// request; an unknown, archived or wrong-side one is a 400 naming the config path; a
// workspace's slug wins over the organisation's; the organisation's and a workspace's
// default guardrails run on every request of the workspace, marked as defaults in
// hook_results and in the log.
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { engines } from './support/engines.js';
import { createWorkspace, expect, seedKey, type Json } from './support/identity.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { watchedClient, type WatchedClient } from './support/guardrails.js';
import { logOf } from './support/logs.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'sk-upstream-saved-guardrails';
const NO_DIGITS = { id: 'default.regexMatch', parameters: { rule: '\\d', not: true } };
const UPPER = { id: 'default.alluppercase', parameters: {} };

for (const engine of engines()) {
  describe(`saved and default guardrails over HTTP (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let mock: MockOpenAI;
    let ws: Json;
    let other: Json;
    /** SDK clients with a key of `ws` and of `other`. */
    let client: OpenAI;
    let otherClient: OpenAI;
    let refusal: WatchedClient['refusal'];
    let otherRefusal: WatchedClient['refusal'];

    const config = (hooks: Json): Json => ({ provider: 'openai', api_key: KEY, custom_host: mock.url, ...hooks });
    const opts = (hooks: Json, traceId = randomUUID()) => ({ headers: { 'x-gateway-config': JSON.stringify(config(hooks)), 'x-gateway-trace-id': traceId } });
    const ask = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content }] });
    const create = (body: Json) => expect(gw.call('/guardrails', { body }), 201);
    const sdk = async (workspaceId: string) => watchedClient(gw, await seedKey(gw, { workspaceId }));

    before(async () => {
      mock = await startMockOpenAI({ apiKey: KEY });
      ws = await createWorkspace(gw, 'Guarded');
      other = await createWorkspace(gw, 'Other');
      ({ client, refusal } = await sdk(ws.id));
      ({ client: otherClient, refusal: otherRefusal } = await sdk(other.id));
    });
    afterEach(() => mock.reset());
    after(() => mock.close());

    it('a saved guardrail named by slug or id runs its checks and actions: 446, the provider never called', async () => {
      const g = await create({ name: 'No digits', slug: 'no-digits', workspace_id: ws.id, checks: [NO_DIGITS], actions: { deny: true } });
      for (const ref of ['no-digits', g.id]) {
        const r = await refusal(client.chat.completions.create(ask('card 4242'), opts({ input_guardrails: [ref] })));
        assert.equal(r.status, 446);
        const [hook] = r.body.hook_results.before_request_hooks;
        assert.equal(hook.id, g.id);
        assert.equal(hook.verdict, false);
        assert.equal(hook.deny, true);
        assert.equal(hook.checks[0].id, 'default.regexMatch');
        assert.equal(hook.default, undefined);
      }
      assert.equal(mock.requests.length, 0);
      const passed = await client.chat.completions.create(ask('no numbers here'), opts({ input_guardrails: ['no-digits'] }));
      assert.equal(passed.choices[0]!.message.content, '[mock] echo: no numbers here');
    });

    it('a saved output guardrail that rewrites counts as a rewrite: a streamed request naming it is a 400 naming stream', async () => {
      await create({ name: 'Redact', slug: 'redact-out', workspace_id: ws.id, checks: [{ id: 'default.regexReplace', parameters: { rule: 'mock', redactText: 'x' } }] });
      const r = await refusal(client.chat.completions.create({ ...ask('hi'), stream: true }, opts({ output_guardrails: ['redact-out'] })));
      assert.equal(r.status, 400);
      assert.equal(r.body.error.param, 'stream');
      assert.match(r.body.error.message, /output_guardrails\[0\] rewrites the answer \(default\.regexReplace\)/);
      assert.equal(mock.requests.length, 0);
    });

    it('a change to the guardrail reaches the next request (the cache drops it on the change notice)', async () => {
      const g = await create({ name: 'Shouting', slug: 'shouting', workspace_id: ws.id, checks: [UPPER], actions: { deny: true } });
      assert.equal((await refusal(client.chat.completions.create(ask('quiet'), opts({ output_guardrails: ['shouting'] })))).status, 446);
      await expect(gw.call(`/guardrails/${g.id}`, { method: 'PUT', body: { actions: { deny: false } } }), 200);
      const { response } = await client.chat.completions.create(ask('quiet'), opts({ output_guardrails: ['shouting'] })).withResponse();
      assert.equal(response.status, 246);
    });

    it('an unknown, archived or wrong-side guardrail is a 400 naming the config path; the provider is never called', async () => {
      const g = await create({ name: 'Old', slug: 'old', workspace_id: ws.id, checks: [NO_DIGITS], actions: { deny: true } });
      await expect(gw.call(`/guardrails/${g.id}`, { method: 'PUT', body: { status: 'archived' } }), 200);
      const meta = await create({ name: 'Metadata', slug: 'metadata', workspace_id: ws.id, checks: [{ id: 'default.requiredMetadataKeys', parameters: { metadataKeys: ['team'] } }] });
      const cases: [Json, string, string][] = [
        [{ input_guardrails: ['no-such-guardrail'] }, 'input_guardrails[0]', 'unknown_guardrail'],
        [{ input_guardrails: [{ 'default.notNull': {} }, 'old'] }, 'input_guardrails[1]', 'archived_guardrail'],
        [{ output_guardrails: [meta.slug] }, 'output_guardrails[0]', 'invalid_guardrail'],
      ];
      for (const [hooks, param, code] of cases) {
        const r = await refusal(client.chat.completions.create(ask('x'), opts(hooks)));
        assert.equal(r.status, 400);
        assert.equal(r.body.error.param, param);
        assert.equal(r.body.error.code, code);
      }
      // Another workspace's guardrail is as unknown as a missing one.
      const r = await otherRefusal(otherClient.chat.completions.create(ask('x'), opts({ input_guardrails: ['no-digits'] })));
      assert.equal(r.body.error.code, 'unknown_guardrail');
      assert.equal(mock.requests.length, 0);
    });

    it("a workspace's own slug wins over the organisation's; other workspaces use the organisation's", async () => {
      await create({ name: 'Org words', slug: 'words', organisation_id: 'org', checks: [UPPER], actions: { deny: true } });
      await create({ name: 'Own words', slug: 'words', workspace_id: ws.id, checks: [NO_DIGITS], actions: { deny: true } });
      const own = await client.chat.completions.create(ask('lower case'), opts({ input_guardrails: ['words'] }));
      assert.equal(own.choices[0]!.message.content, '[mock] echo: lower case');
      assert.equal((await otherRefusal(otherClient.chat.completions.create(ask('lower case'), opts({ input_guardrails: ['words'] })))).status, 446);
    });

    it("the organisation's and the workspace's default guardrails run on every request, marked as defaults", async () => {
      const orgInput = await create({ name: 'Org input', slug: 'org-input', organisation_id: 'org', checks: [{ id: 'default.wordCount', parameters: { maxWords: 50 } }] });
      const wsOutput = await create({ name: 'Ws output', slug: 'ws-output', workspace_id: ws.id, checks: [UPPER] });
      await expect(gw.call('/organisation/settings', { method: 'PUT', body: { default_input_guardrails: [orgInput.id] } }), 200);
      await expect(gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { settings: { default_output_guardrails: [wsOutput.id] } } }), 200);
      try {
        // No hooks in the config: the defaults alone; the output one fails without deny → 246.
        const traceId = randomUUID();
        const { data, response } = await client.chat.completions.create(ask('hello there'), opts({}, traceId)).withResponse();
        assert.equal(response.status, 246);
        const results = (data as unknown as Json).hook_results;
        assert.deepEqual(
          results.before_request_hooks.map((h: Json) => [h.id, h.default, h.verdict]),
          [[orgInput.id, true, true]],
        );
        assert.deepEqual(
          results.after_request_hooks.map((h: Json) => [h.id, h.default, h.verdict]),
          [[wsOutput.id, true, false]],
        );
        const log = await logOf(gw, traceId);
        assert.equal(log.hook_results.after_request_hooks[0].default, true);
        // Its verdict is filed for the log filters: the output default failed without deny.
        assert.equal((await expect(gw.call(`/logs?trace_id=${traceId}&hook_status=failed&guardrail_check=default.alluppercase`), 200)).data.length, 1);
        assert.equal((await expect(gw.call(`/logs?trace_id=${traceId}&hook_status=passed,denied`), 200)).data.length, 0);
        // With the config's own guardrails: the defaults first.
        const denied = await refusal(client.chat.completions.create(ask('4 words'), opts({ input_guardrails: [{ deny: true, 'default.regexMatch': NO_DIGITS.parameters }] })));
        assert.equal(denied.status, 446);
        assert.deepEqual(
          denied.body.hook_results.before_request_hooks.map((h: Json) => h.default ?? false),
          [true, false],
        );
        // The other workspace has the organisation's input default only: its answer passes.
        const { response: plain } = await otherClient.chat.completions.create(ask('hello there'), opts({})).withResponse();
        assert.equal(plain.status, 200);
      } finally {
        await expect(gw.call('/organisation/settings', { method: 'PUT', body: { default_input_guardrails: [] } }), 200);
        await expect(gw.call(`/workspaces/${ws.id}`, { method: 'PUT', body: { settings: { default_output_guardrails: [] } } }), 200);
      }
      // Settings changed: the defaults are gone from the next request.
      const { response } = await client.chat.completions.create(ask('hello there'), opts({})).withResponse();
      assert.equal(response.status, 200);
    });
  });
}
