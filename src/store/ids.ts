/** Identifiers of stored objects: time-ordered UUIDs (version 7) and slugs. */
import { randomBytes, randomUUID } from 'node:crypto';

let lastMs = 0;
let seq = 0;
/** The id's first 14 characters for lastMs: `tttttttt-tttt-`. */
let msHex = '';

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then a 12-bit counter within
 * the millisecond, then the variant and 62 random bits (the last 64 bits of a
 * random version-4 UUID, whose variant is the same). Ids sort in creation
 * order, so lists page by id alone (`after`), on both engines.
 */
export function newId(now = Date.now()): string {
  if (now <= lastMs) {
    seq++;
    if (seq > 0xfff) {
      lastMs++;
      seq = 0;
      msHex = '';
    }
  } else {
    lastMs = now;
    seq = 0;
    msHex = '';
  }
  if (msHex === '') {
    const h = lastMs.toString(16).padStart(12, '0');
    msHex = `${h.slice(0, 8)}-${h.slice(8)}-`;
  }
  // The random half comes from randomUUID, which draws from a cached pool: a
  // fraction of a µs, where randomBytes(16) costs several (every request log gets an id).
  return `${msHex}7${seq.toString(16).padStart(3, '0')}${randomUUID().slice(18)}`;
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
