/**
 * /v1/policies/usage-limits: budgets of cost (USD) or tokens per workspace,
 * key or metadata group: create, list (`status`, `type`, `workspace_id`
 * filters), read, update (archive and restore through `status`), delete.
 * Conditions and group_by are those of rate-limit policies. The view's
 * `status` is `exhausted` while a group has used the whole credit limit in
 * the current period; `threshold_alerted_at` and `exhausted_at` record the
 * alerts (there is no mail to send) and clear with the period, or when the
 * limit (or threshold) is raised.
 */
import { invalid, type Result } from '../shared/errors.js';
import { lastResetAt, periodOf, utcMidnight } from '../limits/budget-period.js';
import { POLICY_STATUSES, type PolicyCondition, type PolicyGroupBy, type PolicyStatus } from '../store/rate-limit-policies.js';
import {
  PERIODIC_RESETS,
  USAGE_LIMIT_TYPES,
  type PeriodicReset,
  type UsageLimitPolicy,
  type UsageLimitPolicyPatch,
  type UsageLimitType,
} from '../store/usage-limit-policies.js';
import { listedWorkspace, notFound, visibleTo, writableWorkspace, type Caller } from './access.js';
import { bodyChecker, iso, listReply, reply, S } from './input.js';
import { ISO_DATE, realDay } from './key-policy.js';
import { checkConditions, checkGroupBy, MATCH_FIELDS, oneOf } from './rate-limits.js';
import { route, type AdminDeps, type Route } from './router.js';

const OBJECT = 'policy_usage_limits';
const WHAT = 'usage-limit policy';

interface Period {
  periodic_reset?: PeriodicReset | null;
  periodic_reset_days?: number | null;
  next_usage_reset_at?: string | null;
}

interface CreateBody extends Period {
  name?: string;
  conditions: PolicyCondition[];
  group_by: PolicyGroupBy[];
  type: UsageLimitType;
  credit_limit: number;
  alert_threshold?: number | null;
  workspace_id?: string;
  /** Accepted as Portkey clients send it; this gateway serves one organisation. */
  organisation_id?: string;
}

interface UpdateBody extends Period {
  name?: string;
  conditions?: PolicyCondition[];
  group_by?: PolicyGroupBy[];
  type?: UsageLimitType;
  credit_limit?: number;
  alert_threshold?: number | null;
  status?: PolicyStatus;
}

const fields = {
  name: S.name,
  ...MATCH_FIELDS,
  type: { enum: USAGE_LIMIT_TYPES },
  credit_limit: { type: 'number', exclusiveMinimum: 0 },
  alert_threshold: { type: ['number', 'null'], exclusiveMinimum: 0 },
  periodic_reset: { enum: [...PERIODIC_RESETS, null] },
  periodic_reset_days: { type: ['integer', 'null'], minimum: 1, maximum: 365 },
  next_usage_reset_at: { type: ['string', 'null'], pattern: ISO_DATE, description: 'an ISO 8601 date, or date-time with its offset' },
};

const checkCreate = bodyChecker<CreateBody>({
  type: 'object',
  additionalProperties: false,
  required: ['conditions', 'group_by', 'type', 'credit_limit'],
  properties: { ...fields, workspace_id: S.ref, organisation_id: S.ref },
});

const checkUpdate = bodyChecker<UpdateBody>({
  type: 'object',
  additionalProperties: false,
  properties: { ...fields, status: { enum: POLICY_STATUSES } },
});

