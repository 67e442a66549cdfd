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
 * The translation (chat/, embeddings.ts) is shared with Vertex AI, which
 * serves the same bodies. Legacy completions are not offered by Gemini. The
 * generic proxy passes through to {base}{path} with the key (so
 * `/v1/models/x:countTokens` reaches `…/v1beta/models/x:countTokens`).
 * Pass-through mode (config `passthrough`) cannot be served on the chat and
 * embeddings paths: Gemini's URL names the model, which an unread body does
 * not give; the generic proxy with Gemini's own path does the same job.
 */
import { err, ok } from '../../shared/errors.js';
import type { ProviderAdapter, Provider } from '../contract.js';
import { apiKey, needsKey, passthroughRefused, trimSlash } from '../shared/target.js';
import { geminiChat, geminiMethod } from './chat/request.js';
import { batchEmbed } from './embeddings.js';
import { modelId } from './model.js';
import type { GoogleSettings } from './settings.js';

const BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

const chat = geminiChat('google');
const embeddings = batchEmbed('google');

const adapter: ProviderAdapter<GoogleSettings> = {
  name: 'google',
  lacks: { completions: 'Gemini has no text-completion API; use /chat/completions' },
  prepare({ target, endpoint, path, body }) {
    const key = apiKey(target, 'google');
    if (!key.ok) return key;
    if (key.value === undefined) return err(needsKey('google', 'an Authorization: Bearer header with the Gemini API key'));
    const base = trimSlash(target.customHost ?? BASE_URL);
    const headers = { 'x-goog-api-key': key.value };
    if (endpoint === 'proxy') return ok({ kind: 'relayed', url: base + path, headers, addedUsage: false });
    if (body === null) return err(passthroughRefused('google', 'its URL names the model'));

    const model = modelId(body);
    if (!model.ok) return model;
    const request = endpoint === 'chat' ? chat.request(body) : embeddings.request(body);
    if (!request.ok) return request;
    const method = endpoint === 'chat' ? geminiMethod(body) : 'batchEmbedContents';
    return ok({ kind: 'translated', url: `${base}/models/${model.value}:${method}`, headers, body: request.value.body, answer: request.value.answer });
  },
};

export const google: Provider<GoogleSettings> = { adapter, translators: { gemini: { chat, embeddings } } };
