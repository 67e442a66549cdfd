/**
 * Check-and-count in Redis for many requests at once: rate counters
 * (redis-counter.ts) and budget reservations (budget-redis.ts) both ask
 * "does every counter of this request have room for its cost, and if so add
 * it", atomically, so N gateway processes at a limit of L admit exactly L.
 *
 * The hits of many requests go to Redis as one script call: while one call
 * is in flight, the hits that arrive wait and go together in the next, so a
 * busy gateway sends one command per round trip instead of one per request
 * (a command through ioredis costs more CPU than the rest of the check).
 * Redis runs the call's requests one after the other inside one atomic
 * script, each all-or-nothing exactly as if sent alone, in arrival order.
 */
import type { Redis } from 'ioredis';
import type { MemoryKeys } from '../state/memory-keys.js';
import { LuaScript, scriptsOf, type RunScript, type Scripts } from '../state/script.js';

/**
 * A lease is cut to this share of the room a counter has left (floored), so
 * leases shrink to nothing near the limit: within LEASE_SHARE of it, every
 * request is counted on its own and the limit holds exactly however many
 * processes share it.
 */
const LEASE_SHARE = 64;

/**
 * KEYS: every request's counters, request after request. ARGV: per request
 * its number of counters n, then per counter `cost, limit, expire-at ms,
 * lease wanted`. A request is admitted unless one of its counters refuses
 * (counter.ts `refuses`), and counted only when admitted. Leases are
 * granted once every request of the call is counted, from the room left
 * then: a lease taken at the start of a burst would sit unused while the
 * burst's other requests were refused. Returns per request `allowed (1|0)`,
 * then per counter `used, lease granted, count after the lease` (0 when
 * none), flat; used is the count with the request (before it, when refused).
 */
export const HITS = new LuaScript<number[]>('switchyardHits', `
local out = {}
local leases = {}
local k = 0
local a = 1
while a <= #ARGV do
  local n = tonumber(ARGV[a])
  local at = #out + 1
  local allowed = 1
  for i = 1, n do
    local j = a + i * 4 - 3
    local u = tonumber(redis.call('GET', KEYS[k + i]) or '0')
    local cost = tonumber(ARGV[j])
    local limit = tonumber(ARGV[j + 1])
    out[at + i * 3 - 2] = u
    out[at + i * 3 - 1] = 0
    out[at + i * 3] = 0
    if u >= limit or u + cost > limit then allowed = 0 end
  end
  out[at] = allowed
  if allowed == 1 then
    for i = 1, n do
      local j = a + i * 4 - 3
      local cost = tonumber(ARGV[j])
      if cost > 0 then
        out[at + i * 3 - 2] = redis.call('INCRBY', KEYS[k + i], cost)
        redis.call('PEXPIREAT', KEYS[k + i], ARGV[j + 2])
      end
      if tonumber(ARGV[j + 3]) > 0 then table.insert(leases, {k + i, j, at + i * 3 - 1}) end
    end
  end
  k = k + n
  a = a + 1 + n * 4
end
for _, l in ipairs(leases) do
  local key, j, o = l[1], l[2], l[3]
  local room = tonumber(ARGV[j + 1]) - tonumber(redis.call('GET', KEYS[key]) or '0')
  local grant = math.max(0, math.min(tonumber(ARGV[j + 3]), math.floor(room / ${LEASE_SHARE})))
  if grant > 0 then
    out[o] = grant
    out[o + 1] = redis.call('INCRBY', KEYS[key], grant)
    redis.call('PEXPIREAT', KEYS[key], ARGV[j + 2])
  end
end
return out
`, hitsTwin);

