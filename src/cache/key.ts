/**
 * The simple cache's key: an exact match on the normalised request. Two
 * requests share an answer when they go to the same place (workspace, config,
 * the target headers a config may leave to the request, method and path) with
 * the same body, whatever the order of its keys. Metadata and other headers
 * are not part of it; `x-gateway-cache-namespace` adds a partition.
 */
import { createHash } from 'node:crypto';

export interface KeyParts {
  workspaceId: string;
  /** The plan's identity: saved config version, or a hash of the inline config. */
  config: string;
  namespace: string | undefined;
  method: string;
  /** Path after /v1, query included. */
  path: string;
  /** Request headers that choose the provider or its account when the config does not (provider, host, virtual key, authorization). */
  target: readonly (string | undefined)[];
  body: unknown;
}

/** SHA-256 hex of the parts: the key never holds a credential or a prompt in the clear. */
export function cacheKey(p: KeyParts): string {
  const h = createHash('sha256');
  h.update(JSON.stringify([p.workspaceId, p.config, p.namespace ?? null, p.method, p.path, p.target.map((v) => v ?? null)]));
  h.update('\n');
  h.update(canonicalJson(p.body));
  return h.digest('hex');
}

/** JSON with object keys sorted at every depth (array order kept: it is meaningful). */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_key, value: unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) sorted[k] = (value as Record<string, unknown>)[k];
    return sorted;
  });
}
