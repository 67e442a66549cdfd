/**
 * Converse's whole answer → OpenAI chat.completion, and the finish reasons and
 * usage the stream (stream.ts) shares. Source: Bedrock Runtime API reference,
 * ConverseResponse, TokenUsage, StopReason.
 *
 *   text blocks → content, toolUse → tool_calls (or function_call for legacy `functions`),
 *   reasoningContent → reasoning_content, stopReason → finish_reason,
 *   usage {inputTokens (+cacheRead +cacheWrite), outputTokens, totalTokens, cacheReadInputTokens}.
 */
import { err, ok, type Result } from '../../../shared/errors.js';
import { badResponse, completionId, nowSeconds, parseAnswer, putToolCalls, type FinishReason, type OpenAIToolCall, type OpenAIUsage } from '../../shared/openai-answer.js';
import type { ConverseResponse, StopReason, TokenUsage } from '../wire.js';

export function finishReason(stop: StopReason | string, legacyFunctions: boolean): FinishReason {
  switch (stop) {
    case 'tool_use':
      return legacyFunctions ? 'function_call' : 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, and the model's own malformed_* endings
      return 'stop';
  }
}

/** OpenAI counts cached prompt tokens inside prompt_tokens; Bedrock reports them beside inputTokens. */
export function toUsage(u: TokenUsage): OpenAIUsage {
  const cacheRead = u.cacheReadInputTokens ?? 0;
  const prompt = u.inputTokens + cacheRead + (u.cacheWriteInputTokens ?? 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: u.outputTokens,
    total_tokens: u.totalTokens ?? prompt + u.outputTokens,
    prompt_tokens_details: { cached_tokens: cacheRead },
  };
}

/** A whole Converse answer as OpenAI JSON text; `model` is the request's (Converse names none). */
export function fromConverse(raw: Buffer, model: string, legacyFunctions: boolean): Result<string> {
  const parsed = parseAnswer(raw, 'bedrock');
  if (!parsed.ok) return parsed;
  const res = parsed.value as ConverseResponse | null;
  if (!isRecord(res) || !isRecord(res.usage) || typeof res.stopReason !== 'string') {
    return err(badResponse('bedrock', 'answered without stopReason or usage'));
  }
  let text = '';
  let reasoning = '';
  const calls: OpenAIToolCall[] = [];
  for (const block of res.output?.message?.content ?? []) {
    if (typeof block.text === 'string') text += block.text;
    else if (block.toolUse) {
      const { toolUseId: id, name, input } = block.toolUse;
      calls.push({ id, type: 'function', function: { name, arguments: JSON.stringify(input ?? {}) } });
    } else if (block.reasoningContent?.reasoningText) reasoning += block.reasoningContent.reasoningText.text;
  }
  const message: Record<string, unknown> = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text, refusal: null };
  if (reasoning !== '') message.reasoning_content = reasoning;
  putToolCalls(message, calls, legacyFunctions);
  return ok(
    JSON.stringify({
      id: completionId(),
      object: 'chat.completion',
      created: nowSeconds(),
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(res.stopReason, legacyFunctions) }],
      usage: toUsage(res.usage),
    }),
  );
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