const isoMs = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function usageLimitPolicyView(p: UsageLimitPolicy, nowMs: number): Record<string, unknown> {
  const period = periodOf(p, nowMs);
  const start = Math.floor(period.start / 1000);
  // An alert of an earlier period has been reset with it.
  const current = (at: number | null): number | null => (at !== null && at >= start ? at : null);
  const exhaustedAt = current(p.exhaustedAt);
  return {
    object: OBJECT,
    id: p.id,
    name: p.name,
    conditions: p.conditions,
    group_by: p.groupBy,
    type: p.type,
    credit_limit: p.creditLimit,
    alert_threshold: p.alertThreshold,
    periodic_reset: p.periodicReset,
    periodic_reset_days: p.periodicResetDays,
    next_usage_reset_at: isoMs(period.end),
    last_reset_at: isoMs(lastResetAt(p, nowMs)),
    status: p.status === 'archived' ? 'archived' : exhaustedAt !== null ? 'exhausted' : 'active',
    threshold_alerted_at: iso(current(p.thresholdAlertedAt)),
    exhausted_at: iso(exhaustedAt),
    workspace_id: p.workspaceId,
    created_at: iso(p.createdAt),
    last_updated_at: iso(p.lastUpdatedAt),
  };
}

type PeriodFields = Pick<UsageLimitPolicy, 'periodicReset' | 'periodicResetDays' | 'nextUsageResetAt'>;

/**
 * The period fields after a request: periodic_reset and periodic_reset_days
 * exclude each other (setting one clears the other stored), a reset date
 * needs a period and is kept at 00:00 UTC of its day, and a policy left
 * without a period keeps no reset date.
 */
function readPeriod(b: Period, current: PeriodFields): Result<PeriodFields> {
  if (b.periodic_reset != null && b.periodic_reset_days != null) {
    return { ok: false, error: invalid('periodic_reset and periodic_reset_days are mutually exclusive: send one of them', 'periodic_reset_days') };
  }
  let periodicReset = b.periodic_reset !== undefined ? b.periodic_reset : current.periodicReset;
  let periodicResetDays = b.periodic_reset_days !== undefined ? b.periodic_reset_days : current.periodicResetDays;
  if (b.periodic_reset != null) periodicResetDays = null;
  if (b.periodic_reset_days != null) periodicReset = null;
  let nextUsageResetAt = current.nextUsageResetAt;
  if (b.next_usage_reset_at !== undefined) {
    const raw = b.next_usage_reset_at;
    const at = raw === null ? null : Date.parse(raw);
    if (raw !== null && (Number.isNaN(at) || !realDay(raw))) return { ok: false, error: invalid(`next_usage_reset_at: '${raw}' is not a date`, 'next_usage_reset_at') };
    nextUsageResetAt = at === null ? null : utcMidnight(at) / 1000;
  }
  if (periodicReset === null && periodicResetDays === null) {
    if (b.next_usage_reset_at != null) return { ok: false, error: invalid('next_usage_reset_at: needs periodic_reset or periodic_reset_days', 'next_usage_reset_at') };
    nextUsageResetAt = null;
  }
  return { ok: true, value: { periodicReset, periodicResetDays, nextUsageResetAt } };
}

function checkThreshold(threshold: number | null, limit: number): Result<null> {
  if (threshold !== null && threshold >= limit) return { ok: false, error: invalid(`alert_threshold: must be below credit_limit (${limit})`, 'alert_threshold') };
  return { ok: true, value: null };
}

async function visible(deps: AdminDeps, caller: Caller, id: string): Promise<Result<UsageLimitPolicy>> {
  return visibleTo(caller, await deps.store.usageLimitPolicies.get(id), (p) => p.workspaceId, WHAT, id);
}

