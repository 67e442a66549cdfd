// Circuit stores: the Redis store behaves as the memory one (consecutive
// failures, cooldown, one probe, a failed probe re-opens), and across
// connections it is one circuit: failures add up and exactly one of many
// concurrent callers gets the probe. The black-box router behaviour is in
// routing-circuit.test.ts.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import type { CircuitBreakerConfig } from '../src/config/types.js';
import { MAX_MEMORY_CIRCUITS, MemoryCircuitStore, type CircuitStore } from '../src/routing/circuit.js';
import { RedisCircuitStore } from '../src/routing/circuit-redis.js';
import { freePort } from './support/http.js';
import { MemoryKeys } from '../src/state/memory-keys.js';
import { memoryScripts } from '../src/state/script.js';
import { connect, dropPrefix, testPrefix } from './support/redis.js';

const COOLDOWN = 30_000;
const CB: CircuitBreakerConfig = { failure_threshold: 2, cooldown_interval: COOLDOWN };
const T0 = Date.now();

describe('circuit store (memory) is bounded: inline configs make targets at will', () => {
  it('past max circuits the least recently used is forgotten (closed), and each eviction is told', async () => {
    const evicted: string[] = [];
    const s = new MemoryCircuitStore({ max: 3, onEvict: (k) => evicted.push(k) });
    for (const k of ['a', 'b', 'c']) for (let i = 0; i < CB.failure_threshold; i++) await s.record(k, CB, true, T0);
    assert.equal(await s.admit('a', T0), 'open', 'a, used last');
    await s.record('d', CB, true, T0);
    assert.deepEqual(evicted, ['b']);
    assert.equal(await s.admit('b', T0), 'closed');
    assert.equal(await s.admit('a', T0), 'open');
  });

  it('targets that only ever fail leave MAX_MEMORY_CIRCUITS entries', async () => {
    let evicted = 0;
    const s = new MemoryCircuitStore({ onEvict: () => evicted++ });
    for (let i = 0; i < MAX_MEMORY_CIRCUITS + 100; i++) await s.record(`config-${i}:config`, CB, true, T0);
    assert.equal(evicted, 100);
  });
});

function storeSuite(name: string, make: () => CircuitStore): void {
  describe(`circuit store (${name})`, () => {
    let s: CircuitStore;
    beforeEach(() => {
      s = make();
    });
    const fail = (now = T0) => s.record('t', CB, true, now);

    it('closed until failure_threshold consecutive failures, then open', async () => {
      assert.equal(await s.admit('t', T0), 'closed');
      await fail();
      assert.equal(await s.state('t', T0), 'closed');
      assert.equal(await s.admit('t', T0), 'closed');
      await fail();
      assert.equal(await s.state('t', T0), 'open');
      assert.equal(await s.admit('t', T0), 'open');
      assert.equal(await s.admit('other', T0), 'closed', 'per key');
    });

    it('a success resets the count', async () => {
      await fail();
      await s.record('t', CB, false, T0);
      await fail();
      assert.equal(await s.admit('t', T0), 'closed');
    });

    it('after the cooldown one caller probes; the rest stay out while it runs', async () => {
      await fail();
      await fail();
      assert.equal(await s.admit('t', T0 + COOLDOWN - 1), 'open');
      assert.equal(await s.state('t', T0 + COOLDOWN), 'half-open');
      assert.equal(await s.admit('t', T0 + COOLDOWN), 'probe');
      assert.equal(await s.state('t', T0 + COOLDOWN), 'open');
      assert.equal(await s.admit('t', T0 + COOLDOWN + 1), 'open');
    });

    it('a successful probe closes the circuit', async () => {
      await fail();
      await fail();
      assert.equal(await s.admit('t', T0 + COOLDOWN), 'probe');
      await s.record('t', CB, false, T0 + COOLDOWN + 5);
      assert.equal(await s.admit('t', T0 + COOLDOWN + 6), 'closed');
      assert.equal(await s.state('t', T0 + COOLDOWN + 6), 'closed');
    });

    it('a failed probe re-opens for a full cooldown, below the threshold too', async () => {
      const cb = { failure_threshold: 5, cooldown_interval: COOLDOWN };
      for (let i = 0; i < 5; i++) await s.record('t', cb, true, T0);
      assert.equal(await s.admit('t', T0 + COOLDOWN), 'probe');
      const t1 = T0 + COOLDOWN + 100;
      await s.record('t', cb, true, t1);
      assert.equal(await s.admit('t', t1 + COOLDOWN - 1), 'open');
      assert.equal(await s.admit('t', t1 + COOLDOWN), 'probe');
    });
  });
}

