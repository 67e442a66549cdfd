// Rate counters: the same behaviour in process memory and in Redis (fixed
// UTC windows, all-or-nothing admission over several limits, token charges
// after the answer), and in Redis, exactness across connections under
// concurrent load. Times are explicit: nothing waits for a window to pass.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Redis } from 'ioredis';
import { MemoryBudgetCounter } from '../src/limits/budget-counter.js';
import { MAX_MEMORY_COUNTERS, MemoryRateCounter, type RateCheck, type RateCounter } from '../src/limits/counter.js';
import { RedisRateCounter } from '../src/limits/redis-counter.js';
import { windowOf, type RateUnit } from '../src/limits/window.js';
import { MemoryKeys } from '../src/state/memory-keys.js';
import { memoryScripts } from '../src/state/script.js';
import { connect, dropPrefix, testPrefix } from './support/redis.js';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
/**
 * Monday 12:00 UTC two weeks ahead: counters take explicit times, but Redis
 * expires keys by its own clock, so test windows must lie in the future.
 */
const T0 = windowOf('rpw', Date.now()).start + 14 * DAY + 12 * 60 * MIN;
const MONDAY = T0 - 12 * 60 * MIN;

describe('rate windows', () => {
  it('align to the UTC minute, hour, day and ISO week', () => {
    const t = Date.UTC(2026, 4, 7, 15, 42, 17, 250); // Thursday
    assert.deepEqual(windowOf('rpm', t), { start: Date.UTC(2026, 4, 7, 15, 42), end: Date.UTC(2026, 4, 7, 15, 43) });
    assert.deepEqual(windowOf('rph', t), { start: Date.UTC(2026, 4, 7, 15), end: Date.UTC(2026, 4, 7, 16) });
    assert.deepEqual(windowOf('rpd', t), { start: Date.UTC(2026, 4, 7), end: Date.UTC(2026, 4, 8) });
    assert.deepEqual(windowOf('rpw', t), { start: Date.UTC(2026, 4, 4), end: Date.UTC(2026, 4, 11) });
  });

  it('a window includes its start and excludes its end', () => {
    for (const unit of ['rpm', 'rph', 'rpd', 'rpw'] as RateUnit[]) {
      const w = windowOf(unit, T0);
      assert.deepEqual(windowOf(unit, w.start), w);
      assert.deepEqual(windowOf(unit, w.end - 1), w);
      assert.equal(windowOf(unit, w.end).start, w.end);
    }
    // Sunday 23:59:59.999 is the last moment of the week that began on Monday.
    assert.equal(windowOf('rpw', Date.UTC(2026, 4, 10, 23, 59, 59, 999)).start, Date.UTC(2026, 4, 4));
  });
});

const req = (key: string, limit: number, unit: RateUnit = 'rpm'): RateCheck => ({ key, unit, limit, cost: 1 });
const tok = (key: string, limit: number, unit: RateUnit = 'rpm'): RateCheck => ({ key, unit, limit, cost: 0 });

