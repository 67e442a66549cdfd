/**
 * undici's connection pools by origin, at most `max` of them: the gateway's
 * own Agent. undici's Agent keeps a pool per origin for as long as one of
 * its sockets is open, and a server's keep-alive hint holds an idle socket
 * for up to keepAliveMaxTimeout. Origins come from callers (custom_host, a
 * stored credential's host), so a caller naming a new host on every request
 * would hold a socket, a file descriptor the other callers need, for each
 * of them. undici's own `maxOrigins` refuses calls to new origins past its
 * bound instead, which would let that caller deny everyone else's.
 *
 * Here a new origin past the bound closes the pool used least recently:
 * its requests in flight finish, then its sockets close; a later call to
 * its origin opens a new pool. As in undici's Agent, a pool whose sockets
 * have all closed is dropped.
 */
import type { Dispatcher, Pool } from 'undici';
import { UndiciPool } from './undici.js';

/** Origins with a pool at once: per-tenant hosts (Azure resources, self-hosted models) fit many times over. */
export const MAX_ORIGINS = 1024;

interface Held {
  readonly pool: Pool;
  /** When it was last asked for a call (the `calls` count then): the least recent is closed first. */
  used: number;
  /** Its sockets now open. */
  connected: number;
}

export class Pools {
  private readonly byOrigin = new Map<string, Held>();
  /** Pools closed for room or disuse, until their calls in flight have finished: close() waits for them too. */
  private readonly closing = new Set<Promise<void>>();
  private calls = 0;

  constructor(
    private readonly options: Pool.Options,
    private readonly max = MAX_ORIGINS,
  ) {}

  /** undici's Dispatcher.dispatch: `opts.origin` is a string, as upstream/client.ts makes it. */
  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = String(opts.origin);
    const held = this.byOrigin.get(origin) ?? this.open(origin);
    held.used = ++this.calls;
    return held.pool.dispatch(opts, handler);
  }

  /** Origins with a pool. */
  get size(): number {
    return this.byOrigin.size;
  }

  /** Closes every pool once its requests have finished, those closed before included. */
  async close(): Promise<void> {
    for (const [origin, held] of this.byOrigin) this.drop(origin, held);
    await Promise.all(this.closing);
  }

  private open(origin: string): Held {
    // Made first: an origin undici cannot parse throws here (the call rejects) and closes no other pool.
    const held: Held = { pool: new UndiciPool(origin, this.options), used: 0, connected: 0 };
    if (this.byOrigin.size >= this.max) this.closeLeastUsed();
    const dropIfUnused = (): void => {
      if (held.connected <= 0) this.drop(origin, held);
    };
    held.pool
      .on('connect', () => void held.connected++)
      .on('disconnect', () => {
        held.connected--;
        dropIfUnused();
      })
      .on('connectionError', dropIfUnused);
    this.byOrigin.set(origin, held);
    return held;
  }

  /** A scan, only when a new origin finds the bound reached: nothing per call is spent keeping an order. */
  private closeLeastUsed(): void {
    let oldest: [string, Held] | null = null;
    for (const entry of this.byOrigin) if (oldest === null || entry[1].used < oldest[1].used) oldest = entry;
    if (oldest !== null) this.drop(...oldest);
  }

  private drop(origin: string, held: Held): void {
    if (this.byOrigin.get(origin) !== held) return;
    this.byOrigin.delete(origin);
    if (held.pool.destroyed) return;
    const closed: Promise<void> = held.pool.close().then(
      () => void this.closing.delete(closed),
      () => void this.closing.delete(closed),
    );
    this.closing.add(closed);
  }
}
