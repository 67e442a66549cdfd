/**
 * /v1/policies/usage-limits (routes in policies.ts): budgets of cost (USD)
 * or tokens per workspace, key or metadata group; listed by `type` too. The
 * view's `status` is `exhausted` while a group has used the whole credit
 * limit in the current period; `threshold_alerted_at` and `exhausted_at`
 * record the alerts (there is no mail to send) and clear with the period, or
 * when the limit (or threshold) is raised.
 */
import { invalid, type Result } from '../shared/errors.js';
import { lastResetAt, periodOf, utcMidnight } from '../limits/budget-period.js';
import type { PolicyPatch } from '../store/policies.js';
import {
  PERIODIC_RESETS,
  USAGE_LIMIT_TYPES,
  type NewUsageLimitPolicy,
  type PeriodicReset,
  type UsageLimitPolicy,
  type UsageLimitType,
} from '../store/usage-limit-policies.js';
import { iso } from './input.js';
import { ISO_DATE, realDay } from './key-policy.js';
import { policyRoutes } from './policies.js';

interface Period {
  periodic_reset?: PeriodicReset | null;
  periodic_reset_days?: number | null;
  next_usage_reset_at?: string | null;
}

interface Own extends Period {
  type: UsageLimitType;
  credit_limit: number;
  alert_threshold?: number | null;
}

const isoMs = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function view(p: UsageLimitPolicy, nowMs: number): Record<string, unknown> {
  const period = periodOf(p, nowMs);
  const start = Math.floor(period.start / 1000);
  // An alert of an earlier period has been reset with it.
  const current = (at: number | null): number | null => (at !== null && at >= start ? at : null);
  const exhaustedAt = current(p.exhaustedAt);
  return {
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

const NO_PERIOD: PeriodFields = { periodicReset: null, periodicResetDays: null, nextUsageResetAt: null };

export const usageLimitRoutes = policyRoutes<UsageLimitPolicy, NewUsageLimitPolicy, Own, Partial<Own>>({
  path: '/policies/usage-limits',
  object: 'policy_usage_limits',
  what: 'usage-limit policy',
  repo: (store) => store.usageLimitPolicies,
  fields: {
    type: { enum: USAGE_LIMIT_TYPES },
    credit_limit: { type: 'number', exclusiveMinimum: 0 },
    alert_threshold: { type: ['number', 'null'], exclusiveMinimum: 0 },
    periodic_reset: { enum: [...PERIODIC_RESETS, null] },
    periodic_reset_days: { type: ['integer', 'null'], minimum: 1, maximum: 365 },
    next_usage_reset_at: { type: ['string', 'null'], pattern: ISO_DATE, description: 'an ISO 8601 date, or date-time with its offset' },
  },
  required: ['type', 'credit_limit'],
  filters: { type: USAGE_LIMIT_TYPES },
  // A usage-limit policy's status in a read is derived (exhausted): reads do not filter by it.
  readsByStatus: false,
  view,
  create(b) {
    const period = readPeriod(b, NO_PERIOD);
    if (!period.ok) return period;
    const threshold = checkThreshold(b.alert_threshold ?? null, b.credit_limit);
    if (!threshold.ok) return threshold;
    return { ok: true, value: { type: b.type, creditLimit: b.credit_limit, alertThreshold: b.alert_threshold ?? null, ...period.value } };
  },
  update(b, p) {
    const patch: PolicyPatch<UsageLimitPolicy> = {};
    if (b.type !== undefined) patch.type = b.type;
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
    return { ok: true, value: patch };
  },
});
