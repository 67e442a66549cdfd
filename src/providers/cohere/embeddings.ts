/**
 * Embeddings ⇄ Cohere Embed v2 (POST /v2/embed).
 *
 *   input (string | string[])  → texts
 *   dimensions                 → output_dimension (embed-v4 and newer)
 *   encoding_format            → always embedding_types ["float"]; base64 is made here from the
 *                                floats, in OpenAI's format (little-endian float32 bytes)
 *   input_type                 → Cohere's own field, required by its v3+ models; defaults to
 *                                "search_document" (OpenAI clients mostly embed what they store;
 *                                send "search_query" for queries)
 *   back: embeddings.float[i]  → data[i].embedding; meta.tokens (else billed_units).input_tokens → usage
 * Source: https://docs.cohere.com/reference/embed (schemas V2EmbedRequest,
 * EmbedByTypeResponse, ApiMeta in Cohere's OpenAPI).
 *
 * Cohere embeds texts only (token ids → 400) and takes at most 96 per call;
 * a longer list gets Cohere's own 400.
 */
import { Transform } from 'node:stream';
import { invalid, ok, type Result } from '../../shared/errors.js';
import { openAIEmbeddingList } from '../shared/embeddings.js';
import { badResponse } from '../shared/openai-answer.js';
import type { CohereEmbedRequest, CohereEmbedResponse } from './wire.js';

export interface EmbedContext {
  /** Cohere's answer names no model: the request's is reported. */
  model: string;
  base64: boolean;
}

const HANDLED = new Set(['model', 'input', 'dimensions', 'encoding_format']);

/** OpenAI parameters with no Cohere counterpart whose absence changes nothing the client can see. */
const DROPPED: Readonly<Record<string, string>> = {
  user: "an end-user id for OpenAI's abuse monitoring; Cohere's embed has no such field",
};

/** Parameters refused, with the reason. */
const REFUSED: Readonly<Record<string, string>> = {
  // The gateway asks for floats and answers in OpenAI's shape; encoding_format picks float or base64.
  embedding_types: 'the gateway sets it; use encoding_format (float or base64)',
  stream: 'embeddings are not streamed',
};

export function toCohereEmbed(body: Record<string, unknown>): Result<{ request: CohereEmbedRequest; context: EmbedContext }> {
  const input = body.input;
  const texts = typeof input === 'string' ? [input] : Array.isArray(input) && input.every((x) => typeof x === 'string') ? (input as string[]) : null;
  if (texts === null) return { ok: false, error: invalid('input: cohere embeds text only (a string or an array of strings), not token ids', 'input') };

  const out: CohereEmbedRequest = { texts, input_type: 'search_document', embedding_types: ['float'] };
  for (const key in body) {
    const value = body[key];
    if (value === null || value === undefined || HANDLED.has(key) || key in DROPPED) continue;
    if (key === 'stream' && value === false) continue; // asks for what embeddings do anyway
    if (key in REFUSED) {
      return { ok: false, error: invalid(`${key}: not supported by cohere embeddings (${REFUSED[key]})`, key, 'unsupported_parameter') };
    }
    out[key] = value; // Cohere's own: input_type, truncate, max_tokens, priority
  }
  if (body.model !== undefined) out.model = body.model;
  if (typeof body.dimensions === 'number') out.output_dimension = body.dimensions;
  return ok({ request: out, context: { model: typeof body.model === 'string' ? body.model : '', base64: body.encoding_format === 'base64' } });
}

export function fromCohereEmbed(res: CohereEmbedResponse, ctx: EmbedContext): Result<string> {
  const floats = res.embeddings?.float;
  if (!Array.isArray(floats)) {
    return { ok: false, error: badResponse('cohere', 'sent an embed answer with no float embeddings') };
  }
  const tokens = res.meta?.tokens?.input_tokens ?? res.meta?.billed_units?.input_tokens ?? 0;
  return ok(openAIEmbeddingList(floats, ctx.model, tokens, ctx.base64));
}

/** The Translator's stream side, unreachable here: toCohereEmbed refuses `stream`, so the relay reads embed answers whole. */
export function noEmbedStream(): Transform {
  return new Transform({
    transform(_chunk, _enc, done) {
      done(new Error('cohere embeddings are not streamed'));
    },
  });
}
