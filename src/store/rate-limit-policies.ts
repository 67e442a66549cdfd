/**
 * Rate-limit policies: which requests of a workspace (conditions) are counted
 * together (group_by) against how many requests or tokens per minute, hour,
 * day or week. Checked and enforced by src/limits; stored here.
 */
import { deleteAndAnnounce, type Changes } from './changes.js';
import type { Db } from './db.js';
import { newId, nowSeconds } from './ids.js';
import type { Page, PageRequest } from './page.js';
import { activePolicies, listPolicies } from './policy-rows.js';

export const RATE_UNITS = ['rpm', 'rph', 'rpd', 'rpw'] as const;
export type RateUnit = (typeof RATE_UNITS)[number];
export const RATE_LIMIT_TYPES = ['requests', 'tokens'] as const;
export type RateLimitType = (typeof RATE_LIMIT_TYPES)[number];
export const POLICY_STATUSES = ['active', 'archived'] as const;
export type PolicyStatus = (typeof POLICY_STATUSES)[number];

/** `key` is workspace_id, api_key, endpoint_type or metadata.<name>; `value` is what it must equal, or `*` for any. */
export interface PolicyCondition {
  key: string;
  value: string;
}

export interface PolicyGroupBy {
  key: string;
}

export interface RateLimitPolicy {
  id: string;
  workspaceId: string;
  name: string | null;
  conditions: PolicyCondition[];
  groupBy: PolicyGroupBy[];
  type: RateLimitType;
  unit: RateUnit;
  value: number;
  status: PolicyStatus;
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
  unit: string;
  value: number;
  status: string;
  created_at: number;
  last_updated_at: number;
}

function toPolicy(r: Row): RateLimitPolicy {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    conditions: JSON.parse(r.conditions) as PolicyCondition[],
    groupBy: JSON.parse(r.group_by) as PolicyGroupBy[],
    type: r.type as RateLimitType,
    unit: r.unit as RateUnit,
    value: Number(r.value),
    status: r.status as PolicyStatus,
    createdAt: r.created_at,
    lastUpdatedAt: r.last_updated_at,
  };
}

export type NewRateLimitPolicy = Pick<RateLimitPolicy, 'workspaceId' | 'name' | 'conditions' | 'groupBy' | 'type' | 'unit' | 'value'>;
export type RateLimitPolicyPatch = Partial<Pick<RateLimitPolicy, 'name' | 'conditions' | 'groupBy' | 'type' | 'unit' | 'value' | 'status'>>;

export interface RateLimitPolicyFilter {
  statuses: readonly PolicyStatus[];
  /** Unset: every workspace. */
  workspaceId?: string;
  type?: RateLimitType;
  unit?: RateUnit;
}

export class RateLimitPolicyRepo {
  constructor(
    private readonly db: Db,
    private readonly changes: Changes,
  ) {}

  async create(p: NewRateLimitPolicy): Promise<RateLimitPolicy> {
    const id = newId();
    const at = nowSeconds();
    await this.db.run(
      `INSERT INTO rate_limit_policies (id, workspace_id, name, conditions, group_by, type, unit, value, status, created_at, last_updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)`,
      [id, p.workspaceId, p.name, JSON.stringify(p.conditions), JSON.stringify(p.groupBy), p.type, p.unit, p.value, at, at],
    );
    this.changes.publish({ kind: 'rate_limit_policy', id });
    return (await this.get(id))!;
  }

  async get(id: string): Promise<RateLimitPolicy | null> {
    const r = await this.db.get<Row>('SELECT * FROM rate_limit_policies WHERE id = ?', [id]);
    return r === undefined ? null : toPolicy(r);
  }

  list(filter: RateLimitPolicyFilter, page: PageRequest): Promise<Page<RateLimitPolicy>> {
    return listPolicies(this.db, 'rate_limit_policies', filter.statuses, [
      ['workspace_id', filter.workspaceId],
      ['type', filter.type],
      ['unit', filter.unit],
    ], page, toPolicy);
  }

  /** Every active policy of a workspace: what requests made in it are checked against. */
  active(workspaceId: string): Promise<RateLimitPolicy[]> {
    return activePolicies(this.db, 'rate_limit_policies', workspaceId, toPolicy);
  }

  async update(id: string, patch: RateLimitPolicyPatch): Promise<RateLimitPolicy | null> {
    const current = await this.get(id);
    if (current === null) return null;
    const next = { ...current, ...patch };
    await this.db.run(
      `UPDATE rate_limit_policies SET name = ?, conditions = ?, group_by = ?, type = ?, unit = ?, value = ?, status = ?, last_updated_at = ? WHERE id = ?`,
      [next.name, JSON.stringify(next.conditions), JSON.stringify(next.groupBy), next.type, next.unit, next.value, next.status, nowSeconds(), id],
    );
    this.changes.publish({ kind: 'rate_limit_policy', id });
    return this.get(id);
  }

  delete(id: string): Promise<boolean> {
    return deleteAndAnnounce(this.db, this.changes, 'rate_limit_policies', { kind: 'rate_limit_policy', id });
  }
}
