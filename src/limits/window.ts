/**
 * Rate-limit windows. Limits count in fixed windows aligned to UTC: the
 * minute, hour, day or ISO week (from Monday 00:00 UTC) a moment falls in.
 * Every process computes the same window for the same moment, so a counter
 * shared through Redis needs no coordination beyond the count itself.
 */
import type { RateUnit } from '../store/rate-limit-policies.js';

export type { RateUnit };

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

const LENGTH: Record<RateUnit, number> = { rpm: MINUTE, rph: HOUR, rpd: DAY, rpw: WEEK };

/** 1970-01-01 was a Thursday: ISO weeks start 4 days after the epoch. */
const OFFSET: Record<RateUnit, number> = { rpm: 0, rph: 0, rpd: 0, rpw: 4 * DAY };

export interface Window {
  /** Unix ms, inclusive. */
  start: number;
  /** Unix ms, exclusive: when the count starts again. */
  end: number;
}

export function windowOf(unit: RateUnit, now: number): Window {
  const start = windowStart(unit, now);
  return { start, end: start + LENGTH[unit] };
}

/** windowOf's end alone, with nothing allocated (the hot path). */
export function windowEnd(unit: RateUnit, now: number): number {
  return windowStart(unit, now) + LENGTH[unit];
}

/** windowOf's start alone, with nothing allocated (the hot path). */
export function windowStart(unit: RateUnit, now: number): number {
  const length = LENGTH[unit];
  const offset = OFFSET[unit];
  return Math.floor((now - offset) / length) * length + offset;
}
