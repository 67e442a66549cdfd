/**
 * Usage-limit policies (budgets): which requests of a workspace (conditions)
 * share a budget (group_by) of cost in USD or tokens, reset weekly, monthly or
 * every N days, or never. The usage itself is counted by src/limits; the row
 * keeps the policy and when a group last crossed the alert threshold or the
 * credit limit (there is no mail to send: the alert is recorded).
 */
import type { Changes } from './changes.js';
import type { Db } from './db.js';
import { nullableNumber, PolicyRepo, stored, type NewPolicy, type Policy, type PolicyKind } from './policies.js';

export const USAGE_LIMIT_TYPES = ['cost', 'tokens'] as const;
export type UsageLimitType = (typeof USAGE_LIMIT_TYPES)[number];
export const PERIODIC_RESETS = ['weekly', 'monthly'] as const;
export type PeriodicReset = (typeof PERIODIC_RESETS)[number];

/** Its `status` is the stored one; `exhausted` is derived from exhaustedAt (admin view). */
export interface UsageLimitPolicy extends Policy {
  type: UsageLimitType;
  /** USD (cost) or tokens; greater than 0. */
  creditLimit: number;
  alertThreshold: number | null;
  /** At most one of the two is set; neither: the budget never resets. */
  periodicReset: PeriodicReset | null;
  periodicResetDays: number | null;
  /** Unix seconds at UTC midnight: the reset the periods are anchored to; null follows the calendar. */
  nextUsageResetAt: number | null;
  /** Unix seconds; meaningful only within the period they fall in. */
  thresholdAlertedAt: number | null;
  exhaustedAt: number | null;
}

export type NewUsageLimitPolicy = NewPolicy &
  Pick<UsageLimitPolicy, 'type' | 'creditLimit' | 'alertThreshold' | 'periodicReset' | 'periodicResetDays' | 'nextUsageResetAt'>;

export type AlertField = 'threshold_alerted_at' | 'exhausted_at';

const USAGE_LIMIT_POLICY: PolicyKind<UsageLimitPolicy> = {
  table: 'usage_limit_policies',
  change: 'usage_limit_policy',
  columns: {
    type: stored,
    creditLimit: Number,
    alertThreshold: nullableNumber,
    periodicReset: stored,
    periodicResetDays: nullableNumber,
    nextUsageResetAt: nullableNumber,
    thresholdAlertedAt: nullableNumber,
    exhaustedAt: nullableNumber,
  },
};

export class UsageLimitPolicyRepo extends PolicyRepo<UsageLimitPolicy, NewUsageLimitPolicy> {
  constructor(db: Db, changes: Changes) {
    super(db, changes, USAGE_LIMIT_POLICY);
  }

  /**
   * Records an alert once per period: sets `field` to `at` unless it is
   * already set at or after `periodStart` (unix seconds). Whether it changed.
   */
  async markAlert(id: string, field: AlertField, at: number, periodStart: number): Promise<boolean> {
    const n = await this.db.run(`UPDATE usage_limit_policies SET ${field} = ? WHERE id = ? AND (${field} IS NULL OR ${field} < ?)`, [at, id, periodStart]);
    if (n > 0) this.changes.publish({ kind: 'usage_limit_policy', id });
    return n > 0;
  }
}
