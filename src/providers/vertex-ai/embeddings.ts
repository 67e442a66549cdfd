/**
 * OpenAI embeddings as Vertex AI's text-embedding `predict` call
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/text-embeddings-api):
 *
 *   POST …/publishers/google/models/{model}:predict
 *   {"instances":[{"content":"…","task_type":"RETRIEVAL_QUERY"}],"parameters":{"outputDimensionality":256}}
 *   → {"predictions":[{"embeddings":{"values":[…],"statistics":{"token_count":3,"truncated":false}}}]}
 *
 * Usage is the sum of the per-input token counts.
 */
import { ok } from '../../shared/errors.js';
import { embeddingInput, EMBED_PARAMS } from '../google/embeddings.js';
import { googleError } from '../google/errors.js';
import type { Embedded } from '../shared/embeddings.js';
import { embeddingsTranslator } from '../shared/translator.js';

interface PredictRequest {
  instances: { content: string; task_type?: string }[];
  parameters?: { outputDimensionality?: number };
}

interface PredictResponse {
  predictions?: { embeddings?: { values?: number[]; statistics?: { token_count?: number } } }[];
}

export const predictEmbeddings = embeddingsTranslator({
  api: 'Vertex AI predict (text embeddings)',
  params: EMBED_PARAMS,
  translate(body) {
    const input = embeddingInput(body, 'vertex-ai');
    if (!input.ok) return input;
    const { model, texts, dimensions, taskType, base64 } = input.value;
    const request: PredictRequest = {
      instances: texts.map((content) => (taskType !== undefined ? { content, task_type: taskType } : { content })),
    };
    if (dimensions !== undefined) request.parameters = { outputDimensionality: dimensions };
    return ok({ request, reply: { provider: 'vertex-ai', model, base64, read: readPredict, error: googleError } });
  },
});

function readPredict(json: unknown): Embedded {
  const predictions = (json as PredictResponse).predictions ?? [];
  return {
    vectors: predictions.map((p) => p.embeddings?.values ?? []),
    promptTokens: predictions.reduce((n, p) => n + (p.embeddings?.statistics?.token_count ?? 0), 0),
  };
}
