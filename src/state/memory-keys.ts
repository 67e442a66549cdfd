/**
 * The keys the script twins (script.ts) work on: numbers and hashes of
 * numbers, each with an expiry, as Redis keeps them. Bounded like every map
 * of callers' strings (counter groups, circuits): the least recently used
 * key goes past `max`, and keys whose expiry has passed are swept every
 * SWEEP_EVERY writes and never read.
 */
import { boundedMap, type OnEvict } from '../shared/bounded.js';

type Value = number | Map<string, number>;

interface Entry {
  value: Value;
  /** Unix ms on this process's clock; Infinity: no expiry. */
  expireAt: number;
}

const SWEEP_EVERY = 4096;

export class MemoryKeys {
  private readonly entries;
  private writes = 0;

  constructor(
    opts: { max: number; onEvict?: OnEvict },
    /** The clock expiries are on (Redis's own, for a key's PEXPIRE). */
    readonly now: () => number = Date.now,
  ) {
    this.entries = boundedMap<Entry>(opts.max, opts.onEvict);
  }

  /** GET of a counter: 0 when absent or expired. */
  num(key: string): number {
    const v = this.live(key)?.value;
    return typeof v === 'number' ? v : 0;
  }

  /** SET keeping the key's expiry (INCRBY does), or with `expireAt` (PEXPIREAT). */
  setNum(key: string, value: number, expireAt?: number): void {
    this.write(key, value, expireAt);
  }

  /** The hash at `key`, undefined when absent or expired; changes to it are kept (HSET keeps the expiry). */
  hash(key: string): Map<string, number> | undefined {
    const v = this.live(key)?.value;
    return v instanceof Map ? v : undefined;
  }

  /** The hash at `key`, made empty when absent (HINCRBY on a new key). */
  ensureHash(key: string): Map<string, number> {
    const h = this.hash(key);
    if (h !== undefined) return h;
    const made = new Map<string, number>();
    this.write(key, made);
    return made;
  }

  /** PEXPIREAT of an existing key. */
  expireAt(key: string, at: number): void {
    const e = this.live(key);
    if (e !== undefined) e.expireAt = at;
  }

  del(key: string): void {
    this.entries.delete(key);
  }

  private live(key: string): Entry | undefined {
    const e = this.entries.get(key);
    if (e === undefined || e.expireAt > this.now()) return e;
    this.entries.delete(key);
    return undefined;
  }

  private write(key: string, value: Value, expireAt?: number): void {
    if (++this.writes % SWEEP_EVERY === 0) {
      const now = this.now();
      this.entries.forEach((e, k) => {
        if (e.expireAt <= now) this.entries.delete(k);
      });
    }
    const e = this.live(key);
    if (e === undefined) this.entries.set(key, { value, expireAt: expireAt ?? Infinity });
    else {
      e.value = value;
      if (expireAt !== undefined) e.expireAt = expireAt;
    }
  }
}
