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
 * The translation is Anthropic's (anthropic/chat/), reused as it is; this
 * file only reshapes the body for Vertex, and errors.ts tells the two kinds of
 * errors apart.
 */
import { ok, type Result } from '../../../shared/errors.js';
import { MESSAGES_PARAMS, messagesReading, toMessagesRequest } from '../../anthropic/chat/request.js';
import type { AnthropicRequest } from '../../anthropic/wire.js';
import type { ChatRequest } from '../../shared/openai-request.js';
import { chatTranslator } from '../../shared/translator.js';
import { vertexClaudeError } from '../errors.js';

/** The one Messages API version Vertex takes, in the body (Anthropic's SDK sends this). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** The Messages body as Vertex takes it: every field but `model`, plus the version. */
export type VertexClaudeRequest = { [K in keyof AnthropicRequest as K extends 'model' ? never : K]: AnthropicRequest[K] } & {
  anthropic_version: string;
};

export const claudeOnVertex = chatTranslator({
  api: 'Anthropic Messages on Vertex AI (rawPredict)',
  params: MESSAGES_PARAMS,
  translate: toVertexClaude,
  read: (body) => messagesReading(body, vertexClaudeError),
});

function toVertexClaude(body: ChatRequest): Result<VertexClaudeRequest> {
  const request = toMessagesRequest(body);
  if (!request.ok) return request;
  const { model: _inUrl, ...fields } = request.value;
  return ok({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...fields });
}
