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
 *     (chat-stream.ts lists the events)
 *   POST https://api.cohere.com/v2/embed
 *     {model, texts, input_type, embedding_types, output_dimension, truncate, max_tokens}
 *     → {id, embeddings{float[][]}, texts, meta{billed_units, tokens}}
 *   errors: any status, `{"id"?: string, "message": string}`
 *
 * Mapping: chat.ts (request and whole answer), chat-stream.ts (stream),
 * embeddings.ts, errors.ts.
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
import { invalid, ok, type GatewayError, type Result } from '../../shared/errors.js';
import type { CallInput, ProviderAdapter, ProviderCall, Translator } from '../types.js';
import { fromCohereChat, toCohereChat, type ChatContext } from './chat/request.js';
import { chatStream } from './chat/stream.js';
import { fromCohereEmbed, noEmbedStream, toCohereEmbed, type EmbedContext } from './embeddings.js';
import { cohereError } from './errors.js';
import { badResponse } from '../shared/openai-answer.js';
import type { CohereChatResponse, CohereEmbedResponse } from './wire.js';

const COHERE_BASE = 'https://api.cohere.com';

/** Printable ASCII without spaces: anything else cannot be a Cohere key and would break the header. */
const TOKEN = /^[\x21-\x7e]+$/;

export const cohere: ProviderAdapter = {
  name: 'cohere',
  prepare({ target, endpoint, path, body }: CallInput): Result<ProviderCall, GatewayError> {
    if (endpoint === 'completions') {
      return {
        ok: false,
        error: invalid(
          "provider 'cohere' does not serve /completions: Cohere's Generate API (/v1/generate) is deprecated and no longer maintained; use /chat/completions",
          'provider',
        ),
      };
    }
    const auth = authorization(target.node.api_key, target.clientAuthorization);
    if (!auth.ok) return auth;
    const headers: Record<string, string> = { authorization: auth.value };
    const base = trimSlash(target.customHost ?? COHERE_BASE);

    if (endpoint === 'proxy') return ok({ url: base + proxyPath(path), headers });
    const url = base + (endpoint === 'chat' ? '/v2/chat' : '/v2/embed');
    if (body === null) return ok({ url, headers }); // pass-through mode

    if (endpoint === 'chat') {
      const t = toCohereChat(body);
      if (!t.ok) return t;
      return ok({ url, headers, body: JSON.stringify(t.value.request), translator: chatTranslator(t.value.context) });
    }
    const t = toCohereEmbed(body);
    if (!t.ok) return t;
    return ok({ url, headers, body: JSON.stringify(t.value.request), translator: embedTranslator(t.value.context) });
  },
};

function authorization(apiKey: string | undefined, client: string | undefined): Result<string, GatewayError> {
  if (apiKey !== undefined) {
    if (!TOKEN.test(apiKey)) return { ok: false, error: invalid('api_key: a Cohere API key is one word of printable characters', 'api_key') };
    return ok(`Bearer ${apiKey}`);
  }
  if (client === undefined) {
    return { ok: false, error: invalid("provider 'cohere' needs an api_key (or an Authorization: Bearer header)", 'api_key') };
  }
  const m = /^Bearer +(\S+)$/i.exec(client);
  if (m === null || !TOKEN.test(m[1]!)) {
    return { ok: false, error: invalid('Authorization: must be "Bearer <Cohere API key>"', 'Authorization') };
  }
  return ok(`Bearer ${m[1]}`);
}

function proxyPath(path: string): string {
  return /^\/v\d+(?:[/?]|$)/.test(path) ? path : '/v1' + path;
}

function trimSlash(base: string): string {
  return base.endsWith('/') ? base.slice(0, -1) : base;
}

function parse<T>(raw: Buffer, what: string): Result<T, GatewayError> {
  try {
    return ok(JSON.parse(raw.toString('utf8')) as T);
  } catch {
    return { ok: false, error: badResponse('cohere', `sent a ${what} answer that is not valid JSON`) };
  }
}

function chatTranslator(ctx: ChatContext): Translator {
  return {
    response(raw) {
      const res = parse<CohereChatResponse>(raw, 'chat');
      return res.ok ? fromCohereChat(res.value, ctx) : res;
    },
    stream: () => chatStream(ctx),
    error: cohereError,
  };
}

function embedTranslator(ctx: EmbedContext): Translator {
  return {
    response(raw) {
      const res = parse<CohereEmbedResponse>(raw, 'embed');
      return res.ok ? fromCohereEmbed(res.value, ctx) : res;
    },
    stream: noEmbedStream,
    error: cohereError,
  };
}