/** The behaviour both counters share; `make` gives a counter with an empty state. */
function counterSuite(name: string, make: () => RateCounter): void {
  describe(`rate counter (${name})`, () => {
    let c: RateCounter;
    beforeEach(() => {
      c = make();
    });

    it('admits `limit` requests in a window, then refuses until the window ends', async () => {
      for (let i = 1; i <= 3; i++) {
        const d = await c.hit([req('a', 3)], T0 + i);
        assert.equal(d.allowed, true);
        assert.equal(d.retryAfterMs, 0);
        assert.deepEqual(d.counters, [{ used: i, remaining: 3 - i, resetAt: T0 + MIN }]);
      }
      const refused = await c.hit([req('a', 3)], T0 + 20_000);
      assert.equal(refused.allowed, false);
      assert.equal(refused.retryAfterMs, 40_000);
      assert.deepEqual(refused.counters, [{ used: 3, remaining: 0, resetAt: T0 + MIN }]);
      // The next minute starts from 0.
      const next = await c.hit([req('a', 3)], T0 + MIN);
      assert.equal(next.allowed, true);
      assert.equal(next.counters[0]!.used, 1);
    });

    it('counts each key and each unit apart', async () => {
      await c.hit([req('a', 1)], T0);
      assert.equal((await c.hit([req('a', 1)], T0)).allowed, false);
      assert.equal((await c.hit([req('b', 1)], T0)).allowed, true);
      assert.equal((await c.hit([req('a', 1, 'rph')], T0)).allowed, true);
    });

    it('several limits: admitted only when all have room; a refusal counts in none', async () => {
      const checks = [req('wide', 5), req('narrow', 2)];
      assert.equal((await c.hit(checks, T0)).allowed, true);
      assert.equal((await c.hit(checks, T0)).allowed, true);
      const d = await c.hit(checks, T0 + 30_000);
      assert.equal(d.allowed, false);
      assert.equal(d.retryAfterMs, 30_000);
      assert.deepEqual(
        d.counters.map((s) => s.used),
        [2, 2],
      );
      // `wide` did not count the refused request.
      const wideOnly = await c.hit([req('wide', 5)], T0 + 30_000);
      assert.equal(wideOnly.counters[0]!.used, 3);
    });

    it('retry-after is the latest end among the refusing limits', async () => {
      await c.hit([req('m', 1), req('h', 1, 'rph')], T0 + 5_000);
      const d = await c.hit([req('m', 1), req('h', 1, 'rph')], T0 + 10_000);
      assert.equal(d.allowed, false);
      assert.equal(d.retryAfterMs, 60 * MIN - 10_000);
      // Only the minute refuses: retry-after is the minute's end.
      const m = await c.hit([req('m', 1), req('fresh', 100, 'rph')], T0 + 10_000);
      assert.equal(m.retryAfterMs, 50_000);
    });

    it('token limits: admitted while under the limit, charged after the answer', async () => {
      assert.equal((await c.hit([tok('t', 100)], T0)).allowed, true);
      assert.equal(await c.charge('t', 'rpm', 60, T0 + 1), 60);
      const d = await c.hit([tok('t', 100)], T0 + 2);
      assert.equal(d.allowed, true);
      assert.deepEqual(d.counters, [{ used: 60, remaining: 40, resetAt: T0 + MIN }]);
      // An answer may take the group over its limit; the next request is refused.
      assert.equal(await c.charge('t', 'rpm', 70, T0 + 3), 130);
      const over = await c.hit([tok('t', 100)], T0 + 4);
      assert.equal(over.allowed, false);
      assert.deepEqual(over.counters, [{ used: 130, remaining: 0, resetAt: T0 + MIN }]);
      assert.equal((await c.hit([tok('t', 100)], T0 + MIN)).allowed, true);
    });

    it('a negative charge gives back, never below 0', async () => {
      await c.charge('r', 'rph', 50, T0);
      assert.equal(await c.charge('r', 'rph', -20, T0), 30);
      assert.equal(await c.charge('r', 'rph', -100, T0), 0);
      assert.equal(await c.charge('r', 'rph', 5, T0), 5);
    });

    it('a charge lands in the window of its own time', async () => {
      await c.charge('w', 'rpm', 10, T0 + MIN - 1);
      assert.equal(await c.charge('w', 'rpm', 1, T0 + MIN), 1);
    });

    it('fractional limits compare exactly; costs must be integers', async () => {
      assert.equal((await c.hit([req('f', 1.5)], T0)).allowed, true);
      assert.equal((await c.hit([req('f', 1.5)], T0)).allowed, false);
      assert.throws(() => c.hit([{ key: 'x', unit: 'rpm', limit: 5, cost: 0.5 }], T0), RangeError);
      await assert.rejects(c.charge('x', 'rpm', 1.5, T0), RangeError);
    });

    it('weekly limits run Monday to Sunday (UTC)', async () => {
      const sunday = MONDAY + 6 * DAY + 23 * 60 * MIN;
      await c.hit([req('wk', 2, 'rpw')], T0);
      await c.hit([req('wk', 2, 'rpw')], sunday);
      const d = await c.hit([req('wk', 2, 'rpw')], sunday);
      assert.equal(d.allowed, false);
      assert.equal(d.retryAfterMs, 60 * MIN);
      assert.equal((await c.hit([req('wk', 2, 'rpw')], MONDAY + 7 * DAY)).allowed, true);
    });

    it('concurrent hits admit exactly the limit', async () => {
      const results = await Promise.all(Array.from({ length: 40 }, () => c.hit([req('burst', 25)], T0)));
      assert.equal(results.filter((d) => d.allowed).length, 25);
    });
  });
}

