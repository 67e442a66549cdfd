/**
 * Anthropic message → OpenAI chat.completion. Pure, shared with the stream
 * transform (finish reasons, usage) and with the Vertex AI adapter.
 *
 * Thinking comes back as `reasoning_content` (the joined thinking text, the
 * field DeepSeek, vLLM and LiteLLM use) plus `thinking_blocks` (the blocks
 * with their signatures, LiteLLM's field), which a client sends back on the
 * assistant message to continue a tool-using turn with thinking on.
 * (Portkey instead returns raw `content_blocks` when strict compliance is off.)
 * Thinking only ever appears when the request enabled it, which the router
 * allows only with strict_compat_compliance false.
 */
import { ok, type Result } from '../../../shared/errors.js';
import { badResponse, nowSeconds, parseAnswer, putToolCalls, type FinishReason, type OpenAIToolCall, type OpenAIUsage } from '../../shared/openai-answer.js';
import type { AnthropicMessage, AnthropicRedactedThinkingBlock, AnthropicThinkingBlock, AnthropicUsage } from '../wire.js';

export interface OpenAIAssistantMessage {
  role: 'assistant';
  content: string | null;
  refusal: null;
  tool_calls?: OpenAIToolCall[];
  function_call?: { name: string; arguments: string };
  reasoning_content?: string;
  thinking_blocks?: (AnthropicThinkingBlock | AnthropicRedactedThinkingBlock)[];
}

export interface OpenAIChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: { index: 0; message: OpenAIAssistantMessage; logprobs: null; finish_reason: FinishReason | null }[];
  usage: OpenAIUsage;
}

/**
 * Anthropic stop reasons (https://docs.anthropic.com/en/api/handling-stop-reasons).
 * pause_turn (a server-tool loop paused; the client sends the turn back) ends
 * the answer like end_turn; a refusal is OpenAI's content_filter.
 */
export function finishReason(stop: string | null | undefined, legacyFunctions: boolean): FinishReason | null {
  switch (stop) {
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return legacyFunctions ? 'function_call' : 'tool_calls';
    case 'refusal':
      return 'content_filter';
    case null:
    case undefined:
      return null;
    default:
      return 'stop';
  }
}

/**
 * Anthropic's input_tokens excludes cached input; OpenAI's prompt_tokens
 * includes it. So prompt_tokens = input + cache writes + cache reads, and
 * cache reads are the cached_tokens. Anthropic does not report thinking
 * tokens apart from output_tokens, so no reasoning_tokens.
 */
export function openAIUsage(u: AnthropicUsage): OpenAIUsage {
  const cached = u.cache_read_input_tokens ?? 0;
  const prompt = (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + cached;
  const completion = u.output_tokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: cached } };
}

/**
 * Text blocks join into content; tool_use blocks become tool_calls (or the one
 * function_call of a legacy request, which asked Anthropic for serial calls).
 * Server-tool blocks (server_tool_use, web_search_tool_result…) have no
 * OpenAI counterpart; the text Claude writes from them is kept.
 */
export function fromAnthropicMessage(msg: AnthropicMessage, legacyFunctions: boolean): OpenAIChatCompletion {
  let text: string | null = null;
  let reasoning: string | null = null;
  const thinking: (AnthropicThinkingBlock | AnthropicRedactedThinkingBlock)[] = [];
  const calls: OpenAIToolCall[] = [];
  for (const block of msg.content) {
    switch (block.type) {
      case 'text':
        text = (text ?? '') + (block as { text: string }).text;
        break;
      case 'tool_use': {
        const b = block as { id: string; name: string; input: unknown };
        calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
        break;
      }
      case 'thinking':
        reasoning = (reasoning ?? '') + (block as AnthropicThinkingBlock).thinking;
        thinking.push(block as AnthropicThinkingBlock);
        break;
      case 'redacted_thinking':
        thinking.push(block as AnthropicRedactedThinkingBlock);
        break;
    }
  }
  const message: OpenAIAssistantMessage = { role: 'assistant', content: text, refusal: null };
  putToolCalls(message, calls, legacyFunctions);
  if (reasoning !== null) message.reasoning_content = reasoning;
  if (thinking.length > 0) message.thinking_blocks = thinking;
  return {
    id: msg.id,
    object: 'chat.completion',
    created: nowSeconds(),
    model: msg.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(msg.stop_reason, legacyFunctions) }],
    usage: openAIUsage(msg.usage ?? {}),
  };
}

/** A whole Messages answer as OpenAI JSON text. */
export function readMessage(raw: Buffer, legacyFunctions: boolean): Result<string> {
  const parsed = parseAnswer(raw, 'anthropic');
  if (!parsed.ok) return parsed;
  const msg = parsed.value as AnthropicMessage | null;
  if (msg?.type !== 'message' || !Array.isArray(msg.content)) return { ok: false, error: badResponse('anthropic', 'answered with something other than a message') };
  return ok(JSON.stringify(fromAnthropicMessage(msg, legacyFunctions)));
}
