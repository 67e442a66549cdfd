/**
 * Which publisher serves a model on Vertex AI, and how its calls are built.
 * Vertex hosts several vendors' models under
 * `…/publishers/{publisher}/models/{model}:{method}`, each with its own body:
 * Google's Gemini (generateContent, predict for embeddings), Anthropic's
 * Claude (rawPredict / streamRawPredict with an Anthropic Messages body).
 * Adding a publisher is one row of BY_PREFIX.
 */
import type { GatewayError, Result } from '../../shared/errors.js';
import { geminiChat } from '../google/chat.js';
import type { Translator } from '../types.js';
import { claudeChat } from './chat/request.js';
import { predictEmbeddings } from './embeddings.js';

export interface PublisherCall {
  /** The model method and its query, e.g. `streamGenerateContent?alt=sse`. */
  method: string;
  body: string;
  translator: Translator;
}

/** Builds a call from the client's body; null: this publisher has no models for that endpoint. */
type Build = ((body: Record<string, unknown>, model: string, provider: string) => Result<PublisherCall, GatewayError>) | null;

export interface Publisher {
  /** The `publishers/{name}` path segment. */
  name: string;
  chat: Build;
  embeddings: Build;
}

const GOOGLE: Publisher = { name: 'google', chat: geminiChat, embeddings: predictEmbeddings };

/** Model-id prefixes of other publishers; any other model is Google's. */
const BY_PREFIX: readonly (readonly [string, Publisher])[] = [
  // rawPredict / streamRawPredict with Anthropic's Messages body (anthropic.ts); Anthropic has no embedding models.
  ['claude-', { name: 'anthropic', chat: claudeChat, embeddings: null }],
];

export function publisherOf(model: string): Publisher {
  return BY_PREFIX.find(([prefix]) => model.startsWith(prefix))?.[1] ?? GOOGLE;
}