counterSuite('memory', () => new MemoryRateCounter());

describe('rate counter (Redis scripts run by their twins, as a cluster primary runs them: src/cluster)', () => {
  const scripts = () => memoryScripts(new MemoryKeys({ max: 1000 }));
  counterSuite('script twins, shared behaviour', () => new RedisRateCounter(scripts()));

  it('two counters on one primary hitting one limit concurrently admit exactly the limit, leases and all', async () => {
    const shared = scripts();
    const one = new RedisRateCounter(shared);
    const two = new RedisRateCounter(shared);
    const limit = 500;
    // Waves, so the counters take leases (a pace shows) and then run dry near the limit.
    let admitted = 0;
    for (let wave = 0; wave < 20; wave++) {
      const results = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? one : two).hit([req('shared', limit)], T0 + wave)));
      admitted += results.filter((d) => d.allowed).length;
    }
    assert.equal(admitted, limit);
  });
});

describe('the HITS and CHARGE twins answer as the Lua scripts do', () => {
  let redis: Redis;
  let prefix: string;
  before(async () => {
    redis = await connect();
  });
  after(() => redis.disconnect());
  beforeEach(() => {
    prefix = testPrefix();
  });
  afterEach(async () => {
    await dropPrefix(redis, prefix);
  });

  it('the same calls, answered the same', async () => {
    const { HITS } = await import('../src/limits/redis-hits.js');
    const { CHARGE } = await import('../src/limits/redis-counter.js');
    const lua = { hits: HITS.on(redis), charge: CHARGE.on(redis) };
    const kv = memoryScripts(new MemoryKeys({ max: 1000 }));
    const twin = { hits: kv(HITS), charge: kv(CHARGE) };
    const expireAt = T0 + DAY;
    let seed = 7;
    const rand = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let call = 0; call < 200; call++) {
      if (rand(5) === 0) {
        const args = [`${prefix}k${rand(3)}`];
        const amount = rand(9) - 4 || 1;
        assert.deepEqual(await twin.charge(args, [amount, expireAt]), await lua.charge(args, [amount, expireAt]), `call ${call}`);
        continue;
      }
      // 1-3 requests of 1-2 counters each: cost, limit, expire-at, lease wanted.
      const keys: string[] = [];
      const args: number[] = [];
      for (let r = 0, n = 1 + rand(3); r < n; r++) {
        const m = 1 + rand(2);
        args.push(m);
        for (let c = 0; c < m; c++) {
          keys.push(`${prefix}k${rand(3)}`);
          args.push(rand(3), 40 + rand(200), expireAt, rand(4) === 0 ? 0 : rand(50));
        }
      }
      assert.deepEqual(await twin.hits(keys, args), (await lua.hits(keys, args)).map(Number), `call ${call}`);
    }
  });
});

describe('counters in memory are bounded (groups are metadata values callers choose)', () => {
  it('past max groups the least recently used is forgotten, counts from 0 again, and each eviction is told', () => {
    const evicted: string[] = [];
    const c = new MemoryRateCounter({ max: 2, onEvict: (k) => evicted.push(k) });
    c.hit([req('a', 1)], T0);
    c.hit([req('b', 1)], T0);
    assert.equal(c.hit([req('a', 1)], T0).allowed, false, 'a, used last');
    c.hit([req('c', 1)], T0);
    assert.deepEqual(evicted, ['b']);
    assert.equal(c.hit([req('b', 1)], T0).allowed, true, 'b forgotten');
    assert.deepEqual(evicted, ['b', 'a']);
  });

  it('a week of distinct groups (a weekly window is never swept) leaves MAX_MEMORY_COUNTERS', () => {
    let evicted = 0;
    const c = new MemoryRateCounter({ onEvict: () => evicted++ });
    const groups = MAX_MEMORY_COUNTERS + 5000;
    for (let i = 0; i < groups; i++) c.hit([req(`user-${i}`, 10, 'rpw')], T0 + i);
    assert.equal(evicted, 5000);
  });

  it('budget counters too', async () => {
    const evicted: string[] = [];
    const b = new MemoryBudgetCounter({ max: 2, onEvict: (k) => evicted.push(k) });
    const check = (key: string) => ({ key, limit: 100, amount: 10, expireAt: T0 + DAY });
    for (const key of ['a', 'b', 'a', 'c']) await b.reserve([check(key)], T0);
    assert.deepEqual(evicted, ['b']);
    assert.deepEqual((await b.reserve([check('a')], T0)).used, [30]);
  });
});

