/**
 * The rules a gateway key's lifetime follows: its `rotation_policy` (spec:
 * Authentication rule 4), the organisation's enforced rotation period for
 * user keys (Errors rule 5: an explicit different period is refused), and
 * `user_api_key_ttl`, the default and maximum lifetime of user keys.
 */
import type { SchemaObject } from 'ajv';
import { invalid, type Result } from '../shared/errors.js';
import type { RotationPolicy } from '../store/api-keys.js';
import type { RotationPeriod } from '../store/settings.js';
import { DEFAULT_TRANSITION_MS, MIN_TRANSITION_MS, nextRotation, periodMs, utcMidnight } from './rotation.js';

/** `rotation_policy` as a request sends it. */
export interface PolicyInput {
  rotation_period?: RotationPeriod | null;
  /** ISO 8601 date or date-time; normalised to 00:00 UTC of that day. */
  next_rotation_at?: string | null;
  key_transition_period_ms?: number;
}

// A date-time needs its offset: without one JavaScript would read it in the server's time zone.
export const ISO_DATE = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:\\d{2}))?$';

export const transitionSchema = { type: 'integer', minimum: MIN_TRANSITION_MS } satisfies SchemaObject;

export const policySchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    rotation_period: { type: ['string', 'null'], pattern: '^(weekly|monthly)$', description: 'weekly or monthly' },
    next_rotation_at: { type: ['string', 'null'], pattern: ISO_DATE, description: 'an ISO 8601 date, or date-time with its offset' },
    key_transition_period_ms: transitionSchema,
  },
} satisfies SchemaObject;

/**
 * A stored policy from a request's: next_rotation_at normalised to UTC
 * midnight and in the future, or, when only a period is given, the period's
 * next rotation; the transition defaults to 30 minutes and must be shorter than the period.
 */
export function readPolicy(input: PolicyInput, nowMs: number, param = 'rotation_policy'): Result<RotationPolicy> {
  const period = input.rotation_period ?? null;
  let next: number;
  if (input.next_rotation_at != null) {
    const at = Date.parse(input.next_rotation_at);
    if (Number.isNaN(at) || !realDay(input.next_rotation_at)) return { ok: false, error: invalid(`${param}.next_rotation_at: '${input.next_rotation_at}' is not a date`, `${param}.next_rotation_at`) };
    next = utcMidnight(at);
    if (next <= nowMs) {
      return { ok: false, error: invalid(`${param}.next_rotation_at: must be a future day (rotations run at 00:00 UTC)`, `${param}.next_rotation_at`) };
    }
  } else if (period !== null) {
    next = nextRotation(period, nowMs);
  } else {
    return { ok: false, error: invalid(`${param}: needs rotation_period or next_rotation_at`, param) };
  }
  const transition = input.key_transition_period_ms ?? DEFAULT_TRANSITION_MS;
  if (period !== null && transition >= periodMs(period)) {
    return {
      ok: false,
      error: invalid(`${param}.key_transition_period_ms: must be shorter than the ${period} rotation period`, `${param}.key_transition_period_ms`),
    };
  }
  return { ok: true, value: { rotation_period: period, next_rotation_at: Math.floor(next / 1000), key_transition_period_ms: transition } };
}

/** Whether the string's YYYY-MM-DD is a day of the calendar (Date.parse turns 02-30 into 03-02). */
export function realDay(text: string): boolean {
  const [y, m, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d;
}

/**
 * The policy request of a user key under the organisation's enforced period
 * (`user_api_key_rotation_period`; null: none): no policy, or one without a
 * period, gets the enforced period; an explicit different one is refused.
 */
export function enforcePeriod(input: PolicyInput | null, enforced: RotationPeriod | null, param = 'rotation_policy'): Result<PolicyInput | null> {
  if (enforced === null) return { ok: true, value: input };
  if (input === null) return { ok: true, value: { rotation_period: enforced } };
  if (input.rotation_period !== undefined && input.rotation_period !== enforced) {
    return {
      ok: false,
      error: invalid(`${param}.rotation_period: the organisation enforces a ${enforced} rotation period for user keys`, `${param}.rotation_period`),
    };
  }
  return { ok: true, value: { ...input, rotation_period: enforced } };
}

/**
 * A user key's expiry (Unix seconds) under `user_api_key_ttl` (seconds; null:
 * no limit): none asked for (undefined) → now + ttl; later than that, or never (null) → 400.
 */
export function userKeyExpiry(asked: number | null | undefined, ttl: number | null, now: number): Result<number | null> {
  if (ttl === null) return { ok: true, value: asked ?? null };
  const latest = now + ttl;
  if (asked === undefined) return { ok: true, value: latest };
  if (asked === null || asked > latest) {
    return { ok: false, error: invalid(`expires_at: the organisation limits user keys to ${ttl} seconds: at most ${latest}`, 'expires_at') };
  }
  return { ok: true, value: asked };
}
