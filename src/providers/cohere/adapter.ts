/**
 * Cohere (API v2). Wire format, from Cohere's API reference
 * (https://docs.cohere.com/reference/chat, /reference/chat-stream,
 * /reference/embed; the OpenAPI file behind them is `cohere-openapi.yaml` in
 * github.com/cohere-ai/cohere-developer-experience):
 *
 *   POST https://api.cohere.com/v2/chat    Authorization: Bearer <key>, JSON body
 *     {model, messages[{role: system|user|assistant|tool, content, tool_calls, tool_plan, tool_call_id}],
 *      tools[{type: function, function{name, description, parameters}}], strict_tools,
 *      tool_choice: REQUIRED|NONE, response_format{type: text|json_object, json_schema},
 *      max_tokens, stop_sequences, temperature, seed, frequency_penalty, presence_penalty,
 *      k, p, logprobs, thinking{type, token_budget}, documents, citation_options, safety_mode, priority, stream}
 *     → {id, finish_reason: COMPLETE|STOP_SEQUENCE|MAX_TOKENS|TOOL_CALL|ERROR|TIMEOUT,
 *        message{role, content[{type: text|thinking}], tool_calls, tool_plan, citations},
 *        usage{billed_units{input_tokens, output_tokens}, tokens{input_tokens, output_tokens}, cached_tokens},
 *        logprobs[{text, token_ids, logprobs}]}
 *     stream: true → text/event-stream of `event: <type>` / `data: {json}` pairs ending in `data: [DONE]`
 *     (chat/stream.ts lists the events)
 *   POST https://api.cohere.com/v2/embed
 *     {model, texts, input_type, embedding_types, output_dimension, truncate, max_tokens}
 *     → {id, embeddings{float[][]}, texts, meta{billed_units, tokens}}
 *   errors: any status, `{"id"?: string, "message": string}`
 *
 * Mapping: chat/request.ts, chat/response.ts, chat/stream.ts, embeddings.ts,
 * errors.ts.
 *
 * Not served: /completions. Cohere's text-completion endpoint, Generate
 * (/v1/generate), is deprecated — "Legacy and no longer maintained" in its
 * reference — and Cohere's migration guide sends its users to Chat.
 *
 * Where requests go:
 *  - `custom_host` replaces `https://api.cohere.com`: everything before
 *    Cohere's own version segment (so `http://127.0.0.1:9000`, not …/v2).
 *  - Generic proxy: Cohere's paths carry their own version (/v1/tokenize,
 *    /v2/rerank), so the client names it after the gateway's /v1. A path that
 *    starts with a version segment goes as it is (`/v1/v2/rerank` →
 *    `https://api.cohere.com/v2/rerank`); any other keeps the /v1 the client
 *    called (`/v1/tokenize` → `https://api.cohere.com/v1/tokenize`). No
 *    translation: Cohere's answer comes back as it is.
 *  - Pass-through mode (config `passthrough`): chat and embeddings bodies go
 *    unchanged to /v2/chat and /v2/embed, and the answer comes back unchanged.
 *
 * Credential: the target's api_key, else the client's `Authorization: Bearer …`.
 */
import { err, ok } from '../../shared/errors.js';
import type { ProviderAdapter, Provider } from '../contract.js';
import { apiKey, needsKey, trimSlash } from '../shared/target.js';
import { cohereChat } from './chat/request.js';
import { cohereEmbed } from './embeddings.js';
import type { CohereSettings } from './settings.js';

const COHERE_BASE = 'https://api.cohere.com';

const adapter: ProviderAdapter<CohereSettings> = {
  name: 'cohere',
  lacks: {
    completions: "Cohere's Generate API (/v1/generate) is deprecated and no longer maintained; use /chat/completions",
  },
  prepare({ target, endpoint, path, body }) {
    const key = apiKey(target, 'cohere');
    if (!key.ok) return key;
    if (key.value === undefined) return err(needsKey('cohere'));
    const headers: Record<string, string> = { authorization: `Bearer ${key.value}` };
    const base = trimSlash(target.customHost ?? COHERE_BASE);

    if (endpoint === 'proxy') return ok({ kind: 'relayed', url: base + proxyPath(path), headers, addedUsage: false });
    const url = base + (endpoint === 'chat' ? '/v2/chat' : '/v2/embed');
    if (body === null) return ok({ kind: 'relayed', url, headers, addedUsage: false }); // pass-through mode
    const request = endpoint === 'chat' ? cohereChat.request(body) : cohereEmbed.request(body);
    if (!request.ok) return request;
    return ok({ kind: 'translated', url, headers, body: request.value.body, answer: request.value.answer });
  },
};

export const cohere: Provider<CohereSettings> = { adapter, translators: { v2: { chat: cohereChat, embeddings: cohereEmbed } } };

function proxyPath(path: string): string {
  return /^\/v\d+(?:[/?]|$)/.test(path) ? path : '/v1' + path;
}
