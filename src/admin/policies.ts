/**
 * The management routes every policy kind has, under the kind's path:
 * create, list (`status`, `workspace_id` and the kind's own filters), read,
 * update (archive and restore through `status`), delete. A policy belongs to
 * one workspace and applies to requests made in it; workspace keys see and
 * manage only their own workspace's policies. Conditions, group_by and
 * fail_mode are the same for every kind; what a kind adds (its fields, their rules, its
 * view) comes from its `PolicyAdmin`.
 */
import type { SchemaObject } from 'ajv';
import { ENDPOINT_TYPES } from '../limits/endpoint-types.js';
import { invalid, type Result } from '../shared/errors.js';
import {
  FAIL_MODES,
  POLICY_STATUSES,
  type FailMode,
  type NewPolicy,
  type OwnFields,
  type Policy,
  type PolicyCondition,
  type PolicyGroupBy,
  type PolicyPatch,
  type PolicyRepo,
  type PolicyStatus,
} from '../store/policies.js';
import type { Store } from '../store/store.js';
import type { Workspace } from '../store/workspaces.js';
import { listedWorkspace, notFound, visibleTo, writableWorkspace, type Caller } from './access.js';
import { bodyChecker, iso, LISTED_WORKSPACE, listReply, queryOf, reply, S } from './input.js';
import { route, type AdminDeps, type Route } from './router.js';

interface CreateBody {
  name?: string;
  conditions: PolicyCondition[];
  group_by: PolicyGroupBy[];
  fail_mode?: FailMode;
  workspace_id?: string;
  /** Accepted as Portkey clients send it; this gateway serves one organisation. */
  organisation_id?: string;
}

interface UpdateBody {
  name?: string;
  conditions?: PolicyCondition[];
  group_by?: PolicyGroupBy[];
  fail_mode?: FailMode;
  status?: PolicyStatus;
}

/**
 * What a policy kind adds to the routes. `C` and `U` are the kind's own
 * fields of a create and an update body (what is left without the fields
 * every policy has).
 */
export interface PolicyAdmin<P extends Policy, N extends NewPolicy, C, U> {
  /** Under /v1: `/policies/rate-limits`. */
  path: string;
  /** The answers' `object`. */
  object: string;
  /** What a 404 names: `rate-limit policy`. */
  what: string;
  repo(store: Store): PolicyRepo<P, N>;
  /** Schemas of the kind's own body fields, and those a create needs. */
  fields: Record<string, SchemaObject>;
  required: readonly string[];
  /** List query parameters, each an own field (named alike) with the values it may take. */
  filters: { readonly [K in keyof OwnFields<P>]?: readonly P[K][] };
  /** Whether a read honours `?status=` (a policy in the other status is 404). */
  readsByStatus: boolean;
  /** The answer's own fields and `status`, between `group_by` and `workspace_id`. */
  view(p: P, nowMs: number): Record<string, unknown>;
  /** A new policy's own fields; 400 for a rule the schema cannot state. */
  create(body: C): Result<Omit<N, keyof NewPolicy>>;
  /** What an update changes of the own fields of `current`; 400 for a rule the schema cannot state. */
  update(body: U, current: P): Result<PolicyPatch<P>>;
}

/** What a condition or group_by entry may name. Metadata names follow the metadata limit (64 characters). */
const KEY = {
  type: 'string',
  pattern: '^(workspace_id|api_key|endpoint_type|metadata\\..{1,64})$',
  description: 'workspace_id, api_key, endpoint_type or metadata.<key> (a key of up to 64 characters)',
};

/** A metadata entry that reads only the key's own defaults.metadata (the caller's value cannot move a request to another group). */
const TRUSTED = { type: 'boolean' };

/** Which requests a policy applies to and how it groups them. */
const MATCH_FIELDS = {
  conditions: {
    type: 'array',
    minItems: 1,
    maxItems: 32,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['key', 'value'],
      properties: { key: KEY, value: { type: 'string', minLength: 1, maxLength: 512 }, trusted: TRUSTED },
    },
  },
  group_by: {
    type: 'array',
    minItems: 1,
    maxItems: 32,
    items: { type: 'object', additionalProperties: false, required: ['key'], properties: { key: KEY, trusted: TRUSTED } },
  },
};

const ANY = '*';
const ENDPOINTS: ReadonlySet<string> = new Set(ENDPOINT_TYPES);

/**
 * The rules a schema cannot state: no key twice, an endpoint type that
 * exists, and a workspace or key that requests of this workspace can carry.
 * Conditions come back with a workspace named by slug stored as its id.
 */
