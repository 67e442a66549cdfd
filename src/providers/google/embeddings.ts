/**
 * OpenAI embeddings ↔ Google's embedding calls. The client's body is read
 * once (`embeddingInput`, shared with Vertex AI's `predict`); the Gemini API
 * takes it as batchEmbedContents:
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
import { Transform } from 'node:stream';
import { GatewayError, invalid, ok, type Result } from '../../shared/errors.js';
import { openAIEmbeddingList } from '../shared/embeddings.js';
import { badResponse } from '../shared/openai-answer.js';
import type { Translator } from '../types.js';
import { googleError } from './errors.js';

export interface EmbeddingInput {
  texts: string[];
  dimensions: number | undefined;
  base64: boolean;
  /** Google's task type (RETRIEVAL_QUERY, SEMANTIC_SIMILARITY, …), from the client's `task_type`. */
  taskType: string | undefined;
}

const MAPPED = new Set(['model', 'input', 'dimensions', 'encoding_format', 'task_type']);
/** `user` has no counterpart in Google's embedding calls. */
const DROPPED = new Set(['user']);

export function embeddingInput(body: Record<string, unknown>, provider: string): Result<EmbeddingInput, GatewayError> {
  for (const key of Object.keys(body)) {
    if (!MAPPED.has(key) && !DROPPED.has(key) && body[key] != null) return { ok: false, error: invalid(`${key}: not supported by provider '${provider}'`, key) };
  }
  const input = body.input;
  const texts = typeof input === 'string' ? [input] : Array.isArray(input) && input.every((x) => typeof x === 'string') ? (input as string[]) : null;
  if (texts === null) return { ok: false, error: invalid(`input: provider '${provider}' embeds text only, not token ids`, 'input') };
  if (body.task_type != null && typeof body.task_type !== 'string') return { ok: false, error: invalid('task_type: must be a string', 'task_type') };
  return ok({
    texts,
    dimensions: typeof body.dimensions === 'number' ? body.dimensions : undefined,
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

export function toBatchEmbedContents(model: string, e: EmbeddingInput): BatchEmbedContentsRequest {
  return {
    requests: e.texts.map((text) => ({
      model: `models/${model}`,
      content: { parts: [{ text }] },
      ...(e.dimensions !== undefined ? { outputDimensionality: e.dimensions } : {}),
      ...(e.taskType !== undefined ? { taskType: e.taskType } : {}),
    })),
  };
}

export function readBatchEmbedContents(json: unknown): { vectors: number[][]; tokens: number } {
  const res = json as BatchEmbedContentsResponse;
  return { vectors: (res.embeddings ?? []).map((e) => e.values ?? []), tokens: res.usageMetadata?.promptTokenCount ?? 0 };
}

/** A translator for embedding answers, whatever shape `read` takes them from. */
export function embeddingsTranslator(
  provider: string,
  model: string,
  base64: boolean,
  read: (json: unknown) => { vectors: number[][]; tokens: number },
): Translator {
  return {
    response(raw) {
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        return { ok: false, error: badResponse(provider, 'sent an answer that is not JSON') };
      }
      const { vectors, tokens } = read(json);
      return ok(openAIEmbeddingList(vectors, model, tokens, base64));
    },
    // embeddingInput refuses `stream`, so an embedding answer is never streamed.
    stream: () =>
      new Transform({
        transform(_chunk, _enc, done) {
          done(new Error('embeddings are not streamed'));
        },
      }),
    error: googleError,
  };
}
