/**
 * Usage-limit policies (budgets): which requests of a workspace (conditions)
 * share a budget (group_by) of cost in USD or tokens, reset weekly, monthly or
 * every N days, or never. The usage itself is counted by src/limits; the row
 * keeps the policy and when a group last crossed the alert threshold or the
 * credit limit (there is no mail to send: the alert is recorded).
 */
import { deleteAndAnnounce, type Changes } from './changes.js';
import type { Db } from './db.js';
import { newId, nowSeconds } from './ids.js';
import type { Page, PageRequest } from './page.js';
import { activePolicies, listPolicies } from './policy-rows.js';
import type { PolicyCondition, PolicyGroupBy, PolicyStatus } from './rate-limit-policies.js';

export const USAGE_LIMIT_TYPES = ['cost', 'tokens'] as const;
export type UsageLimitType = (typeof USAGE_LIMIT_TYPES)[number];
export const PERIODIC_RESETS = ['weekly', 'monthly'] as const;
export type PeriodicReset = (typeof PERIODIC_RESETS)[number];

export interface UsageLimitPolicy {
  id: string;
  workspaceId: string;
  name: string | null;
  conditions: PolicyCondition[];
  groupBy: PolicyGroupBy[];
  type: UsageLimitType;
  /** USD (cost) or tokens; greater than 0. */
  creditLimit: number;
  alertThreshold: number | null;
  /** At most one of the two is set; neither: the budget never resets. */
  periodicReset: PeriodicReset | null;
  periodicResetDays: number | null;
  /** Unix seconds at UTC midnight: the reset the periods are anchored to; null follows the calendar. */
  nextUsageResetAt: number | null;
  /** Stored status; `exhausted` is derived from exhaustedAt (admin view). */
  status: PolicyStatus;
  /** Unix seconds; meaningful only within the period they fall in. */
  thresholdAlertedAt: number | null;
  exhaustedAt: number | null;
  createdAt: number;
  lastUpdatedAt: number;
}

interface Row {
  id: string;
  workspace_id: string;
  name: string | null;
  conditions: string;
  group_by: string;
  type: string;
  credit_limit: number;
  alert_threshold: number | null;
  periodic_reset: string | null;
  periodic_reset_days: number | null;
  next_usage_reset_at: number | string | null;
  status: string;
  threshold_alerted_at: number | string | null;
  exhausted_at: number | string | null;
  created_at: number | string;
  last_updated_at: number | string;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

function toPolicy(r: Row): UsageLimitPolicy {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    conditions: JSON.parse(r.conditions) as PolicyCondition[],
    groupBy: JSON.parse(r.group_by) as PolicyGroupBy[],
    type: r.type as UsageLimitType,
    creditLimit: Number(r.credit_limit),
    alertThreshold: num(r.alert_threshold),
    periodicReset: r.periodic_reset as PeriodicReset | null,
    periodicResetDays: num(r.periodic_reset_days),
    nextUsageResetAt: num(r.next_usage_reset_at),
    status: r.status as PolicyStatus,
    thresholdAlertedAt: num(r.threshold_alerted_at),
    exhaustedAt: num(r.exhausted_at),
    createdAt: Number(r.created_at),
    lastUpdatedAt: Number(r.last_updated_at),
  };
}

type Editable = 'name' | 'conditions' | 'groupBy' | 'type' | 'creditLimit' | 'alertThreshold' | 'periodicReset' | 'periodicResetDays' | 'nextUsageResetAt';
export type NewUsageLimitPolicy = Pick<UsageLimitPolicy, 'workspaceId' | Editable>;
export type UsageLimitPolicyPatch = Partial<Pick<UsageLimitPolicy, Editable | 'status' | 'thresholdAlertedAt' | 'exhaustedAt'>>;

export interface UsageLimitPolicyFilter {
  statuses: readonly PolicyStatus[];
  workspaceId?: string;
  type?: UsageLimitType;
}

export type AlertField = 'threshold_alerted_at' | 'exhausted_at';

export class UsageLimitPolicyRepo {
  constructor(
    private readonly db: Db,
    private readonly changes: Changes,
  ) {}

  async create(p: NewUsageLimitPolicy): Promise<UsageLimitPolicy> {
    const id = newId();
    const at = nowSeconds();
    await this.db.run(
      `INSERT INTO usage_limit_policies (id, workspace_id, name, conditions, group_by, type, credit_limit, alert_threshold, periodic_reset,
         periodic_reset_days, next_usage_reset_at, status, created_at, last_updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)`,
      [id, p.workspaceId, p.name, JSON.stringify(p.conditions), JSON.stringify(p.groupBy), p.type, p.creditLimit, p.alertThreshold, p.periodicReset,
        p.periodicResetDays, p.nextUsageResetAt, at, at],
    );
    this.changes.publish({ kind: 'usage_limit_policy', id });
    return (await this.get(id))!;
  }

  async get(id: string): Promise<UsageLimitPolicy | null> {
    const r = await this.db.get<Row>('SELECT * FROM usage_limit_policies WHERE id = ?', [id]);
    return r === undefined ? null : toPolicy(r);
  }

  list(filter: UsageLimitPolicyFilter, page: PageRequest): Promise<Page<UsageLimitPolicy>> {
    return listPolicies(this.db, 'usage_limit_policies', filter.statuses, [
      ['workspace_id', filter.workspaceId],
      ['type', filter.type],
    ], page, toPolicy);
  }

  /** Every active policy of a workspace: what requests made in it are checked against. */
  active(workspaceId: string): Promise<UsageLimitPolicy[]> {
    return activePolicies(this.db, 'usage_limit_policies', workspaceId, toPolicy);
  }

  async update(id: string, patch: UsageLimitPolicyPatch): Promise<UsageLimitPolicy | null> {
    const current = await this.get(id);
    if (current === null) return null;
    const n = { ...current, ...patch };
    await this.db.run(
      `UPDATE usage_limit_policies SET name = ?, conditions = ?, group_by = ?, type = ?, credit_limit = ?, alert_threshold = ?, periodic_reset = ?,
         periodic_reset_days = ?, next_usage_reset_at = ?, status = ?, threshold_alerted_at = ?, exhausted_at = ?, last_updated_at = ? WHERE id = ?`,
      [n.name, JSON.stringify(n.conditions), JSON.stringify(n.groupBy), n.type, n.creditLimit, n.alertThreshold, n.periodicReset,
        n.periodicResetDays, n.nextUsageResetAt, n.status, n.thresholdAlertedAt, n.exhaustedAt, nowSeconds(), id],
    );
    this.changes.publish({ kind: 'usage_limit_policy', id });
    return this.get(id);
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

  delete(id: string): Promise<boolean> {
    return deleteAndAnnounce(this.db, this.changes, 'usage_limit_policies', { kind: 'usage_limit_policy', id });
  }
}