export const usageLimitRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/policies/usage-limits',
    scope: 'policies.create',
    body: checkCreate,
    async handler({ caller, body: b }, deps) {
      const ws = await writableWorkspace(deps.store, caller, b.workspace_id);
      if (!ws.ok) return ws;
      const conditions = await checkConditions(deps.store, ws.value, b.conditions);
      if (!conditions.ok) return conditions;
      const groupBy = checkGroupBy(b.group_by);
      if (!groupBy.ok) return groupBy;
      const period = readPeriod(b, { periodicReset: null, periodicResetDays: null, nextUsageResetAt: null });
      if (!period.ok) return period;
      const threshold = checkThreshold(b.alert_threshold ?? null, b.credit_limit);
      if (!threshold.ok) return threshold;
      const p = await deps.store.usageLimitPolicies.create({
        workspaceId: ws.value.id,
        name: b.name ?? null,
        conditions: conditions.value,
        groupBy: groupBy.value,
        type: b.type,
        creditLimit: b.credit_limit,
        alertThreshold: b.alert_threshold ?? null,
        ...period.value,
      });
      return reply(201, { id: p.id, object: OBJECT });
    },
  }),
  route({
    method: 'GET',
    path: '/policies/usage-limits',
    scope: 'policies.list',
    paged: true,
    async handler({ caller, query, page }, deps) {
      const statuses = oneOf(query, 'status', POLICY_STATUSES, true);
      if (!statuses.ok) return statuses;
      const type = oneOf(query, 'type', USAGE_LIMIT_TYPES);
      if (!type.ok) return type;
      const workspaceId = await listedWorkspace(deps.store, caller, query);
      if (!workspaceId.ok) return workspaceId;
      const filter = { statuses: statuses.value ?? ['active' as const], workspaceId: workspaceId.value, type: type.value?.[0] };
      const now = deps.now();
      return listReply(await deps.store.usageLimitPolicies.list(filter, page), (p) => usageLimitPolicyView(p, now));
    },
  }),
  route({
    method: 'GET',
    path: '/policies/usage-limits/:id',
    scope: 'policies.read',
    async handler({ caller, params }, deps) {
      const p = await visible(deps, caller, params.id!);
      return p.ok ? reply(200, usageLimitPolicyView(p.value, deps.now())) : p;
    },
  }),
  route({
    method: 'PUT',
    path: '/policies/usage-limits/:id',
    scope: 'policies.update',
    body: checkUpdate,
    async handler({ caller, params, body: b }, deps) {
      const found = await visible(deps, caller, params.id!);
      if (!found.ok) return found;
      const p = found.value;
      const patch: UsageLimitPolicyPatch = {};
      if (b.name !== undefined) patch.name = b.name;
      if (b.type !== undefined) patch.type = b.type;
      if (b.status !== undefined) patch.status = b.status;
      if (b.conditions !== undefined) {
        const ws = await deps.store.workspaces.get(p.workspaceId);
        if (ws === null) return { ok: false, error: notFound(WHAT, params.id!) };
        const checked = await checkConditions(deps.store, ws, b.conditions);
        if (!checked.ok) return checked;
        patch.conditions = checked.value;
      }
      if (b.group_by !== undefined) {
        const checked = checkGroupBy(b.group_by);
        if (!checked.ok) return checked;
        patch.groupBy = checked.value;
      }
      const period = readPeriod(b, p);
      if (!period.ok) return period;
      Object.assign(patch, period.value);
      const limit = b.credit_limit ?? p.creditLimit;
      const threshold = b.alert_threshold !== undefined ? b.alert_threshold : p.alertThreshold;
      const checked = checkThreshold(threshold, limit);
      if (!checked.ok) return checked;
      patch.creditLimit = limit;
      patch.alertThreshold = threshold;
      // Raising the limit re-opens the budget and re-arms both alerts; raising or removing the threshold re-arms its alert.
      if (limit > p.creditLimit) {
        patch.exhaustedAt = null;
        patch.thresholdAlertedAt = null;
      }
      if (b.alert_threshold !== undefined && (threshold === null || (p.alertThreshold !== null && threshold > p.alertThreshold))) patch.thresholdAlertedAt = null;
      const updated = await deps.store.usageLimitPolicies.update(p.id, patch);
      return updated === null ? { ok: false, error: notFound(WHAT, params.id!) } : reply(200, usageLimitPolicyView(updated, deps.now()));
    },
  }),
  route({
    method: 'DELETE',
    path: '/policies/usage-limits/:id',
    scope: 'policies.delete',
    async handler({ caller, params }, deps) {
      const p = await visible(deps, caller, params.id!);
      if (!p.ok) return p;
      await deps.store.usageLimitPolicies.delete(p.value.id);
      return reply(200, { id: p.value.id, object: OBJECT, deleted: true });
    },
  }),
];
