/**
 * What a provider adapter is: a translator between the client's OpenAI-shaped
 * request and the provider's wire format. The OpenAI-compatible family needs
 * no translation; adapters for other wire formats add response transforms.
 */
import type { Readable, Transform } from 'node:stream';
import type { Endpoint } from '../shared/endpoint.js';
import type { GatewayError, Result } from '../shared/errors.js';
import type { TargetSettings } from './settings.js';


/** A leaf target once the provider is known: config keys plus the request's own credentials. */
export interface ResolvedTarget {
  provider: string;
  node: TargetSettings;
  /** Authorization header from the client, used when the target carries no api_key. */
  clientAuthorization: string | undefined;
  /** custom_host from the target, else x-gateway-custom-host. */
  customHost: string | undefined;
}

/**
 * Translation between the client's OpenAI-shaped exchange and a provider's own
 * wire format (Envoy AI Gateway's translator idea: request body, response
 * body, stream, error). The OpenAI-compatible family has none: bytes pass as
 * they are.
 */
export interface Translator {
  /** A 2xx answer that was not streamed, as OpenAI JSON text (some providers report usage in headers). */
  response(raw: Buffer, headers?: ProviderHeaders): Result<string, GatewayError>;
  /** A streamed 2xx answer: provider bytes in, OpenAI SSE out (`data: {chunk}` events ending in `data: [DONE]`). */
  stream(): Transform;
  /** A provider's error answer in the contract's envelope, the provider's status kept. */
  error(status: number, raw: Buffer, headers?: ProviderHeaders): GatewayError;
}

/** The provider's response headers, lower-case names. */
export type ProviderHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface ProviderCall {
  /** Absolute URL of the provider endpoint. */
  url: string;
  /** Headers the provider needs (auth, version); the router adds forwarded ones. */
  headers: Record<string, string>;
  /** The provider's own request body, when it is not the client's (on the generic proxy too). */
  body?: string | Buffer;
  /** How to read the provider's answer back into OpenAI's shape; absent: relay it as it is. */
  translator?: Translator;
  /** The gateway asked for stream usage the client did not (shared/stream-usage.ts): the relay strips it. */
  addedUsage?: boolean;
}

/** What an adapter is given to build the provider call. */
export interface CallInput {
  target: ResolvedTarget;
  endpoint: Endpoint;
  /** Path after /v1 (query included): the endpoint's path or, for the generic proxy, the client's own. */
  path: string;
  /** The client's OpenAI-shaped body after param edits; null for the generic proxy and pass-through. */
  body: Record<string, unknown> | null;
  /** The client's method and body bytes, for providers that sign the request (a stream when it can be sent once only). */
  method?: string;
  raw?: Buffer | Readable | null;
}

export interface ProviderAdapter {
  readonly name: string;
  /** Where and how to call the provider. Async only where credentials need a token exchange. */
  prepare(input: CallInput): Result<ProviderCall, GatewayError> | Promise<Result<ProviderCall, GatewayError>>;
}
