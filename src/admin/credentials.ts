/**
 * Provider credentials as the management routes take and show them, shared
 * by virtual keys and integrations: the provider fields are the config's own
 * (checked by the config schema), the set must be enough to call the
 * provider, everything is sealed into one blob encrypted for its object, and
 * what a GET shows is a copy with the secrets masked.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { checkProviderFields, PROVIDER_FIELDS, type ProviderFieldName, type ProviderFields } from '../config/schema.js';
// Values never shown again: GET shows `masked_<field>` instead.
import { DESTINATION_FIELDS, SECRET_FIELDS } from '../config/secrets.js';
import { OPENAI_COMPATIBLE } from '../providers/openai/hosts.js';
import { canonicalProvider, isKnownProvider } from '../providers/registry.js';
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import { HEADER_SAFE } from '../shared/json-schema.js';
import type { Secrets } from '../store/secrets.js';

/** The provider key in request bodies (`key`): it is sent in a header, so it holds what one may. */
export const KEY_SCHEMA = { type: 'string', minLength: 1, maxLength: 16_384, allOf: [HEADER_SAFE] };

/** Every target key a stored credential may hold. */
export type StoredFields = ProviderFields & { api_key?: string };

const FIELD_NAMES: ReadonlySet<string> = new Set(PROVIDER_FIELDS);
const MASK = '****';
/** Keys shorter than this show no characters at all. */
const HINT_MIN_LENGTH = 12;

export function isProviderField(name: string): name is ProviderFieldName {
  return FIELD_NAMES.has(name);
}

/** A provider name the gateway routes to (aliases cloud1/2/3 included), as its canonical name. */
export function knownProvider(name: string, param: string): Result<string> {
  return isKnownProvider(name)
    ? { ok: true, value: canonicalProvider(name) }
    : { ok: false, error: invalid(`${param}: unknown provider '${name}'`, param, 'unknown_provider') };
}

/**
 * Provider fields picked from `raw`, checked by the config schema. null
 * values are removals (PUT), returned apart.
 */
export function providerFields(raw: Record<string, unknown>, at: string[]): Result<{ set: ProviderFields; cleared: ProviderFieldName[] }> {
  const set: Record<string, unknown> = {};
  const cleared: ProviderFieldName[] = [];
  for (const [k, v] of Object.entries(raw)) {
    if (v === null && isProviderField(k)) cleared.push(k);
    else set[k] = v;
  }
  const problem = checkProviderFields(set, at);
  return problem === null ? { ok: true, value: { set: set as ProviderFields, cleared } } : { ok: false, error: problem };
}

/** `current` with `set` written over it and `cleared` removed. */
export function mergeFields(current: StoredFields, set: StoredFields, cleared: readonly string[]): StoredFields {
  const next: Record<string, unknown> = { ...current, ...set };
  for (const k of cleared) delete next[k];
  return next as StoredFields;
}

/** The secret fields a stored set holds. */
export function storedSecrets(f: StoredFields): string[] {
  return Object.keys(f).filter((k) => SECRET_FIELDS.has(k));
}

/**
 * An update that changes where stored secrets are sent (a destination field
 * set to another value, or removed) must give every stored secret again
 * (set or removed in the same request): otherwise the stored key would go to
 * a host of the caller's choosing. A 400 naming the moved field, or null.
 * `fieldParam` names a field as the body does; api_key is `key`.
 */
export function checkRedirect(current: StoredFields, set: StoredFields, cleared: readonly string[], fieldParam: (field: string) => string): GatewayError | null {
  const was = current as Record<string, unknown>;
  const now = set as Record<string, unknown>;
  const moved = DESTINATION_FIELDS.find((k) => (now[k] !== undefined && !isDeepStrictEqual(now[k], was[k])) || (cleared.includes(k) && was[k] !== undefined));
  if (moved === undefined) return null;
  const kept = storedSecrets(current).filter((k) => now[k] === undefined && !cleared.includes(k));
  if (kept.length === 0) return null;
  const param = (k: string): string => (k === 'api_key' ? 'key' : fieldParam(k));
  return secretRequired(param(moved), kept.map(param));
}

/** A 400 naming `param`, whose change points stored secrets elsewhere, and the secrets (`needed`, as the body names them) the request must give. */
export function secretRequired(param: string, needed: readonly string[]): GatewayError {
  return invalid(
    `${param}: changes where the stored credentials are sent, so the request must give them again: ${needed.join(', ')}`,
    param,
    'secret_required',
  );
}

