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
 * a longer list gets Cohere's own 400. Every other parameter meets the rule
 * of EMBED_PARAMS; Cohere's own (input_type, truncate, max_tokens, priority)
 * are passed on.
 */
import { ok } from '../../shared/errors.js';
import { embeddingTexts, isSet, type EmbeddingsRequest } from '../shared/openai-request.js';
import { applyPolicy, dropped, FALSE, mapped, refused, type ParamPolicy } from '../shared/params.js';
import { embeddingsTranslator } from '../shared/translator.js';
import { cohereError } from './errors.js';
import type { CohereEmbedRequest, CohereEmbedResponse } from './wire.js';

export const EMBED_PARAMS: ParamPolicy = {
  rules: {
    model: mapped('model'),
    input: mapped('texts'),
    dimensions: mapped('output_dimension'),
    encoding_format: mapped('embedding_types ["float"]; base64 made by the gateway from the floats'),
    user: dropped("an end-user id for OpenAI's abuse monitoring; Cohere's embed has no such field"),
    // The gateway asks for floats and answers in OpenAI's shape; encoding_format picks float or base64.
    embedding_types: refused('the gateway sets it; use encoding_format (float or base64)'),
    stream: refused('embeddings are not streamed', FALSE),
  },
  others: 'passed',
};

export const cohereEmbed = embeddingsTranslator({
  api: 'Cohere Embed v2',
  params: EMBED_PARAMS,
  translate(body: EmbeddingsRequest) {
    const texts = embeddingTexts(body, 'cohere');
    if (!texts.ok) return texts;
    const native = applyPolicy(body, EMBED_PARAMS, 'cohere');
    if (!native.ok) return native;
    const out: CohereEmbedRequest = { texts: texts.value, input_type: 'search_document', embedding_types: ['float'], ...native.value };
    if (isSet(body.model)) out.model = body.model;
    if (typeof body.dimensions === 'number') out.output_dimension = body.dimensions;
    // Cohere's answer names no model: the request's is reported.
    const model = typeof body.model === 'string' ? body.model : '';
    return ok({ request: out, reply: { provider: 'cohere', model, base64: body.encoding_format === 'base64', read: readEmbed, error: cohereError } });
  },
});

function readEmbed(json: unknown) {
  const res = json as CohereEmbedResponse;
  const floats = res.embeddings?.float;
  if (!Array.isArray(floats)) return 'float embeddings';
  return { vectors: floats, promptTokens: res.meta?.tokens?.input_tokens ?? res.meta?.billed_units?.input_tokens ?? 0 };
}
