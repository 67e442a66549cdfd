/**
 * The validated Config object of the spec, its types derived from its schema
 * (shape.ts). Only `parseConfig` (schema.ts) produces values of the branded
 * `Config`, so holding one means it passed every rule; raw header JSON is
 * `unknown` until then.
 */
import type { Static } from '@sinclair/typebox';
import type { OptionalValues } from '../shared/json-schema.js';
import type { CACHE, CB_CONFIG, EMBEDDING, NODE, PROVIDER_FIELDS_SHAPE, RETRY, STRATEGY } from './shape.js';

declare const validated: unique symbol;

/** One node of the config tree: the root or any target at any depth. */
export type ConfigNode = Static<typeof NODE>;

/** A root config that passed validation. */
export type Config = ConfigNode & { readonly [validated]: true };

export type Strategy = Static<typeof STRATEGY>;
export type StrategyMode = Strategy['mode'];
/** A query over metadata.*, params.* and url.pathname (see config/query.ts). */
export type ConditionQuery = NonNullable<Strategy['conditions']>[number]['query'];
export type CacheConfig = Static<typeof CACHE>;
/** The embeddings endpoint of the semantic cache, named the way a target names its provider and credentials, plus the embedding model. */
export type EmbeddingTarget = Static<typeof EMBEDDING>;
export type RetryConfig = Static<typeof RETRY>;
export type CircuitBreakerConfig = Static<typeof CB_CONFIG>;
/** The target keys stored credentials may hold (schema.ts: PROVIDER_FIELDS). */
export type ProviderFields = OptionalValues<typeof PROVIDER_FIELDS_SHAPE>;
