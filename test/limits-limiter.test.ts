// Rate-limit enforcement below HTTP: which policies a request falls under and
// which counter it counts in; admission, refusal with retry-after, token
// charges and the tightest quota; failing open or closed per policy when the
// counters are unreachable (rate and usage limits); the policy cache; and two
// limiters on two Redis connections enforcing one limit exactly under
// concurrent load.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { BudgetCounter } from '../src/limits/budget-counter.js';
import { BudgetLimiter } from '../src/limits/budgets.js';
import { MemoryRateCounter, type RateCounter } from '../src/limits/counter.js';
import { RateLimiter, type Uncounted } from '../src/limits/limiter.js';
import { applies, counterKey, type RequestFacts } from '../src/limits/policies.js';
import { PolicyCache } from '../src/limits/policy-cache.js';
import { RedisRateCounter } from '../src/limits/redis-counter.js';
import { windowOf } from '../src/limits/window.js';
import type { RateLimitPolicy } from '../src/store/rate-limit-policies.js';
import type { UsageLimitPolicy } from '../src/store/usage-limit-policies.js';
import { SqliteDb } from '../src/store/sqlite.js';
import { Store } from '../src/store/store.js';
import { connect, dropPrefix, testPrefix } from './support/redis.js';

const WS = 'ws-1';
/** A minute boundary in the future (Redis expires keys by its own clock). */
const T0 = windowOf('rpm', Date.now()).start + 60 * 60_000;

let seq = 0;
function pol(over: Partial<RateLimitPolicy> = {}): RateLimitPolicy {
  return {
    id: `pol-${++seq}`,
    workspaceId: WS,
    name: null,
    conditions: [{ key: 'api_key', value: '*' }],
    groupBy: [{ key: 'api_key' }],
    type: 'requests',
    unit: 'rpm',
    value: 3,
    failMode: 'open',
    status: 'active',
    createdAt: 0,
    lastUpdatedAt: 0,
    ...over,
  };
}

const facts = (over: Partial<RequestFacts> = {}): RequestFacts => ({
  workspaceId: WS,
  apiKeyId: 'key-a',
  endpointType: 'chatComplete',
  metadata: {},
  keyMetadata: {},
  ...over,
});

describe('policy matching', () => {
  it('every condition must match; * matches any value the request has', () => {
    const p = pol({
      conditions: [
        { key: 'workspace_id', value: WS },
        { key: 'endpoint_type', value: 'chatComplete' },
        { key: 'metadata.team', value: '*' },
      ],
    });
    assert.equal(applies(p, facts({ metadata: { team: 'r' } })), true);
    assert.equal(applies(p, facts()), false, 'no team');
    assert.equal(applies(p, facts({ metadata: { team: 'r' }, endpointType: 'embed' })), false);
    assert.equal(applies(pol({ conditions: [{ key: 'api_key', value: 'key-b' }] }), facts()), false);
    assert.equal(applies(pol({ conditions: [{ key: 'metadata.team', value: 'r' }] }), facts({ metadata: { team: 'r' } })), true);
  });

  it('only active policies of the request’s own workspace apply', () => {
    assert.equal(applies(pol({ status: 'archived' }), facts()), false);
    assert.equal(applies(pol({ workspaceId: 'ws-2', conditions: [{ key: 'workspace_id', value: '*' }] }), facts()), false);
  });

  it('counters by group: per key, per metadata value; without the metadata, one shared group', () => {
    const byKey = pol();
    assert.notEqual(counterKey(byKey, facts()), counterKey(byKey, facts({ apiKeyId: 'key-b' })));
    const byUser = pol({ groupBy: [{ key: 'metadata.user' }, { key: 'endpoint_type' }] });
    assert.equal(counterKey(byUser, facts({ metadata: { user: 'u1' } })), counterKey(byUser, facts({ metadata: { user: 'u1' }, apiKeyId: 'key-b' })));
    assert.notEqual(counterKey(byUser, facts({ metadata: { user: 'u1' } })), counterKey(byUser, facts({ metadata: { user: 'u2' } })));
    assert.equal(counterKey(byUser, facts()), counterKey(byUser, facts({ apiKeyId: 'key-b' })));
    // Values are escaped: 'a/b' + 'c' is not 'a' + 'b/c'.
    const two = pol({ groupBy: [{ key: 'metadata.x' }, { key: 'metadata.y' }] });
    assert.notEqual(counterKey(two, facts({ metadata: { x: 'a/b', y: 'c' } })), counterKey(two, facts({ metadata: { x: 'a', y: 'b/c' } })));
    // A policy switched to tokens counts afresh.
    assert.notEqual(counterKey(byKey, facts()), counterKey({ ...byKey, type: 'tokens' }, facts()));
  });
});

