/**
 * /v1/policies/rate-limits: create, list (`status`, `type`, `unit`,
 * `workspace_id` filters), read (`status` filter: a policy in the other
 * status is 404), update (archive and restore through `status`), delete.
 * A policy belongs to one workspace and applies to requests made in it;
 * workspace keys see and manage only their own workspace's policies.
 */
import { invalid, type Result } from '../shared/errors.js';
import { ENDPOINT_TYPES } from '../limits/endpoint-types.js';
import {
  POLICY_STATUSES,
  RATE_LIMIT_TYPES,
  RATE_UNITS,
  type PolicyCondition,
  type PolicyGroupBy,
  type PolicyStatus,
  type RateLimitPolicy,
  type RateLimitPolicyPatch,
  type RateLimitType,
  type RateUnit,
} from '../store/rate-limit-policies.js';
import type { Store } from '../store/store.js';
import type { Workspace } from '../store/workspaces.js';
import { listedWorkspace, notFound, visibleTo, writableWorkspace, type Caller } from './access.js';
import { bodyChecker, iso, listReply, reply, S } from './input.js';
import { route, type AdminDeps, type Route } from './router.js';

const OBJECT = 'policy_rate_limits';

interface CreateBody {
  name?: string;
  conditions: PolicyCondition[];
  group_by: PolicyGroupBy[];
  type: RateLimitType;
  unit: RateUnit;
  value: number;
  workspace_id?: string;
  /** Accepted as Portkey clients send it; this gateway serves one organisation. */
  organisation_id?: string;
}

interface UpdateBody {
  name?: string;
  conditions?: PolicyCondition[];
  group_by?: PolicyGroupBy[];
  type?: RateLimitType;
  unit?: RateUnit;
  value?: number;
  status?: PolicyStatus;
}

/** What a condition or group_by entry may name. Metadata names follow the metadata limit (64 characters). */
const KEY = {
  type: 'string',
  pattern: '^(workspace_id|api_key|endpoint_type|metadata\\..{1,64})$',
  description: 'workspace_id, api_key, endpoint_type or metadata.<key> (a key of up to 64 characters)',
};

/** Which requests a policy applies to and how it groups them: shared with usage-limit policies. */
export const MATCH_FIELDS = {
  conditions: {
    type: 'array',
    minItems: 1,
    maxItems: 32,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['key', 'value'],
      properties: { key: KEY, value: { type: 'string', minLength: 1, maxLength: 512 } },
    },
  },
  group_by: {
    type: 'array',
    minItems: 1,
    maxItems: 32,
    items: { type: 'object', additionalProperties: false, required: ['key'], properties: { key: KEY } },
  },
};

const fields = {
  name: S.name,
  ...MATCH_FIELDS,
  type: { enum: RATE_LIMIT_TYPES },
  unit: { enum: RATE_UNITS },
  value: { type: 'number', exclusiveMinimum: 0 },
};

const checkCreate = bodyChecker<CreateBody>({
  type: 'object',
  additionalProperties: false,
  required: ['conditions', 'group_by', 'type', 'unit', 'value'],
  properties: { ...fields, workspace_id: S.ref, organisation_id: S.ref },
});

const checkUpdate = bodyChecker<UpdateBody>({
  type: 'object',
  additionalProperties: false,
  properties: { ...fields, status: { enum: POLICY_STATUSES } },
});

export function rateLimitPolicyView(p: RateLimitPolicy): Record<string, unknown> {
  return {
    object: OBJECT,
    id: p.id,
    name: p.name,
    conditions: p.conditions,
    group_by: p.groupBy,
    type: p.type,
    unit: p.unit,
    value: p.value,
    status: p.status,
    workspace_id: p.workspaceId,
    created_at: iso(p.createdAt),
    last_updated_at: iso(p.lastUpdatedAt),
  };
}

const ANY = '*';
const ENDPOINTS: ReadonlySet<string> = new Set(ENDPOINT_TYPES);

/**
 * The rules a schema cannot state: no key twice, an endpoint type that
 * exists, and a workspace or key that requests of this workspace can carry.
 * Conditions come back with a workspace named by slug stored as its id.
 */
