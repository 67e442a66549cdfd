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
 * The translation lives in chat/ (request.ts, response.ts, stream.ts: pure,
 * reused by Vertex AI for Claude on Vertex). This file only decides where the
 * call goes and with which credential:
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
 *   (its legacy Text Completions API is closed to current models).
 * - Generic proxy: base + the client's path, with the credential and version
 *   headers, nothing translated. Pass-through mode on /chat/completions
 *   likewise sends the client's own body to /v1/messages untouched.
 */
import { err, ok } from '../../shared/errors.js';
import type { ProviderAdapter, Provider } from '../contract.js';
import { apiKey, needsKey, trimSlash } from '../shared/target.js';
import { messagesChat } from './chat/request.js';
import type { AnthropicSettings } from './settings.js';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
/** The one version of the Messages API (https://docs.anthropic.com/en/api/versioning). */
export const ANTHROPIC_VERSION = '2023-06-01';

const adapter: ProviderAdapter<AnthropicSettings> = {
  name: 'anthropic',
  lacks: {
    completions: "Anthropic's Text Completions API is closed to current models; use /chat/completions",
    embeddings: 'Anthropic has no embedding models',
  },
  prepare({ target, endpoint, path, body }) {
    const key = apiKey(target, 'anthropic');
    if (!key.ok) return key;
    if (key.value === undefined && target.customHost === undefined) return err(needsKey('anthropic'));
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
    if (key.value !== undefined) headers['x-api-key'] = key.value;
    const base = apiBase(target.customHost);

    if (endpoint === 'proxy') return ok({ kind: 'relayed', url: base + path, headers, addedUsage: false });
    if (body === null) return ok({ kind: 'relayed', url: `${base}/messages`, headers, addedUsage: false });
    const request = messagesChat.request(body);
    if (!request.ok) return request;
    return ok({ kind: 'translated', url: `${base}/messages`, headers, body: request.value.body, answer: request.value.answer });
  },
};

export const anthropic: Provider<AnthropicSettings> = { adapter, translators: { messages: { chat: messagesChat } } };

export function apiBase(customHost: string | undefined): string {
  if (customHost === undefined) return ANTHROPIC_BASE_URL;
  const base = trimSlash(customHost);
  return base.endsWith('/v1') ? base : `${base}/v1`;
}
