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
import { boundedMap, type OnEvict } from '../shared/bounded.js';
import { LuaScript, scriptsOf, type RunScript, type Scripts } from '../state/script.js';
import { assertCost, decision, MAX_MEMORY_COUNTERS, type RateCheck, type RateCounter, type RateDecision } from './counter.js';
import { RedisHits, type HitReply } from './redis-hits.js';
import { windowOf, windowStart, type RateUnit } from './window.js';

const CLOCK_SKEW_GRACE_MS = 60_000;

/** KEYS: the counter. ARGV: amount (may be negative), expire-at ms. Returns the usage after it, floored at 0. */
export const CHARGE = new LuaScript<number>('switchyardCharge', `
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if v < 0 then
  redis.call('SET', KEYS[1], 0)
  v = 0
end
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return v
`, (kv, [key], [amount, expireAt]) => {
  const v = Math.max(0, kv.num(key!) + amount!);
  kv.setNum(key!, v, expireAt);
  return v;
});

/** A lease is sized to what this process used in about this long, at the pace it has been going. */
const LEASE_MS = 50;
const MAX_LEASE = 1024;
/**
 * The next lease is asked for when this share of the last one is left, so a
 * busy counter's requests find units in hand and none waits for Redis (at
 * 50 ms a lease, the answer has about 12 ms to come).
 */
const REFILL_SHARE = 4;
/** Leases of ended windows are dropped every this many checks. */
const SWEEP_EVERY = 4096;

/**
 * Units of one counter this process has counted in Redis ahead of its
 * requests, for one window: they are admitted here, with no round trip,
 * while they last. Redis grants a lease with a request it admits, or alone
 * as a refill (redis-hits.ts), never past the limit, and less the nearer the
 * limit is.
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
  /** The last lease's size: the next is asked for when a REFILL_SHARE of it is left. */
  granted: number;
  /** The pace: what this process's requests took from the counter since it last asked Redis for units, at `askedAt`. */
  demand: number;
  askedAt: number;
  /** A lease asked for and not answered yet: requests meanwhile ask for none. */
  asking: boolean;
  /** The refill in flight, if any: requests that find the lease empty wait for it rather than go to Redis one by one. */
  refill: Promise<void> | null;
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
 * on its own. The next lease is asked for before the last runs out, so
 * that at a steady pace no request waits; a process can then hold a quarter
 * lease more. A closing gateway gives its unused units back. Token limits (cost 0,
 * charged after the answer by every process) are checked in Redis each time.
 * The quota a request sees counts the others' requests as of the last
 * answer from Redis.
 */
export class RedisRateCounter implements RateCounter {
  private readonly hits: RedisHits;
  /**
   * By counter (RateCheck key): one lease each, for the window it was taken
   * in; as many as memory counters may be (a forgotten lease's units stay
   * counted in Redis until its window ends, as a stopped process's do).
   */
  private readonly leases;
  /** Refills in flight, waited for on close so that their units are given back too. */
  private readonly refills = new Set<Promise<void>>();
  private checks = 0;
  private readonly add: RunScript<number>;

  constructor(
    /** Redis, or where its scripts' twins run (a cluster's primary: src/cluster). */
    redis: Redis | Scripts,
    private readonly prefix = 'switchyard:rate:',
    opts: { max?: number; onEvict?: OnEvict } = {},
  ) {
    this.leases = boundedMap<Lease>(opts.max ?? MAX_MEMORY_COUNTERS, opts.onEvict);
    this.hits = new RedisHits(redis);
    this.add = scriptsOf(redis)(CHARGE);
  }