export async function checkConditions(store: Store, ws: Workspace, conditions: readonly PolicyCondition[]): Promise<Result<PolicyCondition[]>> {
  const out: PolicyCondition[] = [];
  for (const [i, c] of conditions.entries()) {
    const param = `conditions[${i}]`;
    if (conditions.findIndex((o) => o.key === c.key) !== i) return { ok: false, error: invalid(`${param}.key: '${c.key}' appears twice`, `${param}.key`) };
    if (c.value === ANY) {
      out.push({ key: c.key, value: c.value });
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
    out.push({ key: c.key, value: c.value });
  }
  return { ok: true, value: out };
}

export function checkGroupBy(groupBy: readonly PolicyGroupBy[]): Result<PolicyGroupBy[]> {
  for (const [i, g] of groupBy.entries()) {
    if (groupBy.findIndex((o) => o.key === g.key) !== i) return { ok: false, error: invalid(`group_by[${i}].key: '${g.key}' appears twice`, `group_by[${i}].key`) };
  }
  return { ok: true, value: groupBy.map((g) => ({ key: g.key })) };
}

/** A policy the caller may see; 404 otherwise (another workspace's policy is not disclosed). */
async function visible(deps: AdminDeps, caller: Caller, id: string): Promise<Result<RateLimitPolicy>> {
  return visibleTo(caller, await deps.store.rateLimitPolicies.get(id), (p) => p.workspaceId, 'rate-limit policy', id);
}

/** A query parameter that must be one of `allowed` (comma-separated when `many`). */
export function oneOf<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[], many = false): Result<T[] | undefined> {
  const raw = query.get(name);
  if (raw === null) return { ok: true, value: undefined };
  const values = many ? raw.split(',').map((s) => s.trim()) : [raw];
  const bad = values.find((v) => !allowed.includes(v as T));
  if (bad !== undefined) return { ok: false, error: invalid(`${name}: '${bad}' is not one of ${allowed.join(', ')}`, name) };
  return { ok: true, value: values as T[] };
}

export const rateLimitRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/policies/rate-limits',
    scope: 'policies.create',
    body: checkCreate,
    async handler({ caller, body: b }, deps) {
      const ws = await writableWorkspace(deps.store, caller, b.workspace_id);
      if (!ws.ok) return ws;
      const conditions = await checkConditions(deps.store, ws.value, b.conditions);
      if (!conditions.ok) return conditions;
      const groupBy = checkGroupBy(b.group_by);
      if (!groupBy.ok) return groupBy;
      const p = await deps.store.rateLimitPolicies.create({
        workspaceId: ws.value.id,
        name: b.name ?? null,
        conditions: conditions.value,
        groupBy: groupBy.value,
        type: b.type,
        unit: b.unit,
        value: b.value,
      });
      return reply(201, { id: p.id, object: OBJECT });
    },
  }),
  route({
    method: 'GET',
    path: '/policies/rate-limits',
    scope: 'policies.list',
    paged: true,
    async handler({ caller, query, page }, deps) {
      const statuses = oneOf(query, 'status', POLICY_STATUSES, true);
      if (!statuses.ok) return statuses;
      const type = oneOf(query, 'type', RATE_LIMIT_TYPES);
      if (!type.ok) return type;
      const unit = oneOf(query, 'unit', RATE_UNITS);
      if (!unit.ok) return unit;
      const workspaceId = await listedWorkspace(deps.store, caller, query);
      if (!workspaceId.ok) return workspaceId;
      const filter = { statuses: statuses.value ?? ['active' as const], workspaceId: workspaceId.value, type: type.value?.[0], unit: unit.value?.[0] };
      return listReply(await deps.store.rateLimitPolicies.list(filter, page), rateLimitPolicyView);
    },
  }),
  route({
    method: 'GET',
    path: '/policies/rate-limits/:id',
    scope: 'policies.read',
    async handler({ caller, params, query }, deps) {
      const status = oneOf(query, 'status', POLICY_STATUSES);
      if (!status.ok) return status;
      const p = await visible(deps, caller, params.id!);
      if (!p.ok) return p;
      if (status.value !== undefined && p.value.status !== status.value[0]) return { ok: false, error: notFound(`${status.value[0]} rate-limit policy`, params.id!) };
      return reply(200, rateLimitPolicyView(p.value));
    },
  }),
  route({
    method: 'PUT',
    path: '/policies/rate-limits/:id',
    scope: 'policies.update',
    body: checkUpdate,
    async handler({ caller, params, body }, deps) {
      const p = await visible(deps, caller, params.id!);
      if (!p.ok) return p;
      const { conditions: newConditions, group_by: newGroupBy, ...rest } = body;
      const patch: RateLimitPolicyPatch = rest;
      if (newConditions !== undefined) {
        const ws = await deps.store.workspaces.get(p.value.workspaceId);
        if (ws === null) return { ok: false, error: notFound('rate-limit policy', params.id!) };
        const checked = await checkConditions(deps.store, ws, newConditions);
        if (!checked.ok) return checked;
        patch.conditions = checked.value;
      }
      if (newGroupBy !== undefined) {
        const checked = checkGroupBy(newGroupBy);
        if (!checked.ok) return checked;
        patch.groupBy = checked.value;
      }
      const updated = await deps.store.rateLimitPolicies.update(p.value.id, patch);
      return updated === null ? { ok: false, error: notFound('rate-limit policy', params.id!) } : reply(200, rateLimitPolicyView(updated));
    },
  }),
  route({
    method: 'DELETE',
    path: '/policies/rate-limits/:id',
    scope: 'policies.delete',
    async handler({ caller, params }, deps) {
      const p = await visible(deps, caller, params.id!);
      if (!p.ok) return p;
      await deps.store.rateLimitPolicies.delete(p.value.id);
      return reply(200, { id: p.value.id, object: OBJECT, deleted: true });
    },
  }),
];
