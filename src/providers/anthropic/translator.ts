/**
 * The Translator of an Anthropic Messages answer: whole message, stream and
 * error into OpenAI's shapes. Built per request, because the answer's shape
 * depends on it (include_usage, legacy functions). Exported for the Vertex AI
 * adapter, whose Claude models answer in this same format.
 */
import { GatewayError, ok, type Result } from '../../shared/errors.js';
import { badResponse } from '../shared/openai-answer.js';
import type { Translator } from '../types.js';
import { anthropicError } from './errors.js';
import type { ReplyOptions } from './chat/request.js';
import { fromAnthropicMessage } from './chat/response.js';
import { AnthropicStream } from './chat/stream.js';
import type { AnthropicMessage } from './wire.js';

export function anthropicChatTranslator(opts: ReplyOptions): Translator {
  return {
    response: (raw) => translateMessage(raw, opts),
    stream: () => new AnthropicStream(opts),
    error: anthropicError,
  };
}

function translateMessage(raw: Buffer, opts: ReplyOptions): Result<string, GatewayError> {
  let msg: AnthropicMessage;
  try {
    msg = JSON.parse(raw.toString('utf8')) as AnthropicMessage;
  } catch {
    return { ok: false, error: badResponse('anthropic', 'answered with invalid JSON') };
  }
  if (msg?.type !== 'message' || !Array.isArray(msg.content)) {
    return { ok: false, error: badResponse('anthropic', 'answered with something other than a message') };
  }
  return ok(JSON.stringify(fromAnthropicMessage(msg, opts)));
}
