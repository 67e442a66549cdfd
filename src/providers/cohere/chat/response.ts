/**
 * Cohere Chat v2's whole answer → OpenAI chat.completion, and the finish
 * reasons, usage and log probabilities the stream (stream.ts) shares. Field
 * facts: see ../wire.ts.
 */
import { GatewayError, ok, type Result } from '../../../shared/errors.js';
import { completionId, nowSeconds, parseAnswer, putToolCalls, type FinishReason, type OpenAIToolCall, type OpenAIUsage } from '../../shared/openai-answer.js';
import type { CohereChatResponse, CohereFinishReason, CohereLogprobItem, CohereUsage } from '../wire.js';

/** Cohere's finish reasons; ERROR is not a finish but a failure, answered as one. */
export function finishReason(r: CohereFinishReason | undefined, legacyFunctions: boolean): FinishReason {
  switch (r) {
    case 'MAX_TOKENS':
    case 'TIMEOUT': // cut short by Cohere's time limit: the text is truncated, as with a token limit
      return 'length';
    case 'TOOL_CALL':
      return legacyFunctions ? 'function_call' : 'tool_calls';
    default: // COMPLETE, STOP_SEQUENCE
      return 'stop';
  }
}

/** Cohere's `tokens` are the model's own counts; `billed_units` leave out what Cohere does not bill (its own preamble). */
export function toUsage(u: CohereUsage | undefined): OpenAIUsage {
  const prompt = u?.tokens?.input_tokens ?? u?.billed_units?.input_tokens ?? 0;
  const completion = u?.tokens?.output_tokens ?? u?.billed_units?.output_tokens ?? 0;
  const usage: OpenAIUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (typeof u?.cached_tokens === 'number') usage.prompt_tokens_details = { cached_tokens: u.cached_tokens };
  return usage;
}

/** A Cohere log-probability item is a text chunk of one or more tokens: its log probability is their sum. */
export function toLogprobs(items: CohereLogprobItem[]): { content: Record<string, unknown>[]; refusal: null } {
  return {
    content: items.map((item) => {
      const token = item.text ?? '';
      return {
        token,
        logprob: (item.logprobs ?? []).reduce((a, b) => a + b, 0),
        bytes: [...Buffer.from(token, 'utf8')],
        top_logprobs: [],
      };
    }),
    refusal: null,
  };
}

/** A generation Cohere reports as failed (finish ERROR): the provider's own failure, in a whole answer or mid-stream. */
export function generationFailed(detail: string | undefined): GatewayError {
  return new GatewayError(502, `cohere: the generation failed${detail ? `: ${detail}` : ''}`, { code: 'provider_generation_error' });
}

/** A whole chat answer as OpenAI JSON text; `model` is the request's (Cohere's answer names none). */
export function fromCohereChat(raw: Buffer, model: string, legacyFunctions: boolean): Result<string> {
  const parsed = parseAnswer(raw, 'cohere');
  if (!parsed.ok) return parsed;
  const res = parsed.value as CohereChatResponse;
  if (res.finish_reason === 'ERROR') return { ok: false, error: generationFailed(undefined) };
  const content = res.message?.content ?? [];
  const text = content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('');
  const thinking = content.flatMap((c) => (c.type === 'thinking' ? [c.thinking] : [])).join('');
  const calls = res.message?.tool_calls ?? [];
  const message: Record<string, unknown> = { role: 'assistant', content: text, refusal: null };
  if (calls.length > 0) {
    // The plan is what the model said before calling: OpenAI's content beside tool_calls.
    message.content = text !== '' ? text : res.message.tool_plan || null;
    const openAICalls = calls.map((c): OpenAIToolCall => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } }));
    putToolCalls(message, openAICalls, legacyFunctions);
  }
  // Reasoning text in the field DeepSeek, vLLM and others use; OpenAI's own API does not return it.
  if (thinking !== '') message.reasoning_content = thinking;
  return ok(
    JSON.stringify({
      id: res.id ?? completionId(),
      object: 'chat.completion',
      created: nowSeconds(),
      model,
      choices: [
        {
          index: 0,
          message,
          logprobs: res.logprobs === undefined ? null : toLogprobs(res.logprobs),
          finish_reason: finishReason(res.finish_reason, legacyFunctions),
        },
      ],
      usage: toUsage(res.usage),
    }),
  );
}
