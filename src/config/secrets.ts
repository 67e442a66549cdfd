/**
 * The config keys that carry credentials, and sealing them inside a saved
 * config: each secret value is stored as `{"$sealed": <AES-256-GCM blob>}`,
 * shown to clients as a mask, and opened only on the request path. The walk
 * covers the config nodes (the root and targets at any depth) and the semantic
 * cache's embedding target, where the schema puts credentials.
 */
import { isDeepStrictEqual } from 'node:util';
import { PROVIDER_SETTINGS } from '../providers/settings.js';
import { invalid, type Result } from '../shared/errors.js';
import type { SchemaPath } from '../shared/json-schema.js';
import { configSecretBinding, type Secrets } from '../store/secrets.js';

/** Credential keys of a config node: api_key, Authorization, and the secrets among the providers' own keys. */
export const SECRET_FIELDS: ReadonlySet<string> = new Set(['api_key', 'Authorization', ...PROVIDER_SETTINGS.flatMap((s) => s.secrets)]);

/**
 * Keys that decide where a target's credentials are sent besides its
 * provider: custom_host and the providers' own (their settings'
 * `destinations`). Stored with a secret, one changes only together with it.
 */
export const DESTINATION_FIELDS: readonly string[] = ['custom_host', ...PROVIDER_SETTINGS.flatMap((s) => s.destinations)];

/** What a client sees in place of a stored secret; sent back unchanged on an update, it keeps the stored value. */
export const SECRET_MASK = '********';

type Node = Record<string, unknown>;

/** Calls fn on each node of a config: the root, targets at any depth, the cache's embedding target; `path` as errors name it (`config.targets[0]`). */
function eachNode(node: unknown, fn: (node: Node, path: string) => void, at = 'config'): void {
  if (!isNode(node)) return;
  fn(node, at);
  if (Array.isArray(node.targets)) node.targets.forEach((t, i) => eachNode(t, fn, `${at}.targets[${i}]`));
  if (isNode(node.cache)) eachNode(node.cache.embedding, fn, `${at}.cache.embedding`);
}

/** A copy of a config with each node (as eachNode visits them) replaced by fn(node, path): a new object, whose targets are then mapped. */
function mapNodes(node: unknown, fn: (node: Node, path: string) => Node, at = 'config'): unknown {
  if (!isNode(node)) return node;
  const out = fn(node, at);
  const { targets, cache } = out;
  if (Array.isArray(targets)) out.targets = targets.map((t, i) => mapNodes(t, fn, `${at}.targets[${i}]`));
  if (isNode(cache) && isNode(cache.embedding)) out.cache = { ...cache, embedding: mapNodes(cache.embedding, fn, `${at}.cache.embedding`) };
  return out;
}

/** A copy of a config with each secret field's value replaced by fn(value, path); `path` as errors name it (`config.targets[0].api_key`). */
export function mapSecrets(config: unknown, fn: (value: unknown, path: string) => unknown): unknown {
  return mapNodes(config, (node, at) => {
    const out: Node = {};
    for (const [k, v] of Object.entries(node)) out[k] = SECRET_FIELDS.has(k) ? fn(v, `${at}.${k}`) : v;
    return out;
  });
}

/**
 * The path of the first node that holds a secret but names neither provider
 * nor virtual_key, or null. Saved, such a node would take both from each
 * request's headers, which could send the stored secret anywhere.
 */
export function unplacedSecret(config: unknown): string | null {
  let found: string | null = null;
  eachNode(config, (node, at) => {
    if (found === null && node.provider === undefined && node.virtual_key === undefined && Object.keys(node).some((k) => SECRET_FIELDS.has(k))) found = at;
  });
  return found;
}

/**
 * A config body sent back as GET showed it: each secret given as the mask
 * takes the value `stored` (the current version) holds at the same path,
 * through `open` (given the value and its path). A mask where nothing is stored is refused, and so is a
 * node that keeps a stored secret while its provider or a destination field
 * changes: pointing a secret elsewhere needs the secret itself.
 */
export function restoreMasked(body: unknown, stored: unknown, open: (sealed: unknown, path: string) => unknown): Result<unknown> {
  const was = new Map<string, Node>();
  eachNode(stored, (node, at) => was.set(at, node));
  let problem = null as { param: string; message: string; code?: string } | null;
  const out = mapNodes(body, (node, at) => {
    const before = was.get(at);
    const copy: Node = { ...node };
    let kept = false;
    for (const [k, v] of Object.entries(node)) {
      if (!SECRET_FIELDS.has(k) || v !== SECRET_MASK) continue;
      if (before?.[k] === undefined) problem ??= { param: `${at}.${k}`, message: `'${SECRET_MASK}' stands for a stored secret, and none is stored there` };
      else {
        copy[k] = open(before[k], `${at}.${k}`);
        kept = true;
      }
    }
    const moved = kept ? ['provider', 'virtual_key', ...DESTINATION_FIELDS].find((k) => !isDeepStrictEqual(node[k], before![k])) : undefined;
    if (moved !== undefined) {
      problem ??= {
        param: `${at}.${moved}`,
        message: `changes where this target's stored secrets are sent, so they must be given again in the same request instead of '${SECRET_MASK}'`,
        code: 'secret_required',
      };
    }
    return copy;
  });
  return problem === null ? { ok: true, value: out } : { ok: false, error: invalid(`${problem.param}: ${problem.message}`, problem.param, problem.code) };
}

function isNode(v: unknown): v is Node {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Why a `$sealed` key in input is refused: only the gateway seals, and a blob given as input could be one copied from another object. */
export const SEALED_INPUT = "'$sealed' is how the gateway stores secrets and is not taken as input: give the secret itself";

/**
 * The path of the first `$sealed` key anywhere in `value`, or null. The
 * walk keeps its own stack: parsed JSON may nest deeper than calls can.
 */
export function sealedPath(value: unknown): SchemaPath | null {
  const stack: [unknown, SchemaPath][] = [[value, []]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [v, path] = next;
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], [...path, i]]);
      continue;
    }
    if (Object.hasOwn(v, '$sealed')) return [...path, '$sealed'];
    const entries = Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], [...path, entries[i]![0]]]);
  }
  return null;
}

export function isSealed(v: unknown): v is { $sealed: string } {
  return v !== null && typeof v === 'object' && typeof (v as { $sealed?: unknown }).$sealed === 'string';
}

/** Seals every secret value, bound to its config and its place in it (store/secrets.ts configSecretBinding). */
export function sealConfig(config: unknown, secrets: Secrets, configId: string): unknown {
  return mapSecrets(config, (v, path) => ({ $sealed: secrets.encrypt(JSON.stringify(v), configSecretBinding(configId, path)) }));
}

/** One sealed value of config `configId` at `path`; throws when it does not open (wrong key, moved to another config or place). */
export function openSealed(v: unknown, secrets: Secrets, configId: string, path: string): unknown {
  return isSealed(v) ? JSON.parse(secrets.decrypt(v.$sealed, configSecretBinding(configId, path))) : v;
}

/** The config as routing needs it; throws when a blob does not open. */
export function openConfig(config: unknown, secrets: Secrets, configId: string): unknown {
  return mapSecrets(config, (v, path) => openSealed(v, secrets, configId, path));
}

/** The config as clients see it: secrets masked. */
export function maskConfig(config: unknown): unknown {
  return mapSecrets(config, () => SECRET_MASK);
}
