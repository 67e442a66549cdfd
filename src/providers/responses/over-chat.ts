/**
 * POST /v1/responses for a provider, per attempt (registry.ts, prepareCall):
 *
 * - natively where the provider's API has it (OpenAI, Azure OpenAI: the
 *   adapter's `nativeResponses`): the client's body relayed, except that a
 *   `previous_response_id` the gateway made (its chain already sent in
 *   `input`: pipeline/responses.ts) is taken out, as the provider never saw it;
 * - otherwise over the provider's chat API: the request made a chat request
 *   (request.ts), the adapter prepares that chat call as it would any, and
 *   the chat answer — a translator's, or the relayed OpenAI chat of a
 *   compatible provider — is read back into a Response (answer.ts) or the
 *   Responses event stream (stream.ts).
 */
import { PassThrough } from 'node:stream';
import { err, GatewayError, ok, type Result } from '../../shared/errors.js';
import type { Answer, CallInput, ErrorReader, ProviderCall, TranslatedCall } from '../contract.js';
import { JSON_HEADERS, SSE_HEADERS } from '../shared/openai-answer.js';
import { responseFromChat } from './answer.js';
import { isGatewayResponseId } from './ids.js';
import { toChat, type ResponsesBody } from './request.js';
import { ResponsesStream } from './stream.js';

type Prepared = Result<ProviderCall> | Promise<Result<ProviderCall>>;

/** The call for a Responses request to a provider without the API: its chat call, the answer read back. */
export function responsesOverChat<S extends object>(input: CallInput<S>, prepareChat: (chat: CallInput<S>) => Prepared, provider: string): Prepared {
  const body = input.body;
  if (body === null) return err(new GatewayError(400, `provider '${provider}' has no Responses API: send the request in the gateway's mode (not pass-through)`, { param: 'x-gateway-config' }));
  if (typeof body.previous_response_id === 'string' && !isGatewayResponseId(body.previous_response_id)) {
    return err(new GatewayError(400, `previous_response_id: '${body.previous_response_id}' was not made by the gateway, and provider '${provider}' stores no responses`, { param: 'previous_response_id', code: 'previous_response_not_found' }));
  }
  const chat = toChat(body, provider);
  if (!chat.ok) return chat;
  const chatInput: CallInput<S> = { ...input, endpoint: 'chat', path: '/chat/completions', body: chat.value };
  const prepared = prepareChat(chatInput);
  const wrap = (call: Result<ProviderCall>): Result<ProviderCall> => (call.ok ? ok(overChat(call.value, chat.value, body, provider)) : call);
  return prepared instanceof Promise ? prepared.then(wrap) : wrap(prepared);
}

function overChat(call: ProviderCall, chat: Record<string, unknown>, body: ResponsesBody, provider: string): TranslatedCall {
  if (call.kind === 'translated') return { ...call, answer: responsesAnswer(call.answer, body, provider) };
  // An OpenAI-compatible provider: its chat answer is OpenAI's already.
  const sent = call.body === undefined ? JSON.stringify(chat) : call.body.toString();
  return { kind: 'translated', url: call.url, headers: call.headers, body: sent, answer: responsesAnswer(openAIChat(body.stream === true), body, provider) };
}

/** The Responses reader over a chat answer's reader. */
function responsesAnswer(chat: Answer, body: ResponsesBody, provider: string): Answer {
  if (chat.streamed) {
    return { streamed: true, headers: SSE_HEADERS, addedUsage: false, error: chat.error, stream: () => new ResponsesStream(chat.stream(), body, provider) };
  }
  return {
    streamed: false,
    headers: JSON_HEADERS,
    error: chat.error,
    response(raw, headers) {
      const text = chat.response(raw, headers);
      return text.ok ? responseFromChat(text.value, body, provider) : text;
    },
  };
}

/** OpenAI's chat answer, as a compatible provider sends it: read as it is. */
function openAIChat(streamed: boolean): Answer {
  if (streamed) return { streamed: true, headers: SSE_HEADERS, addedUsage: false, error: openAIError, stream: () => new PassThrough() };
  return { streamed: false, headers: JSON_HEADERS, error: openAIError, response: (raw) => ok(raw.toString('utf8')) };
}

/** OpenAI's error envelope ({"error": {message, type, code, param}}) with the provider's status. */
const openAIError: ErrorReader = (status, raw) => {
  let e: { message?: unknown; code?: unknown; param?: unknown } = {};
  try {
    const parsed = JSON.parse(raw.toString('utf8')) as { error?: typeof e };
    if (typeof parsed.error === 'object' && parsed.error !== null) e = parsed.error;
  } catch {
    // not JSON: the text is the message
  }
  const message = typeof e.message === 'string' ? e.message : raw.toString('utf8').slice(0, 1000) || `provider answered ${status}`;
  return new GatewayError(status, message, { code: typeof e.code === 'string' ? e.code : undefined, param: typeof e.param === 'string' ? e.param : null });
};

/**
 * The body a native Responses API gets: without a `previous_response_id`
 * the gateway made (the pipeline sent its chain in `input`); null when the
 * client's body goes as it is.
 */
export function nativeBody(body: Record<string, unknown> | null): Record<string, unknown> | null {
  if (body === null || !isGatewayResponseId(body.previous_response_id)) return null;
  const { previous_response_id: _, ...rest } = body;
  return rest;
}
