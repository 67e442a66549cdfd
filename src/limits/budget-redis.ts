/**
 * Budget counters in Redis, shared by every gateway process on REDIS_URL.
 * The same atomic scripts as the rate counters (redis-counter.ts): a
 * reservation checks and adds to every counter of a request in one script,
 * so N processes reserving at once cannot overshoot a budget together.
 */
import type { Redis } from 'ioredis';
import type { BudgetCheck, BudgetCounter, Reservation } from './budget-counter.js';
import { assertCost } from './counter.js';
import { CHARGE, HIT } from './redis-counter.js';

export class RedisBudgetCounter implements BudgetCounter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'switchyard:budget:',
  ) {}

  async reserve(checks: readonly BudgetCheck[]): Promise<Reservation> {
    const args: (string | number)[] = [];
    for (const c of checks) {
      assertCost(c.amount, 'amount');
      args.push(c.amount, String(c.limit), c.expireAt);
    }
    const [allowed, ...used] = (await HIT.run(this.redis, checks.map((c) => this.prefix + c.key), args)) as number[];
    return { allowed: allowed === 1, used };
  }

  async adjust(key: string, amount: number, expireAt: number): Promise<number> {
    assertCost(amount, 'amount');
    return (await CHARGE.run(this.redis, [this.prefix + key], [amount, expireAt])) as number;
  }
}
