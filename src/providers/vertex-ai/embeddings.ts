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
import { ok, type GatewayError, type Result } from '../../shared/errors.js';
import { embeddingInput, embeddingsTranslator } from '../google/embeddings.js';
import type { PublisherCall } from './publishers.js';

interface PredictRequest {
  instances: { content: string; task_type?: string }[];
  parameters?: { outputDimensionality?: number };
}

interface PredictResponse {
  predictions?: { embeddings?: { values?: number[]; statistics?: { token_count?: number } } }[];
}

export function predictEmbeddings(body: Record<string, unknown>, model: string, provider: string): Result<PublisherCall, GatewayError> {
  const input = embeddingInput(body, provider);
  if (!input.ok) return input;
  const { texts, dimensions, taskType, base64 } = input.value;
  const request: PredictRequest = {
    instances: texts.map((content) => (taskType !== undefined ? { content, task_type: taskType } : { content })),
  };
  if (dimensions !== undefined) request.parameters = { outputDimensionality: dimensions };
  return ok({ method: 'predict', body: JSON.stringify(request), translator: embeddingsTranslator(provider, model, base64, readPredict) });
}

function readPredict(json: unknown): { vectors: number[][]; tokens: number } {
  const predictions = (json as PredictResponse).predictions ?? [];
  return {
    vectors: predictions.map((p) => p.embeddings?.values ?? []),
    tokens: predictions.reduce((n, p) => n + (p.embeddings?.statistics?.token_count ?? 0), 0),
  };
}
