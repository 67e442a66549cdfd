/**
 * /v1/guardrails (Portkey's shapes): saved guardrails, `{name, checks,
 * actions}`, that configs name by id or slug and the default-guardrail
 * settings run on every request (default-guardrails.ts). A guardrail belongs
 * to a workspace (`workspace_id`, else the caller's; the default one for
 * organisation keys) or, created by an organisation key with
 * `organisation_id`, to the organisation: every workspace's keys may then
 * read and use it, and only organisation keys change it. A workspace key
 * sees its own workspace's and the organisation's guardrails; another
 * workspace's do not exist for it (404). The list pages as the spec says:
 * `current_page` (0-based), `page_size`, and `ids` (comma-separated).
 */
import { compileGuardrail } from '../guardrails/hooks.js';
import { ajv, formatPath, schemaError } from '../shared/json-schema.js';
import { MAX_PATTERN_WEIGHT } from '../shared/linear-regex.js';
import { lazy } from '../shared/memo.js';
import { err, GatewayError, invalid, ok, type Result } from '../shared/errors.js';
import { isUniqueViolation } from '../store/db.js';
import type { Guardrail, GuardrailActions, GuardrailCheck, GuardrailStatus } from '../store/guardrails.js';
import { newSlug } from '../store/ids.js';
import { actingWorkspace, canSee, listedWorkspace, notFound, requireOrganisation, writableWorkspace, type Caller } from './access.js';
import { bodyChecker, idShapedSlug, LISTED_WORKSPACE, OFFSET_QUERY, offsetPage, queryOf, reply, S, SLUG_WORKSPACE } from './input.js';
import { route, type AdminDeps, type Route } from './router.js';

interface CreateBody {
  name: string;
  checks: unknown[];
  actions?: GuardrailActions;
  slug?: string;
  workspace_id?: string;
  /** Makes an organisation guardrail; this gateway serves one organisation, so its value names nothing more. */
  organisation_id?: string;
}

interface UpdateBody {
  name?: string;
  checks?: unknown[];
  actions?: GuardrailActions;
  status?: GuardrailStatus;
}

/** A guardrail's checks run together on each request it applies to; more than this is a mistake, not a policy. */
const MAX_CHECKS = 32;
/** As many ids as a page holds. */
const MAX_IDS = 100;

const feedback = {
  type: 'object',
  additionalProperties: false,
  properties: { value: { type: 'number' }, weight: { type: 'number' }, metadata: { type: 'object' } },
};
const outcome = { type: 'object', additionalProperties: false, properties: { feedback, deny: { type: 'boolean' } } };

/** What is done with the verdict, as a config's guardrail item says it (spec: Hooks and guardrails). */
const actions = {
  type: 'object',
  additionalProperties: false,
  properties: { deny: { type: 'boolean' }, async: { type: 'boolean' }, sequential: { type: 'boolean' }, on_fail: outcome, on_success: outcome },
};

/** Each item is checked by validateChecks, which names the item in its 400. */
const checks = { type: 'array', minItems: 1, maxItems: MAX_CHECKS };

const checkCreate = bodyChecker<CreateBody>({
  type: 'object',
  additionalProperties: false,
  required: ['name', 'checks'],
  properties: { name: S.name, checks, actions, slug: S.slug, workspace_id: S.ref, organisation_id: S.ref },
});

const checkUpdate = bodyChecker<UpdateBody>({
  type: 'object',
  additionalProperties: false,
  properties: { name: S.name, checks, actions, status: { enum: ['active', 'archived'] } },
});

// Compiled on first use, as the routes' own checkers are (shared/checker.ts).
const checkShape = lazy(() =>
  ajv.compile({
  type: 'object',
  additionalProperties: false,
  required: ['id', 'parameters'],
  properties: {
    id: { type: 'string', maxLength: 128, pattern: '^[a-zA-Z0-9_-]+\\.[a-zA-Z0-9_-]+$', description: 'a check id: <provider>.<check>, e.g. default.regexMatch' },
    parameters: { type: 'object' },
  },
  }),
);

