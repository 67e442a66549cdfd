/**
 * Reading Azure's config keys. Several come in two spellings, the spec's
 * plain one and the third cloud's prefixed one (`resource_name` or
 * `cloud3_resource_name`); the plain one wins. Empty strings count as absent,
 * so `"resource_name": ""` is reported as missing rather than sent to Azure.
 */
import type { ConfigNode } from '../../config/types.js';
import { invalid, ok, type GatewayError, type Result } from '../../shared/errors.js';

type StringKey = { [K in keyof ConfigNode]-?: ConfigNode[K] extends string | undefined ? K : never }[keyof ConfigNode];

/** The first of `keys` set to a non-empty string. */
export function setting(node: ConfigNode, ...keys: StringKey[]): string | undefined {
  for (const key of keys) {
    const v = node[key];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

/** `setting` or a 400 naming the key (and its other spelling). */
export function required(provider: string, node: ConfigNode, ...keys: [StringKey, ...StringKey[]]): Result<string, GatewayError> {
  const v = setting(node, ...keys);
  if (v !== undefined) return ok(v);
  const names = keys.length === 1 ? keys[0] : `${keys[0]} (or ${keys.slice(1).join(', ')})`;
  return { ok: false, error: invalid(`provider '${provider}' needs ${names}`, keys[0], 'missing_provider_config') };
}

/** Azure resource, endpoint and region names become DNS labels of the host: letters, digits, inner hyphens. */
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/** `required`, and a 400 naming the key when its value cannot be a label of a host name. */
export function requiredLabel(provider: string, node: ConfigNode, ...keys: [StringKey, ...StringKey[]]): Result<string, GatewayError> {
  const key = keys.find((k) => setting(node, k) !== undefined);
  if (key === undefined) return required(provider, node, ...keys);
  const value = setting(node, key)!;
  return DNS_LABEL.test(value)
    ? ok(value)
    : { ok: false, error: invalid(`${key} '${value}' is not a valid host name label (letters, digits and inner hyphens)`, key, 'invalid_provider_config') };
}

/** `base` without a trailing slash, so paths can be appended as they are. */
export function trimBase(base: string): string {
  return base.endsWith('/') ? base.slice(0, -1) : base;
}

/** Appends `api-version` unless the path's query already carries one (the client's own, on the generic proxy). */
export function withApiVersion(url: string, apiVersion: string | undefined): string {
  if (apiVersion === undefined) return url;
  const q = url.indexOf('?');
  if (q !== -1 && new URLSearchParams(url.slice(q + 1)).has('api-version')) return url;
  return `${url}${q === -1 ? '?' : '&'}api-version=${encodeURIComponent(apiVersion)}`;
}
