/**
 * Rate counters in Redis, shared by every gateway process on the same
 * REDIS_URL. A request's check runs in a Lua script (redis-hits.ts): Redis
 * runs it atomically, so the read, the comparison with the limit and the
 * increment of every counter of a request happen with no other process in
 * between. N processes hitting a limit of L at once admit exactly L in the
 * window, never L + (N - 1).
 *
 * A counter's key names its window (`<prefix><unit>:<window start>:<key>`),
 * so a new window starts at 0 with no reset step, and keys expire a minute
 * after their window ends: a process whose clock lags slightly behind still
 * finds the count of the window it believes it is in.
 */
import type { Redis } from 'ioredis';
import { LuaScript } from '../state/redis.js';
import { assertCost, decision, type RateCheck, type RateCounter, type RateDecision } from './counter.js';
import { RedisHits } from './redis-hits.js';
import { windowOf, windowStart, type RateUnit } from './window.js';

const CLOCK_SKEW_GRACE_MS = 60_000;

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

/** A lease is sized to what this process used in about this long, at the pace it used its last lease. */
const LEASE_MS = 50;
const MAX_LEASE = 1024;
/** Leases of ended windows are dropped every this many checks. */
const SWEEP_EVERY = 4096;

/**
 * Units of one counter this process has counted in Redis ahead of its
 * requests, for one window: they are admitted here, with no round trip,
 * until used up. Redis grants a lease with a request it admits
 * (redis-hits.ts), never past the limit, and less the nearer the limit is.
 */
interface Lease {
  /** The Redis key: the counter in its window (to give unused units back). */
  key: string;
  /** What the units were counted against: another window, unit or limit (a policy changed) starts afresh. */
  unit: RateUnit;
  start: number;
  end: number;
  limit: number;
  /** Redis's count when last heard from: every process's requests and unused leases. */
  used: number;
  /** Units not used yet. */
  left: number;
  /** The last lease's size and time, to size the next by the pace it went at. */
  granted: number;
  grantedAt: number;
  /** A lease asked for and not answered yet: requests meanwhile ask for none. */
  asking: boolean;
}

/**
 * Request limits are checked against leases when they can be: a busy
 * gateway asks Redis once per lease instead of once per request, and a
 * request admitted from a lease waits for nothing. The limit still holds
 * across processes, since every leased unit is counted in Redis before it
 * is used; what a lease costs is that units leased and never used (a
 * process whose traffic stops) are not available to the others until the
 * window ends: at most MAX_LEASE per process and counter, and none within
 * LEASE_SHARE (redis-hits.ts) of the limit, where every request is counted
 * on its own. A closing gateway gives its unused units back. Token limits (cost 0,
 * charged after the answer by every process) are checked in Redis each time.
 * The quota a request sees counts the others' requests as of the last
 * answer from Redis.
 */