/**
 * A guardrail's checks, judged as the engine will run them (the checks'
 * registry, as config validation does): each `{id, parameters}` a check
 * this gateway runs, with parameters it takes. A 400 names the place
 * (`checks[1].id`, `checks[0].parameters.rule`).
 */
export function validateChecks(items: readonly unknown[]): Result<GuardrailCheck[]> {
  for (const [i, item] of items.entries()) {
    const shape = checkShape();
    if (!shape(item)) return err(schemaError(item, shape.errors, ['checks', i]));
  }
  const checks = items as GuardrailCheck[];
  const compiled = compileGuardrail({ id: '', checks, actions: {} }, { left: MAX_PATTERN_WEIGHT });
  if (!compiled.ok) {
    const param = formatPath(compiled.problem.path);
    return err(invalid(`${param}: ${compiled.problem.message}`, param));
  }
  return ok(checks);
}

function guardrailSummary(g: Guardrail): Record<string, unknown> {
  return {
    object: 'guardrail',
    id: g.id,
    slug: g.slug,
    name: g.name,
    workspace_id: g.workspaceId,
    status: g.status,
    version: g.version,
    version_id: g.versionId,
    created_at: g.createdAt,
    last_updated_at: g.lastUpdatedAt,
  };
}

function guardrailView(g: Guardrail): Record<string, unknown> {
  return { ...guardrailSummary(g), checks: g.checks, actions: g.actions };
}

/**
 * A guardrail the caller may see: by id (its workspace's, or the
 * organisation's), or by slug among the guardrails of the workspace the
 * query names (else the caller's own) and the organisation's; 404 otherwise.
 */
async function visible(deps: AdminDeps, caller: Caller, ref: string, query: URLSearchParams): Promise<Result<Guardrail>> {
  const byId = await deps.store.guardrails.get(ref);
  if (byId !== null && (byId.workspaceId === null || canSee(caller, byId.workspaceId))) return ok(byId);
  const ws = await actingWorkspace(deps.store, caller, query.get('workspace_id') ?? undefined);
  if (!ws.ok) return ws;
  const bySlug = await deps.store.guardrails.findFor(ref, ws.value.id);
  return bySlug === null ? err(notFound('guardrail', ref)) : ok(bySlug);
}

/** Like visible, for changes: the organisation's guardrails change only through organisation keys. */
async function writable(deps: AdminDeps, caller: Caller, ref: string, query: URLSearchParams): Promise<Result<Guardrail>> {
  const g = await visible(deps, caller, ref, query);
  if (!g.ok || g.value.workspaceId !== null) return g;
  const denied = requireOrganisation(caller, 'changing an organisation guardrail');
  return denied === null ? g : err(denied);
}

/** 409 while default-guardrail settings name it: requests would run a guardrail that is gone or archived. */
async function stillDefault(deps: AdminDeps, g: Guardrail, doing: string): Promise<GatewayError | null> {
  const where = await deps.store.settings.namingGuardrail(g.id);
  if (where.length === 0) return null;
  return new GatewayError(409, `guardrail '${g.slug}' is a default guardrail of ${where.join(', ')}: take it out of those settings before ${doing} it`, {
    code: 'conflict',
  });
}

/** The owner of a new guardrail: the organisation (null) for `organisation_id`, else the acting workspace. */
async function owner(deps: AdminDeps, caller: Caller, b: CreateBody): Promise<Result<string | null>> {
  if (b.organisation_id === undefined) {
    const ws = await writableWorkspace(deps.store, caller, b.workspace_id);
    return ws.ok ? ok(ws.value.id) : ws;
  }
  if (b.workspace_id !== undefined) return err(invalid('organisation_id: give workspace_id or organisation_id, not both', 'organisation_id'));
  const denied = requireOrganisation(caller, 'creating an organisation guardrail');
  return denied === null ? ok(null) : err(denied);
}

