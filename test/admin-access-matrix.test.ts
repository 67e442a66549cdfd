// The authorisation matrix of the management API, on both engines: every route of
// the route table (src/admin/routes.ts) × every kind of key × the workspace keys'
// own workspace and another, one request per cell, against the answer it must get:
// allowed (2xx), 403 or 404. A route without an entry in EXPECTED fails, so a new
// route cannot ship unjudged. Every key holds every scope: what is tested is what
// key levels, roles and workspace isolation decide (each route's scope is tested
// in its own suite).
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KNOWN_SCOPES } from '../src/admin/access.js';
import { ADMIN_ROUTES } from '../src/admin/routes.js';
import { engines } from './support/engines.js';
import { email, type Json } from './support/identity.js';
import { logRecord } from './support/logs.js';
import { workspaceKey } from './support/tenants.js';
import { useGateway, type SuiteGateway } from './support/use-gateway.js';

/**
 * The callers, in the order of an answer row: an organisation service key, then
 * keys of workspace A: its service key, and its users' keys, of an organisation
 * admin seated as a member, then of the workspace's admin, manager and member.
 */
const WHO = ['org service', 'ws service', 'org admin', 'ws admin', 'manager', 'member'] as const;
type Who = (typeof WHO)[number];

/** One cell's request: the route's path parameters, a query string, a body that passes the route's schema. */
interface Cell {
  params?: Record<string, string>;
  query?: string;
  body?: unknown;
}

interface Expected {
  /**
   * The answers of WHO, space-separated (`ok`: 2xx, `403`, `404`): first with
   * the object or workspace in A, the workspace keys' own, then in B, another.
   * One row for a route whose object belongs to no workspace.
   */
  answers: readonly [string] | readonly [string, string];
  /** The cell's request in workspace `ws`; objects the request uses up (deleted, claimed, accepted) are made fresh for it. */
  request(f: Fixtures, ws: string): Promise<Cell>;
}

const ALL = 'ok ok ok ok ok ok';
/** Organisation keys only. */
const ORG = 'ok 403 403 403 403 403';
/** Another workspace's object does not exist for workspace keys, an organisation admin's included. */
const HIDDEN = 'ok 404 404 404 404 404';
/** Naming another workspace is refused to workspace keys. */
const DENIED = 'ok 403 403 403 403 403';
/** Workspace admins and above (a workspace service key acts as the workspace's admin). */
const ADMINS = 'ok ok ok ok 403 403';
/** Managers and above. */
const MANAGERS = 'ok ok ok ok ok 403';

/** Makes the objects cells act on, as the bootstrap admin. */
class Fixtures {
  private n = 0;

  constructor(private readonly gw: SuiteGateway) {}

  name(tag: string): string {
    return `${tag}-${++this.n}`;
  }

  async made(path: string, body: unknown): Promise<Json> {
    const res = await this.gw.call(path, { body });
    const out = await res.json();
    assert.ok(res.status === 200 || res.status === 201, `fixture ${path}: ${res.status} ${JSON.stringify(out)}`);
    return out;
  }

  async workspace(): Promise<string> {
    return (await this.made('/workspaces', { name: this.name('ws') })).id;
  }

  /** A user with this organisation role, seated in these workspaces. */
  async user(seats: { id: string; role: string }[] = [], role = 'member'): Promise<string> {
    return (await this.made('/users', { email: email('matrix'), role, workspaces: seats })).id;
  }

  async serviceKey(ws: string, extra: Record<string, unknown> = {}): Promise<string> {
    return (await this.made('/api-keys/workspace/service', { name: this.name('key'), scopes: ['logs.view'], workspace_id: ws, ...extra })).id;
  }

  /** A service key whose scheduled rotation has run: its new secret waits to be claimed. */
  async rotatedKey(ws: string): Promise<string> {
    const day = new Date(this.gw.clock.now + 2 * 86_400_000).toISOString().slice(0, 10);
    const id = await this.serviceKey(ws, { rotation_policy: { next_rotation_at: day } });
    this.gw.clock.advance(3 * 86_400_000);
    assert.equal(await this.gw.rotateDueKeys(), 1);
    return id;
  }

  async config(ws: string): Promise<string> {
    return (await this.made('/configs', { name: this.name('config'), config: { provider: 'openai', api_key: 'sk-matrix' }, workspace_id: ws })).id;
  }

  async guardrail(ws: string): Promise<string> {
    return (await this.made('/guardrails', { ...GUARDRAIL, name: this.name('guardrail'), workspace_id: ws })).id;
  }

