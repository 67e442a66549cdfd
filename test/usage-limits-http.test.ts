// Usage-limit policies (budgets) over HTTP, on both store engines and both
// counter homes (process memory, Redis): the management routes (create, read,
// list, update, delete, fail_mode; every field rule a 400 naming the field; workspace
// isolation; a restart keeps them), and on the request path: a token budget
// admits until its reservations or usage reach the limit, then 412 with
// nothing sent upstream; a concurrent burst cannot overshoot; settlement from
// the real usage lets later requests in and an upstream error gives its
// reservation back; cost budgets priced from the catalog; alerts recorded;
// raising the limit re-opens; periods reset on the gateway's clock.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cost } from '../src/catalog/catalog.js';
import { engines } from './support/engines.js';
import { assertEnvelope } from './support/http.js';
import { answerUsing, startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { createWorkspace, expectJson, workspaceKey } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const OPENAI_KEY = 'sk-mock-openai-0123456789';
const PATH = '/policies/usage-limits';
const DAY = 86_400_000;
const POLICY_SCOPES = ['policies.create', 'policies.list', 'policies.read', 'policies.update', 'policies.delete'];

interface UsageLimitJson {
  object: string;
  id: string;
  name: string | null;
  conditions: { key: string; value: string }[];
  group_by: { key: string }[];
  type: 'cost' | 'tokens';
  credit_limit: number;
  alert_threshold: number | null;
  periodic_reset: 'weekly' | 'monthly' | null;
  periodic_reset_days: number | null;
  next_usage_reset_at: string | null;
  last_reset_at: string | null;
  status: 'active' | 'exhausted' | 'archived';
  threshold_alerted_at: string | null;
  exhausted_at: string | null;
  fail_mode: 'open' | 'closed';
  workspace_id: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const midnight = (ms: number): number => Math.floor(ms / DAY) * DAY;

/**
 * The messages every request sends: 32 characters of JSON, estimated at 8
 * prompt tokens; with max_tokens 12 a request reserves 20 tokens.
 */
const MESSAGES = [{ role: 'user', content: 'hi' }];
const RESERVES_20 = { max_tokens: 12 };

for (const engine of engines()) {
  describe(`usage-limit policies: management (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let wsId: string;

    const body = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
      name: 'budget',
      conditions: [{ key: 'workspace_id', value: wsId }],
      group_by: [{ key: 'api_key' }],
      type: 'tokens',
      credit_limit: 1000,
      workspace_id: wsId,
      ...over,
    });
    const create = async (over: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<string> =>
      (await expectJson<{ id: string; object: string }>(await gw.call(PATH, { body: body(over), headers }), 201)).id;
    const get = async (id: string): Promise<UsageLimitJson> => expectJson<UsageLimitJson>(await gw.call(`${PATH}/${id}`), 200);

    before(async () => {
      wsId = await createWorkspace(gw, 'Budgets');
    });

    it('create, read, list, update, archive, delete', async () => {
      const res = await gw.call(PATH, { body: body({ alert_threshold: 800, periodic_reset: 'weekly' }) });
      const created = await expectJson<{ id: string; object: string }>(res, 201);
      assert.equal(created.object, 'policy_usage_limits');
      const p = await get(created.id);
      assert.equal(p.object, 'policy_usage_limits');
      assert.deepEqual(
        { type: p.type, credit_limit: p.credit_limit, alert_threshold: p.alert_threshold, periodic_reset: p.periodic_reset, periodic_reset_days: p.periodic_reset_days, status: p.status },
        { type: 'tokens', credit_limit: 1000, alert_threshold: 800, periodic_reset: 'weekly', periodic_reset_days: null, status: 'active' },
      );
      assert.deepEqual(p.conditions, [{ key: 'workspace_id', value: wsId }]);
      assert.equal(new Date(p.next_usage_reset_at!).getUTCDay(), 1, 'weekly budgets reset on Monday 00:00 UTC');
      assert.ok(Date.parse(p.next_usage_reset_at!) > gw.clock.now && Date.parse(p.next_usage_reset_at!) <= gw.clock.now + 7 * DAY);
      assert.equal(p.threshold_alerted_at, null);
      assert.equal(p.exhausted_at, null);
      assert.equal(p.fail_mode, 'open', 'fails open unless told otherwise');

      const list = await expectJson<{ data: UsageLimitJson[] }>(await gw.call(`${PATH}?workspace_id=${wsId}&type=tokens&limit=100`), 200);
      assert.ok(list.data.some((x) => x.id === p.id));

      // periodic_reset_days replaces the stored periodic_reset.
      const updated = await expectJson<UsageLimitJson>(await gw.call(`${PATH}/${p.id}`, { method: 'PUT', body: { periodic_reset_days: 10, credit_limit: 2000 } }), 200);
      assert.deepEqual([updated.periodic_reset, updated.periodic_reset_days, updated.credit_limit], [null, 10, 2000]);

      assert.equal((await expectJson<UsageLimitJson>(await gw.call(`${PATH}/${p.id}`, { method: 'PUT', body: { status: 'archived' } }), 200)).status, 'archived');
      const active = await expectJson<{ data: UsageLimitJson[] }>(await gw.call(`${PATH}?workspace_id=${wsId}&limit=100`), 200);
      assert.ok(!active.data.some((x) => x.id === p.id), 'the list shows active policies unless asked');
      const archived = await expectJson<{ data: UsageLimitJson[] }>(await gw.call(`${PATH}?workspace_id=${wsId}&status=archived`), 200);
      assert.ok(archived.data.some((x) => x.id === p.id));

      assert.deepEqual(await expectJson(await gw.call(`${PATH}/${p.id}`, { method: 'DELETE' }), 200), { id: p.id, object: 'policy_usage_limits', deleted: true });
      await assertEnvelope(await gw.call(`${PATH}/${p.id}`), 404);
    });

    it('fail_mode: open or closed, set on create and update, shown in reads and lists; anything else is 400 naming it', async () => {
      const id = await create({ fail_mode: 'closed' });
      assert.equal((await get(id)).fail_mode, 'closed');
      const listed = await expectJson<{ data: UsageLimitJson[] }>(await gw.call(`${PATH}?workspace_id=${wsId}&limit=100`), 200);
      assert.equal(listed.data.find((x) => x.id === id)?.fail_mode, 'closed');
      const put = async (b: unknown): Promise<UsageLimitJson> => expectJson<UsageLimitJson>(await gw.call(`${PATH}/${id}`, { method: 'PUT', body: b }), 200);
      assert.equal((await put({ fail_mode: 'open' })).fail_mode, 'open');
      assert.equal((await put({ credit_limit: 500 })).fail_mode, 'open', 'an update without it keeps it');
      assert.equal((await put({ fail_mode: 'closed' })).fail_mode, 'closed');
      for (const bad of ['shut', 'Closed', null, 1]) {
        assert.equal((await assertEnvelope(await gw.call(PATH, { body: body({ fail_mode: bad }) }), 400)).param, 'fail_mode');
        assert.equal((await assertEnvelope(await gw.call(`${PATH}/${id}`, { method: 'PUT', body: { fail_mode: bad } }), 400)).param, 'fail_mode');
      }
      assert.equal((await get(id)).fail_mode, 'closed');
    });

    it('next_usage_reset_at is kept at 00:00 UTC of its day and anchors the periods', async () => {
      const day = midnight(gw.clock.now) + 3 * DAY;
      const id = await create({ periodic_reset_days: 7, next_usage_reset_at: `${iso(day).slice(0, 10)}T13:45:00Z` });
      const p = await get(id);
      assert.equal(p.next_usage_reset_at, iso(day));
      assert.equal(p.last_reset_at, null, 'no reset since it was made');

      const monthly = await get(await create({ periodic_reset: 'monthly', next_usage_reset_at: '2030-01-15' }));
      assert.match(monthly.next_usage_reset_at!, /^\d{4}-\d{2}-15T00:00:00\.000Z$/);
      const next = Date.parse(monthly.next_usage_reset_at!);
      assert.ok(next > gw.clock.now && next <= gw.clock.now + 31 * DAY);

      const never = await get(await create());
      assert.equal(never.next_usage_reset_at, null);
      assert.equal(never.last_reset_at, null);
    });

    it('every field rule is a 400 naming the field, and changes nothing', async () => {
      const before = await expectJson<{ data: unknown[] }>(await gw.call(`${PATH}?workspace_id=${wsId}&limit=100`), 200);
      const both = await assertEnvelope(await gw.call(PATH, { body: body({ periodic_reset: 'monthly', periodic_reset_days: 30 }) }), 400);
      assert.match(both.message, /periodic_reset and periodic_reset_days/);
      for (const [over, param] of [
        [{ periodic_reset_days: 0 }, 'periodic_reset_days'],
        [{ periodic_reset_days: 366 }, 'periodic_reset_days'],
        [{ periodic_reset_days: 1.5 }, 'periodic_reset_days'],
        [{ periodic_reset: 'daily' }, 'periodic_reset'],
        [{ credit_limit: 0 }, 'credit_limit'],
        [{ credit_limit: undefined }, 'credit_limit'],
        [{ type: 'requests' }, 'type'],
        [{ alert_threshold: 1000 }, 'alert_threshold'],
        [{ alert_threshold: 0 }, 'alert_threshold'],
        [{ next_usage_reset_at: '2030-01-15' }, 'next_usage_reset_at'],
        [{ periodic_reset: 'weekly', next_usage_reset_at: '2030-02-30' }, 'next_usage_reset_at'],
        [{ periodic_reset: 'weekly', next_usage_reset_at: 'soon' }, 'next_usage_reset_at'],
        [{ conditions: [] }, 'conditions'],
        [{ group_by: [{ key: 'colour' }] }, 'group_by'],
      ] as const) {
        const e = await assertEnvelope(await gw.call(PATH, { body: body(over) }), 400);
        assert.ok(e.param?.startsWith(param), `${JSON.stringify(over)}: param ${e.param}, ${e.message}`);
      }
      const id = await create({ alert_threshold: 500, periodic_reset: 'weekly' });
      for (const [patch, param] of [
        [{ alert_threshold: 1500 }, 'alert_threshold'],
        [{ credit_limit: 400 }, 'alert_threshold'],
        [{ periodic_reset_days: 5, periodic_reset: 'monthly' }, 'periodic_reset_days'],
        [{ status: 'exhausted' }, 'status'],
      ] as const) {
        const e = await assertEnvelope(await gw.call(`${PATH}/${id}`, { method: 'PUT', body: patch }), 400);
        assert.ok(e.param?.startsWith(param), `${JSON.stringify(patch)}: param ${e.param}, ${e.message}`);
      }
      const p = await get(id);
      assert.deepEqual([p.credit_limit, p.alert_threshold, p.periodic_reset], [1000, 500, 'weekly']);
      const afterList = await expectJson<{ data: unknown[] }>(await gw.call(`${PATH}?workspace_id=${wsId}&limit=100`), 200);
      assert.equal(afterList.data.length, before.data.length + 1);
    });

    it('workspace keys act in their own workspace only: 403 naming another, 404 for its policies', async () => {
      const theirs = await createWorkspace(gw, 'Their budgets');
      const secret = await workspaceKey(gw, wsId, POLICY_SCOPES);
      const as = { 'x-gateway-api-key': secret };
      const own = await create({ workspace_id: undefined }, as);
      assert.equal((await get(own)).workspace_id, wsId);
      const foreign = await create({ workspace_id: theirs, conditions: [{ key: 'api_key', value: '*' }] });
      assert.equal((await assertEnvelope(await gw.call(PATH, { headers: as, body: body({ workspace_id: theirs }) }), 403)).param, 'workspace_id');
      await assertEnvelope(await gw.call(`${PATH}?workspace_id=${theirs}`, { headers: as }), 403);
      const list = await expectJson<{ data: UsageLimitJson[] }>(await gw.call(`${PATH}?limit=100`, { headers: as }), 200);
      assert.ok(list.data.length >= 1 && list.data.every((p) => p.workspace_id === wsId));
      await assertEnvelope(await gw.call(`${PATH}/${foreign}`, { headers: as }), 404);
      await assertEnvelope(await gw.call(`${PATH}/${foreign}`, { headers: as, method: 'PUT', body: { credit_limit: 1 } }), 404);
      await assertEnvelope(await gw.call(`${PATH}/${foreign}`, { headers: as, method: 'DELETE' }), 404);
      assert.equal((await get(foreign)).credit_limit, 1000, 'untouched');
      const noScope = await workspaceKey(gw, wsId, ['completions.write']);
      assert.equal((await assertEnvelope(await gw.call(PATH, { headers: { 'x-gateway-api-key': noScope }, body: body() }), 403)).param, 'policies.create');
    });

    it('a restart on the same data keeps every policy', async () => {
      const id = await create({ type: 'cost', credit_limit: 12.5, alert_threshold: 10, periodic_reset: 'monthly', group_by: [{ key: 'metadata.team' }], fail_mode: 'closed' });
      const view = await get(id);
      await gw.restart();
      gw.clock.now = Date.now();
      const again = await get(id);
      assert.deepEqual({ ...again, next_usage_reset_at: null }, { ...view, next_usage_reset_at: null });
    });
  });

  for (const backend of ['memory', 'redis'] as const) {
    describe(`usage limits on the request path (${engine.name}, ${backend})`, { timeout: 60_000 }, () => {
      const gw = useGateway(engine, { redis: backend === 'redis' });
      let openai: MockOpenAI;

      const tenant = async (name: string): Promise<{ ws: string; secret: string }> => {
        const ws = await createWorkspace(gw, `${name} ${Math.random().toString(36).slice(2, 8)}`);
        return { ws, secret: await workspaceKey(gw, ws, ['completions.write']) };
      };
      const policy = async (ws: string, over: Record<string, unknown>): Promise<string> => {
        const res = await gw.call(PATH, {
          body: { conditions: [{ key: 'workspace_id', value: ws }], group_by: [{ key: 'workspace_id' }], type: 'tokens', credit_limit: 100, workspace_id: ws, ...over },
        });
        return (await expectJson<{ id: string }>(res, 201)).id;
      };
      const get = async (id: string): Promise<UsageLimitJson> => expectJson<UsageLimitJson>(await gw.call(`${PATH}/${id}`), 200);
      const chat = (secret: string, extra: Record<string, unknown> = RESERVES_20, headers: Record<string, string> = {}): Promise<Response> =>
        gw.call('/chat/completions', {
          headers: { 'x-gateway-api-key': secret, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url, authorization: `Bearer ${OPENAI_KEY}`, ...headers },
          body: { model: 'gpt-4o-mini', messages: MESSAGES, ...extra },
        });
      const ok = async (res: Response): Promise<void> => {
        assert.equal(res.status, 200, await res.clone().text());
        await res.arrayBuffer();
      };
      const refused = async (res: Response, pattern: RegExp): Promise<void> => {
        const e = await assertEnvelope(res, 412);
        assert.equal(e.code, 'usage_limit_exceeded');
        assert.match(e.message, pattern);
      };

      before(async () => {
        openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
      });
      afterEach(() => openai.reset());
      after(async () => {
        await openai.close();
      });

      it('a token budget admits while reservations fit, then 412 with nothing sent; alerts recorded; raising the limit re-opens', async () => {
        const t = await tenant('tokens');
        const id = await policy(t.ws, { credit_limit: 100, alert_threshold: 50 });
        // Each request reserves 20 and uses 30: 30, 60, 90 admitted; 90 + 20 does not fit.
        openai.enqueue('/v1/chat/completions', answerUsing(30), answerUsing(30), answerUsing(30), answerUsing(30));
        await ok(await chat(t.secret));
        assert.equal((await get(id)).threshold_alerted_at, null);
        await ok(await chat(t.secret));
        const alerted = await get(id);
        assert.ok(alerted.threshold_alerted_at !== null, 'crossing the threshold is recorded');
        assert.equal(alerted.status, 'active');
        await ok(await chat(t.secret));
        await refused(await chat(t.secret), /no room for this request's estimated usage/);
        assert.equal(openai.requests.length, 3, 'refused requests never reach the provider');

        // A smaller request fits (90 + 10) and its usage exhausts the budget.
        await ok(await chat(t.secret, { max_tokens: 2 }));
        const exhausted = await get(id);
        assert.equal(exhausted.status, 'exhausted');
        assert.ok(exhausted.exhausted_at !== null);
        await refused(await chat(t.secret, { max_tokens: 1 }), new RegExp(`usage limit of 100 tokens exhausted \\(policy ${id}\\)`));
        assert.equal(openai.requests.length, 4);

        const raised = await expectJson<UsageLimitJson>(await gw.call(`${PATH}/${id}`, { method: 'PUT', body: { credit_limit: 1000 } }), 200);
        assert.deepEqual([raised.status, raised.exhausted_at, raised.threshold_alerted_at], ['active', null, null]);
        openai.enqueue('/v1/chat/completions', answerUsing(30));
        await ok(await chat(t.secret));
        assert.equal(openai.requests.length, 5);
      });

      it('a concurrent burst cannot overshoot: a budget for 3 reservations lets 3 of 10 through', async () => {
        const t = await tenant('burst');
        await policy(t.ws, { credit_limit: 60 });
        openai.enqueue('/v1/chat/completions', ...Array.from({ length: 10 }, () => answerUsing(20, 200)));
        const statuses = await Promise.all(
          Array.from({ length: 10 }, async () => {
            const res = await chat(t.secret);
            await res.arrayBuffer();
            return res.status;
          }),
        );
        assert.equal(statuses.filter((s) => s === 200).length, 3, statuses.join(','));
        assert.equal(statuses.filter((s) => s === 412).length, 7, statuses.join(','));
        assert.equal(openai.requests.length, 3);
      });

      it('settling with the real usage lets later requests in; an upstream error gives its reservation back', async () => {
        const t = await tenant('settle');
        await policy(t.ws, { credit_limit: 60 });
        // Reservations of 20 settle to 5: without settlement only 3 would fit; with it, 9 (40 + 20 fits, 45 + 20 does not).
        openai.enqueue('/v1/chat/completions', ...Array.from({ length: 9 }, () => answerUsing(5)));
        for (let i = 0; i < 9; i++) await ok(await chat(t.secret));
        await refused(await chat(t.secret), /no room/);
        assert.equal(openai.requests.length, 9);

        const u = await tenant('errors');
        await policy(u.ws, { credit_limit: 40 });
        const failure = { status: 500, body: { error: { message: 'boom', type: 'server_error', param: null, code: null } } };
        openai.enqueue('/v1/chat/completions', failure, failure, failure, failure);
        for (let i = 0; i < 4; i++) assert.equal((await chat(u.secret)).status, 500);
        openai.enqueue('/v1/chat/completions', answerUsing(10), answerUsing(10));
        await ok(await chat(u.secret));
        await ok(await chat(u.secret));
        assert.equal(openai.requests.length, 15);
      });

      it('groups by metadata: each team has its own budget; other workspaces are not limited', async () => {
        const t = await tenant('teams');
        await policy(t.ws, { credit_limit: 30, group_by: [{ key: 'metadata.team' }] });
        const team = (name: string) => ({ 'x-gateway-metadata': JSON.stringify({ team: name }) });
        openai.enqueue('/v1/chat/completions', answerUsing(30), answerUsing(30));
        await ok(await chat(t.secret, RESERVES_20, team('red')));
        await refused(await chat(t.secret, RESERVES_20, team('red')), /exhausted/);
        await ok(await chat(t.secret, RESERVES_20, team('blue')));
        const other = await tenant('unlimited');
        await ok(await chat(other.secret));
        assert.equal(openai.requests.length, 3);
      });

      it('a cost budget charges the catalog price of the model: exhausted by usage worth the limit', async () => {
        const t = await tenant('cost');
        const usage = { prompt_tokens: 5000, completion_tokens: 5000 };
        const limit = cost('openai', 'gpt-4o-mini', usage)!;
        const id = await policy(t.ws, { type: 'cost', credit_limit: limit });
        openai.enqueue('/v1/chat/completions', answerUsing(10_000, 0, 5000));
        await ok(await chat(t.secret));
        assert.equal((await get(id)).status, 'exhausted');
        await refused(await chat(t.secret), new RegExp(`usage limit of ${limit} USD exhausted`));
        assert.equal(openai.requests.length, 1);
      });

      it('a periodic budget resets with its period; last_reset_at and next_usage_reset_at follow it', async () => {
        const t = await tenant('reset');
        const id = await policy(t.ws, { credit_limit: 30, periodic_reset_days: 1 });
        openai.enqueue('/v1/chat/completions', answerUsing(30), answerUsing(30));
        await ok(await chat(t.secret));
        await refused(await chat(t.secret), /exhausted/);
        assert.equal((await get(id)).status, 'exhausted');

        gw.clock.advance(DAY);
        const start = midnight(gw.clock.now);
        const reset = await get(id);
        assert.deepEqual([reset.status, reset.exhausted_at, reset.last_reset_at, reset.next_usage_reset_at], ['active', null, iso(start), iso(start + DAY)]);
        await ok(await chat(t.secret));
        assert.equal(openai.requests.length, 2);
      });

      it('a budget that fails closed counts like any other while its counters answer', async () => {
        const t = await tenant('closed');
        await policy(t.ws, { credit_limit: 40, fail_mode: 'closed' });
        openai.enqueue('/v1/chat/completions', answerUsing(20), answerUsing(20));
        await ok(await chat(t.secret));
        await ok(await chat(t.secret));
        await refused(await chat(t.secret), /exhausted/);
        assert.equal(openai.requests.length, 2);
      });

      it('archived budgets do not apply', async () => {
        const t = await tenant('archived');
        const id = await policy(t.ws, { credit_limit: 1 });
        await refused(await chat(t.secret), /no room/);
        await expectJson(await gw.call(`${PATH}/${id}`, { method: 'PUT', body: { status: 'archived' } }), 200);
        await ok(await chat(t.secret));
      });
    });
  }
}