  hit(checks: readonly RateCheck[], now: number): RateDecision | Promise<RateDecision> {
    if (++this.checks % SWEEP_EVERY === 0) this.sweep(now);
    let leased = true;
    let refill: Promise<void> | null = null;
    for (let i = 0; i < checks.length; i++) {
      const c = checks[i]!;
      assertCost(c.cost, 'cost');
      if (!leased) continue;
      const l = this.leases.get(c.key);
      if (!holds(l, c, windowStart(c.unit, now))) {
        leased = false;
        refill = l?.refill ?? null;
      }
    }
    if (refill !== null) return refill.then(() => this.hit(checks, now));
    if (!leased) return this.ask(checks, now);
    const used = new Array<number>(checks.length);
    for (let i = 0; i < checks.length; i++) {
      const c = checks[i]!;
      const l = this.leases.get(c.key)!;
      l.left -= c.cost;
      l.demand += c.cost;
      used[i] = l.used - l.left;
      if (!l.asking && l.left * REFILL_SHARE <= l.granted) this.refill(l, now);
    }
    return decision(checks, used, true, now);
  }

  /** Asks for the next lease of a counter whose units run low, in the background: requests go on with what is left. */
  private refill(l: Lease, now: number): void {
    const want = this.asked(l, now);
    // Cost 0: counts nothing but the lease, and is refused (no lease) once the counter is at its limit.
    const done = this.hits.hit([l.key], [0, l.limit, l.end + CLOCK_SKEW_GRACE_MS, want]).then(
      (reply) => granted(l, reply, 0, true),
      // Not fatal: the requests after the lease runs out ask Redis themselves, and fail open or closed there.
      () => {},
    );
    const settled = done.finally(() => {
      l.asking = false;
      l.refill = null;
      this.refills.delete(settled);
    });
    l.refill = settled;
    this.refills.add(settled);
  }

  /** The lease to ask for now (marking the lease as asking and restarting its pace). */
  private asked(l: Lease, now: number): number {
    const want = leaseSize(l, now);
    l.asking = true;
    l.demand = 0;
    l.askedAt = now;
    return want;
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
          l = { key, unit: c.unit, start: w.start, end: w.end, limit: c.limit, used: 0, left: 0, granted: 0, demand: l?.demand ?? 0, askedAt: l?.askedAt ?? now, asking: false, refill: null };
          this.leases.set(c.key, l);
        }
        l.demand += c.cost;
        // A counter with units left is here for another one's sake (a token limit): it needs no more yet.
        if (!l.asking && l.left < c.cost) {
          want = this.asked(l, now);
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
      if (l !== undefined) granted(l, reply, i, asking.includes(l));
    }
    return decision(checks, reply.used, reply.allowed, now);
  }

  async charge(key: string, unit: RateUnit, amount: number, now: number): Promise<number> {
    assertCost(amount, 'amount');
    const w = windowOf(unit, now);
    return this.add([this.keyOf(key, unit, w.start)], [amount, w.end + CLOCK_SKEW_GRACE_MS]);
  }

  /** Gives the units of every unused lease back, for the processes that stay. */
  async close(): Promise<void> {
    await Promise.all(this.refills);
    const back = [...this.leases.values()].filter((l) => l.left > 0);
    this.leases.clear();
    await Promise.all(back.map((l) => this.add([l.key], [-l.left, l.end + CLOCK_SKEW_GRACE_MS]).catch(() => {})));
  }

  private sweep(now: number): void {
    this.leases.forEach((l, counter) => {
      if (l.end <= now) this.leases.delete(counter);
    });
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

/** What the process uses in LEASE_MS at the pace it went since it last asked; 1 with no pace yet. */
function leaseSize(l: Lease, now: number): number {
  const perMs = l.demand / Math.max(1, now - l.askedAt);
  return Math.min(MAX_LEASE, Math.max(1, Math.round(perMs * LEASE_MS)));
}

/**
 * Applies Redis's answer for counter `i` of a hit to its lease: the units
 * granted, and the count as Redis saw it. An answer to a lease asked for
 * sets the refill mark, to nothing when none was granted (near the limit):
 * the lease is then used up before Redis is asked again.
 */
function granted(l: Lease, reply: HitReply, i: number, asked: boolean): void {
  const g = reply.granted[i]!;
  l.left += g;
  if (asked) l.granted = g;
  l.used = Math.max(l.used, g > 0 ? reply.leased[i]! : reply.used[i]!);
}
