/**
 * Anthropic's Claude models on Vertex AI: the Messages API behind Vertex's
 * raw-predict methods. Wire format (https://docs.anthropic.com/en/api/claude-on-vertex-ai,
 * https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude,
 * and Anthropic's own Vertex SDK, packages/vertex-sdk/src/client.ts):
 *
 *   POST …/publishers/anthropic/models/{model}:rawPredict        (stream: false or absent)
 *   POST …/publishers/anthropic/models/{model}:streamRawPredict  (stream: true)
 *   Authorization: Bearer <access token>   (no x-api-key, no anthropic-version header)
 *   body: the Messages API body without `model` (the URL names it), with
 *         "anthropic_version": "vertex-2023-10-16"; `stream: true` stays in it.
 *   → the Messages API's answers as they are: a message, named SSE events, or
 *     Anthropic's {"type":"error","error":{type, message}} with its status.
 *     Vertex's own frontend (auth, quota, unknown model) answers google.rpc.Status.
 *
 * The translation is the anthropic adapter's, reused as it is; this file only
 * reshapes the body for Vertex and tells the two kinds of errors apart.
 */
import { ok, type GatewayError, type Result } from '../../../shared/errors.js';
import { anthropicError } from '../../anthropic/errors.js';
import { replyOptions, toAnthropicRequest } from '../../anthropic/chat/request.js';
import { anthropicChatTranslator } from '../../anthropic/translator.js';
import type { AnthropicRequest } from '../../anthropic/wire.js';
import { googleError } from '../../google/errors.js';
import type { ProviderHeaders } from '../../types.js';
import type { PublisherCall } from '../publishers.js';

/** The one Messages API version Vertex takes, in the body (Anthropic's SDK sends this). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** The Messages body as Vertex takes it: every field but `model`, plus the version. */
export type VertexClaudeRequest = { [K in keyof AnthropicRequest as K extends 'model' ? never : K]: AnthropicRequest[K] } & {
  anthropic_version: string;
};

export function claudeChat(body: Record<string, unknown>): Result<PublisherCall, GatewayError> {
  const request = toAnthropicRequest(body);
  if (!request.ok) return request;
  const { model: _inUrl, ...fields } = request.value;
  const vertexBody: VertexClaudeRequest = { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...fields };
  return ok({
    method: vertexBody.stream === true ? 'streamRawPredict' : 'rawPredict',
    body: JSON.stringify(vertexBody),
    translator: { ...anthropicChatTranslator(replyOptions(body)), error: vertexClaudeError },
  });
}

/** Claude's own errors are Anthropic's body (type "error"); Vertex's frontend answers in Google's shape. */
export function vertexClaudeError(status: number, raw: Buffer, headers?: ProviderHeaders): GatewayError {
  let type: unknown;
  try {
    type = (JSON.parse(raw.toString('utf8')) as { type?: unknown } | null)?.type;
  } catch {
    // Not JSON: either reader quotes it.
  }
  return type === 'error' ? anthropicError(status, raw, headers) : googleError(status, raw);
}
