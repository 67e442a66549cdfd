/**
 * Google's Gemini API (generativelanguage.googleapis.com), keyed by an API key.
 *
 * Wire format (https://ai.google.dev/api/generate-content, https://ai.google.dev/api/embeddings):
 *   POST {base}/models/{model}:generateContent                     → GenerateContentResponse (JSON)
 *   POST {base}/models/{model}:streamGenerateContent?alt=sse       → `data: {GenerateContentResponse}` SSE events
 *   POST {base}/models/{model}:batchEmbedContents                  → {"embeddings":[{"values":[…]}]}
 *   base = https://generativelanguage.googleapis.com/v1beta; header `x-goog-api-key: <key>`
 *   (https://ai.google.dev/gemini-api/docs/api-key); errors are google.rpc.Status JSON.
 *   Request:  {contents:[{role:"user"|"model", parts:[{text}|{inlineData:{mimeType,data}}|{fileData:{mimeType,fileUri}}
 *              |{functionCall:{name,args}, thoughtSignature?}|{functionResponse:{name,response}}]}],
 *              systemInstruction:{parts}, tools:[{functionDeclarations:[{name,description,parameters}]}],
 *              toolConfig:{functionCallingConfig:{mode:AUTO|ANY|NONE, allowedFunctionNames}},
 *              generationConfig:{temperature,topP,topK,maxOutputTokens,stopSequences,candidateCount,seed,
 *              presencePenalty,frequencyPenalty,responseMimeType,responseSchema,responseLogprobs,logprobs,thinkingConfig}}
 *   Response: {candidates:[{content:{role:"model",parts}, finishReason, index, logprobsResult}],
 *              promptFeedback:{blockReason}, usageMetadata:{promptTokenCount,candidatesTokenCount,totalTokenCount,
 *              cachedContentTokenCount,thoughtsTokenCount,toolUsePromptTokenCount}, modelVersion, responseId}
 * The translation itself (chat-request.ts, chat-response.ts, stream.ts,
 * embeddings.ts) is shared with Vertex AI, which serves the same bodies.
 * Legacy completions are not offered by Gemini: 400. The generic proxy
 * passes through to {base}{path} with the key (so `/v1/models/x:countTokens`
 * reaches `…/v1beta/models/x:countTokens`). Pass-through mode (config
 * `passthrough`) cannot be served on the chat and embeddings paths: Gemini's
 * URL names the model, which an unread body does not give; the generic proxy
 * with Gemini's own path does the same job.
 */
import { invalid, ok, type GatewayError, type Result } from '../../shared/errors.js';
import type { CallInput, ProviderAdapter, ProviderCall } from '../types.js';
import { geminiChat } from './chat.js';
import { embeddingInput, embeddingsTranslator, readBatchEmbedContents, toBatchEmbedContents } from './embeddings.js';

const BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

export const googleAdapter: ProviderAdapter = {
  name: 'google',
  prepare({ target, endpoint, path, body }: CallInput): Result<ProviderCall, GatewayError> {
    if (endpoint === 'completions') return { ok: false, error: invalid("provider 'google' does not serve /completions (use /chat/completions)", 'provider') };
    const key = target.node.api_key ?? bearerToken(target.clientAuthorization);
    if (key === undefined || key === '') {
      return { ok: false, error: invalid("provider 'google' needs an api_key (or an Authorization: Bearer header with the Gemini API key)", 'api_key') };
    }
    const base = trimSlash(target.customHost ?? BASE_URL);
    const headers = { 'x-goog-api-key': key };
    if (endpoint === 'proxy') return ok({ url: base + path, headers });
    if (body === null) return { ok: false, error: passthroughRefused('google') };

    const model = modelOf(body);
    if (!model.ok) return model;
    const at = `${base}/models/${model.value}`;
    if (endpoint === 'chat') {
      const call = geminiChat(body, model.value, 'google');
      if (!call.ok) return call;
      return ok({ url: `${at}:${call.value.method}`, headers, body: call.value.body, translator: call.value.translator });
    }
    const input = embeddingInput(body, 'google');
    if (!input.ok) return input;
    return ok({
      url: `${at}:batchEmbedContents`,
      headers,
      body: JSON.stringify(toBatchEmbedContents(model.value, input.value)),
      translator: embeddingsTranslator('google', model.value, input.value.base64, readBatchEmbedContents),
    });
  },
};

/** Characters of Google's model ids (`gemini-2.5-flash`, `textembedding-gecko@003`): nothing that could leave the URL's model segment. */
const MODEL_ID = /^[\w.@-]+$/;

/** The request's model; Google's own `models/…` resource name is accepted too. */
export function modelOf(body: Record<string, unknown>): Result<string, GatewayError> {
  const model = body.model;
  if (typeof model !== 'string' || model === '') return { ok: false, error: invalid('model: required', 'model') };
  const id = model.startsWith('models/') ? model.slice(7) : model;
  if (!MODEL_ID.test(id)) return { ok: false, error: invalid(`model: '${model}' is not a model id (letters, digits, '.', '_', '-', '@')`, 'model') };
  return ok(id);
}

export function passthroughRefused(provider: string): GatewayError {
  return invalid(
    `provider '${provider}' cannot take an untranslated body on an OpenAI path (its URL names the model): send Gemini's own path through the generic proxy instead`,
    'passthrough',
  );
}

export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(authorization.trim());
  return m === null ? undefined : m[1];
}

export function trimSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}
