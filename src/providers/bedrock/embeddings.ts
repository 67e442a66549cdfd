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
 *
 * Every other parameter meets the rule of INVOKE_EMBED_PARAMS.
 */
import { ok } from '../../shared/errors.js';
import type { ProviderHeaders } from '../contract.js';
import type { Embedded } from '../shared/embeddings.js';
import { embeddingTexts, modelOf, refuse, type EmbeddingsRequest } from '../shared/openai-request.js';
import { applyPolicy, FALSE, mapped, refused, type ParamPolicy } from '../shared/params.js';
import { embeddingsTranslator } from '../shared/translator.js';
import { bedrockError } from './errors.js';
import type { CohereEmbedRequest, CohereEmbedResponse, TitanEmbedRequest, TitanEmbedResponse } from './wire.js';

type Family = 'titan-v1' | 'titan-v2' | 'cohere';

/** The model's name inside an id or ARN (`…/foundation-model/amazon.titan-embed-text-v2:0`, `us.cohere.embed-v4:0`). */
function familyOf(model: string): Family | undefined {
  const name = model.slice(model.lastIndexOf('/') + 1);
  if (name.includes('amazon.titan-embed-text-v2')) return 'titan-v2';
  if (name.includes('amazon.titan-embed-text-v1') || name.includes('amazon.titan-embed-g1-text-02')) return 'titan-v1';
  if (name.includes('cohere.embed-')) return 'cohere';
  return undefined;
}

export const INVOKE_EMBED_PARAMS: ParamPolicy = {
  rules: {
    model: mapped('the modelId in the path'),
    input: mapped('inputText (Titan: one text a call) | texts (Cohere)'),
    dimensions: mapped('dimensions (Titan v2) | output_dimension (Cohere); Titan v1 has 1536, fixed'),
    encoding_format: mapped('base64 made by the gateway from the floats'),
    user: mapped('X-Amzn-Bedrock-Request-Metadata header {"user": …}'),
    stream: refused('embeddings are not streamed', FALSE),
  },
  // The model's own body: normalize, input_type, truncate, embedding_types, …
  others: 'passed',
};

/** Cohere requires input_type; documents to store are what an OpenAI-style client embeds most. */
const DEFAULT_COHERE_INPUT_TYPE = 'search_document';

export const invokeEmbeddings = embeddingsTranslator({
  api: 'Bedrock InvokeModel (Titan and Cohere embedding models)',
  params: INVOKE_EMBED_PARAMS,
  translate(body: EmbeddingsRequest) {
    const model = modelOf(body, 'bedrock');
    if (!model.ok) return model;
    const family = familyOf(model.value);
    if (family === undefined) return refuse('model', `'${model.value}' is not a Titan text or Cohere embedding model, the embedding models bedrock is served for`);
    const native = applyPolicy(body, INVOKE_EMBED_PARAMS, 'bedrock');
    if (!native.ok) return native;
    const texts = embeddingTexts(body, 'bedrock');
    if (!texts.ok) return texts;
    const { dimensions } = body;

    let request: TitanEmbedRequest | CohereEmbedRequest;
    if (family === 'cohere') {
      request = { texts: texts.value, input_type: DEFAULT_COHERE_INPUT_TYPE, ...native.value };
      if (dimensions !== undefined) request.output_dimension = dimensions;
    } else {
      if (texts.value.length !== 1) return refuse('input', `${model.value} embeds one text per call; send a single input (Cohere models take lists)`);
      if (family === 'titan-v1' && dimensions !== undefined && dimensions !== 1536) return refuse('dimensions', `${model.value} has 1536 dimensions, fixed`);
      request = { ...native.value, inputText: texts.value[0]! };
      if (family === 'titan-v2' && dimensions !== undefined) request.dimensions = dimensions;
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (typeof body.user === 'string') headers['x-amzn-bedrock-request-metadata'] = JSON.stringify({ user: body.user });
    const read = family === 'cohere' ? readCohere : readTitan;
    return ok({ request, headers, reply: { provider: 'bedrock', model: model.value, base64: body.encoding_format === 'base64', read, error: bedrockError } });
  },
});

function readTitan(json: unknown): Embedded | string {
  const res = json as TitanEmbedResponse | null;
  return res === null || !Array.isArray(res.embedding) ? 'embedding' : { vectors: [res.embedding], promptTokens: res.inputTextTokenCount ?? 0 };
}

function readCohere(json: unknown, headers: ProviderHeaders): Embedded | string {
  const e = (json as CohereEmbedResponse | null)?.embeddings;
  let vectors: number[][];
  if (Array.isArray(e)) vectors = e;
  // With embedding_types Cohere answers per type: floats are OpenAI's, else the first type asked for.
  else if (e != null && typeof e === 'object') vectors = e.float ?? Object.values(e)[0] ?? [];
  else return 'embeddings';
  // Cohere's body has no token count; InvokeModel reports it in a header.
  const count = headers['x-amzn-bedrock-input-token-count'];
  return { vectors, promptTokens: Number(Array.isArray(count) ? count[0] : count) || 0 };
}
