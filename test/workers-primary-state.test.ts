// The state a cluster's primary holds for its workers without Redis: budgets,
// rate counters and circuits are each bounded apart, as a single gateway's
// are, so a flood of one kind (a rate limit grouped by a metadata value the
// caller sets, a new one per request) never evicts another: a spent budget
// stays spent, an open circuit stays open. Across real workers:
// workers-http.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PrimaryState } from '../src/cluster/primary-state.js';
import { RedisBudgetCounter } from '../src/limits/budget-redis.js';
import { RedisRateCounter } from '../src/limits/redis-counter.js';
import { RedisCircuitStore } from '../src/routing/circuit-redis.js';
import { readSettings } from '../src/settings.js';
import type { Scripts } from '../src/state/script.js';

const GROUPS = 100;
// Expiries are on the primary's clock.
const T0 = Date.now();

/** Scripts run by `state` as a worker's calls are (worker-state.ts), without the channel. */
function scriptsOn(state: PrimaryState): Scripts {
  return (script) => (keys, args) => state.run('script', [script.name, keys, args]) as Promise<never>;
}

describe('PrimaryState', () => {
  it('a flood of rate counters evicts neither a spent budget nor an open circuit', async () => {
    const evicted: string[] = [];
    const state = new PrimaryState(readSettings({ GATEWAY_MAX_COUNTER_GROUPS: String(GROUPS) }), (kind) => evicted.push(kind));
    const scripts = scriptsOn(state);
    const budgets = new RedisBudgetCounter(scripts, 'budget:');
    const rates = new RedisRateCounter(scripts, 'rate:', { max: GROUPS });
    const circuits = new RedisCircuitStore(scripts, { prefix: 'circuit:', onUnavailable: (err) => assert.fail(String(err)) });
    const spend = { key: 'policy:cost:ws', limit: 10, amount: 10, expireAt: T0 + 86_400_000 };
    assert.equal((await budgets.reserve([spend])).allowed, true);
    assert.equal((await budgets.reserve([{ ...spend, amount: 1 }])).allowed, false);
    await circuits.record('target', { failure_threshold: 1, cooldown_interval: 60_000 } as never, true, T0);
    assert.equal(await circuits.state('target', T0), 'open');

    // Far more counters than every bound together: each a new metadata value.
    for (let i = 0; i < 4 * GROUPS + 10_000; i++) await rates.hit([{ key: `rl:requests:${i}`, unit: 'rpm', limit: 1000, cost: 1 }], T0);

    assert.equal((await budgets.reserve([{ ...spend, amount: 1 }])).allowed, false, 'the spent budget was evicted: its group may spend again');
    assert.equal(await circuits.state('target', T0), 'open', 'the open circuit was evicted');
    assert.ok(evicted.length > 0 && evicted.every((k) => k === 'rate'), `evictions are counted, of rate counters only: ${[...new Set(evicted)].join(', ')}`);
  });

  it('refuses a script call whose keys are of no known kind, or of two', async () => {
    const state = new PrimaryState(readSettings({}), () => {});
    await assert.rejects(state.run('script', ['switchyardCharge', ['other:x'], [1, T0]]), /other:x/);
    await assert.rejects(state.run('script', ['switchyardHits', ['rate:a', 'budget:b'], [2, 1, 5, T0, 0, 1, 5, T0, 0]]), /budget:b/);
  });
});
