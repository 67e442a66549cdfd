/**
 * Budget counters: the usage of each policy group in its current period.
 * `reserve` admits a request only when every counter it falls in has room
 * for its estimate and then adds the estimate to all of them at once (all or
 * nothing), so concurrent requests cannot together overshoot a limit;
 * `adjust` later replaces the estimate with the real usage. Amounts are
 * integers (tokens, or nano-USD for cost budgets). In process memory here;
 * budget-redis.ts shares them between processes.
 */
import { boundedMap, type OnEvict } from '../shared/bounded.js';
import { assertCost, MAX_MEMORY_COUNTERS, refuses } from './counter.js';

export interface BudgetCheck {
  /** Policy, type, period start and group. */
  key: string;
  limit: number;
  /** A non-negative integer: the reservation. */
  amount: number;
  /** Unix ms after which the counter may be dropped (its period has ended). */
  expireAt: number;
}

export interface Reservation {
  allowed: boolean;
  /** Per check, the usage after it (before it, when refused). */
  used: number[];
}

export interface BudgetCounter {
  reserve(checks: readonly BudgetCheck[], now: number): Promise<Reservation>;
  /** Adds a non-zero integer (negative gives back); returns the usage after it, never below 0. */
  adjust(key: string, amount: number, expireAt: number, now: number): Promise<number>;
}

/** Entries of ended periods are dropped every this many writes. */
const SWEEP_EVERY = 4096;

export class MemoryBudgetCounter implements BudgetCounter {
  private readonly entries;
  private writes = 0;

  constructor(opts: { max?: number; onEvict?: OnEvict } = {}) {
    this.entries = boundedMap<{ used: number; expireAt: number }>(opts.max ?? MAX_MEMORY_COUNTERS, opts.onEvict);
  }

  async reserve(checks: readonly BudgetCheck[], now: number): Promise<Reservation> {
    for (const c of checks) assertCost(c.amount, 'amount');
    const used = checks.map((c) => this.entries.get(c.key)?.used ?? 0);
    const allowed = checks.every((c, i) => !refuses(used[i]!, c.amount, c.limit));
    if (allowed) checks.forEach((c, i) => (used[i] = this.add(c.key, c.amount, c.expireAt, now)));
    return { allowed, used };
  }

  async adjust(key: string, amount: number, expireAt: number, now: number): Promise<number> {
    assertCost(amount, 'amount');
    return this.add(key, amount, expireAt, now);
  }

  private add(key: string, amount: number, expireAt: number, now: number): number {
    if (++this.writes % SWEEP_EVERY === 0) {
      this.entries.forEach((e, k) => {
        if (e.expireAt <= now) this.entries.delete(k);
      });
    }
    const e = this.entries.get(key) ?? { used: 0, expireAt };
    e.used = Math.max(0, e.used + amount);
    e.expireAt = Math.max(e.expireAt, expireAt);
    this.entries.set(key, e);
    return e.used;
  }
}
