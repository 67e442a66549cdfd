/**
 * Budget counters in Redis, shared by every gateway process on REDIS_URL.
 * The same atomic scripts as the rate counters (redis-hits.ts): a
 * reservation checks and adds to every counter of a request in one script,
 * so N processes reserving at once cannot overshoot a budget together.
 */
import type { Redis } from 'ioredis';
import { scriptsOf, type RunScript, type Scripts } from '../state/script.js';
import type { BudgetCheck, BudgetCounter, Reservation } from './budget-counter.js';
import { assertCost } from './counter.js';
import { CHARGE } from './redis-counter.js';
import { RedisHits } from './redis-hits.js';

export class RedisBudgetCounter implements BudgetCounter {
  private readonly hits: RedisHits;
  private readonly add: RunScript<number>;

  constructor(
    redis: Redis | Scripts,
    private readonly prefix = 'switchyard:budget:',
  ) {
    this.hits = new RedisHits(redis);
    this.add = scriptsOf(redis)(CHARGE);
  }

  async reserve(checks: readonly BudgetCheck[]): Promise<Reservation> {
    const args: number[] = [];
    for (const c of checks) {
      assertCost(c.amount, 'amount');
      args.push(c.amount, c.limit, c.expireAt, 0); // no lease: a budget reserves what each request may cost
    }
    return this.hits.hit(
      checks.map((c) => this.prefix + c.key),
      args,
    );
  }

  async adjust(key: string, amount: number, expireAt: number): Promise<number> {
    assertCost(amount, 'amount');
    return this.add([this.prefix + key], [amount, expireAt]);
  }
}