describe('rate limiter', () => {
  const limiter = (policies: RateLimitPolicy[], counter: RateCounter = new MemoryRateCounter(), onUnavailable?: (e: unknown) => void, onUncounted?: (o: Uncounted) => void) =>
    new RateLimiter({ counter, policies: () => policies, onUnavailable, onUncounted });

  it('no applying policy: admitted, no quota', async () => {
    const a = await limiter([pol({ conditions: [{ key: 'endpoint_type', value: 'embed' }] })]).check(facts(), T0);
    assert.deepEqual(a, { allowed: true, retryAfterMs: 0, quota: { requests: null, tokens: null }, unavailable: false, failedClosed: null, tokenCounters: [] });
  });

  it('admits `value` requests per window and group, then refuses with retry-after', async () => {
    const p = pol({ value: 2 });
    const l = limiter([p]);
    const first = await l.check(facts(), T0);
    assert.deepEqual(first.quota.requests, { policyId: p.id, limit: 2, remaining: 1, resetAt: T0 + 60_000 });
    assert.equal((await l.check(facts(), T0)).allowed, true);
    const refused = await l.check(facts(), T0 + 15_000);
    assert.equal(refused.allowed, false);
    assert.equal(refused.retryAfterMs, 45_000);
    assert.equal(refused.quota.requests!.remaining, 0);
    assert.equal((await l.check(facts({ apiKeyId: 'key-b' }), T0)).allowed, true, 'another group');
    assert.equal((await l.check(facts(), T0 + 60_000)).allowed, true, 'next window');
  });

  it('the quota shown is the applying policy with the least room; one refusal counts in none', async () => {
    const wide = pol({ value: 4, groupBy: [{ key: 'workspace_id' }] });
    const narrow = pol({ value: 2 });
    const l = limiter([wide, narrow]);
    const a = await l.check(facts(), T0);
    assert.equal(a.quota.requests!.policyId, narrow.id);
    assert.equal(a.quota.requests!.remaining, 1);
    await l.check(facts(), T0);
    assert.equal((await l.check(facts(), T0)).allowed, false);
    // key-b makes the workspace's third request of 4 (the refused one counted in neither policy).
    const other = await l.check(facts({ apiKeyId: 'key-b' }), T0);
    assert.equal(other.allowed, true);
    assert.deepEqual([other.quota.requests!.policyId, other.quota.requests!.remaining], [wide.id, 1]);
    assert.equal((await l.check(facts({ apiKeyId: 'key-c' }), T0)).allowed, true);
    assert.equal((await l.check(facts({ apiKeyId: 'key-d' }), T0)).allowed, false, 'the workspace is full');
  });

  it('token policies: admitted while under the limit, charged with each answer’s usage', async () => {
    const tokens = pol({ type: 'tokens', value: 1000 });
    const l = limiter([tokens]);
    const a = await l.check(facts(), T0);
    assert.equal(a.allowed, true);
    assert.deepEqual(a.quota.tokens, { policyId: tokens.id, limit: 1000, remaining: 1000, resetAt: T0 + 60_000 });
    assert.equal(a.quota.requests, null);
    await l.charge(a, 600, T0 + 1);
    const b = await l.check(facts(), T0 + 2);
    assert.equal(b.quota.tokens!.remaining, 400);
    await l.charge(b, 450.4, T0 + 3);
    const c = await l.check(facts(), T0 + 4);
    assert.equal(c.allowed, false);
    assert.equal(c.retryAfterMs, 60_000 - 4);
    await l.charge(c, 0, T0 + 5);
  });

  const broken: RateCounter = {
    hit: () => Promise.reject(new Error('Stream isn’t writeable')),
    charge: () => Promise.reject(new Error('Stream isn’t writeable')),
    close: async () => {},
  };

  it('counters unreachable: policies that fail open admit uncounted, and say so', async () => {
    const errors: unknown[] = [];
    const uncounted: Uncounted[] = [];
    // A fail-closed policy that does not apply to the request changes nothing.
    const elsewhere = pol({ failMode: 'closed', conditions: [{ key: 'endpoint_type', value: 'embed' }] });
    const l = limiter([pol(), pol({ type: 'tokens' }), elsewhere], broken, (e) => errors.push(e), (o) => uncounted.push(o));
    const a = await l.check(facts(), T0);
    assert.equal(a.allowed, true);
    assert.equal(a.unavailable, true);
    assert.equal(a.failedClosed, null);
    assert.deepEqual(a.quota, { requests: null, tokens: null });
    await l.charge(a, 100, T0);
    assert.equal(errors.length, 2, 'the check and the charge');
    assert.deepEqual(uncounted, ['admitted'], 'one request, told once');
  });

  it('counters unreachable: an applying policy that fails closed refuses, and is named', async () => {
    const uncounted: Uncounted[] = [];
    const closed = pol({ failMode: 'closed' });
    const a = await limiter([pol(), closed], broken, undefined, (o) => uncounted.push(o)).check(facts(), T0);
    assert.equal(a.allowed, false);
    assert.equal(a.unavailable, true);
    assert.equal(a.failedClosed, closed.id);
    assert.deepEqual(uncounted, ['refused']);
  });

  it('a policy that fails closed counts like any other while its counters answer', async () => {
    const l = limiter([pol({ failMode: 'closed', value: 1 })]);
    assert.equal((await l.check(facts(), T0)).allowed, true);
    const refused = await l.check(facts(), T0);
    assert.equal(refused.allowed, false);
    assert.equal(refused.failedClosed, null);
  });
});

