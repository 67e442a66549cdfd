/**
 * Gateway-key authentication. Keys are stored as SHA-256 hashes (they are
 * 256-bit random secrets, so a fast hash is the right one; a slow password
 * hash would cost every request). The hot path reads a bounded in-memory cache
 * and reaches the store only on a miss; cached entries are re-read after a
 * short TTL so a key revoked elsewhere stops working soon everywhere.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { GatewayError, type Result } from '../shared/errors.js';
import type { ApiKeyRecord, Store } from '../store/types.js';

const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;
const BOOTSTRAP_KEY_ID = 'bootstrap-admin';

/** One-shot crypto.hash: less than half the cost of createHash().update().digest() per request. */
export function hashKey(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export function generateKey(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export class KeyAuthenticator {
  private readonly cache = new Map<string, { key: ApiKeyRecord | null; at: number }>();

  constructor(private readonly store: Store) {}

  /** Synchronous on a cache hit (the hot path); reaches the store only on a miss or an expired entry. */
  authenticate(secret: string | string[] | undefined): Result<ApiKeyRecord> | Promise<Result<ApiKeyRecord>> {
    if (typeof secret !== 'string' || secret === '') {
      return { ok: false, error: new GatewayError(401, 'missing x-gateway-api-key header', { param: 'x-gateway-api-key', code: 'missing_api_key' }) };
    }
    const hash = hashKey(secret);
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit !== undefined && now - hit.at <= CACHE_TTL_MS) return check(hit.key, hash, now);
    return this.store.findApiKeyByHash(hash).then((key) => {
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
  const existing = await store.getApiKey(BOOTSTRAP_KEY_ID);
  if (envKey !== undefined) {
    const hash = hashKey(envKey);
    if (existing === null) await store.insertApiKey(adminKey(hash, (await store.defaultWorkspace()).id));
    else if (existing.hash !== hash) await store.updateApiKeyHash(BOOTSTRAP_KEY_ID, hash);
    return null;
  }
  if (existing !== null || (await store.countApiKeys()) > 0) return null;
  const secret = generateKey(prefix);
  await store.insertApiKey(adminKey(hashKey(secret), (await store.defaultWorkspace()).id));
  return secret;
}

function adminKey(hash: string, workspaceId: string): ApiKeyRecord {
  return {
    id: BOOTSTRAP_KEY_ID,
    name: 'Bootstrap organisation admin',
    type: 'organisation',
    subType: 'service',
    isAdmin: true,
    workspaceId,
    userId: null,
    scopes: [],
    hash,
    status: 'active',
    expiresAt: null,
    createdAt: Math.floor(Date.now() / 1000),
    lastResetAt: null,
  };
}

function check(key: ApiKeyRecord | null, hash: string, now: number): Result<ApiKeyRecord> {
  if (key === null || !sameHash(key.hash, hash)) return { ok: false, error: unknownKey() };
  if (key.status !== 'active') return { ok: false, error: new GatewayError(401, `gateway key is ${key.status}`, { code: 'inactive_api_key' }) };
  if (key.expiresAt !== null && key.expiresAt * 1000 <= now) {
    return { ok: false, error: new GatewayError(401, 'gateway key has expired', { code: 'expired_api_key' }) };
  }
  return { ok: true, value: key };
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

function unknownKey(): GatewayError {
  return new GatewayError(401, 'invalid gateway key', { code: 'invalid_api_key' });
}
