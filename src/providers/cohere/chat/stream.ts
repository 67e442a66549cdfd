/**
 * Cohere's chat stream → OpenAI's chat.completion.chunk stream.
 *
 * Cohere sends `event: <type>` + `data: {"type": <type>, …}` pairs (the type
 * is read from the JSON) and ends with `data: [DONE]`:
 *   message-start    {id}                                  → first chunk, role assistant
 *   content-start    {delta.message.content{type,text|thinking}}
 *   content-delta    {delta.message.content{text|thinking}, logprobs?} → content / reasoning_content
 *   tool-plan-delta  {delta.message.tool_plan}             → content (as in the whole answer)
 *   tool-call-start  {index, delta.message.tool_calls{id,type,function{name,arguments}}} → tool_calls[n] with id and name
 *   tool-call-delta  {index, delta.message.tool_calls.function.arguments} → tool_calls[n].function.arguments
 *   message-end      {delta{finish_reason, usage, error?}} → finish chunk, then the usage chunk if asked for
 *   content-end, tool-call-end, citation-start/-end, debug: nothing to say in OpenAI's shape
 * Source: https://docs.cohere.com/reference/chat-stream and
 * https://docs.cohere.com/docs/streaming (schemas Chat*Event in Cohere's OpenAPI).
 *
 * A failed generation (finish ERROR, or a body that ends before message-end)
 * becomes an `error` event, which OpenAI's SDKs raise as an APIError.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { GatewayError } from '../../../shared/errors.js';
import { chatChunk, completionId, nowSeconds, sseEvent, SSE_DONE, toolCallDelta, usageChunk } from '../../shared/openai-answer.js';
import { finishReason, generationFailed, toLogprobs, toUsage, type ChatContext } from './request.js';
import { SseReader } from '../../shared/sse.js';
import type { CohereStreamEvent } from '../wire.js';

export function chatStream(ctx: ChatContext): Transform {
  const reader = new SseReader();
  const state = new StreamState(ctx);
  return new Transform({
    transform(chunk: Buffer, _enc, done: TransformCallback) {
      const out = state.events(reader.push(chunk).map((e) => e.data));
      if (out !== '') this.push(out);
      done();
    },
    flush(done: TransformCallback) {
      done(null, state.events(reader.end().map((e) => e.data)) + state.finish());
    },
  });
}

class StreamState {
  private id: string = completionId();
  private readonly created = nowSeconds();
  private started = false;
  private ended = false;
  /** Cohere's tool-call index → OpenAI's tool_calls index (in order of appearance). */
  private readonly toolIndex = new Map<number, number>();

  constructor(private readonly ctx: ChatContext) {}

  events(datas: string[]): string {
    let out = '';
    for (const data of datas) {
      if (this.ended || data === '[DONE]') continue;
      let ev: CohereStreamEvent;
      try {
        ev = JSON.parse(data) as CohereStreamEvent;
      } catch {
        out += this.fail(new GatewayError(502, 'cohere: a stream event is not JSON', { code: 'bad_provider_stream' }));
        continue;
      }
      out += this.event(ev);
    }
    return out;
  }

  /** What closes the stream: the error of an unfinished answer, then [DONE]. */
  finish(): string {
    const tail = this.ended ? '' : this.fail(new GatewayError(502, 'cohere: the stream ended before message-end', { code: 'bad_provider_stream' }));
    return tail + SSE_DONE;
  }

  private chunk(delta: Record<string, unknown>, finish: ReturnType<typeof finishReason> | null = null): string {
    return sseEvent(chatChunk(this.id, this.ctx.model, this.created, delta, finish));
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    return this.chunk({ role: 'assistant', content: '' });
  }

  private fail(e: GatewayError): string {
    this.ended = true;
    return sseEvent(e.toJSON());
  }

  private event(ev: CohereStreamEvent): string {
    switch (ev.type) {
      case 'message-start':
        if (typeof ev.id === 'string') this.id = ev.id;
        return this.start();
      case 'content-start':
      case 'content-delta': {
        const c = ev.delta?.message?.content;
        let out = this.start();
        if (typeof c?.text === 'string' && c.text !== '') {
          const chunk = chatChunk(this.id, this.ctx.model, this.created, { content: c.text });
          if (ev.type === 'content-delta' && ev.logprobs !== undefined) {
            (chunk.choices as Record<string, unknown>[])[0]!.logprobs = toLogprobs([ev.logprobs]);
          }
          out += sseEvent(chunk);
        }
        if (typeof c?.thinking === 'string' && c.thinking !== '') out += this.chunk({ reasoning_content: c.thinking });
        return out;
      }
      case 'tool-plan-delta': {
        const plan = ev.delta?.message?.tool_plan;
        return this.start() + (typeof plan === 'string' && plan !== '' ? this.chunk({ content: plan }) : '');
      }
      case 'tool-call-start': {
        const call = ev.delta?.message?.tool_calls;
        const index = this.toolIndex.size;
        this.toolIndex.set(ev.index ?? index, index);
        const fn = { name: call?.function?.name ?? '', arguments: call?.function?.arguments ?? '' };
        const delta = toolCallDelta(index, { id: call?.id ?? '', type: 'function', function: fn }, this.ctx.legacyFunctions);
        return delta === undefined ? '' : this.start() + this.chunk(delta);
      }
      case 'tool-call-delta': {
        const args = ev.delta?.message?.tool_calls?.function?.arguments;
        if (typeof args !== 'string' || args === '') return '';
        const index = this.toolIndex.get(ev.index ?? -1) ?? this.toolIndex.size - 1;
        const delta = toolCallDelta(index, { function: { arguments: args } }, this.ctx.legacyFunctions);
        return delta === undefined ? '' : this.chunk(delta);
      }
      case 'message-end': {
        const d = ev.delta;
        if (d?.finish_reason === 'ERROR' || d?.error) return this.fail(generationFailed(d.error));
        this.ended = true;
        let out = this.start() + this.chunk({}, finishReason(d?.finish_reason, this.ctx.legacyFunctions));
        if (this.ctx.includeUsage) out += sseEvent(usageChunk(this.id, this.ctx.model, this.created, toUsage(d?.usage)));
        return out;
      }
      default:
        return '';
    }
  }
}