describe('budget limiter while its counters are unreachable', () => {
  const budget = (over: Partial<UsageLimitPolicy> = {}): UsageLimitPolicy => ({
    id: `budget-${++seq}`,
    workspaceId: WS,
    name: null,
    conditions: [{ key: 'api_key', value: '*' }],
    groupBy: [{ key: 'api_key' }],
    type: 'tokens',
    creditLimit: 100,
    alertThreshold: null,
    periodicReset: null,
    periodicResetDays: null,
    nextUsageResetAt: null,
    thresholdAlertedAt: null,
    exhaustedAt: null,
    failMode: 'open',
    status: 'active',
    createdAt: 0,
    lastUpdatedAt: 0,
    ...over,
  });
  const broken: BudgetCounter = {
    reserve: () => Promise.reject(new Error('Stream isn’t writeable')),
    adjust: () => Promise.reject(new Error('Stream isn’t writeable')),
  };
  const limiter = (policies: UsageLimitPolicy[], uncounted: Uncounted[]) =>
    new BudgetLimiter({ counter: broken, policies: () => policies, repo: { markAlert: async () => true }, onUncounted: (o) => uncounted.push(o) });
  const demand = () => ({ tokens: 20, cost: null, unpriced: null });

  it('policies that fail open admit unreserved: nothing to settle', async () => {
    const uncounted: Uncounted[] = [];
    const elsewhere = budget({ failMode: 'closed', conditions: [{ key: 'endpoint_type', value: 'embed' }] });
    const a = await limiter([budget(), elsewhere], uncounted).reserve(facts(), demand, T0);
    assert.ok(a.allowed);
    assert.deepEqual(a.hold, { held: [], settled: true });
    assert.deepEqual(uncounted, ['admitted']);
  });

  it('an applying policy that fails closed refuses, and is named', async () => {
    const uncounted: Uncounted[] = [];
    const closed = budget({ failMode: 'closed' });
    const a = await limiter([budget(), closed], uncounted).reserve(facts(), demand, T0);
    assert.deepEqual(a, { allowed: false, policy: closed, exhausted: false, unavailable: true });
    assert.deepEqual(uncounted, ['refused']);
  });
});