  async ratePolicy(ws: string): Promise<string> {
    return (await this.made('/policies/rate-limits', { ...POLICY, type: 'requests', unit: 'rpm', value: 100, workspace_id: ws })).id;
  }

  async usagePolicy(ws: string): Promise<string> {
    return (await this.made('/policies/usage-limits', { ...POLICY, type: 'cost', credit_limit: 100, workspace_id: ws })).id;
  }

  /** A prompt (`/prompts`) or partial (`/prompts/partials`) with version 1 labelled staging. */
  async template(base: string, ws: string): Promise<string> {
    const id = (await this.made(base, { name: this.name('prompt'), string: 'Hi {{x}}', workspace_id: ws })).id;
    const res = await this.gw.call(`${base}/${id}/labels/staging`, { method: 'PUT', body: { version: 1 } });
    assert.equal(res.status, 200, await res.text());
    return id;
  }

  async virtualKey(ws: string): Promise<string> {
    return (await this.made('/virtual-keys', { name: this.name('vk'), provider: 'openai', key: 'sk-matrix', workspace_id: ws })).id;
  }

  /** A workspace's integration, or the organisation's (ws null). */
  async integration(ws: string | null): Promise<string> {
    const where = ws === null ? {} : { workspace_id: ws, create_default_provider: false };
    return (await this.made('/integrations', { name: this.name('integration'), ai_provider_id: 'openai', key: 'sk-matrix', ...where })).id;
  }

  async invite(): Promise<string> {
    return (await this.made('/users/invites', { email: email('invited') })).id;
  }

  async scimMapping(ws: string): Promise<string> {
    return (await this.made('/scim/workspaces', { scim_group_name: this.name('group'), workspace_id: ws, role: 'member' })).id;
  }

  async scimGroup(): Promise<string> {
    return (await this.made('/scim/v2/Groups', { displayName: this.name('group') })).id;
  }

  async log(ws: string): Promise<string> {
    const record = logRecord({ workspaceId: ws });
    await this.gw.store.logs.insert([record]);
    return record.id;
  }
}

const GUARDRAIL = { checks: [{ id: 'default.wordCount', parameters: { minWords: 1 } }], actions: { deny: true } };
const POLICY = { conditions: [{ key: 'api_key', value: '*' }], group_by: [{ key: 'api_key' }] };

/** Workspace-bound routes over an object of the workspace, `made` fresh for each cell. */
function onObject(made: (f: Fixtures, ws: string) => Promise<string>, own: string, extra: Omit<Cell, 'params'> = {}): Expected {
  return { answers: [own, HIDDEN], request: async (f, ws) => ({ params: { id: await made(f, ws) }, ...extra }) };
}

/** Workspace-bound routes naming the workspace in the query (lists) or the body (creation). */
function inWorkspace(own: string, cell: (f: Fixtures, ws: string) => Cell | Promise<Cell>): Expected {
  return { answers: [own, DENIED], request: async (f, ws) => cell(f, ws) };
}

const listed = (ws: string): Cell => ({ query: `workspace_id=${ws}` });

/** Routes of the organisation itself. */
function organisation(request: Expected['request'] = async () => ({})): Expected {
  return { answers: [ORG], request };
}

/** The routes prompts and partials share: their own rows are the same, at `base`. */
function templateRows(base: string): Record<string, Expected> {
  const made = (f: Fixtures, ws: string): Promise<string> => f.template(base, ws);
  const at = (extra: Record<string, string>, body?: unknown): Expected => ({
    answers: [ALL, HIDDEN],
    request: async (f, ws) => ({ params: { id: await made(f, ws), ...extra }, body }),
  });
  return {
    [`POST ${base}`]: inWorkspace(ALL, (f, ws) => ({ body: { name: f.name('prompt'), string: 'Hi {{x}}', workspace_id: ws } })),
    [`GET ${base}`]: inWorkspace(ALL, (_, ws) => listed(ws)),
    [`GET ${base}/:id`]: onObject(made, ALL),
    [`PUT ${base}/:id`]: onObject(made, ALL, { body: { string: 'Hello {{x}}' } }),
    [`DELETE ${base}/:id`]: onObject(made, ALL),
    [`GET ${base}/:id/versions`]: onObject(made, ALL),
    [`GET ${base}/:id/versions/:version`]: at({ version: '1' }),
    [`PUT ${base}/:id/makeDefault`]: onObject(made, ALL, { body: { version: 1 } }),
    [`PUT ${base}/:id/labels/:label`]: at({ label: 'production' }, { version: 1 }),
    [`DELETE ${base}/:id/labels/:label`]: at({ label: 'staging' }),
  };
}

