/**
 * Where cached answers live: process memory (bounded LRU by bytes) or Redis
 * (redis-store.ts). Entries carry their own expiry on the gateway's clock, so
 * both homes expire alike; a store that fails answers "not there".
 */

/** A successful answer as the client received it. */
export interface CachedAnswer {
  status: number;
  /** The content headers of the answer (content-type, content-encoding). */
  headers: Record<string, string>;
  body: Buffer;
  /** The provider and config path that answered, for the gateway headers of a hit. */
  provider: string | undefined;
  path: string;
  /** Gateway clock, ms. */
  expiresAt: number;
}

export interface CacheStore {
  get(key: string, now: number): Promise<CachedAnswer | null>;
  set(key: string, answer: CachedAnswer, now: number): Promise<void>;
}

/** An answer's rough size in memory: its bytes plus a fixed allowance for the rest. */
const OVERHEAD = 256;

export class MemoryCacheStore implements CacheStore {
  /** Map order is recency order: a hit moves its entry to the end, eviction takes from the front. */
  private readonly entries = new Map<string, CachedAnswer>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  async get(key: string, now: number): Promise<CachedAnswer | null> {
    const e = this.entries.get(key);
    if (e === undefined) return null;
    this.drop(key, e);
    if (e.expiresAt <= now) return null;
    this.add(key, e);
    return e;
  }

  async set(key: string, answer: CachedAnswer): Promise<void> {
    const old = this.entries.get(key);
    if (old !== undefined) this.drop(key, old);
    if (sizeOf(answer) > this.maxBytes) return;
    this.add(key, answer);
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(k, e);
    }
  }

  private add(key: string, e: CachedAnswer): void {
    this.entries.set(key, e);
    this.bytes += sizeOf(e);
  }

  private drop(key: string, e: CachedAnswer): void {
    this.entries.delete(key);
    this.bytes -= sizeOf(e);
  }
}

function sizeOf(e: CachedAnswer): number {
  return e.body.length + OVERHEAD;
}
