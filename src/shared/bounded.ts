/**
 * A map keyed by what callers send (a metadata value, an inline config's
 * hash): it holds at most `max` entries, and the least recently used goes to
 * make room for a new one. Each eviction is told to `onEvict` (with the
 * evicted value, for a map whose values hold something to close; gateway.ts
 * counts them in /metrics as switchyard_bounded_evictions_total), so that an
 * operator sees when a bound is too small for the traffic rather than
 * finding a process that grew until it died.
 */
import { LRUCache } from 'lru-cache';

export type OnEvict = (key: string) => void;

/** `ttlMs`: entries also expire that long after they were set. */
export function boundedMap<V extends {}>(max: number, onEvict?: (key: string, value: NoInfer<V>) => void, ttlMs?: number): LRUCache<string, V> {
  return new LRUCache<string, V>({
    // Counted as a size of one an entry rather than by `max`: with `max` the cache allocates its
    // arrays for every entry at construction (some 3 MiB for each 100 000-entry counter map,
    // at start, in every process); sized by `maxSize` they grow with the entries actually held.
    maxSize: max,
    sizeCalculation: () => 1,
    ...(ttlMs === undefined ? {} : { ttl: ttlMs }),
    ...(onEvict === undefined
      ? {}
      : {
          disposeAfter: (value: V, key: string, reason: LRUCache.DisposeReason) => {
            if (reason === 'evict') onEvict(key, value);
          },
        }),
  });
}
