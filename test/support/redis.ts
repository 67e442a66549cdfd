/**
 * Redis for tests: the CI's server at 127.0.0.1:6379 (TEST_REDIS_URL points
 * elsewhere). Each test keeps its keys under a prefix of its own and drops
 * them afterwards, so suites never see each other's counters. A TCP proxy in
 * front of it stands in for the network: closing the proxy is Redis going
 * away, opening it again is Redis coming back.
 */
import { randomBytes } from 'node:crypto';
import { connect as tcpConnect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
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

/**
 * Scripts the server has run (every client's): EVALSHA, and EVAL, which a
 * script command (ioredis defineCommand) is sent as where its connection has
 * not loaded the script yet.
 */
export async function scriptCalls(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  const calls = (command: string): number => Number(stats.match(new RegExp(`cmdstat_${command}:calls=(\\d+)`))?.[1] ?? 0);
  return calls('eval') + calls('evalsha');
}

/** Forwards a local port to the test Redis; stop() drops every connection and stops listening. */
export class RedisProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  constructor(readonly port: number) {}

  async start(): Promise<void> {
    const target = new URL(REDIS_URL);
    this.server = createServer((client) => {
      const upstream = tcpConnect(Number(target.port || 6379), target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
    this.server = null;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
}

