/**
 * OpenAI embeddings ⇄ Bedrock InvokeModel (`POST /model/{modelId}/invoke`)
 * for the Titan and Cohere embedding models. Converse has no embeddings, so
 * the body is the model family's own. Sources: Bedrock user guide, "Amazon
 * Titan Embeddings Text" and "Cohere Embed models" parameter pages; the
 * `X-Amzn-Bedrock-Input-Token-Count` response header of InvokeModel.
 *
 *   Titan text v2  amazon.titan-embed-text-v2:0
 *     {inputText, dimensions?, normalize?}  →  {embedding: number[], inputTextTokenCount}
 *   Titan text v1  amazon.titan-embed-text-v1, amazon.titan-embed-g1-text-02
 *     {inputText} (1536 dimensions, fixed) →  {embedding, inputTextTokenCount}
 *   Cohere         cohere.embed-english-v3, cohere.embed-multilingual-v3, cohere.embed-v4:0
 *     {texts, input_type, output_dimension?, truncate?, embedding_types?}
 *                                          →  {id, embeddings: number[][] | {float: number[][], …}, texts}
 *
 *   input          → inputText (Titan takes one text per call) | texts
 *   dimensions     → dimensions (Titan v2) | output_dimension (Cohere)
 *   encoding_format base64 → the floats encoded by the gateway as OpenAI does (float32 little-endian)
 *   user           → X-Amzn-Bedrock-Request-Metadata header {"user": …}
 *   other fields   → the model's own body as given (normalize, input_type, truncate, embedding_types, …)
 *   back: {object:'list', data:[{object:'embedding', index, embedding}], model, usage}
 */
import { err, invalid, ok, type GatewayError, type Result } from '../../shared/errors.js';
import { openAIEmbeddingList } from '../shared/embeddings.js';
import { badResponse } from '../shared/openai-answer.js';
import type { ProviderHeaders } from '../types.js';
import type { CohereEmbedRequest, CohereEmbedResponse, TitanEmbedRequest, TitanEmbedResponse } from './wire.js';

type Family = 'titan-v1' | 'titan-v2' | 'cohere';

export interface EmbedContext {
  model: string;
  family: Family;
  base64: boolean;
}

/** The model's name inside an id or ARN (`…/foundation-model/amazon.titan-embed-text-v2:0`, `us.cohere.embed-v4:0`). */
function familyOf(model: string): Family | undefined {
  const name = model.slice(model.lastIndexOf('/') + 1);
  if (name.includes('amazon.titan-embed-text-v2')) return 'titan-v2';
  if (name.includes('amazon.titan-embed-text-v1') || name.includes('amazon.titan-embed-g1-text-02')) return 'titan-v1';
  if (name.includes('cohere.embed-')) return 'cohere';
  return undefined;
}

/** Fields of OpenAI's embeddings request, each mapped below. */
const MAPPED = new Set(['model', 'input', 'dimensions', 'encoding_format', 'user', 'stream']);

/** Cohere requires input_type; documents to store are what an OpenAI-style client embeds most. */
const DEFAULT_COHERE_INPUT_TYPE = 'search_document';

export interface EmbedCall {
  body: TitanEmbedRequest | CohereEmbedRequest;
  headers: Record<string, string>;
  context: EmbedContext;
}

export function toInvokeEmbedding(body: Record<string, unknown>): Result<EmbedCall> {
  const model = body.model;
  if (typeof model !== 'string' || model === '') return err(invalid('model: bedrock needs a model id or ARN', 'model'));
  const family = familyOf(model);
  if (family === undefined) {
    return err(invalid(`model: '${model}' is not a Titan text or Cohere embedding model, the embedding models bedrock is served for`, 'model'));
  }
  if (body.stream === true) return err(invalid('stream: embeddings are not streamed', 'stream'));
  const input = body.input;
  const texts = typeof input === 'string' ? [input] : (input as unknown[]);
  if (!texts.every((t): t is string => typeof t === 'string')) {
    return err(invalid('input: bedrock embedding models take text, not token ids', 'input'));
  }
  const dimensions = body.dimensions as number | undefined;
  const native: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (!MAPPED.has(k)) native[k] = v;

  let request: TitanEmbedRequest | CohereEmbedRequest;
  if (family === 'cohere') {
    request = { texts, input_type: DEFAULT_COHERE_INPUT_TYPE, ...native };
    if (dimensions !== undefined) request.output_dimension = dimensions;
  } else {
    if (texts.length !== 1) {
      return err(invalid(`input: ${model} embeds one text per call; send a single input (Cohere models take lists)`, 'input'));
    }
    request = { ...native, inputText: texts[0]! };
    if (family === 'titan-v2' && dimensions !== undefined) request.dimensions = dimensions;
    if (family === 'titan-v1' && dimensions !== undefined && dimensions !== 1536) {
      return err(invalid(`dimensions: ${model} has 1536 dimensions, fixed`, 'dimensions'));
    }
  }
  const headers: Record<string, string> = {};
  if (typeof body.user === 'string') headers['x-amzn-bedrock-request-metadata'] = JSON.stringify({ user: body.user });
  return ok({ body: request, headers, context: { model, family, base64: body.encoding_format === 'base64' } });
}

export function fromInvokeEmbedding(raw: Buffer, ctx: EmbedContext, headers?: ProviderHeaders): Result<string, GatewayError> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return err(badResponse('bedrock', 'answered with JSON that does not parse'));
  }
  let vectors: number[][];
  let tokens: number;
  if (ctx.family === 'cohere') {
    const e = (parsed as CohereEmbedResponse | null)?.embeddings;
    if (Array.isArray(e)) vectors = e;
    // With embedding_types Cohere answers per type: floats are OpenAI's, else the first type asked for.
    else if (e != null && typeof e === 'object') vectors = e.float ?? Object.values(e)[0] ?? [];
    else return err(badResponse('bedrock', 'answered without embeddings'));
    // Cohere's body has no token count; InvokeModel reports it in a header.
    const count = headers?.['x-amzn-bedrock-input-token-count'];
    tokens = Number(Array.isArray(count) ? count[0] : count) || 0;
  } else {
    const res = parsed as TitanEmbedResponse | null;
    if (res === null || !Array.isArray(res.embedding)) return err(badResponse('bedrock', 'answered without an embedding'));
    vectors = [res.embedding];
    tokens = res.inputTextTokenCount ?? 0;
  }
  return ok(openAIEmbeddingList(vectors, ctx.model, tokens, ctx.base64));
}