storeSuite('memory', () => new MemoryCircuitStore());

describe('circuit store (Redis scripts run by their twins, as a cluster primary runs them: src/cluster)', () => {
  storeSuite('script twins, shared behaviour', () => new RedisCircuitStore(memoryScripts(new MemoryKeys({ max: 1000 }))));

  it('one circuit for two stores on one primary: exactly one probe, and a probe never reported is handed out again', async () => {
    const shared = memoryScripts(new MemoryKeys({ max: 1000 }));
    const one = new RedisCircuitStore(shared);
    const two = new RedisCircuitStore(shared);
    await one.record('t', CB, true, T0);
    await two.record('t', CB, true, T0);
    const admissions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? one : two).admit('t', T0 + COOLDOWN)));
    assert.equal(admissions.filter((x) => x === 'probe').length, 1);
    assert.equal(await two.admit('t', T0 + 2 * COOLDOWN), 'probe');
  });
});

describe('circuit store (redis)', () => {
  let a: Redis;
  let b: Redis;
  let prefix: string;
  before(() => {
    a = connect();
    b = connect();
  });
  after(() => {
    a.disconnect();
    b.disconnect();
  });
  beforeEach(() => {
    prefix = testPrefix();
  });
  afterEach(async () => {
    await dropPrefix(a, prefix);
  });

  storeSuite('redis, shared behaviour', () => new RedisCircuitStore(a, { prefix }));

  it('failures seen by two processes add up to one circuit', async () => {
    const one = new RedisCircuitStore(a, { prefix });
    const two = new RedisCircuitStore(b, { prefix });
    await one.record('t', CB, true, T0);
    assert.equal(await two.admit('t', T0), 'closed');
    await two.record('t', CB, true, T0);
    assert.equal(await one.admit('t', T0), 'open');
    assert.equal(await two.admit('t', T0), 'open');
  });

  it('after the cooldown, exactly one of many concurrent callers on two connections probes', async () => {
    const one = new RedisCircuitStore(a, { prefix });
    const two = new RedisCircuitStore(b, { prefix });
    await one.record('t', CB, true, T0);
    await one.record('t', CB, true, T0);
    const admissions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? one : two).admit('t', T0 + COOLDOWN)));
    assert.equal(admissions.filter((x) => x === 'probe').length, 1);
    assert.equal(admissions.filter((x) => x === 'open').length, 39);
  });

  it('a probe whose outcome never comes (its process died) is handed out again after a cooldown', async () => {
    const one = new RedisCircuitStore(a, { prefix });
    const two = new RedisCircuitStore(b, { prefix });
    await one.record('t', CB, true, T0);
    await one.record('t', CB, true, T0);
    assert.equal(await one.admit('t', T0 + COOLDOWN), 'probe');
    assert.equal(await two.admit('t', T0 + 2 * COOLDOWN - 1), 'open');
    assert.equal(await two.admit('t', T0 + 2 * COOLDOWN), 'probe');
    // The late outcome of the first probe still counts: a failure re-opens.
    await one.record('t', CB, true, T0 + 2 * COOLDOWN + 10);
    assert.equal(await two.admit('t', T0 + 3 * COOLDOWN), 'open');
  });

  it('Redis unreachable: circuits of this process in memory, and each failure reported', async () => {
    const errors: unknown[] = [];
    const dead = new Redis(`redis://127.0.0.1:${await freePort()}`, { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
    const store = new RedisCircuitStore(dead, { prefix, onUnavailable: (e) => errors.push(e) });
    assert.equal(await store.admit('t', T0), 'closed');
    await store.record('t', CB, true, T0);
    await store.record('t', CB, true, T0);
    assert.equal(await store.admit('t', T0), 'open');
    assert.equal(await store.state('t', T0 + COOLDOWN), 'half-open');
    assert.equal(await store.admit('t', T0 + COOLDOWN), 'probe');
    assert.equal(errors.length, 6);
    dead.disconnect();
  });

  it('a circuit expires a day after its last outcome', async () => {
    const store = new RedisCircuitStore(a, { prefix });
    await store.record('t', CB, true, T0);
    const ttl = await a.pttl(`${prefix}t`);
    assert.ok(ttl > 24 * 3600_000 && ttl <= 24 * 3600_000 + COOLDOWN, String(ttl));
    await store.record('t', CB, false, T0);
    assert.equal(await a.exists(`${prefix}t`), 0, 'a success leaves nothing');
  });
});
