/**
 * What a provider is to the gateway. Two parts, after Envoy AI Gateway's
 * translators (one translator per client API → provider API pair):
 *
 * - an adapter (`<provider>/adapter.ts`) decides where a call goes and with
 *   which credential (URL, auth headers, SigV4 signing, token exchanges), and
 *   picks the translator for the endpoint;
 * - a translator turns one OpenAI endpoint into the provider's own API and
 *   back: the request body (or a 400 naming the parameter it cannot send),
 *   then, per request, the answer's reader: response headers, response body
 *   (whole, or stream chunk by chunk to its end) and error.
 *
 * The OpenAI-compatible family (openai/hosts.ts, Azure's two APIs) has no
 * translator: its calls are relayed, the answer's bytes passed as they are.
 */
import type { Cancel } from '../upstream/cancel.js';
import type { Readable, Transform } from 'node:stream';
import type { Endpoint, ModelEndpoint } from '../shared/endpoint.js';
import type { GatewayError, Result } from '../shared/errors.js';
import type { ParamPolicy } from './shared/params.js';
import type { TargetCredential } from './shared/settings.js';

/** The provider's response headers, lower-case names. */
export type ProviderHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** A leaf target once the provider is known: its settings (providers/<name>/settings.ts) plus the request's own credential and host. */
export interface ResolvedTarget<S extends object = object> {
  provider: string;
  settings: Readonly<S & TargetCredential>;
  /** Authorization header from the client, used when the target carries no api_key. */
  clientAuthorization: string | undefined;
  /** custom_host from the target, else x-gateway-custom-host. */
  customHost: string | undefined;
}

/** What an adapter is given to build the provider call. */
export interface CallInput<S extends object = object> {
  target: ResolvedTarget<S>;
  endpoint: Endpoint;
  /** Path after /v1 (query included): the endpoint's path or, for the generic proxy, the client's own. */
  path: string;
  /** The client's OpenAI-shaped body after param edits; null for the generic proxy and pass-through mode. */
  body: Record<string, unknown> | null;
  /** The client's method and body bytes, for providers that sign the request (a stream when it can be sent once only). */
  method?: string;
  raw?: Buffer | Readable | null;
  /** The request's: a call an adapter makes itself before the routed one (prepare) stops with it, when the client leaves. */
  signal?: Cancel;
}

/** A call whose answer is in OpenAI's wire format (or the provider's own, on the generic proxy and in pass-through mode): relayed as it is. */
export interface RelayedCall {
  readonly kind: 'relayed';
  /** Absolute URL of the provider endpoint. */
  url: string;
  /** Headers the provider needs (auth, version); the router adds forwarded ones. */
  headers: Record<string, string>;
  /** The bytes to send when they are not the client's own (an edited or signed body). */
  body?: string | Buffer;
  /** The gateway asked for stream usage the client did not (shared/stream-usage.ts): the respond stage strips it. */
  addedUsage: boolean;
}

/** A call in the provider's own wire format, its answer read back into OpenAI's by `answer`. */
export interface TranslatedCall {
  readonly kind: 'translated';
  url: string;
  /** The provider's method when it is not the client's (a generic-proxy path the provider serves another way). */
  method?: string;
  /** The whole request besides the URL: on the generic proxy none of the client's headers go with a translated call. */
  headers: Record<string, string>;
  /** The translated body; null for a call without one (a GET). */
  body: string | null;
  answer: Answer;
}

export type ProviderCall = RelayedCall | TranslatedCall;

export interface ProviderAdapter<S extends object = object> {
  readonly name: string;
  /**
   * The model endpoints the provider's API does not serve, each with why (or
   * ''): a request to one is refused with a 400 naming the provider before
   * prepare runs (registry.ts: prepareCall).
   */
  readonly lacks: Readonly<Partial<Record<ModelEndpoint, string>>>;
  /**
   * The provider's API has OpenAI's Responses API (POST /responses): the
   * request is relayed to it. Without it, the gateway serves /responses over
   * the provider's chat API (responses/over-chat.ts).
   */
  readonly nativeResponses?: boolean;
  /** Where and how to call the provider. Async only where the credential needs a token exchange or signing. */
  prepare(input: CallInput<S>): Result<ProviderCall> | Promise<Result<ProviderCall>>;
}

// ---------------------------------------------------------------------------
// Translators

/** The OpenAI endpoints a translator may translate, and the answer each gives. */
export interface AnswerOf {
  chat: Answer;
  embeddings: WholeAnswer;
}

/** One OpenAI endpoint → one provider API. Stateless: one object serves every request. */
export interface Translator<E extends keyof AnswerOf> {
  /** The provider API it speaks, as docs/providers.md names it ("Anthropic Messages"). */
  readonly api: string;
  /** What becomes of each OpenAI parameter (shared/params.ts; docs/providers.md shows the table). */
  readonly params: ParamPolicy;
  /** Request body: the client's OpenAI body as the provider's, with the reader of its answer; or a 400 naming the parameter. */
  request(body: Record<string, unknown>): Result<TranslatedRequest<AnswerOf[E]>>;
}

export type ChatTranslator = Translator<'chat'>;
export type EmbeddingsTranslator = Translator<'embeddings'>;

/** The endpoints a provider API has a translator for. */
export interface Translators {
  chat?: ChatTranslator;
  embeddings?: EmbeddingsTranslator;
}

export interface TranslatedRequest<A extends Answer> {
  /** The provider's body, serialized. */
  body: string;
  /** Request headers the body needs besides URL and credential (Bedrock's request metadata). */
  headers?: Readonly<Record<string, string>>;
  answer: A;
}

/** How the provider's answer to one request becomes OpenAI's: built per request, since its shape depends on the request. */
export type Answer = WholeAnswer | StreamedAnswer;

/** A provider's error answer (any non-2xx, read whole) in the contract's envelope, the provider's status kept. */
export type ErrorReader = (status: number, raw: Buffer, headers: ProviderHeaders) => GatewayError;

interface AnswerReader {
  /** Response headers: those the translated answer goes out with (its content type). */
  readonly headers: Readonly<Record<string, string>>;
  readonly error: ErrorReader;
}

/** A 2xx answer read whole. */
export interface WholeAnswer extends AnswerReader {
  readonly streamed: false;
  /** Response body as OpenAI JSON text; a 502 `bad_upstream_response` when it cannot be read. */
  response(raw: Buffer, headers: ProviderHeaders): Result<string>;
}

/** A 2xx answer streamed (the client asked for `stream: true`). */
export interface StreamedAnswer extends AnswerReader {
  readonly streamed: true;
  /**
   * Every translated stream ends with a usage chunk (shared/stream.ts); true
   * when the client did not ask for it (stream_options.include_usage), so the
   * respond stage strips it once the usage is read.
   */
  readonly addedUsage: boolean;
  /** Response body, chunk by chunk: provider bytes in, OpenAI SSE out (shared/stream.ts says how a stream ends). */
  stream(): Transform;
}

/**
 * A provider: its adapter and every translator the adapter may pick, by the
 * provider API each speaks (Vertex AI has one per publisher; the
 * OpenAI-compatible family none). The conformance suite and
 * docs/providers.md read these.
 */
export interface Provider<S extends object = object> {
  adapter: ProviderAdapter<S>;
  translators: Readonly<Record<string, Translators>>;
}
