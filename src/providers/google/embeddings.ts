/**
 * OpenAI embeddings ↔ Google's embedding calls. The client's body is read
 * once (`embeddingInput`, by the rule of EMBED_PARAMS, shared with Vertex
 * AI's `predict`); the Gemini API takes it as batchEmbedContents:
 *
 *   POST /v1beta/models/{model}:batchEmbedContents
 *   {"requests":[{"model":"models/{model}","content":{"parts":[{"text":"…"}]},
 *                 "outputDimensionality":256,"taskType":"RETRIEVAL_QUERY"}]}
 *   → {"embeddings":[{"values":[0.1,…]}]}
 *
 * (https://ai.google.dev/api/embeddings#method:-models.batchembedcontents).
 * Google returns floats only; `encoding_format: "base64"` is produced here
 * as OpenAI does it (little-endian float32). The batch answer carries no
 * token count, so usage is 0 unless a usageMetadata is present.
 */
import { ok, type Result } from '../../shared/errors.js';
import type { EmbeddingsTranslator } from '../contract.js';
import type { Embedded } from '../shared/embeddings.js';
import { embeddingTexts, refuse, type EmbeddingsRequest } from '../shared/openai-request.js';
import { applyPolicy, dropped, FALSE, mapped, refused, type ParamPolicy } from '../shared/params.js';
import { embeddingsTranslator } from '../shared/translator.js';
import { googleError } from './errors.js';
import { modelId } from './model.js';

export interface EmbeddingInput {
  model: string;
  texts: string[];
  dimensions: number | undefined;
  base64: boolean;
  /** Google's task type (RETRIEVAL_QUERY, SEMANTIC_SIMILARITY, …), from the client's `task_type`. */
  taskType: string | undefined;
}

export const EMBED_PARAMS: ParamPolicy = {
  rules: {
    model: mapped('the model in the URL'),
    input: mapped('one request (instance) per text'),
    dimensions: mapped('outputDimensionality'),
    encoding_format: mapped('base64 made by the gateway from the floats'),
    task_type: mapped('taskType (task_type on Vertex AI)'),
    user: dropped("Google's embedding calls have no end-user field"),
    stream: refused('embeddings are not streamed', FALSE),
  },
  others: 'refused',
};

/** The client's embeddings body as Google's calls take it. */
export function embeddingInput(body: EmbeddingsRequest, provider: string): Result<EmbeddingInput> {
  const model = modelId(body);
  if (!model.ok) return model;
  const checked = applyPolicy(body, EMBED_PARAMS, provider);
  if (!checked.ok) return checked;
  const texts = embeddingTexts(body, provider);
  if (!texts.ok) return texts;
  if (body.task_type != null && typeof body.task_type !== 'string') return refuse('task_type', 'must be a string');
  return ok({
    model: model.value,
    texts: texts.value,
    dimensions: body.dimensions,
    base64: body.encoding_format === 'base64',
    taskType: typeof body.task_type === 'string' ? body.task_type : undefined,
  });
}

interface BatchEmbedContentsRequest {
  requests: { model: string; content: { parts: { text: string }[] }; outputDimensionality?: number; taskType?: string }[];
}

interface BatchEmbedContentsResponse {
  embeddings?: { values?: number[] }[];
  usageMetadata?: { promptTokenCount?: number };
}

/** The Gemini API's translator. */
export function batchEmbed(provider: string): EmbeddingsTranslator {
  return embeddingsTranslator({
    api: 'Gemini batchEmbedContents',
    params: EMBED_PARAMS,
    translate(body) {
      const input = embeddingInput(body, provider);
      if (!input.ok) return input;
      const e = input.value;
      const request: BatchEmbedContentsRequest = {
        requests: e.texts.map((text) => ({
          model: `models/${e.model}`,
          content: { parts: [{ text }] },
          ...(e.dimensions !== undefined ? { outputDimensionality: e.dimensions } : {}),
          ...(e.taskType !== undefined ? { taskType: e.taskType } : {}),
        })),
      };
      return ok({ request, reply: { provider, model: e.model, base64: e.base64, read: readBatchEmbedContents, error: googleError } });
    },
  });
}

function readBatchEmbedContents(json: unknown): Embedded {
  const res = json as BatchEmbedContentsResponse;
  return { vectors: (res.embeddings ?? []).map((e) => e.values ?? []), promptTokens: res.usageMetadata?.promptTokenCount ?? 0 };
}
