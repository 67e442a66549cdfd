/**
 * Rate-limit policies: which requests of a workspace (conditions) are counted
 * together (group_by) against how many requests or tokens per minute, hour,
 * day or week. Checked and enforced by src/limits; stored here.
 */
import type { Changes } from './changes.js';
import type { Db } from './db.js';
import { PolicyRepo, stored, type NewPolicy, type Policy, type PolicyKind } from './policies.js';

export const RATE_UNITS = ['rpm', 'rph', 'rpd', 'rpw'] as const;
export type RateUnit = (typeof RATE_UNITS)[number];
export const RATE_LIMIT_TYPES = ['requests', 'tokens'] as const;
export type RateLimitType = (typeof RATE_LIMIT_TYPES)[number];

export interface RateLimitPolicy extends Policy {
  type: RateLimitType;
  unit: RateUnit;
  value: number;
}

export type NewRateLimitPolicy = NewPolicy & Pick<RateLimitPolicy, 'type' | 'unit' | 'value'>;

const RATE_LIMIT_POLICY: PolicyKind<RateLimitPolicy> = {
  table: 'rate_limit_policies',
  change: 'rate_limit_policy',
  columns: { type: stored, unit: stored, value: Number },
};

export class RateLimitPolicyRepo extends PolicyRepo<RateLimitPolicy, NewRateLimitPolicy> {
  constructor(db: Db, changes: Changes) {
    super(db, changes, RATE_LIMIT_POLICY);
  }
}
