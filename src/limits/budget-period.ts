/**
 * Budget periods: the span of time a usage-limit policy's usage counts in.
 * Counters are keyed by the period's start, so a new period starts at 0 with
 * no reset step, in every process at once. Periods are anchored to
 * `next_usage_reset_at` when the user set one (UTC midnight), else to the
 * calendar: Monday 00:00 UTC (weekly), the 1st of the month (monthly), or
 * the policy's creation day (every N days). A policy without a reset has one
 * period that never ends.
 */
import type { UsageLimitPolicy } from '../store/usage-limit-policies.js';

const DAY = 86_400_000;
/** 1970-01-05 was the first Monday after the epoch. */
const FIRST_MONDAY = 4 * DAY;

export interface Period {
  /** Unix ms, inclusive; 0 for a budget that never resets. */
  start: number;
  /** Unix ms, exclusive: the next reset; null when it never resets. */
  end: number | null;
}

export const utcMidnight = (ms: number): number => Math.floor(ms / DAY) * DAY;

type PeriodFields = Pick<UsageLimitPolicy, 'periodicReset' | 'periodicResetDays' | 'nextUsageResetAt' | 'createdAt'>;

export function periodOf(p: PeriodFields, now: number): Period {
  const anchor = p.nextUsageResetAt === null ? null : p.nextUsageResetAt * 1000;
  if (p.periodicReset === 'monthly') return monthOf(anchor ?? 0, now);
  const days = p.periodicReset === 'weekly' ? 7 : p.periodicResetDays;
  if (days === null) return { start: 0, end: null };
  const length = days * DAY;
  const from = anchor ?? (p.periodicReset === 'weekly' ? FIRST_MONDAY : utcMidnight(p.createdAt * 1000));
  const start = from + Math.floor((now - from) / length) * length;
  return { start, end: start + length };
}

/** The month-long period holding `now`, starting on the anchor's day of the month (the last day in shorter months). */
function monthOf(anchor: number, now: number): Period {
  const a = new Date(anchor);
  const step = (k: number): number => {
    const y = a.getUTCFullYear();
    const m = a.getUTCMonth() + k;
    const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
    return Date.UTC(y, m, Math.min(a.getUTCDate(), last));
  };
  const n = new Date(now);
  let k = (n.getUTCFullYear() - a.getUTCFullYear()) * 12 + n.getUTCMonth() - a.getUTCMonth();
  if (step(k) > now) k--;
  return { start: step(k), end: step(k + 1) };
}

/** The start of the current period when a reset has happened since the policy was made; else null. */
export function lastResetAt(p: PeriodFields, now: number): number | null {
  const { start, end } = periodOf(p, now);
  return end !== null && start > p.createdAt * 1000 ? start : null;
}
