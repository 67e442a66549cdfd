/**
 * Stored credentials on the request path: which reference a target makes
 * (a virtual key's id or slug, or an `@slug` provider), and the target they
 * fill. The lookup itself (cache, store, decryption) is a CredentialSource
 * given to the router.
 *
 * Filling a target: the stored provider and keys apply as if the config had
 * written them; keys the config target sets itself win (api_key,
 * override_params, retry, deployments, …), except the host. Stored secrets
 * are sent only to the host stored with them (the integration model's
 * custom_host, else the stored custom_host, else the provider's own): a
 * custom_host from the config or x-gateway-custom-host on such a target is
 * refused, since it would hand the stored key to whoever runs that host, and
 * so is any other key that decides where credentials go (a region, an Azure
 * resource, an Entra tenant or scope: config/secrets.ts DESTINATION_FIELDS).
 */
import type { Pricing } from '../catalog/catalog.js';
import { priceOf, type Price } from '../catalog/price.js';
import { DESTINATION_FIELDS } from '../config/secrets.js';
import type { ConfigNode } from '../config/types.js';
import { GatewayError, invalid, type Result } from '../shared/errors.js';

export type CredentialKind = 'virtual_key' | 'provider';

export interface ModelRule {
  enabled: boolean;
  /** Base URL for this model, instead of the credential's. */
  customHost: string | undefined;
  /** The integration's own price for this model (its pricing_config), instead of the catalog's. */
  pricing: Pricing | null;
}

export interface StoredCredential {
  /** The virtual key (or provider) row. */
  id: string;
  slug: string;
  integrationId: string | null;
  /** Canonical provider name. */
  provider: string;
  /** Target keys the credential supplies: api_key, custom_host, cloud settings, deployments. */
  fields: Readonly<ConfigNode>;
  /** false: only listed, enabled models may be called. */
  allowAllModels: boolean;
  /** Integration models by slug; empty for a virtual key with its own credentials. */
  models: ReadonlyMap<string, ModelRule>;
  /** The integration's pricing_adjustments.multiplier (1 without one): cost is the model's price times this. */
  pricingMultiplier: number;
}

/** The price of a model sent to a provider, through stored credentials or none. */
export function sentPrice(provider: string, model: string, cred: StoredCredential | null): Price | null {
  return cred === null ? priceOf(provider, model) : priceOf(provider, model, cred.models.get(model)?.pricing ?? null, cred.pricingMultiplier);
}

/** Synchronous when cached (the hot path); null: no such credential in this workspace. */
export interface CredentialSource {
  resolve(workspaceId: string, kind: CredentialKind, ref: string): Result<StoredCredential | null> | Promise<Result<StoredCredential | null>>;
}

export interface CredentialRef {
  kind: CredentialKind;
  ref: string;
  /** Where the reference was written, for errors: a header or a config path. */
  param: string;
}

/**
 * The stored credential a target names, if any: its own virtual_key or
 * `@slug` provider, else (a target that leaves the provider to the request)
 * x-gateway-virtual-key or an `@slug` x-gateway-provider.
 */
export function credentialRef(node: ConfigNode, path: string, virtualKey: string | undefined, provider: string | undefined): CredentialRef | null {
  if (node.virtual_key !== undefined) return { kind: 'virtual_key', ref: node.virtual_key, param: `${path}.virtual_key` };
  if (node.provider !== undefined) return node.provider.startsWith('@') ? { kind: 'provider', ref: node.provider.slice(1), param: `${path}.provider` } : null;
  if (virtualKey !== undefined) return { kind: 'virtual_key', ref: virtualKey, param: 'x-gateway-virtual-key' };
  if (provider?.startsWith('@') === true) return { kind: 'provider', ref: provider.slice(1), param: 'x-gateway-provider' };
  return null;
}

export function unknownCredential(r: CredentialRef): GatewayError {
  return r.kind === 'virtual_key'
    ? invalid(`virtual key '${r.ref}' not found`, r.param, 'unknown_virtual_key')
    : invalid(`unknown provider slug '@${r.ref}': no provider of this workspace has it`, r.param, 'unknown_provider');
}

export interface FilledTarget {
  node: ConfigNode;
  customHost: string | undefined;
}

/** Merged nodes per credential and config node: a credential's fields are copied once per target, not per request. */
const filled = new WeakMap<StoredCredential, WeakMap<ConfigNode, ConfigNode>>();

/**
 * The credential's model rules (an integration's models, allow_all_models) on
 * the model a call asks for: a 412 naming `param` when it may not be called
 * through `ref`, null when it may (or when no model is named).
 */
export function modelRefused(cred: StoredCredential, ref: string, model: unknown, param: string): GatewayError | null {
  if (typeof model !== 'string') return null;
  const rule = cred.models.get(model);
  if (rule?.enabled === false || (rule === undefined && !cred.allowAllModels)) {
    return new GatewayError(412, `model '${model}' is not allowed for '${ref}'`, { code: 'model_not_allowed', param });
  }
  return null;
}

/**
 * The target as if the config had written the stored keys. `headerHost` is
 * x-gateway-custom-host when the request's headers pick this target's
 * provider; `model` is the model the provider would be asked for.
 */
export function fillTarget(
  cred: StoredCredential,
  ref: CredentialRef,
  node: ConfigNode,
  path: string,
  headerHost: string | undefined,
  model: unknown,
): Result<FilledTarget> {
  const moved = DESTINATION_FIELDS.find((k) => (node as Record<string, unknown>)[k] !== undefined);
  if (moved !== undefined) return refusedDestination(`${path}.${moved}`, ref, moved === 'custom_host' ? 'custom_host_not_allowed' : 'destination_not_allowed');
  if (headerHost !== undefined) return refusedDestination('x-gateway-custom-host', ref, 'custom_host_not_allowed');
  const refused = modelRefused(cred, ref.ref, model, 'model');
  if (refused !== null) return { ok: false, error: refused };
  const rule = typeof model === 'string' ? cred.models.get(model) : undefined;
  let byNode = filled.get(cred);
  if (byNode === undefined) filled.set(cred, (byNode = new WeakMap()));
  let merged = byNode.get(node);
  if (merged === undefined) {
    merged = { ...cred.fields, ...node, provider: cred.provider };
    delete merged.virtual_key;
    byNode.set(node, merged);
  }
  return { ok: true, value: { node: merged, customHost: rule?.customHost ?? cred.fields.custom_host } };
}

function refusedDestination(param: string, ref: CredentialRef, code: string): Result<never> {
  return {
    ok: false,
    error: invalid(`${param}: cannot be combined with stored credentials ('${ref.ref}'): they are sent only where they were stored`, param, code),
  };
}
