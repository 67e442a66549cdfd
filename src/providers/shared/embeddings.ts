/**
 * OpenAI's embeddings answer, for translators whose provider answers in its
 * own shape: the reader of the whole answer, the list body, and the base64
 * encoding OpenAI's clients ask for (encoding_format: "base64") made from the
 * provider's floats.
 */
import { err, ok } from '../../shared/errors.js';
import type { ErrorReader, ProviderHeaders, WholeAnswer } from '../contract.js';
import { badResponse, parseAnswer, wholeAnswer } from './openai-answer.js';

/** What a provider's embeddings answer holds, in OpenAI's terms. */
export interface Embedded {
  vectors: number[][];
  promptTokens: number;
}

/** What the answer to one embeddings request is read with. */
export interface EmbeddingsReply {
  provider: string;
  /** The request's model: no provider's answer names one. */
  model: string;
  base64: boolean;
  /** The vectors and token count of the provider's JSON; else what it lacks ("embeddings"). */
  read: (json: unknown, headers: ProviderHeaders) => Embedded | string;
  error: ErrorReader;
}

export function embeddingsAnswer(r: EmbeddingsReply): WholeAnswer {
  return wholeAnswer((raw, headers) => {
    const parsed = parseAnswer(raw, r.provider);
    if (!parsed.ok) return parsed;
    const e = r.read(parsed.value, headers);
    if (typeof e === 'string') return err(badResponse(r.provider, `sent an answer with no ${e}`));
    return ok(openAIEmbeddingList(e.vectors, r.model, e.promptTokens, r.base64));
  }, r.error);
}

/** OpenAI's base64 encoding: the vector as little-endian float32 bytes. */
export function float32Base64(vec: number[]): string {
  const buf = Buffer.allocUnsafe(vec.length * 4);
  for (let i = 0; i < vec.length; i++) buf.writeFloatLE(vec[i]!, i * 4);
  return buf.toString('base64');
}

/** The body of OpenAI's embeddings answer (serialized), one entry per vector in input order. */
export function openAIEmbeddingList(vectors: number[][], model: string, promptTokens: number, base64: boolean): string {
  return JSON.stringify({
    object: 'list',
    data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: base64 ? float32Base64(v) : v })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
}
