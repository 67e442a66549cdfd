/**
 * /v1/policies/rate-limits (routes in policies.ts): requests or tokens per
 * minute, hour, day or week; listed by `type` and `unit` too; a read with
 * `?status=` finds only a policy in that status.
 */
import { ok } from '../shared/errors.js';
import {
  RATE_LIMIT_TYPES,
  RATE_UNITS,
  type NewRateLimitPolicy,
  type RateLimitPolicy,
  type RateLimitType,
  type RateUnit,
} from '../store/rate-limit-policies.js';
import { policyRoutes } from './policies.js';

interface Own {
  type: RateLimitType;
  unit: RateUnit;
  value: number;
}

export const rateLimitRoutes = policyRoutes<RateLimitPolicy, NewRateLimitPolicy, Own, Partial<Own>>({
  path: '/policies/rate-limits',
  object: 'policy_rate_limits',
  what: 'rate-limit policy',
  repo: (store) => store.rateLimitPolicies,
  fields: {
    type: { enum: RATE_LIMIT_TYPES },
    unit: { enum: RATE_UNITS },
    value: { type: 'number', exclusiveMinimum: 0 },
  },
  required: ['type', 'unit', 'value'],
  filters: { type: RATE_LIMIT_TYPES, unit: RATE_UNITS },
  readsByStatus: true,
  view: (p) => ({ type: p.type, unit: p.unit, value: p.value, status: p.status }),
  // The schema says all there is to say: the body's fields are the policy's.
  create: (own) => ok(own),
  update: (own) => ok(own),
});