export class RedisRateCounter implements RateCounter {
  private readonly hits: RedisHits;
  /** By counter (RateCheck key): one lease each, for the window it was taken in. */
  private readonly leases = new Map<string, Lease>();
  private checks = 0;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'switchyard:rate:',
  ) {
    this.hits = new RedisHits(redis);
  }

  hit(checks: readonly RateCheck[], now: number): RateDecision | Promise<RateDecision> {
    if (++this.checks % SWEEP_EVERY === 0) this.sweep(now);
    let leased = true;
    for (let i = 0; i < checks.length; i++) {
      const c = checks[i]!;
      assertCost(c.cost, 'cost');
      if (leased && !holds(this.leases.get(c.key), c, windowStart(c.unit, now))) leased = false;
    }
    if (!leased) return this.ask(checks, now);
    const used = new Array<number>(checks.length);
    for (let i = 0; i < checks.length; i++) {
      const l = this.leases.get(checks[i]!.key)!;
      l.left -= checks[i]!.cost;
      used[i] = l.used - l.left;
    }
    return decision(checks, used, true, now);
  }

  /** Checks in Redis, asking for a lease on each request counter that has none on the way. */
  private async ask(checks: readonly RateCheck[], now: number): Promise<RateDecision> {
    const keys: string[] = [];
    const args: number[] = [];
    /** Per check, the lease of its counter (none for token limits). */
    const leases: (Lease | undefined)[] = [];
    const asking: Lease[] = [];
    for (const c of checks) {
      const w = windowOf(c.unit, now);
      const key = this.keyOf(c.key, c.unit, w.start);
      let l: Lease | undefined;
      let want = 0;
      if (c.cost > 0) {
        l = this.leases.get(c.key);
        if (l === undefined || !current(l, c, w.start)) {
          // The pace of the counter's last lease carries over: a new window starts with a lease of the right size.
          l = { key, unit: c.unit, start: w.start, end: w.end, limit: c.limit, used: 0, left: 0, granted: l?.granted ?? 0, grantedAt: l?.grantedAt ?? now, asking: false };
          this.leases.set(c.key, l);
        }
        // A counter with units left is here for another one's sake (a token limit): it needs no more yet.
        if (!l.asking && l.left < c.cost) {
          want = leaseSize(l, now);
          l.asking = true;
          asking.push(l);
        }
      }
      keys.push(key);
      leases.push(l);
      args.push(c.cost, c.limit, w.end + CLOCK_SKEW_GRACE_MS, want);
    }
    let reply;
    try {
      reply = await this.hits.hit(keys, args);
    } finally {
      for (const l of asking) l.asking = false;
    }
    // Onto the leases asked with: one replaced meanwhile (a new window, a changed policy) is no longer used, its units lost with it.
    for (let i = 0; i < checks.length; i++) {
      const l = leases[i];
      if (l === undefined) continue;
      const granted = reply.granted[i]!;
      if (granted > 0) {
        l.left += granted;
        l.granted = granted;
        l.grantedAt = now;
      }
      l.used = Math.max(l.used, granted > 0 ? reply.leased[i]! : reply.used[i]!);
    }
    return decision(checks, reply.used, reply.allowed, now);
  }

  async charge(key: string, unit: RateUnit, amount: number, now: number): Promise<number> {
    assertCost(amount, 'amount');
    const w = windowOf(unit, now);
    return (await CHARGE.run(this.redis, [this.keyOf(key, unit, w.start)], [amount, w.end + CLOCK_SKEW_GRACE_MS])) as number;
  }

  /** Gives the units of every unused lease back, for the processes that stay. */
  async close(): Promise<void> {
    const back = [...this.leases.values()].filter((l) => l.left > 0);
    this.leases.clear();
    await Promise.all(back.map((l) => CHARGE.run(this.redis, [l.key], [-l.left, l.end + CLOCK_SKEW_GRACE_MS]).catch(() => {})));
  }

  private sweep(now: number): void {
    for (const [counter, l] of this.leases) if (l.end <= now) this.leases.delete(counter);
  }

  private keyOf(key: string, unit: RateUnit, start: number): string {
    return `${this.prefix}${unit}:${start}:${key}`;
  }
}

/** Whether a lease was counted against what a check counts against now: the window starting at `start`, its unit and limit. */
function current(l: Lease, c: RateCheck, start: number): boolean {
  return l.start === start && l.unit === c.unit && l.limit === c.limit;
}

/** Whether a request check (cost > 0) can be admitted from a lease. */
function holds(l: Lease | undefined, c: RateCheck, start: number): boolean {
  return c.cost > 0 && l !== undefined && current(l, c, start) && l.left >= c.cost;
}

/** What the process uses in LEASE_MS at the pace of its last lease; 1 for a first one. */
function leaseSize(l: Lease, now: number): number {
  if (l.granted === 0) return 1;
  const perMs = l.granted / Math.max(1, now - l.grantedAt);
  return Math.min(MAX_LEASE, Math.max(1, Math.round(perMs * LEASE_MS)));
}
