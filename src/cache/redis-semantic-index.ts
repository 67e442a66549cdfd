/**
 * The semantic index shared through Redis (plain Redis 7, no modules): one
 * stream per partition whose entries are `k` (the answer's exact key), `e`
 * (expiry, gateway clock ms) and `v` (the vector, little-endian Float32),
 * capped at the newest `entriesPerPartition` (XADD MAXLEN) and expiring with
 * its newest entry. Each process keeps a memory mirror of the partitions it
 * has looked at and, before each lookup, reads only the stream entries past
 * the last one it has seen: usually one XRANGE that returns nothing, instead
 * of every vector of the partition. A failed command leaves the mirror as it
 * is, counted; the answers it points to are in Redis too, so they miss alike.
 */
import type { Redis } from 'ioredis';
import type { IndexEntry, MemorySemanticIndex, SemanticIndex } from './semantic-index.js';
import { vectorBytes, vectorOf } from './vectors.js';

export class RedisSemanticIndex implements SemanticIndex {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly mirror: MemorySemanticIndex,
    private readonly onUnavailable: (err: unknown) => void,
  ) {}

  async nearest(partition: string, vector: Float32Array, threshold: number, now: number): Promise<IndexEntry | null> {
    await this.sync(partition);
    return this.mirror.search(partition, vector, threshold, now);
  }

  /** Into Redis only: the next lookup of any process, this one included, reads it from there. */
  async add(partition: string, entry: IndexEntry, now: number): Promise<void> {
    const key = this.prefix + partition;
    const max = String(this.mirror.entriesPerPartition);
    try {
      const results = await this.redis
        .multi()
        .xadd(key, 'MAXLEN', max, '*', 'k', entry.key, 'e', String(entry.expiresAt), 'v', vectorBytes(entry.vector))
        .pexpire(key, Math.max(1, entry.expiresAt - now))
        .exec();
      const failed = results?.find(([err]) => err !== null);
      if (failed !== undefined) this.onUnavailable(failed[0]);
    } catch (e) {
      this.onUnavailable(e);
    }
  }

  forget(partition: string, key: string): void {
    this.mirror.forget(partition, key);
  }

  /** Copies the stream entries this process has not seen into its mirror. */
  private async sync(partition: string): Promise<void> {
    const cursor = this.mirror.cursorOf(partition);
    let rows: [Buffer, Buffer[]][];
    try {
      rows = await this.redis.xrangeBuffer(this.prefix + partition, cursor === null ? '-' : `(${cursor}`, '+', 'COUNT', this.mirror.entriesPerPartition);
    } catch (e) {
      this.onUnavailable(e);
      return;
    }
    if (rows.length === 0) return;
    for (const [, fields] of rows) {
      const entry = entryOf(fields);
      if (entry !== null) this.mirror.insert(partition, entry);
    }
    this.mirror.setCursor(partition, rows.at(-1)![0].toString('latin1'));
  }
}

/** A stream entry's fields (name, value, name, value, …); null when they are not ours. */
function entryOf(fields: Buffer[]): IndexEntry | null {
  let key: string | undefined;
  let expiresAt = NaN;
  let vector: Float32Array | null = null;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!.toString('latin1');
    const value = fields[i + 1]!;
    if (name === 'k') key = value.toString('latin1');
    else if (name === 'e') expiresAt = Number(value.toString('latin1'));
    else if (name === 'v') vector = vectorOf(value);
  }
  return key === undefined || vector === null || !Number.isFinite(expiresAt) ? null : { key, vector, expiresAt };
}