async function checkConditions(store: Store, ws: Workspace, conditions: readonly PolicyCondition[]): Promise<Result<PolicyCondition[]>> {
  const out: PolicyCondition[] = [];
  for (const [i, c] of conditions.entries()) {
    const param = `conditions[${i}]`;
    if (conditions.findIndex((o) => o.key === c.key) !== i) return { ok: false, error: invalid(`${param}.key: '${c.key}' appears twice`, `${param}.key`) };
    const trust = trusted(c, param);
    if (!trust.ok) return trust;
    if (c.value === ANY) {
      out.push({ key: c.key, value: c.value, ...trust.value });
      continue;
    }
    if (c.key === 'endpoint_type' && !ENDPOINTS.has(c.value)) {
      return { ok: false, error: invalid(`${param}.value: must be * or one of ${ENDPOINT_TYPES.join(', ')}`, `${param}.value`) };
    }
    if (c.key === 'workspace_id') {
      if (c.value !== ws.id && c.value !== ws.slug) {
        return { ok: false, error: invalid(`${param}.value: a policy applies to requests of its own workspace ('${ws.slug}'), or *`, `${param}.value`) };
      }
      out.push({ key: c.key, value: ws.id });
      continue;
    }
    if (c.key === 'api_key' && (await store.apiKeys.get(c.value))?.workspaceId !== ws.id) {
      return { ok: false, error: invalid(`${param}.value: no gateway key '${c.value}' makes requests in workspace '${ws.slug}'`, `${param}.value`) };
    }
    out.push({ key: c.key, value: c.value, ...trust.value });
  }
  return { ok: true, value: out };
}

/** `trusted` as stored: present (true) only on a metadata entry that asks for it. */
function trusted(k: { key: string; trusted?: boolean }, param: string): Result<{ trusted?: true }> {
  if (k.trusted !== true) return { ok: true, value: {} };
  if (!k.key.startsWith('metadata.')) return { ok: false, error: invalid(`${param}.trusted: only a metadata.<key> entry can be trusted`, `${param}.trusted`) };
  return { ok: true, value: { trusted: true } };
}

function checkGroupBy(groupBy: readonly PolicyGroupBy[]): Result<PolicyGroupBy[]> {
  const out: PolicyGroupBy[] = [];
  for (const [i, g] of groupBy.entries()) {
    if (groupBy.findIndex((o) => o.key === g.key) !== i) return { ok: false, error: invalid(`group_by[${i}].key: '${g.key}' appears twice`, `group_by[${i}].key`) };
    const trust = trusted(g, `group_by[${i}]`);
    if (!trust.ok) return trust;
    out.push({ key: g.key, ...trust.value });
  }
  return { ok: true, value: out };
}

/** A query parameter that must be one of `allowed` (comma-separated when `many`). */
function oneOf<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[], many = false): Result<T[] | undefined> {
  const raw = query.get(name);
  if (raw === null) return { ok: true, value: undefined };
  const values = many ? raw.split(',').map((s) => s.trim()) : [raw];
  const bad = values.find((v) => !allowed.includes(v as T));
  if (bad !== undefined) return { ok: false, error: invalid(`${name}: '${bad}' is not one of ${allowed.join(', ')}`, name) };
  return { ok: true, value: values as T[] };
}

