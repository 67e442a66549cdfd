/**
 * Cohere's chat stream → OpenAI's chat.completion.chunk stream.
 *
 * Cohere sends `event: <type>` + `data: {"type": <type>, …}` pairs (the type
 * is read from the JSON) and ends with `data: [DONE]` after message-end:
 *   message-start    {id}                                  → first chunk, role assistant
 *   content-start    {delta.message.content{type,text|thinking}}
 *   content-delta    {delta.message.content{text|thinking}, logprobs?} → content / reasoning_content
 *   tool-plan-delta  {delta.message.tool_plan}             → content (as in the whole answer)
 *   tool-call-start  {index, delta.message.tool_calls{id,type,function{name,arguments}}} → tool_calls[n] with id and name
 *   tool-call-delta  {index, delta.message.tool_calls.function.arguments} → tool_calls[n].function.arguments
 *   message-end      {delta{finish_reason, usage, error?}} → finish chunk, then the end: usage chunk, [DONE]
 *   content-end, tool-call-end, citation-start/-end, debug: nothing to say in OpenAI's shape
 * Source: https://docs.cohere.com/reference/chat-stream and
 * https://docs.cohere.com/docs/streaming (schemas Chat*Event in Cohere's OpenAPI).
 *
 * A failed generation (finish ERROR) becomes an `error` event, which OpenAI's
 * SDKs raise as an APIError; a stream ends as every translated stream does
 * (shared/stream.ts).
 */
import { toolCallDelta } from '../../shared/openai-answer.js';
import { HELD_ENTRY, SseTranslatedStream } from '../../shared/stream.js';
import { finishReason, generationFailed, toLogprobs, toUsage } from './response.js';
import type { CohereStreamEvent } from '../wire.js';

/** `model`: the request's (Cohere's events name none); `legacyFunctions`: calls stream as function_call deltas. */
export function chatStream(model: string, legacyFunctions: boolean): CohereStream {
  return new CohereStream(model, legacyFunctions);
}

class CohereStream extends SseTranslatedStream {
  private started = false;
  /** Cohere's tool-call index → OpenAI's tool_calls index (in order of appearance). */
  private readonly toolIndex = new Map<number, number>();

  constructor(
    model: string,
    private readonly legacyFunctions: boolean,
  ) {
    super('cohere', model, 'message-end');
  }

  /** The role chunk opens the answer, whichever event comes first. */
  private start(): void {
    if (this.started) return;
    this.started = true;
    this.chunk({ role: 'assistant', content: '' });
  }

  protected override event(data: unknown): void {
    const ev = data as CohereStreamEvent;
    switch (ev.type) {
      case 'message-start':
        if (typeof ev.id === 'string') this.id = ev.id;
        this.start();
        return;
      case 'content-start':
      case 'content-delta': {
        const c = ev.delta?.message?.content;
        this.start();
        if (typeof c?.text === 'string' && c.text !== '') {
          this.chunk({ content: c.text }, null, ev.type === 'content-delta' && ev.logprobs !== undefined ? toLogprobs([ev.logprobs]) : null);
        }
        if (typeof c?.thinking === 'string' && c.thinking !== '') this.chunk({ reasoning_content: c.thinking });
        return;
      }
      case 'tool-plan-delta': {
        const plan = ev.delta?.message?.tool_plan;
        this.start();
        if (typeof plan === 'string' && plan !== '') this.chunk({ content: plan });
        return;
      }
      case 'tool-call-start': {
        const call = ev.delta?.message?.tool_calls;
        if (!this.hold(HELD_ENTRY)) return;
        const index = this.toolIndex.size;
        this.toolIndex.set(ev.index ?? index, index);
        const fn = { name: call?.function?.name ?? '', arguments: call?.function?.arguments ?? '' };
        const delta = toolCallDelta(index, { id: call?.id ?? '', type: 'function', function: fn }, this.legacyFunctions);
        if (delta === undefined) return;
        this.start();
        this.chunk(delta);
        return;
      }
      case 'tool-call-delta': {
        const args = ev.delta?.message?.tool_calls?.function?.arguments;
        if (typeof args !== 'string' || args === '') return;
        const index = this.toolIndex.get(ev.index ?? -1) ?? this.toolIndex.size - 1;
        const delta = toolCallDelta(index, { function: { arguments: args } }, this.legacyFunctions);
        if (delta !== undefined) this.chunk(delta);
        return;
      }
      case 'message-end': {
        const d = ev.delta;
        if (d?.finish_reason === 'ERROR' || d?.error) {
          this.fail(generationFailed(d.error));
          return;
        }
        this.start();
        this.chunk({}, finishReason(d?.finish_reason, this.legacyFunctions));
        this.complete(toUsage(d?.usage));
        return;
      }
    }
  }
}
