/**
 * The connection to Redis (REDIS_URL) that counters, cache and circuit state
 * share between gateway processes. A gateway must keep serving while Redis is
 * away, so nothing here waits for it: commands issued while disconnected fail
 * at once (no offline queue), a command on a hung connection fails after
 * `commandTimeoutMs`, and reconnection keeps trying in the background with a
 * capped backoff, so Redis coming back is noticed within `maxBackoffMs`.
 * Callers decide what a failed command means (fail open or closed).
 */
import { once } from 'node:events';
import { Redis } from 'ioredis';

export type RedisStatus = 'up' | 'down';

export interface RedisOptions {
  /** A command unanswered this long fails (a hung or black-holed server). */
  commandTimeoutMs?: number;
  /** A connection attempt gives up after this long and backs off. */
  connectTimeoutMs?: number;
  /** Reconnection delays double from 50 ms up to this cap, and go on forever. */
  maxBackoffMs?: number;
  /** Told when the connection comes up or goes down (logs, metrics). */
  onStatus?: (status: RedisStatus) => void;
}

export class SharedRedis {
  readonly client: Redis;
  private last: RedisStatus = 'down';

  constructor(url: string, opts: RedisOptions = {}) {
    const maxBackoff = opts.maxBackoffMs ?? 2000;
    this.client = new Redis(url, {
      lazyConnect: true,
      // Commands of one event-loop turn (the checks of requests arriving together) go out in one write.
      enableAutoPipelining: true,
      enableOfflineQueue: false,
      // In-flight commands fail when the connection drops instead of being resent after a reconnect:
      // a resent rate-limit hit would count a request that was already answered as failed.
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: opts.commandTimeoutMs ?? 500,
      connectTimeout: opts.connectTimeoutMs ?? 2000,
      retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 16), maxBackoff),
    });
    const changed = (): void => {
      const now = this.status();
      if (now === this.last) return;
      this.last = now;
      opts.onStatus?.(now);
    };
    this.client.on('ready', changed);
    this.client.on('close', changed);
    this.client.on('end', changed);
    // Without a listener ioredis prints every failed connection attempt; the status change says enough.
    this.client.on('error', () => {});
  }

  /**
   * Starts connecting; resolves once connected or once the first attempt has
   * failed (the client keeps retrying). Never rejects: a gateway starts and
   * serves without Redis, and says so in status().
   */
  async start(): Promise<void> {
    await this.client.connect().catch(() => {});
  }

  /** Connected and ready for commands right now. */
  status(): RedisStatus {
    return this.client.status === 'ready' ? 'up' : 'down';
  }

  /** Whether Redis answers a PING now (for /health): false, never an error, within the command timeout. */
  async ping(): Promise<boolean> {
    return this.client.ping().then(
      (r) => r === 'PONG',
      () => false,
    );
  }

  /** Closes the connection (after the commands under way are answered) and stops reconnecting. */
  async close(): Promise<void> {
    if (this.client.status !== 'ready') {
      // Not connected: cancels a pending reconnect, or ends a connection attempt.
      this.client.disconnect();
      return;
    }
    const ended = once(this.client, 'end');
    await this.client.quit().catch(() => this.client.disconnect());
    await ended;
  }
}
