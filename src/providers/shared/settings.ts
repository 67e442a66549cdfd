/**
 * A provider's own config keys (the spec's cloud1_*, cloud2_*, cloud3_*,
 * vendor_* …), declared once in its folder's settings.ts. The config
 * validator composes every provider's keys into a target's schema
 * (config/shape.ts, through providers/settings.ts), stored credentials may
 * hold them, secrets among them are sealed and masked, and the adapter reads
 * them with the type their schema gives them.
 */
import type { TProperties } from '@sinclair/typebox';
import type { OptionalValues } from '../../shared/json-schema.js';

export interface ProviderSettings<P extends TProperties = TProperties> {
  /** Each key's schema, its failure message included; every key is optional in a target. */
  readonly keys: P;
  /** Keys that hold credentials: sealed in saved configs, masked when shown. */
  readonly secrets: readonly string[];
  /**
   * Keys that decide where the credentials are sent (a host, region, project,
   * tenant, token scope): stored with a secret, one changes only in a request
   * that gives the secret again, and a request-time config cannot override it.
   * Required, so a new provider states its own (custom_host and provider are
   * every target's: config/secrets.ts adds them).
   */
  readonly destinations: readonly string[];
  /** Key sets that, with `provider`, make a root config whole (the spec's key groups). */
  readonly keyGroups: readonly (readonly string[])[];
}

type KeyName<P> = keyof P & string;

/** Declares a folder's settings; the names in `secrets`, `destinations` and `keyGroups` are checked against `keys`. */
export function providerSettings<P extends TProperties>(settings: {
  keys: P;
  secrets: readonly KeyName<P>[];
  destinations: readonly KeyName<P>[];
  keyGroups: readonly (readonly KeyName<P>[])[];
}): ProviderSettings<P> {
  return settings;
}

/** A target's values of a provider's keys, as its adapter reads them. */
export type SettingsOf<S extends ProviderSettings> = OptionalValues<S['keys']>;

/**
 * The credential keys every target may carry, whatever its provider (the
 * config validates them): the provider's API key, or a whole Authorization
 * value. Adapters read them beside their own keys.
 */
export interface TargetCredential {
  api_key?: string;
  Authorization?: string;
}
