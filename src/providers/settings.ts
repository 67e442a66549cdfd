/**
 * Every provider folder's settings (its own config keys), for the config
 * validator to compose (config/shape.ts): the one place config/ reads
 * providers/. Adding a provider with keys of its own is one line here. The
 * three clouds come first, in the spec's order: the config's key groups list
 * theirs so.
 */
import type { OptionalValues } from '../shared/json-schema.js';
import { ANTHROPIC_SETTINGS } from './anthropic/settings.js';
import { AZURE_SETTINGS } from './azure/settings.js';
import { BEDROCK_SETTINGS } from './bedrock/settings.js';
import { COHERE_SETTINGS } from './cohere/settings.js';
import { GOOGLE_SETTINGS } from './google/settings.js';
import { OPENAI_SETTINGS } from './openai/settings.js';
import type { ProviderSettings, TargetCredential } from './shared/settings.js';
import { VERTEX_AI_SETTINGS } from './vertex-ai/settings.js';

export const PROVIDER_SETTINGS = [
  BEDROCK_SETTINGS,
  VERTEX_AI_SETTINGS,
  AZURE_SETTINGS,
  OPENAI_SETTINGS,
  ANTHROPIC_SETTINGS,
  COHERE_SETTINGS,
  GOOGLE_SETTINGS,
] as const satisfies readonly ProviderSettings[];

type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** Every provider's keys as one set of properties (no key belongs to two providers: settings.test.ts). */
export type ProviderKeys = Intersection<(typeof PROVIDER_SETTINGS)[number]['keys']>;

export const PROVIDER_KEYS = Object.assign({}, ...PROVIDER_SETTINGS.map((s) => s.keys)) as ProviderKeys;

/** What a target holds for an adapter: every provider's keys and the credential keys. Each adapter reads its own part. */
export type TargetSettings = OptionalValues<ProviderKeys> & TargetCredential;
