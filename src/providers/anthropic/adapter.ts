/**
 * Anthropic Messages API adapter.
 *
 * Wire format (https://docs.anthropic.com/en/api/messages,
 * https://docs.anthropic.com/en/api/versioning, …/build-with-claude/streaming,
 * …/api/errors):
 *
 *   POST https://api.anthropic.com/v1/messages
 *   x-api-key: <key>
 *   anthropic-version: 2023-06-01
 *   content-type: application/json
 *   {"model", "max_tokens" (required), "messages": [{role: user|assistant, content: [blocks]}],
 *    "system", "stop_sequences", "temperature", "top_p", "top_k", "tools", "tool_choice",
 *    "thinking", "metadata": {"user_id"}, "output_config": {"format"}, "stream", …}
 *   → 200 {"id": "msg_…", "type": "message", "role": "assistant", "model",
 *          "content": [text | tool_use | thinking | redacted_thinking …],
 *          "stop_reason", "stop_sequence",
 *          "usage": {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}}
 *   → stream: text/event-stream of named events (see stream.ts)
 *   → error: {"type": "error", "error": {"type", "message"}, "request_id"} with its HTTP status
 *
 * The translation itself lives in request.ts, response.ts and stream.ts
 * (pure, reused by the Vertex AI adapter for Claude on Vertex). This file
 * only decides where the call goes and with which credential:
 *
 * - Base URL: https://api.anthropic.com/v1, or the custom host. A custom host
 *   may be given as Anthropic's SDKs take it (`http://host:port`, no /v1) or
 *   as this gateway's contract writes hosts (`http://host:port/v1`): /v1 is
 *   added when missing.
 * - Credential: the target's api_key, else the client's `Authorization:
 *   Bearer <key>` (routing by headers), sent as x-api-key. Without either, a
 *   400 naming api_key — unless a custom host is set, which may add its own
 *   credential (the spec requires api_key only without custom_host).
 * - /completions and /embeddings: Anthropic's current API serves neither
 *   (its legacy Text Completions API is closed to current models): a 400.
 * - Generic proxy: base + the client's path, with the credential and version
 *   headers, nothing translated. Pass-through mode on /chat/completions
 *   likewise sends the client's own body to /v1/messages untouched.
 */
import { invalid, ok, type GatewayError, type Result } from '../../shared/errors.js';
import { type CallInput, type ProviderAdapter, type ProviderCall, type ResolvedTarget } from '../types.js';
import { ENDPOINT_PATHS } from '../../shared/endpoint.js';
import { replyOptions, toAnthropicRequest } from './chat/request.js';
import { anthropicChatTranslator } from './translator.js';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
/** The one version of the Messages API (https://docs.anthropic.com/en/api/versioning). */
export const ANTHROPIC_VERSION = '2023-06-01';

export const anthropicAdapter: ProviderAdapter = {
  name: 'anthropic',
  prepare({ target, endpoint, path, body }: CallInput): Result<ProviderCall, GatewayError> {
    if (endpoint === 'completions' || endpoint === 'embeddings') {
      return { ok: false, error: invalid(`provider 'anthropic' does not serve ${ENDPOINT_PATHS[endpoint]}`, 'provider') };
    }
    const key = apiKey(target);
    if (!key.ok) return key;
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
    if (key.value !== undefined) headers['x-api-key'] = key.value;
    const base = apiBase(target.customHost);

    if (endpoint === 'proxy') return ok({ url: base + path, headers });
    if (body === null) return ok({ url: `${base}/messages`, headers });
    const request = toAnthropicRequest(body);
    if (!request.ok) return request;
    return ok({
      url: `${base}/messages`,
      headers,
      body: JSON.stringify(request.value),
      translator: anthropicChatTranslator(replyOptions(body)),
    });
  },
};

export function apiBase(customHost: string | undefined): string {
  if (customHost === undefined) return ANTHROPIC_BASE_URL;
  const base = customHost.replace(/\/+$/, '');
  return base.endsWith('/v1') ? base : `${base}/v1`;
}

function apiKey(target: ResolvedTarget): Result<string | undefined, GatewayError> {
  const key = target.node.api_key;
  if (key !== undefined) {
    return key.trim() === '' ? { ok: false, error: invalid('api_key: must not be empty', 'api_key') } : ok(key);
  }
  const auth = target.clientAuthorization;
  if (auth !== undefined) {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
    return token === undefined
      ? { ok: false, error: invalid('Authorization: must be "Bearer <Anthropic API key>"', 'Authorization') }
      : ok(token);
  }
  if (target.customHost !== undefined) return ok(undefined);
  return { ok: false, error: invalid("provider 'anthropic' needs an api_key (or an Authorization header)", 'api_key') };
}