describe('rate counter (redis)', () => {
  let a: Redis;
  let b: Redis;
  let prefix: string;
  before(() => {
    a = connect();
    b = connect();
  });
  after(async () => {
    a.disconnect();
    b.disconnect();
  });
  beforeEach(() => {
    prefix = testPrefix();
  });
  afterEach(async () => {
    await dropPrefix(a, prefix);
  });

  counterSuite('redis, shared behaviour', () => new RedisRateCounter(a, prefix));

  it('two connections hitting one limit concurrently admit exactly the limit', async () => {
    const one = new RedisRateCounter(a, prefix);
    const two = new RedisRateCounter(b, prefix);
    const limit = 50;
    const hits = Array.from({ length: 4 * limit }, (_, i) => (i % 2 === 0 ? one : two).hit([req('shared', limit)], T0));
    const results = await Promise.all(hits);
    assert.equal(results.filter((d) => d.allowed).length, limit);
    // Every admitted request saw a distinct count: no two shared a read.
    const seen = results.filter((d) => d.allowed).map((d) => d.counters[0]!.used);
    assert.deepEqual(
      [...seen].sort((x, y) => x - y),
      Array.from({ length: limit }, (_, i) => i + 1),
    );
  });

  it('two connections, several limits each: every limit holds exactly', async () => {
    const one = new RedisRateCounter(a, prefix);
    const two = new RedisRateCounter(b, prefix);
    // Requests of group g1 fall under `all` and `g1`; of g2 under `all` and `g2`.
    const hits = Array.from({ length: 120 }, (_, i) => {
      const group = i % 3 === 0 ? 'g1' : 'g2';
      return Promise.resolve((i % 2 === 0 ? one : two).hit([req('all', 40), req(group, 15)], T0)).then((d) => ({ group, d }));
    });
    const results = await Promise.all(hits);
    const admitted = results.filter((r) => r.d.allowed);
    assert.equal(admitted.filter((r) => r.group === 'g1').length, 15);
    assert.equal(admitted.filter((r) => r.group === 'g2').length, 15);
    assert.equal(Number(await a.get(`${prefix}rpm:${T0}:all`)), 30, 'refused requests counted in no limit');
  });

  it('scripts the server lost (a restart, SCRIPT FLUSH) are sent again: checks and charges go on', async () => {
    const counter = new RedisRateCounter(a, prefix);
    assert.equal((await counter.hit([tok('flushed', 5)], T0)).allowed, true);
    assert.equal(await counter.charge('flushed', 'rpm', 2, T0), 2);
    await b.script('FLUSH');
    assert.equal((await counter.hit([tok('flushed', 5)], T0)).allowed, true);
    assert.equal(await counter.charge('flushed', 'rpm', 2, T0), 4);
  });

  it('keys name their window and expire a minute after it ends', async () => {
    const counter = new RedisRateCounter(a, prefix);
    await counter.hit([req('ttl', 5, 'rph')], T0);
    await counter.charge('tok', 'rpd', 7, T0);
    const hourKey = `${prefix}rph:${windowOf('rph', T0).start}:ttl`;
    const dayKey = `${prefix}rpd:${windowOf('rpd', T0).start}:tok`;
    assert.equal(await a.get(hourKey), '1');
    assert.equal(await a.get(dayKey), '7');
    assert.equal(await a.pexpiretime(hourKey), windowOf('rph', T0).end + MIN);
    assert.equal(await a.pexpiretime(dayKey), windowOf('rpd', T0).end + MIN);
    // A zero-cost check writes nothing.
    await counter.hit([tok('untouched', 5)], T0);
    assert.equal(await a.exists(`${prefix}rpm:${T0}:untouched`), 0);
  });

  /**
   * Runs `test` with a connection of its own whose script calls (round trips for checks) are counted, and closes it.
   * A script command (LuaScript, ioredis defineCommand) reaches the connection as an EVALSHA, sent as EVAL where the
   * connection has not loaded the script yet.
   */
  async function counted(test: (redis: Redis, calls: () => number) => Promise<void>): Promise<void> {
    const redis = connect();
    let calls = 0;
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = (command, ...rest) => {
      if (command.name === 'evalsha') calls++;
      return send(command, ...rest);
    };
    try {
      await test(redis, () => calls);
    } finally {
      redis.disconnect();
    }
  }

  it('the checks of many requests arriving together go to Redis in one script call, each counted as if alone', async () => {
    await counted(async (redis, calls) => {
      const counter = new RedisRateCounter(redis, prefix);
      // 300 requests at once, each on a counter of its own group and a shared one: none has a lease yet.
      const results = await Promise.all(Array.from({ length: 300 }, (_, i) => counter.hit([req(`own${i}`, 5), req('together', 250)], T0)));
      assert.ok(calls() <= 3, `${calls()} round trips for 300 requests`);
      assert.equal(results.filter((d) => d.allowed).length, 250);
      // In arrival order: the first 250 admitted, each seeing its own count.
      assert.deepEqual(
        results.slice(0, 250).map((d) => d.counters[1]!.used),
        Array.from({ length: 250 }, (_, i) => i + 1),
      );
      assert.ok(results.slice(250).every((d) => !d.allowed && d.counters[0]!.used === 0), 'a refused request counted nowhere');
    });
  });

  it('leases: a busy counter asks Redis once per lease, counts ahead there, and gives unused units back on close', async () => {
    await counted(async (redis, calls) => {
      const counter = new RedisRateCounter(redis, prefix);
      const key = `${prefix}rpm:${T0}:busy`;
      // 2,000 requests at 10 per ms, one after the other.
      for (let i = 0; i < 2000; i++) {
        const d = await counter.hit([req('busy', 1e6)], T0 + Math.floor(i / 10));
        assert.equal(d.allowed, true);
        // Alone on the counter, the process sees every request counted, its lease not.
        assert.equal(d.counters[0]!.used, i + 1);
      }
      assert.ok(calls() < 100, `${calls()} round trips for 2,000 checks`);
      assert.ok(Number(await a.get(key)) > 2000, 'leased units are counted before they are used');
      await counter.close();
      assert.equal(Number(await a.get(key)), 2000, 'unused units given back');
    });
  });

  /**
   * Lets a refill asked for by the last check reach Redis and come back, as
   * the time between a gateway's requests does: RedisHits sends at the end
   * of the event-loop turn, and a PING after it on the same connection is
   * answered after it.
   */
  async function roundTrip(redis: Redis): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    await redis.ping();
  }

  /** `n` requests on counter `key` at 10 per ms, a round trip's time between each ms's requests; returns how many waited for Redis. */
  async function steady(counter: RedisRateCounter, redis: Redis, key: string, n: number): Promise<number> {
    let waited = 0;
    for (let i = 0; i < n; i++) {
      const d = counter.hit([req(key, 1e6)], T0 + Math.floor(i / 10));
      if (d instanceof Promise) {
        waited++;
        assert.equal((await d).allowed, true);
      }
      if (i % 10 === 9) await roundTrip(redis);
    }
    return waited;
  }

  it('leases: at a steady pace the next lease is asked for before the last runs out, so checks wait for no round trip', async () => {
    await counted(async (redis, calls) => {
      const counter = new RedisRateCounter(redis, prefix);
      const waited = await steady(counter, redis, 'steady', 3000);
      // The first lease is asked for by a check that waits; it sets the pace, and the refills keep ahead of it.
      assert.ok(waited <= 2, `${waited} checks waited for Redis`);
      assert.ok(calls() < 60, `${calls()} round trips for 3,000 checks`);
      await counter.close();
      assert.equal(Number(await a.get(`${prefix}rpm:${T0}:steady`)), 3000);
    });
  });

  it('leases: a burst past the lease while its refill is under way takes a few round trips; close gives back a refill under way', async () => {
    await counted(async (redis, calls) => {
      const counter = new RedisRateCounter(redis, prefix);
      await steady(counter, redis, 'burst', 500);
      const before = calls();
      // A burst far past the lease in one event-loop turn: a refill goes out, the checks past the lease wait for it.
      const burst = Array.from({ length: 1000 }, () => counter.hit([req('burst', 1e6)], T0 + 50));
      const decisions = await Promise.all(burst);
      assert.ok(decisions.every((d) => d.allowed));
      // The refill, and one batched call for the checks its lease could not cover (with the next lease).
      assert.ok(calls() - before <= 3, `${calls() - before} round trips for a burst of 1,000`);
      // Checks one by one until one sends a refill, and the process stops at once, the refill's answer not in yet.
      let n = 1500;
      const sent = calls();
      while (calls() === sent) {
        const d = counter.hit([req('burst', 1e6)], T0 + 51);
        if (d instanceof Promise) await d;
        n++;
        await new Promise((resolve) => setImmediate(resolve));
      }
      await counter.close();
      assert.equal(Number(await a.get(`${prefix}rpm:${T0}:burst`)), n, 'the refill\'s units given back');
    });
  });

  it('leases: two processes in bursts until refused admit exactly the limit, and nothing is left counted ahead', async () => {
    const one = new RedisRateCounter(a, prefix);
    const two = new RedisRateCounter(b, prefix);
    const limit = 3000;
    let admitted = 0;
    for (let round = 0; ; round++) {
      // 40 concurrent requests on each process per ms: leases grow on both.
      const burst = Array.from({ length: 80 }, (_, i) => (i % 2 === 0 ? one : two).hit([req('bursts', limit)], T0 + round));
      const n = (await Promise.all(burst)).filter((d) => d.allowed).length;
      if (n === 0) break;
      admitted += n;
      assert.ok(round < 200, 'never refused');
    }
    assert.equal(admitted, limit);
    assert.equal(Number(await a.get(`${prefix}rpm:${T0}:bursts`)), limit);
  });

  it('leases: within LEASE_SHARE of the limit every request is counted on its own', async () => {
    const counter = new RedisRateCounter(a, prefix);
    const limit = 200;
    const key = `${prefix}rpm:${T0}:near`;
    for (let i = 1; i <= limit; i++) {
      assert.equal((await counter.hit([req('near', limit)], T0 + Math.floor(i / 10))).allowed, true);
      const counted = Number(await a.get(key));
      // What is counted ahead never exceeds a 64th of the room that was left.
      assert.ok(counted - i <= Math.floor((limit - i) / 64), `${counted} counted after ${i} requests`);
    }
    assert.equal((await counter.hit([req('near', limit)], T0 + 30)).allowed, false);
    assert.equal(Number(await a.get(key)), limit);
  });

  it('leases: a policy given a new value is checked in Redis at once, not from the lease taken under the old one', async () => {
    const counter = new RedisRateCounter(a, prefix);
    for (let i = 0; i < 500; i++) await counter.hit([req('changed', 1e6)], T0 + Math.floor(i / 10));
    // Lowered below what is used: refused at once, though units leased under the old value are left.
    const d = await counter.hit([req('changed', 400)], T0 + 60);
    assert.equal(d.allowed, false);
  });

  it('still counts after the server forgets its scripts', async () => {
    const counter = new RedisRateCounter(a, prefix);
    await counter.hit([req('flush', 3)], T0);
    await a.script('FLUSH');
    const d = await counter.hit([req('flush', 3)], T0);
    assert.equal(d.counters[0]!.used, 2);
  });
});