const EXPECTED: Readonly<Record<string, Expected>> = {
  ...templateRows('/prompts'),
  ...templateRows('/prompts/partials'),
  'POST /prompts/:id/render': onObject((f, ws) => f.template('/prompts', ws), ALL, { body: { variables: { x: 'there' } } }),

  'POST /workspaces': organisation(async (f) => ({ body: { name: f.name('ws') } })),
  'GET /workspaces': { answers: [ALL], request: async () => ({}) },
  'GET /workspaces/:id': { answers: [ALL, HIDDEN], request: async (_, ws) => ({ params: { id: ws } }) },
  'PUT /workspaces/:id': { answers: [ORG, ORG], request: async (_, ws) => ({ params: { id: ws }, body: { description: 'changed' } }) },
  'DELETE /workspaces/:id': organisation(async (f) => ({ params: { id: await f.workspace() } })),
  // Members: managers and above, never above themselves: a manager adds a manager, and neither changes nor removes an admin.
  'POST /workspaces/:id/users': { answers: [MANAGERS, HIDDEN], request: async (f, ws) => ({ params: { id: ws }, body: { users: [{ id: await f.user(), role: 'manager' }] } }) },
  'GET /workspaces/:id/users': { answers: [ALL, HIDDEN], request: async (_, ws) => ({ params: { id: ws } }) },
  'GET /workspaces/:id/users/:userId': { answers: [ALL, HIDDEN], request: async (f, ws) => ({ params: { id: ws, userId: await f.user([{ id: ws, role: 'member' }]) } }) },
  'PUT /workspaces/:id/users/:userId': {
    answers: [ADMINS, HIDDEN],
    request: async (f, ws) => ({ params: { id: ws, userId: await f.user([{ id: ws, role: 'admin' }]) }, body: { role: 'admin' } }),
  },
  'DELETE /workspaces/:id/users/:userId': { answers: [ADMINS, HIDDEN], request: async (f, ws) => ({ params: { id: ws, userId: await f.user([{ id: ws, role: 'admin' }]) } }) },
  'GET /organisation/settings': organisation(),
  'PUT /organisation/settings': organisation(async () => ({ body: {} })),
  'GET /workspaces/:id/settings': { answers: [ALL, HIDDEN], request: async (_, ws) => ({ params: { id: ws } }) },

  'POST /users': organisation(async () => ({ body: { email: email('new') } })),
  'GET /users': organisation(),
  'GET /users/:id': organisation(async (f) => ({ params: { id: await f.user() } })),
  'PUT /users/:id': organisation(async (f) => ({ params: { id: await f.user() }, body: { first_name: 'Changed' } })),
  'DELETE /users/:id': organisation(async (f) => ({ params: { id: await f.user() } })),
  'POST /users/invites': organisation(async () => ({ body: { email: email('invite') } })),
  'GET /users/invites': organisation(),
  'GET /users/invites/:id': organisation(async (f) => ({ params: { id: await f.invite() } })),
  'POST /users/invites/:id/accept': organisation(async (f) => ({ params: { id: await f.invite() }, body: {} })),
  'DELETE /users/invites/:id': organisation(async (f) => ({ params: { id: await f.invite() } })),
  'POST /scim/workspaces': { answers: [ORG, ORG], request: async (f, ws) => ({ body: { scim_group_name: f.name('group'), workspace_id: ws, role: 'member' } }) },
  'GET /scim/workspaces': organisation(),
  'DELETE /scim/workspaces/:id': { answers: [ORG, ORG], request: async (f, ws) => ({ params: { id: await f.scimMapping(ws) } }) },
  'POST /scim/v2/Users': organisation(async () => ({ body: { userName: email('scim') } })),
  'POST /scim/v2/Groups': organisation(async (f) => ({ body: { displayName: f.name('group') } })),
  'PATCH /scim/v2/Groups/:id': organisation(async (f) => ({
    params: { id: await f.scimGroup() },
    body: { Operations: [{ op: 'replace', path: 'displayName', value: f.name('renamed') }] },
  })),

  // A workspace service key acts as the workspace's admin: managers and members neither make nor touch one.
  'POST /api-keys/:type/:subType': inWorkspace(ADMINS, (f, ws) => ({
    params: { type: 'workspace', subType: 'service' },
    body: { name: f.name('key'), scopes: ['logs.view'], workspace_id: ws },
  })),
  'GET /api-keys': inWorkspace(ALL, (_, ws) => listed(ws)),
  'GET /api-keys/:id': onObject((f, ws) => f.serviceKey(ws), ALL),
  'PUT /api-keys/:id': onObject((f, ws) => f.serviceKey(ws), ADMINS, { body: { name: 'changed' } }),
  'DELETE /api-keys/:id': onObject((f, ws) => f.serviceKey(ws), ADMINS),
  'POST /api-keys/:id/rotate': onObject((f, ws) => f.serviceKey(ws), ADMINS, { body: {} }),
  'POST /api-keys/:id/rotated-key': onObject((f, ws) => f.rotatedKey(ws), ADMINS, { body: {} }),

  'POST /configs': inWorkspace(ALL, (f, ws) => ({ body: { name: f.name('config'), config: { provider: 'openai', api_key: 'sk-matrix' }, workspace_id: ws } })),
  'GET /configs': inWorkspace(ALL, (_, ws) => listed(ws)),
  'POST /configs/validate': { answers: [ALL], request: async () => ({ body: { config: { provider: 'openai', api_key: 'sk-matrix' } } }) },
  'GET /configs/:id': onObject((f, ws) => f.config(ws), ALL),
  'PUT /configs/:id': onObject((f, ws) => f.config(ws), ALL, { body: { name: 'changed' } }),
  'DELETE /configs/:id': onObject((f, ws) => f.config(ws), ALL),
  'GET /configs/:id/versions': onObject((f, ws) => f.config(ws), ALL),
  'GET /configs/:id/versions/:versionId': {
    answers: [ALL, HIDDEN],
    request: async (f, ws) => ({ params: { id: await f.config(ws), versionId: '1' } }),
  },

  'POST /guardrails': inWorkspace(ALL, (f, ws) => ({ body: { ...GUARDRAIL, name: f.name('guardrail'), workspace_id: ws } })),
  'GET /guardrails': inWorkspace(ALL, (_, ws) => listed(ws)),
  'GET /guardrails/:id': onObject((f, ws) => f.guardrail(ws), ALL),
  'PUT /guardrails/:id': onObject((f, ws) => f.guardrail(ws), ALL, { body: { name: 'changed' } }),
  'DELETE /guardrails/:id': onObject((f, ws) => f.guardrail(ws), ALL),

  'POST /policies/rate-limits': inWorkspace(ALL, (_, ws) => ({ body: { ...POLICY, type: 'requests', unit: 'rpm', value: 100, workspace_id: ws } })),
  'GET /policies/rate-limits': inWorkspace(ALL, (_, ws) => listed(ws)),
  'GET /policies/rate-limits/:id': onObject((f, ws) => f.ratePolicy(ws), ALL),
  'PUT /policies/rate-limits/:id': onObject((f, ws) => f.ratePolicy(ws), ALL, { body: { value: 200 } }),
  'DELETE /policies/rate-limits/:id': onObject((f, ws) => f.ratePolicy(ws), ALL),
  'POST /policies/usage-limits': inWorkspace(ALL, (_, ws) => ({ body: { ...POLICY, type: 'cost', credit_limit: 100, workspace_id: ws } })),
  'GET /policies/usage-limits': inWorkspace(ALL, (_, ws) => listed(ws)),
  'GET /policies/usage-limits/:id': onObject((f, ws) => f.usagePolicy(ws), ALL),
  'PUT /policies/usage-limits/:id': onObject((f, ws) => f.usagePolicy(ws), ALL, { body: { credit_limit: 200 } }),
  'DELETE /policies/usage-limits/:id': onObject((f, ws) => f.usagePolicy(ws), ALL),

  'POST /virtual-keys': inWorkspace(ALL, (f, ws) => ({ body: { name: f.name('vk'), provider: 'openai', key: 'sk-matrix', workspace_id: ws } })),
  'GET /virtual-keys': inWorkspace(ALL, (_, ws) => listed(ws)),
  'GET /virtual-keys/:id': onObject((f, ws) => f.virtualKey(ws), ALL),
  'PUT /virtual-keys/:id': onObject((f, ws) => f.virtualKey(ws), ALL, { body: { name: 'changed' } }),
  'DELETE /virtual-keys/:id': onObject((f, ws) => f.virtualKey(ws), ALL),

  // A workspace's integrations are written by its managers (while managersWriteWsIntegrations is on, the default) and above.
  'POST /integrations': inWorkspace(MANAGERS, (f, ws) => ({
    body: { name: f.name('integration'), ai_provider_id: 'openai', key: 'sk-matrix', workspace_id: ws, create_default_provider: false },
  })),
  'GET /integrations': inWorkspace(ALL, (_, ws) => listed(ws)),
  'GET /integrations/:id': onObject((f, ws) => f.integration(ws), ALL),
  'PUT /integrations/:id': onObject((f, ws) => f.integration(ws), MANAGERS, { body: { name: 'changed' } }),
  'DELETE /integrations/:id': onObject((f, ws) => f.integration(ws), MANAGERS),
  'GET /integrations/:id/integration-models': onObject((f, ws) => f.integration(ws), ALL),
  'PUT /integrations/:id/integration-models': onObject((f, ws) => f.integration(ws), MANAGERS, { body: { models: [{ slug: 'gpt-4o', enabled: true }] } }),
  'DELETE /integrations/:id/integration-models': onObject((f, ws) => f.integration(ws), MANAGERS, { query: 'slugs=gpt-4o' }),
  'GET /integrations/:id/workspaces': organisation(async (f) => ({ params: { id: await f.integration(null) } })),
  'PUT /integrations/:id/workspaces': organisation(async (f) => ({ params: { id: await f.integration(null) }, body: { workspaces: [{ id: 'default', enabled: true }] } })),

  'GET /logs': inWorkspace(ALL, (_, ws) => listed(ws)),
  'GET /logs/:id': onObject((f, ws) => f.log(ws), ALL),
  'GET /logs/groups/:groupBy': inWorkspace(ALL, (_, ws) => ({ params: { groupBy: 'model' }, ...listed(ws) })),
  'GET /analytics/groups/:groupBy': inWorkspace(ALL, (_, ws) => ({ params: { groupBy: 'model' }, ...listed(ws) })),
};

