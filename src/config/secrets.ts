/**
 * The config keys that carry credentials, and sealing them inside a saved
 * config: each secret value is stored as `{"$sealed": <AES-256-GCM blob>}`,
 * shown to clients as a mask, and opened only on the request path. The walk
 * covers the config nodes (the root and targets at any depth) and the semantic
 * cache's embedding target, where the schema puts credentials.
 */
import { PROVIDER_SETTINGS } from '../providers/settings.js';
import type { Secrets } from '../store/secrets.js';

/** Credential keys of a config node: api_key, Authorization, and the secrets among the providers' own keys. */
export const SECRET_FIELDS: ReadonlySet<string> = new Set(['api_key', 'Authorization', ...PROVIDER_SETTINGS.flatMap((s) => s.secrets)]);

/** What a client sees in place of a stored secret; sent back unchanged on an update, it keeps the stored value. */
export const SECRET_MASK = '********';

type Node = Record<string, unknown>;

/** A copy of a config with each secret field's value replaced by fn(value, path); `path` as errors name it (`config.targets[0].api_key`). */
export function mapSecrets(node: unknown, fn: (value: unknown, path: string) => unknown, at = 'config'): unknown {
  if (!isNode(node)) return node;
  const out: Node = {};
  for (const [k, v] of Object.entries(node)) {
    if (SECRET_FIELDS.has(k)) out[k] = fn(v, `${at}.${k}`);
    else if (k === 'targets' && Array.isArray(v)) out[k] = v.map((t, i) => mapSecrets(t, fn, `${at}.targets[${i}]`));
    else if (k === 'cache' && isNode(v) && isNode(v.embedding)) out[k] = { ...v, embedding: mapSecrets(v.embedding, fn, `${at}.cache.embedding`) };
    else out[k] = v;
  }
  return out;
}

function isNode(v: unknown): v is Node {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function isSealed(v: unknown): v is { $sealed: string } {
  return v !== null && typeof v === 'object' && typeof (v as { $sealed?: unknown }).$sealed === 'string';
}

/** Seals every secret value, bound to `boundTo` (the owning workspace). */
export function sealConfig(config: unknown, secrets: Secrets, boundTo: string): unknown {
  return mapSecrets(config, (v) => (isSealed(v) ? v : { $sealed: secrets.encrypt(JSON.stringify(v), boundTo) }));
}

/** The config as routing needs it; throws when a blob does not open (wrong key, moved between workspaces). */
export function openConfig(config: unknown, secrets: Secrets, boundTo: string): unknown {
  return mapSecrets(config, (v) => (isSealed(v) ? JSON.parse(secrets.decrypt(v.$sealed, boundTo)) : v));
}

/** The config as clients see it: secrets masked. */
export function maskConfig(config: unknown): unknown {
  return mapSecrets(config, () => SECRET_MASK);
}
