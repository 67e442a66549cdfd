/**
 * Change notices for the caches in front of the store (keys, configs,
 * credentials). A write publishes what it changed; every cache of this
 * process drops the entry at once, and with Postgres every other gateway
 * process hears it too (LISTEN/NOTIFY). Caches keep a short TTL as well, for
 * SQLite files shared between processes and for notices lost while a
 * connection was down.
 */
import type { Db } from './db.js';

export type ChangeKind = 'api_key' | 'workspace' | 'settings' | 'user' | 'config' | 'virtual_key' | 'integration' | 'guardrail' | 'rate_limit_policy' | 'usage_limit_policy' | 'prompt';

/** `id` names the changed object; `*` with kind `all` means drop everything (a listener reconnected). */
export type Change = { kind: ChangeKind; id: string } | { kind: 'all'; id: '*' };

export type ChangeListener = (change: Change) => void;

export class Changes {
  private readonly listeners = new Set<ChangeListener>();

  /** Set by the engine: tells other processes. */
  broadcast: (change: Change) => void = () => {};

  subscribe(fn: ChangeListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** A write of this process: local caches first, then the other processes. */
  publish(change: Change): void {
    this.deliver(change);
    this.broadcast(change);
  }

  /** A notice from elsewhere (or a reconnect). */
  deliver(change: Change): void {
    for (const fn of this.listeners) fn(change);
  }
}

/** Deletes row `id` of `table` (a trusted name) and, when there was one, publishes the change. */
export async function deleteAndAnnounce(db: Db, changes: Changes, table: string, change: { kind: ChangeKind; id: string }): Promise<boolean> {
  const n = await db.run(`DELETE FROM ${table} WHERE id = ?`, [change.id]);
  if (n > 0) changes.publish(change);
  return n > 0;
}

export function encodeChange(c: Change): string {
  return `${c.kind}:${c.id}`;
}

export function decodeChange(s: string): Change | null {
  const i = s.indexOf(':');
  if (i <= 0) return null;
  return { kind: s.slice(0, i), id: s.slice(i + 1) } as Change;
}
