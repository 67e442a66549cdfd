/**
 * The state a cluster's primary holds for its workers when there is no
 * Redis: the keys of the counter and circuit scripts, run by their twins
 * (state/script.ts) one call at a time, so each is atomic across workers as
 * a script is in Redis; the answer cache and semantic index in memory, as a
 * single gateway keeps them. Sized as a single gateway's.
 */
import { MEMORY_CACHE_BYTES, MEMORY_SEMANTIC_BYTES } from '../gateway.js';
import { MemorySemanticIndex, type IndexEntry } from '../cache/semantic-index.js';
import { MemoryCacheStore, type CachedAnswer } from '../cache/store.js';
import { CHARGE } from '../limits/redis-counter.js';
import { HITS } from '../limits/redis-hits.js';
import { CIRCUIT_SCRIPTS } from '../routing/circuit-redis.js';
import type { Settings } from '../settings.js';
import { MemoryKeys } from '../state/memory-keys.js';
import type { LuaScript } from '../state/script.js';
import type { Op } from './messages.js';

const SCRIPTS = new Map<string, LuaScript<unknown>>([HITS, CHARGE, ...CIRCUIT_SCRIPTS].map((s) => [s.name, s]));

export class PrimaryState {
  private readonly keys: MemoryKeys;
  private readonly cache = new MemoryCacheStore(MEMORY_CACHE_BYTES);
  private readonly semantic: MemorySemanticIndex;

  constructor(settings: Settings) {
    // Counters (windows of groups), leases' keys and circuits: a single gateway's bounds for each, together.
    this.keys = new MemoryKeys({ max: 2 * settings.maxCounterGroups + 10_000 });
    this.semantic = new MemorySemanticIndex(MEMORY_SEMANTIC_BYTES, settings.semanticCacheEntries);
  }

  /** One worker's call; throws on what no worker of this build sends. */
  async run(op: Op, args: unknown[]): Promise<unknown> {
    switch (op) {
      case 'script': {
        const [name, keys, argv] = args as [string, string[], number[]];
        const script = SCRIPTS.get(name);
        if (script === undefined) throw new Error(`no script ${name}`);
        return script.twin(this.keys, keys, argv.map(Number));
      }
      case 'cache.get': {
        const [key, now] = args as [string, number];
        return this.cache.get(key, now);
      }
      case 'cache.set': {
        const [key, answer] = args as [string, CachedAnswer];
        // Advanced serialization brings a Buffer back as one; the check keeps a plain Uint8Array servable too.
        return this.cache.set(key, { ...answer, body: Buffer.isBuffer(answer.body) ? answer.body : Buffer.from(answer.body) });
      }
      case 'semantic.nearest': {
        const [partition, vector, threshold, now] = args as [string, Float32Array, number, number];
        return this.semantic.nearest(partition, vector, threshold, now);
      }
      case 'semantic.add': {
        const [partition, entry] = args as [string, IndexEntry];
        return this.semantic.add(partition, entry);
      }
      case 'semantic.forget': {
        const [partition, key] = args as [string, string];
        return this.semantic.forget(partition, key);
      }
    }
  }
}
