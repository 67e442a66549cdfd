/**
 * Cached answers in Redis, shared by every gateway process: one key per
 * answer, `<meta JSON length: 4 bytes><meta JSON><body bytes>`, expiring
 * with the entry (PX). A failed command is a miss or an unstored answer,
 * counted, never a failed request.
 */
import type { Redis } from 'ioredis';
import type { CachedAnswer, CacheStore } from './store.js';

type Meta = Omit<CachedAnswer, 'body'>;

export class RedisCacheStore implements CacheStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly onUnavailable: (err: unknown) => void,
  ) {}

  async get(key: string, now: number): Promise<CachedAnswer | null> {
    let raw: Buffer | null;
    try {
      raw = await this.redis.getBuffer(this.prefix + key);
    } catch (e) {
      this.onUnavailable(e);
      return null;
    }
    if (raw === null || raw.length < 4) return null;
    const metaEnd = 4 + raw.readUInt32BE(0);
    let meta: Meta;
    try {
      meta = JSON.parse(raw.subarray(4, metaEnd).toString('utf8')) as Meta;
    } catch {
      return null; // not ours, or cut short: a miss
    }
    // Redis expires by its own clock; the entry's expiry is on the gateway's.
    if (meta.expiresAt <= now) return null;
    return { ...meta, body: raw.subarray(metaEnd) };
  }

  async set(key: string, answer: CachedAnswer, now: number): Promise<void> {
    const { body, ...meta } = answer;
    const json = Buffer.from(JSON.stringify(meta), 'utf8');
    const head = Buffer.alloc(4);
    head.writeUInt32BE(json.length, 0);
    try {
      await this.redis.set(this.prefix + key, Buffer.concat([head, json, body]), 'PX', Math.max(1, answer.expiresAt - now));
    } catch (e) {
      this.onUnavailable(e);
    }
  }
}
