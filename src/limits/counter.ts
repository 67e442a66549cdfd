/**
 * Rate counters: how much of a limit each group has used in the current
 * window (window.ts). One interface, two homes: process memory (one gateway)
 * and Redis (redis-counter.ts: every gateway sharing REDIS_URL counts once).
 *
 * A request may fall under several limits; `hit` admits it only when every
 * one has room and then counts it in all of them, so a refused request uses
 * nothing. Request limits cost 1 at admission. Token limits cost 0 at
 * admission (a group already at its limit is refused) and are charged the
 * answer's usage afterwards with `charge`.
 */
import { boundedMap, type OnEvict } from '../shared/bounded.js';
import { windowEnd, windowStart, type RateUnit } from './window.js';

/** Made once per counter and shared by its requests (limiter.ts), hence read-only. */
export interface RateCheck {
  /** The counter: policy and group, without the window (added here). */
  readonly key: string;
  readonly unit: RateUnit;
  /** Greater than 0. */
  readonly limit: number;
  /** A non-negative integer: what admitting this request uses now. */
  readonly cost: number;
}

export interface CounterState {
  /** Used in the current window, this request included when admitted. */
  used: number;
  remaining: number;
  /** Unix ms when the window ends and the count starts again. */
  resetAt: number;
}

export interface RateDecision {
  allowed: boolean;
  /** 0 when allowed; else how long until every refusing counter's window has ended. */
  retryAfterMs: number;
  /** One per check, in order. */
  counters: CounterState[];
}

export interface RateCounter {
  /** Synchronous when the counter knows at once (memory, a Redis lease): no promise on the hot path. */
  hit(checks: readonly RateCheck[], now: number): RateDecision | Promise<RateDecision>;
  /** Adds a non-zero integer (negative gives back) to the window of `now`; returns the usage after it, never below 0. */
  charge(key: string, unit: RateUnit, amount: number, now: number): Promise<number>;
  /** When the gateway stops: gives back what it holds for requests not made (redis-counter.ts leases). */
  close(): Promise<void>;
}

/** A check refuses when its group is already at the limit, or this cost would take it over. */
export function refuses(used: number, cost: number, limit: number): boolean {
  return used >= limit || used + cost > limit;
}

/** The decision once each counter's usage is known (`used`: after counting, when allowed). */
export function decision(checks: readonly RateCheck[], used: readonly number[], allowed: boolean, now: number): RateDecision {
  let retryAfterMs = 0;
  const counters = new Array<CounterState>(checks.length);
  for (let i = 0; i < checks.length; i++) {
    const c = checks[i]!;
    const u = used[i]!;
    const end = windowEnd(c.unit, now);
    if (!allowed && refuses(u, c.cost, c.limit)) retryAfterMs = Math.max(retryAfterMs, end - now);
    counters[i] = { used: u, remaining: Math.max(0, c.limit - u), resetAt: end };
  }
  return { allowed, retryAfterMs, counters };
}

export function assertCost(n: number, what: string): void {
  if (!Number.isSafeInteger(n)) throw new RangeError(`${what} must be an integer, got ${n}`);
}

interface Entry {
  /** The window this count belongs to; another (an older one, or another unit's) counts as 0. */
  unit: RateUnit;
  start: number;
  end: number;
  used: number;
}

/** Entries of ended windows are dropped every this many writes, so idle groups do not pile up. */
const SWEEP_EVERY = 4096;

/**
 * Counters one process keeps in memory (rate-limit or budget groups), the
 * least recently used forgotten past this many: groups are request
 * metadata values, which callers choose, and a weekly window (or a budget
 * that never resets) would keep each for long. A forgotten group counts
 * from 0 again; a caller can reach that only by sending more than this
 * many other groups, and one that sets its own metadata can change its
 * group anyway (`trusted` policies read the key's).
 */
export const MAX_MEMORY_COUNTERS = 100_000;

export class MemoryRateCounter implements RateCounter {
  private readonly entries;
  private writes = 0;

  constructor(opts: { max?: number; onEvict?: OnEvict } = {}) {
    this.entries = boundedMap<Entry>(opts.max ?? MAX_MEMORY_COUNTERS, opts.onEvict);
  }

  hit(checks: readonly RateCheck[], now: number): RateDecision {
    // Loops, not map/every: this runs for every request under a limit.
    const used = new Array<number>(checks.length);
    let allowed = true;
    for (let i = 0; i < checks.length; i++) {
      const c = checks[i]!;
      assertCost(c.cost, 'cost');
      used[i] = this.used(c.key, c.unit, now);
      if (refuses(used[i]!, c.cost, c.limit)) allowed = false;
    }
    if (allowed) {
      for (let i = 0; i < checks.length; i++) {
        const c = checks[i]!;
        if (c.cost > 0) used[i] = this.add(c.key, c.unit, c.cost, now);
      }
    }
    return decision(checks, used, allowed, now);
  }

  async charge(key: string, unit: RateUnit, amount: number, now: number): Promise<number> {
    assertCost(amount, 'amount');
    return this.add(key, unit, amount, now);
  }

  async close(): Promise<void> {}

  // Entries are keyed by the check's key itself, whose hash the string keeps, with the unit in the entry: no key is built per request.
  private used(key: string, unit: RateUnit, now: number): number {
    const e = this.entries.get(key);
    return e !== undefined && e.unit === unit && e.start === windowStart(unit, now) ? e.used : 0;
  }

  private add(key: string, unit: RateUnit, amount: number, now: number): number {
    if (++this.writes % SWEEP_EVERY === 0) this.sweep(now);
    const start = windowStart(unit, now);
    let e = this.entries.get(key);
    if (e === undefined || e.unit !== unit || e.start !== start) {
      e = { unit, start, end: windowEnd(unit, now), used: 0 };
      this.entries.set(key, e);
    }
    e.used = Math.max(0, e.used + amount);
    return e.used;
  }

  private sweep(now: number): void {
    this.entries.forEach((e, id) => {
      if (e.end <= now) this.entries.delete(id);
    });
  }
}