function pathOf(path: string, params: Record<string, string> = {}): string {
  return path.replace(/:(\w+)/g, (_, name: string) => {
    const value = params[name];
    assert.ok(value !== undefined, `${path}: the cell gives no :${name}`);
    return encodeURIComponent(value);
  });
}

function answerOf(status: number): string {
  return status >= 200 && status < 300 ? 'ok' : String(status);
}

for (const engine of engines()) {
  describe(`authorisation matrix (${engine.name})`, { timeout: 120_000 }, () => {
    const gw = useGateway(engine);
    const f = new Fixtures(gw);
    /** Workspace A (the workspace keys' own) and B. */
    const ws = { own: '', other: '' };
    const keys = {} as Record<Who, string>;

    before(async () => {
      ws.own = await f.workspace();
      ws.other = await f.workspace();
      const every = [...KNOWN_SCOPES];
      const defaultWs = (await gw.store.workspaces.default()).id;
      keys['org service'] = await workspaceKey(gw, defaultWs, every, { type: 'organisation' });
      keys['ws service'] = await workspaceKey(gw, ws.own, every);
      const userKey = async (who: Who, role: string, orgRole = 'member') => {
        const userId = await f.user([{ id: ws.own, role }], orgRole);
        keys[who] = await workspaceKey(gw, ws.own, every, { subType: 'user', userId });
      };
      await userKey('org admin', 'member', 'admin');
      await userKey('ws admin', 'admin');
      await userKey('manager', 'manager');
      await userKey('member', 'member');
    });

    it('every entry of the matrix is a route of the route table', () => {
      const routes = new Set(ADMIN_ROUTES.map((r) => `${r.method} ${r.path}`));
      assert.deepEqual(Object.keys(EXPECTED).filter((k) => !routes.has(k)), []);
    });

    for (const route of ADMIN_ROUTES) {
      const name = `${route.method} ${route.path}`;
      it(name, async () => {
        const expected = EXPECTED[name];
        assert.ok(expected !== undefined, `${name} has no row in the authorisation matrix: add what each kind of key must get`);
        const got: string[] = [];
        for (const [i, where] of (['own', 'other'] as const).slice(0, expected.answers.length).entries()) {
          const row: string[] = [];
          for (const who of WHO) {
            const cell = await expected.request(f, ws[where]);
            const query = cell.query === undefined ? '' : `?${cell.query}`;
            const res = await gw.call(`${pathOf(route.path, cell.params)}${query}`, { method: route.method, body: cell.body, headers: { 'x-gateway-api-key': keys[who] } });
            await res.arrayBuffer();
            row.push(answerOf(res.status));
          }
          got[i] = row.join(' ');
        }
        assert.deepEqual(got, [...expected.answers], `${name}: answers of ${WHO.join(', ')} (own workspace, another)`);
      });
    }
  });
}
