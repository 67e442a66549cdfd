/**
 * A translator (contract.ts) made from its halves, so each provider writes
 * only what is its own: how the client's body becomes the provider's, and how
 * the answer to it is read.
 */
import { ok, type Result } from '../../shared/errors.js';
import type { ChatTranslator, EmbeddingsTranslator } from '../contract.js';
import { embeddingsAnswer, type EmbeddingsReply } from './embeddings.js';
import { chatAnswer, type ChatReading } from './openai-answer.js';
import type { ChatRequest, EmbeddingsRequest } from './openai-request.js';
import type { ParamPolicy } from './params.js';

export interface ChatTranslation<T> {
  api: string;
  params: ParamPolicy;
  /** The provider's body for the client's, or a 400 naming the parameter. */
  translate(body: ChatRequest): Result<T>;
  /** Request headers the body needs besides URL and credential. */
  headers?(body: ChatRequest): Readonly<Record<string, string>>;
  /** How the answer to `body` is read. */
  read(body: ChatRequest): ChatReading;
}

export function chatTranslator<T>(t: ChatTranslation<T>): ChatTranslator {
  return {
    api: t.api,
    params: t.params,
    request(raw) {
      const body = raw as ChatRequest;
      const translated = t.translate(body);
      if (!translated.ok) return translated;
      const out = { body: JSON.stringify(translated.value), answer: chatAnswer(body, t.read(body)) };
      return ok(t.headers === undefined ? out : { ...out, headers: t.headers(body) });
    },
  };
}

export interface EmbeddingsTranslation {
  api: string;
  params: ParamPolicy;
  /** The provider's body for the client's, how its answer is read, and the request headers it needs; or a 400 naming the parameter. */
  translate(body: EmbeddingsRequest): Result<{ request: unknown; reply: EmbeddingsReply; headers?: Readonly<Record<string, string>> }>;
}

export function embeddingsTranslator(t: EmbeddingsTranslation): EmbeddingsTranslator {
  return {
    api: t.api,
    params: t.params,
    request(raw) {
      const translated = t.translate(raw as EmbeddingsRequest);
      if (!translated.ok) return translated;
      const { request, reply, headers } = translated.value;
      const out = { body: JSON.stringify(request), answer: embeddingsAnswer(reply) };
      return ok(headers === undefined ? out : { ...out, headers });
    },
  };
}