describe('policy cache', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-policy-cache-'));
    store = new Store(new SqliteDb(dir));
    await store.migrate();
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves a workspace’s active policies from memory; a change drops them; a TTL re-reads', async () => {
    const ws = await store.workspaces.default();
    const clock = { now: 0 };
    const cache = new PolicyCache(store, () => clock.now);
    const body = { workspaceId: ws.id, name: null, conditions: [{ key: 'api_key', value: '*' }], groupBy: [{ key: 'api_key' }], type: 'requests' as const, unit: 'rpm' as const, value: 5, failMode: 'open' as const };
    assert.deepEqual(await cache.forWorkspace(ws.id), []);
    const p = await store.rateLimitPolicies.create(body);
    const fresh = await cache.forWorkspace(ws.id);
    assert.deepEqual(fresh.map((x) => x.id), [p.id], 'the create dropped the cached empty list');
    assert.ok(Array.isArray(cache.forWorkspace(ws.id)), 'a hit is synchronous');

    await store.rateLimitPolicies.update(p.id, { status: 'archived' });
    assert.deepEqual(await cache.forWorkspace(ws.id), []);

    // A write the notices missed (another process on a shared SQLite file) shows after the TTL.
    await store.db.run("UPDATE rate_limit_policies SET status = 'active'");
    assert.deepEqual(cache.forWorkspace(ws.id), []);
    clock.now += 30_001;
    assert.deepEqual((await cache.forWorkspace(ws.id)).map((x) => x.id), [p.id]);
  });

  it('concurrent misses share one read; a failed re-read keeps the policies read before', async () => {
    const ws = await store.workspaces.default();
    const clock = { now: 0 };
    const cache = new PolicyCache(store, () => clock.now);
    const repo = store.rateLimitPolicies;
    const active = repo.active.bind(repo);
    let reads = 0;
    let failing = false;
    repo.active = async (id: string) => {
      reads++;
      if (failing) throw new Error('database away');
      return active(id);
    };
    try {
      const [x, y] = await Promise.all([cache.forWorkspace(ws.id), cache.forWorkspace(ws.id)]);
      assert.equal(reads, 1);
      assert.equal(x, y);
      failing = true;
      clock.now += 30_001;
      assert.equal(await cache.forWorkspace(ws.id), x, 'stale rather than failing every request');
      assert.equal(reads, 2);
      const other = 'ws-never-read';
      await assert.rejects(async () => cache.forWorkspace(other), /database away/, 'nothing to fall back on: the error');
    } finally {
      repo.active = active;
    }
  });
});

describe('rate limiter on redis', () => {
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

  it('two limiters on two connections, concurrent requests: exactly `value` admitted per group', async () => {
    const policies = [pol({ value: 30 }), pol({ value: 45, groupBy: [{ key: 'workspace_id' }] })];
    const one = new RateLimiter({ counter: new RedisRateCounter(a, prefix), policies: () => policies });
    const two = new RateLimiter({ counter: new RedisRateCounter(b, prefix), policies: () => policies });
    const results = await Promise.all(
      Array.from({ length: 150 }, (_, i) => {
        const key = i % 3 === 0 ? 'key-a' : 'key-b';
        return Promise.resolve((i % 2 === 0 ? one : two).check(facts({ apiKeyId: key }), T0)).then((r) => ({ key, allowed: r.allowed }));
      }),
    );
    const admitted = results.filter((r) => r.allowed);
    // 50 requests of key-a, 100 of key-b; 30 each per key, and 45 for the workspace in all.
    assert.equal(admitted.length, 45);
    assert.ok(admitted.filter((r) => r.key === 'key-a').length <= 30);
    assert.ok(admitted.filter((r) => r.key === 'key-b').length <= 30);
  });
});
