/**
 * Redis for tests: the CI's server at 127.0.0.1:6379 (TEST_REDIS_URL points
 * elsewhere). Each test keeps its keys under a prefix of its own and drops
 * them afterwards, so suites never see each other's counters.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

export function testPrefix(): string {
  return `sy_test_${randomBytes(6).toString('hex')}:`;
}

export function connect(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
}

/** Deletes every key under `prefix`; returns how many there were. */
export async function dropPrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let n = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) n += await redis.del(...keys);
  } while (cursor !== '0');
  return n;
}
