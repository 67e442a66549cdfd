/** Identifiers of stored objects: time-ordered UUIDs (version 7) and slugs. */
import { randomBytes } from 'node:crypto';

let lastMs = 0;
let seq = 0;

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then a 12-bit counter within
 * the millisecond, then randomness. Ids sort in creation order, so lists page
 * by id alone (`after`), on both engines.
 */
export function newId(now = Date.now()): string {
  if (now <= lastMs) {
    seq++;
    if (seq > 0xfff) {
      lastMs++;
      seq = 0;
    }
  } else {
    lastMs = now;
    seq = 0;
  }
  const b = randomBytes(16);
  const ms = lastMs;
  b[0] = Math.floor(ms / 2 ** 40) & 0xff;
  b[1] = Math.floor(ms / 2 ** 32) & 0xff;
  b[2] = (ms >>> 24) & 0xff;
  b[3] = (ms >>> 16) & 0xff;
  b[4] = (ms >>> 8) & 0xff;
  b[5] = ms & 0xff;
  b[6] = 0x70 | (seq >>> 8);
  b[7] = seq & 0xff;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9_-]{1,62}$/;

/** A readable, unique-enough slug: the name in kebab case plus six random characters. */
export function newSlug(name: string): string {
  const base = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  const tail = randomBytes(4).toString('hex').slice(0, 6);
  return base === '' ? tail : `${base}-${tail}`;
}

/** Unix seconds, the unit of every stored timestamp. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