export function policyRoutes<P extends Policy, N extends NewPolicy, C, U>(kind: PolicyAdmin<P, N, C, U>): Route[] {
  const fields = { name: S.name, ...MATCH_FIELDS, ...kind.fields, fail_mode: { enum: FAIL_MODES } };
  const checkCreate = bodyChecker<CreateBody & C>({
    type: 'object',
    additionalProperties: false,
    required: ['conditions', 'group_by', ...kind.required],
    properties: { ...fields, workspace_id: S.ref, organisation_id: S.ref },
  });
  const checkUpdate = bodyChecker<UpdateBody & U>({
    type: 'object',
    additionalProperties: false,
    properties: { ...fields, status: { enum: POLICY_STATUSES } },
  });

  const view = (p: P, nowMs: number): Record<string, unknown> => ({
    object: kind.object,
    id: p.id,
    name: p.name,
    conditions: p.conditions,
    group_by: p.groupBy,
    ...kind.view(p, nowMs),
    fail_mode: p.failMode,
    workspace_id: p.workspaceId,
    created_at: iso(p.createdAt),
    last_updated_at: iso(p.lastUpdatedAt),
  });

  /** A policy the caller may see; 404 otherwise (another workspace's policy is not disclosed). */
  const visible = async (deps: AdminDeps, caller: Caller, id: string): Promise<Result<P>> =>
    visibleTo(caller, await kind.repo(deps.store).get(id), (p) => p.workspaceId, kind.what, id);

  return [
    route({
      method: 'POST',
      path: kind.path,
      description: `Creates a ${kind.what}: conditions that select requests, the groups counted apart, and its limit.`,
      scope: 'policies.create',
      body: checkCreate,
      async handler({ caller, body }, deps) {
        const { name, conditions: rawConditions, group_by: rawGroupBy, fail_mode: failMode, workspace_id, organisation_id: _, ...own } = body;
        const ws = await writableWorkspace(deps.store, caller, workspace_id);
        if (!ws.ok) return ws;
        const conditions = await checkConditions(deps.store, ws.value, rawConditions);
        if (!conditions.ok) return conditions;
        const groupBy = checkGroupBy(rawGroupBy);
        if (!groupBy.ok) return groupBy;
        const fields = kind.create(own as C);
        if (!fields.ok) return fields;
        const base: NewPolicy = { workspaceId: ws.value.id, name: name ?? null, conditions: conditions.value, groupBy: groupBy.value, failMode: failMode ?? 'open' };
        const p = await kind.repo(deps.store).create({ ...base, ...fields.value } as N);
        return reply(201, { id: p.id, object: kind.object });
      },
    }),
    route({
      method: 'GET',
      path: kind.path,
      description: `Lists ${kind.what} records, filtered by status and the kind's own fields.`,
      query: queryOf({
        status: `comma-separated: ${POLICY_STATUSES.join(', ')}`,
        ...Object.fromEntries(Object.entries(kind.filters as Record<string, readonly string[]>).map(([name, allowed]) => [name, { enum: allowed }])),
        ...LISTED_WORKSPACE,
      }),
      scope: 'policies.list',
      paged: true,
      async handler({ caller, query, page }, deps) {
        const statuses = oneOf(query, 'status', POLICY_STATUSES, true);
        if (!statuses.ok) return statuses;
        const equal: Record<string, string> = {};
        for (const [name, allowed] of Object.entries(kind.filters as Record<string, readonly string[]>)) {
          const value = oneOf(query, name, allowed);
          if (!value.ok) return value;
          if (value.value !== undefined) equal[name] = value.value[0]!;
        }
        const workspaceId = await listedWorkspace(deps.store, caller, query);
        if (!workspaceId.ok) return workspaceId;
        const filter = { statuses: statuses.value ?? ['active' as const], workspaceId: workspaceId.value, equal: equal as Partial<OwnFields<P>> };
        const now = deps.now();
        return listReply(await kind.repo(deps.store).list(filter, page), (p) => view(p, now));
      },
    }),
    route({
      method: 'GET',
      path: `${kind.path}/:id`,
      description: `One ${kind.what}.`,
      query: queryOf(kind.readsByStatus ? { status: { enum: POLICY_STATUSES } } : {}),
      scope: 'policies.read',
      async handler({ caller, params, query }, deps) {
        const status = kind.readsByStatus ? oneOf(query, 'status', POLICY_STATUSES) : { ok: true as const, value: undefined };
        if (!status.ok) return status;
        const p = await visible(deps, caller, params.id!);
        if (!p.ok) return p;
        if (status.value !== undefined && p.value.status !== status.value[0]) return { ok: false, error: notFound(`${status.value[0]} ${kind.what}`, params.id!) };
        return reply(200, view(p.value, deps.now()));
      },
    }),
    route({
      method: 'PUT',
      path: `${kind.path}/:id`,
      description: `Changes a ${kind.what}.`,
      scope: 'policies.update',
      body: checkUpdate,
      async handler({ caller, params, body }, deps) {
        const found = await visible(deps, caller, params.id!);
        if (!found.ok) return found;
        const p = found.value;
        const { name, status, conditions, group_by: groupBy, fail_mode: failMode, ...own } = body;
        const patch: PolicyPatch<Policy> = {};
        if (name !== undefined) patch.name = name;
        if (failMode !== undefined) patch.failMode = failMode;
        if (status !== undefined) patch.status = status;
        if (conditions !== undefined) {
          const ws = await deps.store.workspaces.get(p.workspaceId);
          if (ws === null) return { ok: false, error: notFound(kind.what, params.id!) };
          const checked = await checkConditions(deps.store, ws, conditions);
          if (!checked.ok) return checked;
          patch.conditions = checked.value;
        }
        if (groupBy !== undefined) {
          const checked = checkGroupBy(groupBy);
          if (!checked.ok) return checked;
          patch.groupBy = checked.value;
        }
        const changed = kind.update(own as U, p);
        if (!changed.ok) return changed;
        const updated = await kind.repo(deps.store).update(p.id, { ...patch, ...changed.value } as PolicyPatch<P>);
        return updated === null ? { ok: false, error: notFound(kind.what, params.id!) } : reply(200, view(updated, deps.now()));
      },
    }),
    route({
      method: 'DELETE',
      path: `${kind.path}/:id`,
      description: `Deletes a ${kind.what}.`,
      scope: 'policies.delete',
      async handler({ caller, params }, deps) {
        const p = await visible(deps, caller, params.id!);
        if (!p.ok) return p;
        await kind.repo(deps.store).delete(p.value.id);
        return reply(200, { id: p.value.id, object: kind.object, deleted: true });
      },
    }),
  ];
}
