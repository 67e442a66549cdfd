/**
 * A chat completion as a Gemini generateContent call: the translated body,
 * the method to call, and the translator for the answer. Shared by the
 * Gemini API adapter and Vertex AI's Google publisher.
 */
import { ok, GatewayError, type Result } from '../../shared/errors.js';
import { badResponse } from '../shared/openai-answer.js';
import type { Translator } from '../types.js';
import { toChatCompletion, type ChatContext } from './chat/response.js';
import { toGenerateContent } from './chat/request.js';
import { googleError } from './errors.js';
import type { ChatRequest } from './openai-chat.js';
import { GeminiStream } from './chat/stream.js';
import type { GenerateContentResponse } from './wire.js';

export interface GeminiCall {
  /** The model method and its query: `generateContent` or `streamGenerateContent?alt=sse`. */
  method: string;
  body: string;
  translator: Translator;
}

export function geminiChat(body: Record<string, unknown>, model: string, provider: string): Result<GeminiCall, GatewayError> {
  const translated = toGenerateContent(body as unknown as ChatRequest, provider);
  if (!translated.ok) return translated;
  const { request, stream, includeUsage } = translated.value;
  return ok({
    method: stream ? 'streamGenerateContent?alt=sse' : 'generateContent',
    body: JSON.stringify(request),
    translator: chatTranslator({ provider, model, includeUsage }),
  });
}

function chatTranslator(ctx: ChatContext): Translator {
  return {
    response(raw) {
      let res: GenerateContentResponse;
      try {
        res = JSON.parse(raw.toString('utf8')) as GenerateContentResponse;
      } catch {
        return { ok: false, error: badResponse(ctx.provider, 'sent an answer that is not JSON') };
      }
      return ok(JSON.stringify(toChatCompletion(res, ctx)));
    },
    stream: () => new GeminiStream(ctx),
    error: googleError,
  };
}
