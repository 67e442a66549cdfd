/**
 * Anthropic's streamed message (named SSE events) → OpenAI chat.completion.chunk
 * events, ending as every translated stream does (shared/stream.ts). Events, per
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming:
 *
 *   message_start        {message: {id, model, usage: {input_tokens, cache_*…}}}  → role chunk
 *   content_block_start  {index, content_block: text | tool_use{id,name} | thinking | redacted_thinking}
 *                        tool_use → tool_calls delta {index, id, type, function{name, arguments: ""}}
 *   content_block_delta  {index, delta: text_delta{text}            → content
 *                                       input_json_delta{partial_json} → tool_calls[{index, function{arguments}}]
 *                                       thinking_delta{thinking}    → reasoning_content
 *                                       signature_delta{signature}} → kept for the block's end
 *   content_block_stop   {index}  a thinking block ends → thinking_blocks [{type, thinking, signature}]
 *   message_delta        {delta: {stop_reason}, usage (cumulative)}  → finish_reason chunk
 *   message_stop                  → the end: usage chunk, [DONE]
 *   ping                          → nothing
 *   error                {error: {type, message}} → `data: {"error": …}` (the OpenAI SDK throws it), the end
 *
 * Tool calls are numbered in order of appearance (OpenAI's index), not by
 * Anthropic's block index, which also counts text and thinking blocks.
 * Event types Anthropic adds later are ignored, as its docs ask.
 */
import { toolCallDelta } from '../../shared/openai-answer.js';
import { HELD_ENTRY, SseTranslatedStream } from '../../shared/stream.js';
import { streamError } from '../errors.js';
import { finishReason, openAIUsage } from './response.js';
import type { AnthropicResponseBlock, AnthropicStreamEvent, AnthropicUsage } from '../wire.js';

/** The usage fields read (response.ts openAIUsage): a message_delta's others are not kept. */
const USAGE_KEYS = ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const;

export class AnthropicStream extends SseTranslatedStream {
  private usage: AnthropicUsage = {};
  /** Anthropic block index → OpenAI tool call index. */
  private readonly tools = new Map<number, number>();
  /** Thinking blocks being streamed, by block index. */
  private readonly thinking = new Map<number, { text: string; signature: string }>();

  /** `legacyFunctions`: the request used `functions`, so calls stream as function_call deltas. */
  constructor(private readonly legacyFunctions: boolean) {
    super('anthropic', '', 'message_stop');
  }

  /** `event:` repeats the data's own `type`: only the data is read. */
  protected override event(data: unknown): void {
    const ev = data as AnthropicStreamEvent;
    switch (ev.type) {
      case 'message_start':
        if (typeof ev.message?.id === 'string') this.id = ev.message.id;
        this.model = ev.message?.model ?? '';
        this.usage = { ...ev.message?.usage };
        this.chunk({ role: 'assistant', content: '' });
        break;
      case 'content_block_start':
        this.blockStart(ev.index, ev.content_block);
        break;
      case 'content_block_delta': {
        const d = ev.delta as { type: string; text?: string; partial_json?: string; thinking?: string; signature?: string };
        if (d.type === 'text_delta') this.chunk({ content: d.text ?? '' });
        else if (d.type === 'input_json_delta') {
          const n = this.tools.get(ev.index);
          if (n !== undefined && d.partial_json) this.toolDelta(n, { function: { arguments: d.partial_json } });
        } else if (d.type === 'thinking_delta') {
          const t = this.thinking.get(ev.index);
          const text = d.thinking ?? '';
          if (t !== undefined) {
            if (!this.hold(text.length)) return;
            t.text += text;
          }
          this.chunk({ reasoning_content: text });
        } else if (d.type === 'signature_delta') {
          const t = this.thinking.get(ev.index);
          const signature = d.signature ?? '';
          if (t !== undefined && this.hold(signature.length)) t.signature += signature;
        }
        // citations_delta and later delta types have no OpenAI counterpart.
        break;
      }
      case 'content_block_stop': {
        const t = this.thinking.get(ev.index);
        if (t !== undefined) {
          this.thinking.delete(ev.index);
          this.hold(-(HELD_ENTRY + t.text.length + t.signature.length));
          this.chunk({ thinking_blocks: [{ type: 'thinking', thinking: t.text, signature: t.signature }] });
        }
        break;
      }
      case 'message_delta':
        // Usage here is cumulative and may repeat or update the input counts.
        for (const k of USAGE_KEYS) {
          const v = ev.usage?.[k];
          if (typeof v === 'number') this.usage[k] = v;
        }
        this.chunk({}, finishReason(ev.delta?.stop_reason, this.legacyFunctions));
        break;
      case 'message_stop':
        this.complete(openAIUsage(this.usage));
        break;
      case 'error':
        this.fail(streamError(ev.error));
        break;
    }
  }

  private blockStart(index: number, block: AnthropicResponseBlock): void {
    switch (block.type) {
      case 'text': {
        const text = (block as { text?: string }).text;
        if (text) this.chunk({ content: text });
        break;
      }
      case 'tool_use': {
        const b = block as { id: string; name: string };
        if (!this.hold(HELD_ENTRY)) return;
        const n = this.tools.size;
        this.tools.set(index, n);
        this.toolDelta(n, { id: b.id, type: 'function', function: { name: b.name, arguments: '' } });
        break;
      }
      case 'thinking':
        if (this.hold(HELD_ENTRY)) this.thinking.set(index, { text: '', signature: '' });
        break;
      case 'redacted_thinking':
        this.chunk({ thinking_blocks: [block] });
        break;
    }
  }

  private toolDelta(n: number, call: Parameters<typeof toolCallDelta>[1]): void {
    const delta = toolCallDelta(n, call, this.legacyFunctions);
    if (delta !== undefined) this.chunk(delta);
  }
}
