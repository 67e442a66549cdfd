/**
 * A worker's shared state without Redis: the very classes that share it
 * through Redis (leased rate counters, budget reservations, circuits with a
 * probe lease), their scripts run by their twins on the primary
 * (primary-state.ts), so limits are exact across workers as across
 * processes on one Redis, and a request admitted from a lease waits for no
 * IPC. Cached answers and the semantic index are the primary's memory ones,
 * asked over IPC. Failed calls (a primary that does not answer) count as
 * Redis's do, in switchyard_redis_errors_total.
 */
import type { SharedState } from '../gateway.js';
import { MemoryCircuitStore } from '../routing/circuit.js';
import { RedisCircuitStore } from '../routing/circuit-redis.js';
import type { CachedAnswer, CacheStore } from '../cache/store.js';
import type { IndexEntry, SemanticIndex } from '../cache/semantic-index.js';
import { RedisBudgetCounter } from '../limits/budget-redis.js';
import { RedisRateCounter } from '../limits/redis-counter.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Settings } from '../settings.js';
import type { Scripts } from '../state/script.js';
import type { PrimaryLink } from './link.js';

export function workerShared(link: PrimaryLink, settings: Settings, metrics: Metrics): SharedState {
  const scripts: Scripts = (script) => (keys, args) => link.call('script', [script.name, keys, args]) as Promise<never>;
  const onUnavailable = (component: string) => {
    const errors = metrics.redisErrors.labels({ component });
    return () => errors.inc();
  };
  return {
    redis: null,
    counter: new RedisRateCounter(scripts, 'rate:', { max: settings.maxCounterGroups, onEvict: metrics.evicted('rate_leases') }),
    budgets: new RedisBudgetCounter(scripts, 'budget:'),
    circuits: new RedisCircuitStore(scripts, {
      prefix: 'circuit:',
      onUnavailable: onUnavailable('circuit'),
      fallback: new MemoryCircuitStore({ onEvict: metrics.evicted('circuits') }),
    }),
    cache: new PrimaryCacheStore(link, onUnavailable('cache')),
    semanticIndex: new PrimarySemanticIndex(link, onUnavailable('cache')),
    onUnavailable,
  };
}

/** The primary's memory cache: a failed call is a miss or an unstored answer, as with Redis. */
class PrimaryCacheStore implements CacheStore {
  constructor(
    private readonly link: PrimaryLink,
    private readonly onUnavailable: (err: unknown) => void,
  ) {}

  async get(key: string, now: number): Promise<CachedAnswer | null> {
    try {
      return (await this.link.call('cache.get', [key, now])) as CachedAnswer | null;
    } catch (e) {
      this.onUnavailable(e);
      return null;
    }
  }

  async set(key: string, answer: CachedAnswer, now: number): Promise<void> {
    await this.link.call('cache.set', [key, answer, now]).catch(this.onUnavailable);
  }
}

/** The primary's memory index: one scan there per lookup, instead of a mirror per worker. */
class PrimarySemanticIndex implements SemanticIndex {
  constructor(
    private readonly link: PrimaryLink,
    private readonly onUnavailable: (err: unknown) => void,
  ) {}

  async nearest(partition: string, vector: Float32Array, threshold: number, now: number): Promise<IndexEntry | null> {
    try {
      return (await this.link.call('semantic.nearest', [partition, vector, threshold, now])) as IndexEntry | null;
    } catch (e) {
      this.onUnavailable(e);
      return null;
    }
  }

  async add(partition: string, entry: IndexEntry, now: number): Promise<void> {
    await this.link.call('semantic.add', [partition, entry, now]).catch(this.onUnavailable);
  }

  forget(partition: string, key: string): void {
    void this.link.call('semantic.forget', [partition, key]).catch(this.onUnavailable);
  }
}
