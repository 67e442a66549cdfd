/**
 * Rotation schedule arithmetic (spec: Authentication rule 4). Weekly
 * rotations fall on Monday 00:00 UTC, monthly ones on the 1st at 00:00 UTC;
 * an explicit next_rotation_at is normalised to UTC midnight.
 */
import type { RotationPeriod } from '../store/settings.js';

/** Spec Limits: the key transition period is at least 30 minutes. */
export const MIN_TRANSITION_MS = 30 * 60 * 1000;
export const DEFAULT_TRANSITION_MS = MIN_TRANSITION_MS;

const DAY_MS = 86_400_000;

/** The first rotation instant of `period` strictly after `afterMs` (Unix ms). */
export function nextRotation(period: RotationPeriod, afterMs: number): number {
  const d = new Date(afterMs);
  if (period === 'monthly') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  // getUTCDay: Sunday 0 … Saturday 6; days until the next Monday, 7 when today is Monday.
  const days = (8 - d.getUTCDay()) % 7 || 7;
  return midnight + days * DAY_MS;
}

/** A period's shortest length, for "the transition must be shorter than the period". */
export function periodMs(period: RotationPeriod): number {
  return period === 'weekly' ? 7 * DAY_MS : 28 * DAY_MS;
}

/** UTC midnight of the day `ms` falls on. */
export function utcMidnight(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}