export const guardrailRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/guardrails',
    description: "Saves a guardrail: checks and their actions, usable by id in a config's hooks.",
    scope: 'guardrails.create',
    body: checkCreate,
    async handler({ caller, body: b }, deps) {
      const bad = idShapedSlug(b.slug);
      if (bad !== null) return err(bad);
      const checked = validateChecks(b.checks);
      if (!checked.ok) return checked;
      const workspaceId = await owner(deps, caller, b);
      if (!workspaceId.ok) return workspaceId;
      const slug = b.slug ?? newSlug(`pg ${b.name}`);
      try {
        const g = await deps.store.guardrails.create({ slug, workspaceId: workspaceId.value, name: b.name, checks: checked.value, actions: b.actions ?? {} });
        return reply(201, { object: 'guardrail', id: g.id, slug: g.slug, version_id: g.versionId });
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        const among = workspaceId.value === null ? "among the organisation's" : 'in this workspace';
        return err(new GatewayError(409, `guardrail slug '${slug}' is taken ${among}`, { code: 'conflict', param: 'slug' }));
      }
    },
  }),
  route({
    method: 'GET',
    path: '/guardrails',
    description: 'Lists saved guardrails, paged by current_page and page_size, filtered by ids.',
    query: queryOf({ ...OFFSET_QUERY.schema.properties, ids: 'comma-separated guardrail ids', ...LISTED_WORKSPACE }),
    scope: 'guardrails.list',
    async handler({ caller, query }, deps) {
      const page = offsetPage(query);
      if (!page.ok) return page;
      let ids: string[] | undefined;
      const rawIds = query.get('ids');
      if (rawIds !== null) {
        ids = [...new Set(rawIds.split(',').map((s) => s.trim()))];
        if (ids.includes('')) return err(invalid('ids: must be comma-separated guardrail ids, none empty', 'ids'));
        if (ids.length > MAX_IDS) return err(invalid(`ids: at most ${MAX_IDS} ids`, 'ids'));
      }
      // A workspace's list holds what it can use: its own guardrails and the organisation's.
      const usableBy = await listedWorkspace(deps.store, caller, query);
      if (!usableBy.ok) return usableBy;
      const found = await deps.store.guardrails.list({ usableBy: usableBy.value, ids }, page.value);
      const hasMore = (page.value.page + 1) * page.value.size < found.total;
      return reply(200, { object: 'list', total: found.total, data: found.data.map(guardrailSummary), has_more: hasMore });
    },
  }),
  route({
    method: 'GET',
    path: '/guardrails/:id',
    description: 'One saved guardrail (by id or slug).',
    query: queryOf(SLUG_WORKSPACE),
    scope: 'guardrails.read',
    async handler({ caller, params, query }, deps) {
      const g = await visible(deps, caller, params.id!, query);
      return g.ok ? reply(200, guardrailView(g.value)) : g;
    },
  }),
  route({
    method: 'PUT',
    path: '/guardrails/:id',
    description: 'Changes a saved guardrail.',
    query: queryOf(SLUG_WORKSPACE),
    scope: 'guardrails.update',
    body: checkUpdate,
    async handler({ caller, params, query, body: b }, deps) {
      const g = await writable(deps, caller, params.id!, query);
      if (!g.ok) return g;
      let checks: GuardrailCheck[] | undefined;
      if (b.checks !== undefined) {
        const checked = validateChecks(b.checks);
        if (!checked.ok) return checked;
        checks = checked.value;
      }
      if (b.status === 'archived' && g.value.status !== 'archived') {
        const conflict = await stillDefault(deps, g.value, 'archiving');
        if (conflict !== null) return err(conflict);
      }
      const updated = await deps.store.guardrails.update(g.value.id, { name: b.name, checks, actions: b.actions, status: b.status });
      return updated === null ? err(notFound('guardrail', params.id!)) : reply(200, guardrailView(updated));
    },
  }),
  route({
    method: 'DELETE',
    path: '/guardrails/:id',
    description: 'Deletes a saved guardrail.',
    query: queryOf(SLUG_WORKSPACE),
    scope: 'guardrails.delete',
    async handler({ caller, params, query }, deps) {
      const g = await writable(deps, caller, params.id!, query);
      if (!g.ok) return g;
      const conflict = await stillDefault(deps, g.value, 'deleting');
      if (conflict !== null) return err(conflict);
      if (!(await deps.store.guardrails.delete(g.value.id))) return err(notFound('guardrail', params.id!));
      return reply(200, { object: 'guardrail', id: g.value.id, deleted: true });
    },
  }),
];
