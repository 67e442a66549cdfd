/**
 * The state a cluster's primary holds for its workers when there is no
 * Redis: the keys of the counter and circuit scripts, run by their twins
 * (state/script.ts) one call at a time, so each is atomic across workers as
 * a script is in Redis; the answer cache and semantic index in memory, as a
 * single gateway keeps them. Sized as a single gateway's: rate counters,
 * budgets and circuits each have keys of their own and their own bound, so a
 * flood of one kind (rate limits grouped by a metadata value the caller sets)
 * never evicts another (a spent budget, an open circuit).
 */
import { MEMORY_CACHE_BYTES, MEMORY_SEMANTIC_BYTES } from '../gateway.js';
import { MemorySemanticIndex, type IndexEntry } from '../cache/semantic-index.js';
import { MemoryCacheStore, type CachedAnswer } from '../cache/store.js';
import { CHARGE } from '../limits/redis-counter.js';
import { HITS } from '../limits/redis-hits.js';
import { MAX_MEMORY_CIRCUITS } from '../routing/circuit.js';
import { CIRCUIT_SCRIPTS } from '../routing/circuit-redis.js';
import type { Settings } from '../settings.js';
import { MemoryKeys } from '../state/memory-keys.js';
import type { LuaScript } from '../state/script.js';
import type { Op } from './messages.js';

const SCRIPTS = new Map<string, LuaScript<unknown>>([HITS, CHARGE, ...CIRCUIT_SCRIPTS].map((s) => [s.name, s]));

/** The key prefixes the workers' classes use (worker-state.ts), each kind a MemoryKeys of its own. */
export type StateKind = 'rate' | 'budget' | 'circuit';

export class PrimaryState {
  private readonly keys: Record<StateKind, MemoryKeys>;
  private readonly cache = new MemoryCacheStore(MEMORY_CACHE_BYTES);
  private readonly semantic: MemorySemanticIndex;

  /** `onEvict`: a key of `kind` went for room (the single gateway's switchyard_bounded_evictions_total). */
  constructor(settings: Settings, onEvict: (kind: StateKind, key: string) => void) {
    const bounded = (kind: StateKind, max: number): MemoryKeys => new MemoryKeys({ max, onEvict: (key) => onEvict(kind, key) });
    this.keys = {
      // A group's key names its window: the one ending keeps its key a minute more beside the next one's.
      rate: bounded('rate', 2 * settings.maxCounterGroups),
      budget: bounded('budget', 2 * settings.maxCounterGroups),
      circuit: bounded('circuit', MAX_MEMORY_CIRCUITS),
    };
    this.semantic = new MemorySemanticIndex(MEMORY_SEMANTIC_BYTES, settings.semanticCacheEntries);
  }

  /** The keys a script call works on: all of one kind, as each worker class sends them. */
  private keysOf(keys: readonly string[]): MemoryKeys {
    const kind = keys[0]?.slice(0, keys[0].indexOf(':'));
    if (kind !== 'rate' && kind !== 'budget' && kind !== 'circuit') throw new Error(`script key ${keys[0]} is of no known kind`);
    const wrong = keys.find((k) => !k.startsWith(`${kind}:`));
    if (wrong !== undefined) throw new Error(`script key ${wrong} is not of the call's kind ${kind}`);
    return this.keys[kind];
  }

  /** One worker's call; throws on what no worker of this build sends. */
  async run(op: Op, args: unknown[]): Promise<unknown> {
    switch (op) {
      case 'script': {
        const [name, keys, argv] = args as [string, string[], number[]];
        const script = SCRIPTS.get(name);
        if (script === undefined) throw new Error(`no script ${name}`);
        return script.twin(this.keysOf(keys), keys, argv.map(Number));
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
