/**
 * The semantic cache's vectors: per partition (same workspace, config,
 * target headers, namespace, path, model and parameters, system prompt), the
 * embedded conversations of stored answers, each naming its answer by exact
 * cache key. A lookup scans its partition linearly: at most
 * `entriesPerPartition` dot products (1000 vectors of 1536 dimensions take
 * about 1.5 ms), no index structure to keep up.
 *
 * Bounded twice: entries per partition, and bytes over all partitions; the
 * least recently used entry of the least recently used partition goes first.
 * In Redis (redis-semantic-index.ts) this memory index is each process's
 * mirror of the shared one.
 */
import { cosine } from './vectors.js';

export interface IndexEntry {
  /** The exact cache key of the answer. */
  key: string;
  /** Unit length (vectors.ts). */
  vector: Float32Array;
  /** Gateway clock, ms. */
  expiresAt: number;
}

export interface SemanticIndex {
  /** The most similar live entry of the partition at or above `threshold`, or null. */
  nearest(partition: string, vector: Float32Array, threshold: number, now: number): Promise<IndexEntry | null>;
  add(partition: string, entry: IndexEntry, now: number): Promise<void>;
  /** Drops an entry whose answer is gone from the answer store. */
  forget(partition: string, key: string): void;
}

interface Partition {
  /** Map order is recency order: a match moves its entry to the end, eviction takes from the front. */
  entries: Map<string, IndexEntry>;
  /** Where a mirror has read the shared index up to; null for a memory index or before the first read. */
  cursor: string | null;
}

/** Rough allowances besides the vector bytes: key, object, map slot. */
const ENTRY_OVERHEAD = 256;
const PARTITION_OVERHEAD = 256;

export class MemorySemanticIndex implements SemanticIndex {
  /** Map order is recency order, as within a partition. */
  private readonly partitions = new Map<string, Partition>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    readonly entriesPerPartition: number,
  ) {}

  async nearest(partition: string, vector: Float32Array, threshold: number, now: number): Promise<IndexEntry | null> {
    return this.search(partition, vector, threshold, now);
  }

  async add(partition: string, entry: IndexEntry): Promise<void> {
    this.insert(partition, entry);
  }

  search(partition: string, vector: Float32Array, threshold: number, now: number): IndexEntry | null {
    const p = this.partitions.get(partition);
    if (p === undefined) return null;
    this.touch(partition, p);
    let best: IndexEntry | null = null;
    let bestScore = threshold;
    for (const e of p.entries.values()) {
      if (e.expiresAt <= now) {
        this.drop(p, e);
        continue;
      }
      const score = cosine(e.vector, vector);
      if (score > bestScore || (best === null && score === bestScore)) {
        best = e;
        bestScore = score;
      }
    }
    if (best !== null) {
      p.entries.delete(best.key);
      p.entries.set(best.key, best);
    }
    return best;
  }

  insert(partition: string, entry: IndexEntry): void {
    if (entrySize(entry) > this.maxBytes) return;
    const p = this.partitionOf(partition);
    const old = p.entries.get(entry.key);
    if (old !== undefined) this.drop(p, old);
    p.entries.set(entry.key, entry);
    this.bytes += entrySize(entry);
    if (p.entries.size > this.entriesPerPartition) this.drop(p, p.entries.values().next().value!);
    this.evict();
  }

  forget(partition: string, key: string): void {
    const p = this.partitions.get(partition);
    const e = p?.entries.get(key);
    if (e !== undefined) this.drop(p!, e);
  }

  cursorOf(partition: string): string | null {
    return this.partitions.get(partition)?.cursor ?? null;
  }

  setCursor(partition: string, cursor: string): void {
    this.partitionOf(partition).cursor = cursor;
    this.evict();
  }

  /** The partition, made the most recently used; created when missing. */
  private partitionOf(partition: string): Partition {
    let p = this.partitions.get(partition);
    if (p === undefined) {
      p = { entries: new Map(), cursor: null };
      this.bytes += PARTITION_OVERHEAD + partition.length;
    } else {
      this.partitions.delete(partition);
    }
    this.partitions.set(partition, p);
    return p;
  }

  private touch(partition: string, p: Partition): void {
    this.partitions.delete(partition);
    this.partitions.set(partition, p);
  }

  private drop(p: Partition, e: IndexEntry): void {
    p.entries.delete(e.key);
    this.bytes -= entrySize(e);
  }

  /** Least recently used first: an entry of the oldest partition, or the partition itself once empty. */
  private evict(): void {
    while (this.bytes > this.maxBytes) {
      const [name, p] = this.partitions.entries().next().value!;
      const oldest = p.entries.values().next().value;
      if (oldest !== undefined) {
        this.drop(p, oldest);
      } else {
        this.partitions.delete(name);
        this.bytes -= PARTITION_OVERHEAD + name.length;
      }
    }
  }
}

function entrySize(e: IndexEntry): number {
  return e.vector.byteLength + ENTRY_OVERHEAD;
}
