/**
 * Which publisher serves a model on Vertex AI, and its translators. Vertex
 * hosts several vendors' models under
 * `…/publishers/{publisher}/models/{model}:{method}`, each with its own body:
 * Google's Gemini (generateContent, predict for embeddings), Anthropic's
 * Claude (rawPredict / streamRawPredict with an Anthropic Messages body).
 * Adding a publisher is one row of BY_PREFIX.
 */
import type { Translators } from '../contract.js';
import { geminiChat, geminiMethod } from '../google/chat/request.js';
import { claudeOnVertex } from './chat/request.js';
import { predictEmbeddings } from './embeddings.js';

export interface Publisher {
  /** The `publishers/{name}` path segment. */
  name: string;
  /** Its translators; an endpoint without one is one its models do not serve. */
  translators: Translators;
  /** The model method and its query for a chat request (`streamGenerateContent?alt=sse`). */
  chatMethod: (body: Record<string, unknown>) => string;
}

/** Google's models: the Gemini API's bodies; embeddings through `predict`. */
export const GOOGLE: Publisher = {
  name: 'google',
  translators: { chat: geminiChat('vertex-ai'), embeddings: predictEmbeddings },
  chatMethod: geminiMethod,
};

/** Anthropic's Claude models: rawPredict / streamRawPredict with Anthropic's Messages body; no embedding models. */
export const ANTHROPIC: Publisher = {
  name: 'anthropic',
  translators: { chat: claudeOnVertex },
  chatMethod: (body) => (body.stream === true ? 'streamRawPredict' : 'rawPredict'),
};

/** Model-id prefixes of other publishers; any other model is Google's. */
const BY_PREFIX: readonly (readonly [string, Publisher])[] = [['claude-', ANTHROPIC]];

export function publisherOf(model: string): Publisher {
  return BY_PREFIX.find(([prefix]) => model.startsWith(prefix))?.[1] ?? GOOGLE;
}