/** Whether a secret given in a request is the stored one; strings compared in constant time. */
export function sameSecret(given: unknown, stored: unknown): boolean {
  if (typeof given !== 'string' || typeof stored !== 'string') return isDeepStrictEqual(given, stored);
  const digest = (v: string): Buffer => createHash('sha256').update(v).digest();
  return timingSafeEqual(digest(given), digest(stored));
}

/**
 * Whether a credential set can call its provider, by the config's key groups:
 * an api key, or the provider's own alternative (bedrock: cloud1 key pair;
 * vertex-ai: cloud2_region + service account; Azure: Entra client
 * credentials; local OpenAI-compatible servers: custom_host). Fields mapped
 * from secret references count as present. `fieldParam` names a field as
 * the body does (`cloud1_region`, `configurations.cloud1_region`).
 */
export function checkCredentialSet(
  provider: string,
  f: StoredFields,
  mapped: ReadonlySet<string>,
  keyParam: string,
  fieldParam: (field: string) => string,
): GatewayError | null {
  const has = (k: string): boolean => (f as Record<string, unknown>)[k] !== undefined || mapped.has(k);
  for (const group of PARTIAL_GROUPS) {
    const missing = group.find((k) => !has(k));
    if (missing !== undefined && group.some(has)) {
      return invalid(`${fieldParam(missing)}: is required with ${group.filter(has).map(fieldParam).join(', ')}`, fieldParam(missing));
    }
  }
  if (has('api_key')) return null;
  const alternative = KEYLESS[provider];
  if (alternative !== undefined && alternative.every(has)) return null;
  const instead = alternative === undefined ? '' : `, or ${alternative.map(fieldParam).join(' + ')}`;
  return invalid(`${keyParam}: is required for provider '${provider}'${instead}`, keyParam);
}

/** Keys that only work together. */
const PARTIAL_GROUPS: readonly (readonly string[])[] = [
  ['cloud1_access_key_id', 'cloud1_secret_access_key'],
  ['cloud3_entra_tenant_id', 'cloud3_entra_client_id', 'cloud3_entra_client_secret'],
];

const ENTRA = ['cloud3_entra_tenant_id', 'cloud3_entra_client_id', 'cloud3_entra_client_secret'];

/** What stands in for an api key, per provider (the config's key groups that carry a credential). */
const KEYLESS: Readonly<Record<string, readonly string[]>> = {
  bedrock: ['cloud1_access_key_id', 'cloud1_secret_access_key'],
  'vertex-ai': ['cloud2_region', 'cloud2_service_account_json'],
  'azure-openai': ENTRA,
  'azure-ai': ENTRA,
  // Servers the operator runs: where they are is the whole credential.
  ...Object.fromEntries(
    Object.entries(OPENAI_COMPATIBLE)
      .filter(([, h]) => h.auth === 'none' || h.baseUrl === null)
      .map(([name]) => [name, ['custom_host']]),
  ),
};

export interface Sealed {
  /** The encrypted blob, bound to the object's id. */
  credentials: string;
  /** What GET shows: non-secret values, `masked_<field>` for secret ones (`masked_key`: `****` and at most the last four characters). */
  view: Record<string, unknown>;
}

export function seal(secrets: Secrets, id: string, f: StoredFields): Sealed {
  const view: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(f)) {
    if (k === 'api_key') view.masked_key = MASK + (typeof v === 'string' && v.length >= HINT_MIN_LENGTH ? v.slice(-4) : '');
    else if (SECRET_FIELDS.has(k)) view[`masked_${k}`] = MASK;
    else view[k] = v;
  }
  return { credentials: secrets.encrypt(JSON.stringify(f), id), view };
}

/** A stored blob's fields, for an update to merge into; a blob that does not decrypt is a 500 naming the object only. */
export function unseal(secrets: Secrets, blob: string | null, id: string, what: string): Result<StoredFields> {
  if (blob === null) return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(secrets.decrypt(blob, id)) as StoredFields };
  } catch {
    return { ok: false, error: new GatewayError(500, `the stored credentials of ${what} cannot be decrypted`, { code: 'credentials_unreadable' }) };
  }
}
