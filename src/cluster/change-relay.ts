/**
 * Store change notices between a cluster's workers. Every gateway process
 * drops its own cache entries when it writes (store/changes.ts), and with
 * Postgres every process hears the others' writes by LISTEN/NOTIFY; with
 * SQLite the other workers would hear nothing and serve a revoked key or a
 * changed config until their caches' TTL ends. So a worker sends each change
 * it publishes to the primary, which sends it to every other worker, whose
 * Changes.deliver drops the entries at once. With Postgres a worker hears a
 * change twice (NOTIFY and the relay): harmless, a notice only drops entries.
 *
 * Nothing waits on the relay: a write publishes and returns. Past
 * MAX_IN_FLIGHT notices handed to one channel and not yet sent, notices are
 * not queued further; the next one that goes is `all` (drop everything), so
 * a lost notice costs the receiver its caches, never a stale entry.
 */
import type { Change, Changes } from '../store/changes.js';
import type { PrimaryLink } from './link.js';

export const MAX_IN_FLIGHT = 1000;

const ALL: Change = { kind: 'all', id: '*' };

/** One channel's notices: at most MAX_IN_FLIGHT in flight, `all` after any it had to drop. */
export class ChangeSender {
  private inFlight = 0;
  private lost = false;

  /** `transmit` hands a notice to the channel (false: the channel is closed) and calls `sent` once it left or failed. */
  constructor(private readonly transmit: (change: Change, sent: (ok: boolean) => void) => boolean) {}

  send(change: Change): void {
    if (this.inFlight >= MAX_IN_FLIGHT) {
      this.lost = true;
      return;
    }
    const c = this.lost ? ALL : change;
    this.lost = false;
    this.inFlight++;
    const handed = this.transmit(c, (ok) => {
      this.inFlight--;
      if (!ok) this.lost = true;
    });
    if (!handed) {
      this.inFlight--;
      this.lost = true;
    }
  }
}

/** In a worker: this process's changes go to the primary too, and the other workers' come back to its caches. */
export function relayChanges(link: PrimaryLink, changes: Changes): void {
  const sender = new ChangeSender((change, sent) => {
    if (!link.connected()) return false;
    void link.send({ sy: 'change', change }).then(sent);
    return true;
  });
  const before = changes.broadcast; // Postgres: NOTIFY
  changes.broadcast = (c) => {
    before(c);
    sender.send(c);
  };
  link.onChange = (c) => changes.deliver(c);
}

/** What the primary relays: a change as a worker of this build sends it, nothing else. */
export function isChange(c: unknown): c is Change {
  if (typeof c !== 'object' || c === null) return false;
  const { kind, id } = c as { kind?: unknown; id?: unknown };
  return typeof kind === 'string' && typeof id === 'string' && id.length <= 1024;
}