/** HITS's twin (state/script.ts), line for line. */
function hitsTwin(kv: MemoryKeys, keys: readonly string[], argv: readonly number[]): number[] {
  const out: number[] = [];
  const leases: [key: number, j: number, o: number][] = [];
  let k = 0;
  let a = 0;
  while (a < argv.length) {
    const n = argv[a]!;
    const at = out.length;
    let allowed = 1;
    for (let i = 0; i < n; i++) {
      const j = a + 1 + i * 4;
      const u = kv.num(keys[k + i]!);
      out[at + 1 + i * 3] = u;
      out[at + 2 + i * 3] = 0;
      out[at + 3 + i * 3] = 0;
      if (u >= argv[j + 1]! || u + argv[j]! > argv[j + 1]!) allowed = 0;
    }
    out[at] = allowed;
    if (allowed === 1) {
      for (let i = 0; i < n; i++) {
        const j = a + 1 + i * 4;
        const key = keys[k + i]!;
        if (argv[j]! > 0) {
          out[at + 1 + i * 3] = kv.num(key) + argv[j]!;
          kv.setNum(key, out[at + 1 + i * 3]!, argv[j + 2]!);
        }
        if (argv[j + 3]! > 0) leases.push([k + i, j, at + 2 + i * 3]);
      }
    }
    k += n;
    a += 1 + n * 4;
  }
  for (const [key, j, o] of leases) {
    const used = kv.num(keys[key]!);
    const grant = Math.max(0, Math.min(argv[j + 3]!, Math.floor((argv[j + 1]! - used) / LEASE_SHARE)));
    if (grant > 0) {
      out[o] = grant;
      out[o + 1] = used + grant;
      kv.setNum(keys[key]!, used + grant, argv[j + 2]!);
    }
  }
  return out;
}

export interface HitReply {
  allowed: boolean;
  /** Per counter, in order: its usage with this request (before it, when refused). */
  used: number[];
  /** Per counter: the lease granted (0 when refused or none wanted), and the usage once it was counted. */
  granted: number[];
  leased: number[];
}

interface Waiting {
  n: number;
  resolve: (r: HitReply) => void;
  reject: (e: unknown) => void;
}

class Batch {
  readonly keys: string[] = [];
  readonly args: number[] = [];
  readonly waiting: Waiting[] = [];
}

/** A call carries at most this many requests; more go in calls of their own at once (a burst, or Redis slow to answer). */
const MAX_REQUESTS = 512;

export class RedisHits {
  private next = new Batch();
  private inFlight = 0;
  private scheduled = false;
  private readonly run: RunScript<number[]>;

  constructor(where: Redis | Scripts) {
    this.run = scriptsOf(where)(HITS);
  }

  /**
   * Checks and counts one request's counters (`args`: `cost, limit,
   * expire-at ms, lease wanted` per key); rejects when Redis cannot be
   * reached (the caller fails open or closed).
   */
  hit(keys: readonly string[], args: readonly number[]): Promise<HitReply> {
    return new Promise((resolve, reject) => {
      const b = this.next;
      const n = keys.length;
      b.args.push(n);
      for (let i = 0; i < n; i++) b.keys.push(keys[i]!);
      for (let i = 0; i < args.length; i++) b.args.push(args[i]!);
      b.waiting.push({ n, resolve, reject });
      if (b.waiting.length >= MAX_REQUESTS) this.send();
      else if (this.inFlight === 0 && !this.scheduled) {
        // Idle: go at the end of this event-loop turn, with the hits of the other requests read in it.
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          if (this.inFlight === 0) this.send();
        });
      }
    });
  }

  private send(): void {
    const b = this.next;
    if (b.waiting.length === 0) return;
    this.next = new Batch();
    this.inFlight++;
    this.run(b.keys, b.args).then(
      (reply) => {
        this.done();
        settle(b.waiting, reply);
      },
      (err: unknown) => {
        this.done();
        for (const w of b.waiting) w.reject(err);
      },
    );
  }

  /** The call in flight answered: the hits that gathered meanwhile go now. */
  private done(): void {
    this.inFlight--;
    if (this.inFlight === 0) this.send();
  }
}

function settle(waiting: readonly Waiting[], reply: readonly number[]): void {
  let at = 0;
  for (const w of waiting) {
    const used = new Array<number>(w.n);
    const granted = new Array<number>(w.n);
    const leased = new Array<number>(w.n);
    for (let i = 0; i < w.n; i++) {
      used[i] = reply[at + 1 + i * 3]!;
      granted[i] = reply[at + 2 + i * 3]!;
      leased[i] = reply[at + 3 + i * 3]!;
    }
    w.resolve({ allowed: reply[at] === 1, used, granted, leased });
    at += 1 + w.n * 3;
  }
}
