/**
 * Rate counters in Redis, shared by every gateway process on the same
 * REDIS_URL. Each check is one Lua script: Redis runs it atomically, so the
 * read, the comparison with the limit and the increment of every counter of
 * a request happen with no other process in between. N processes hitting a
 * limit of L at once admit exactly L in the window, never L + (N - 1).
 *
 * A counter's key names its window (`<prefix><unit>:<window start>:<key>`),
 * so a new window starts at 0 with no reset step, and keys expire a minute
 * after their window ends: a process whose clock lags slightly behind still
 * finds the count of the window it believes it is in.
 */
import type { Redis } from 'ioredis';
import { LuaScript } from '../state/redis.js';
import { assertCost, decision, type RateCheck, type RateCounter, type RateDecision } from './counter.js';
import { windowOf, type RateUnit } from './window.js';

const CLOCK_SKEW_GRACE_MS = 60_000;

/**
 * KEYS: one counter per check. ARGV: per check `cost, limit, expire-at ms`.
 * Refuses unless every counter has room (same rule as counter.ts `refuses`);
 * counts only when admitted. Returns `{allowed (1|0), used…}`.
 */
export const HIT = new LuaScript(`
local used = {}
local allowed = 1
for i = 1, #KEYS do
  local u = tonumber(redis.call('GET', KEYS[i]) or '0')
  local cost = tonumber(ARGV[i * 3 - 2])
  local limit = tonumber(ARGV[i * 3 - 1])
  used[i] = u
  if u >= limit or u + cost > limit then allowed = 0 end
end
if allowed == 1 then
  for i = 1, #KEYS do
    local cost = tonumber(ARGV[i * 3 - 2])
    if cost > 0 then
      used[i] = redis.call('INCRBY', KEYS[i], cost)
      redis.call('PEXPIREAT', KEYS[i], ARGV[i * 3])
    end
  end
end
table.insert(used, 1, allowed)
return used
`);

/** KEYS: the counter. ARGV: amount (may be negative), expire-at ms. Returns the usage after it, floored at 0. */
export const CHARGE = new LuaScript(`
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if v < 0 then
  redis.call('SET', KEYS[1], 0)
  v = 0
end
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return v
`);

export class RedisRateCounter implements RateCounter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'switchyard:rate:',
  ) {}

  async hit(checks: readonly RateCheck[], now: number): Promise<RateDecision> {
    const keys: string[] = [];
    const args: (string | number)[] = [];
    for (const c of checks) {
      assertCost(c.cost, 'cost');
      const w = windowOf(c.unit, now);
      keys.push(this.keyOf(c.key, c.unit, w.start));
      args.push(c.cost, String(c.limit), w.end + CLOCK_SKEW_GRACE_MS);
    }
    const [allowed, ...used] = (await HIT.run(this.redis, keys, args)) as number[];
    return decision(checks, used, allowed === 1, now);
  }

  async charge(key: string, unit: RateUnit, amount: number, now: number): Promise<number> {
    assertCost(amount, 'amount');
    const w = windowOf(unit, now);
    return (await CHARGE.run(this.redis, [this.keyOf(key, unit, w.start)], [amount, w.end + CLOCK_SKEW_GRACE_MS])) as number;
  }

  private keyOf(key: string, unit: RateUnit, start: number): string {
    return `${this.prefix}${unit}:${start}:${key}`;
  }
}
