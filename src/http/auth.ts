/**
 * Gateway-key authentication. Keys are stored as SHA-256 hashes (they are
 * 256-bit random secrets, so a fast hash is the right one; a slow password
 * hash would cost every request). The hot path reads a bounded in-memory cache
 * and reaches the store only on a miss; cached entries are re-read after a
 * short TTL; writes drop entries at once through the store's change notices
 * (every process, with Postgres).
 */
import { hash, randomBytes } from 'node:crypto';
import { GatewayError, type Result } from '../shared/errors.js';
import { isUniqueViolation } from '../store/db.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { Store } from '../store/store.js';

const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;
export const BOOTSTRAP_KEY_ID = 'bootstrap-admin';

/** One-shot crypto.hash: less than half the cost of createHash().update().digest() per request. */
export function hashKey(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export function generateKey(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export class KeyAuthenticator {
  private readonly cache = new Map<string, { key: ApiKeyRecord | null; at: number }>();

  constructor(
    private readonly store: Store,
    private readonly clock: () => number = Date.now,
  ) {
    store.changes.subscribe((c) => {
      if (c.kind === 'all') this.cache.clear();
      else if (c.kind === 'api_key') {
        for (const [hash, entry] of this.cache) if (entry.key?.id === c.id) this.cache.delete(hash);
      }
    });
  }

  /** Synchronous on a cache hit (the hot path); reaches the store only on a miss or an expired entry. */
  authenticate(secret: string | string[] | undefined): Result<ApiKeyRecord> | Promise<Result<ApiKeyRecord>> {
    if (typeof secret !== 'string' || secret === '') {
      return { ok: false, error: new GatewayError(401, 'missing x-gateway-api-key header', { param: 'x-gateway-api-key', code: 'missing_api_key' }) };
    }
    const hash = hashKey(secret);
    const now = this.clock();
    const hit = this.cache.get(hash);
    if (hit !== undefined && now - hit.at <= CACHE_TTL_MS) return check(hit.key, hash, now);
    return this.store.apiKeys.findByHash(hash).then((key) => {
      if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(hash, { key, at: now });
      return check(key, hash, now);
    });
  }
}

export function requireScope(key: ApiKeyRecord, scope: string): GatewayError | null {
  if (key.isAdmin || key.scopes.includes(scope)) return null;
  return new GatewayError(403, `gateway key lacks the scope '${scope}'`, { code: 'missing_scope', param: scope });
}

/**
 * The organisation-admin key that exists from first start: GATEWAY_ADMIN_API_KEY
 * when set (its hash follows the variable), else one generated the first time
 * and printed once. Returns the generated secret, if any, for the caller to print.
 */
export async function ensureBootstrapKey(store: Store, envKey: string | undefined, prefix: string): Promise<string | null> {
  const existing = await store.apiKeys.get(BOOTSTRAP_KEY_ID);
  if (envKey !== undefined) {
    const hash = hashKey(envKey);
    if (existing === null) await insertIgnoringRace(store, adminKey(hash, keyHint(envKey), (await store.workspaces.default()).id));
    else if (existing.hash !== hash) await store.apiKeys.update({ ...existing, hash, keyHint: keyHint(envKey), previousHash: null, previousExpiresAt: null });
    return null;
  }
  if (existing !== null || (await store.apiKeys.count()) > 0) return null;
  const secret = generateKey(prefix);
  // Two processes starting on one empty database: one insert wins, and only its secret was stored, so only it prints.
  return (await insertIgnoringRace(store, adminKey(hashKey(secret), keyHint(secret), (await store.workspaces.default()).id))) ? secret : null;
}

async function insertIgnoringRace(store: Store, key: ApiKeyRecord): Promise<boolean> {
  try {
    await store.apiKeys.insert(key);
    return true;
  } catch (e) {
    if (isUniqueViolation(e)) return false;
    throw e;
  }
}

/** The last four characters: enough to tell keys apart in a list, far too few to guess the rest. */
export function keyHint(secret: string): string {
  return secret.slice(-4);
}

function adminKey(hash: string, hint: string, workspaceId: string): ApiKeyRecord {
  const at = Math.floor(Date.now() / 1000);
  return {
    id: BOOTSTRAP_KEY_ID,
    name: 'Bootstrap organisation admin',
    description: null,
    type: 'organisation',
    subType: 'service',
    isAdmin: true,
    workspaceId,
    userId: null,
    scopes: [],
    hash,
    keyHint: hint,
    previousHash: null,
    previousExpiresAt: null,
    rotationPolicy: null,
    lastRotatedAt: null,
    defaults: null,
    metadata: null,
    creationMode: 'bootstrap',
    status: 'active',
    expiresAt: null,
    createdAt: at,
    lastUpdatedAt: at,
    lastResetAt: null,
  };
}

function check(key: ApiKeyRecord | null, hash: string, now: number): Result<ApiKeyRecord> {
  if (key === null) return { ok: false, error: unknownKey() };
  if (!sameHash(key.hash, hash)) {
    // The secret a rotation replaced works until its transition period ends.
    const inTransition = key.previousHash !== null && key.previousExpiresAt !== null && key.previousExpiresAt * 1000 > now && sameHash(key.previousHash, hash);
    if (!inTransition) return { ok: false, error: unknownKey() };
  }
  if (key.status !== 'active') return { ok: false, error: new GatewayError(401, `gateway key is ${key.status}`, { code: 'inactive_api_key' }) };
  if (key.expiresAt !== null && key.expiresAt * 1000 <= now) {
    return { ok: false, error: new GatewayError(401, 'gateway key has expired', { code: 'expired_api_key' }) };
  }
  return { ok: true, value: key };
}

/**
 * Plain comparison: what is compared is the SHA-256 of the presented secret, which the cache and the
 * store already looked up by equality; timing reveals how many leading hex digits of a hash match,
 * and choosing a secret for a hash prefix is a preimage search, so it gives a caller nothing. (Two
 * hex decodes and timingSafeEqual were a visible share of every request.)
 */
function sameHash(a: string, b: string): boolean {
  return a === b;
}

function unknownKey(): GatewayError {
  return new GatewayError(401, 'invalid gateway key', { code: 'invalid_api_key' });
}
