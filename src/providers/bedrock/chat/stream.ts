/**
 * ConverseStream (`POST /model/{modelId}/converse-stream`) → OpenAI
 * chat.completion.chunk SSE. Source: Bedrock Runtime API reference,
 * ConverseStream and ConverseStreamOutput. The body is eventstream-framed
 * (eventstream.ts); each message carries `:message-type` (`event`,
 * `exception` or `error`), `:event-type` and a JSON payload:
 *
 *   messageStart       {role}                                      → delta {role:'assistant', content:''}
 *   contentBlockStart  {contentBlockIndex, start:{toolUse:{toolUseId,name}}} → delta tool_calls[{index,id,type,function:{name,arguments:''}}]
 *   contentBlockDelta  {contentBlockIndex, delta:{text}}           → delta {content}
 *                      {…, delta:{toolUse:{input}}}               → delta tool_calls[{index, function:{arguments}}]
 *                      {…, delta:{reasoningContent:{text}}}       → delta {reasoning_content}
 *   contentBlockStop   {contentBlockIndex}                         → nothing
 *   messageStop        {stopReason}                                → delta {} with finish_reason
 *   metadata           {usage, metrics}                            → usage chunk (stream_options.include_usage)
 *   exception / error                                              → `data: {"error":{…}}` and the stream ends
 *
 * Payloads may carry a padding member `p`; unknown members and event types are ignored.
 * A corrupt frame (CRC mismatch, impossible lengths) or a body cut mid-message
 * ends the stream with an error event: no byte after it becomes a chunk.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { GatewayError } from '../../../shared/errors.js';
import { chatChunk, completionId, nowSeconds, SSE_DONE, sseEvent, toolCallDelta, usageChunk } from '../../shared/openai-answer.js';
import { finishReason, toUsage, type ChatContext } from './request.js';
import { streamException } from '../errors.js';
import { EventStreamDecoder, EventStreamError, type EventStreamMessage } from '../eventstream.js';
import type { ContentBlockDeltaEvent, ContentBlockStartEvent, MessageStopEvent, MetadataEvent } from '../wire.js';

export function converseStream(ctx: ChatContext): Transform {
  return new ConverseStreamTranslator(ctx);
}

class ConverseStreamTranslator extends Transform {
  private readonly decoder = new EventStreamDecoder();
  private readonly id = completionId();
  private readonly created = nowSeconds();
  /** contentBlockIndex of each tool use → its index among the answer's tool calls. */
  private readonly toolIndex = new Map<number, number>();
  private stopped = false;
  private failed = false;

  constructor(private readonly ctx: ChatContext) {
    super();
    // After an error event the client has all it will get: once it is read, let go of the provider.
    this.once('end', () => {
      if (this.failed) this.destroy();
    });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (this.failed) return done();
    let messages: EventStreamMessage[];
    try {
      messages = this.decoder.push(chunk);
    } catch (e) {
      if (!(e instanceof EventStreamError)) return done(e as Error);
      this.fail(new GatewayError(502, `bedrock stream is corrupt: ${e.message}`, { code: 'bad_upstream_stream' }));
      return done();
    }
    for (const m of messages) {
      this.handle(m);
      if (this.failed) break;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.failed) return done();
    if (this.decoder.pending > 0) {
      this.fail(new GatewayError(502, `bedrock stream ended inside a message (${this.decoder.pending} bytes left)`, { code: 'bad_upstream_stream' }));
    } else if (!this.stopped) {
      this.fail(new GatewayError(502, 'bedrock stream ended before messageStop', { code: 'bad_upstream_stream' }));
    } else {
      this.push(SSE_DONE);
    }
    done();
  }

  private handle(m: EventStreamMessage): void {
    const kind = m.headers[':message-type'];
    if (kind === 'exception') {
      this.fail(streamException(String(m.headers[':exception-type'] ?? 'internalServerException'), m.payload));
      return;
    }
    if (kind === 'error') {
      const code = String(m.headers[':error-code'] ?? 'InternalFailure');
      this.fail(new GatewayError(502, String(m.headers[':error-message'] ?? `bedrock stream failed: ${code}`), { code }));
      return;
    }
    if (kind !== 'event') return;
    let payload: unknown;
    try {
      payload = JSON.parse(m.payload.toString('utf8'));
    } catch {
      this.fail(new GatewayError(502, `bedrock stream event '${String(m.headers[':event-type'])}' is not JSON`, { code: 'bad_upstream_stream' }));
      return;
    }
    switch (m.headers[':event-type']) {
      case 'messageStart':
        this.chunk({ role: 'assistant', content: '' });
        break;
      case 'contentBlockStart':
        this.blockStart(payload as ContentBlockStartEvent);
        break;
      case 'contentBlockDelta':
        this.blockDelta(payload as ContentBlockDeltaEvent);
        break;
      case 'messageStop':
        this.stopped = true;
        this.chunk({}, finishReason((payload as MessageStopEvent).stopReason, this.ctx.legacyFunctions));
        break;
      case 'metadata': {
        const usage = (payload as MetadataEvent).usage;
        if (this.ctx.includeUsage && usage !== undefined) {
          this.push(sseEvent(usageChunk(this.id, this.ctx.model, this.created, toUsage(usage))));
        }
        break;
      }
      // contentBlockStop and event types added later carry nothing a chunk needs.
    }
  }

  private blockStart(e: ContentBlockStartEvent): void {
    const tool = e.start?.toolUse;
    if (tool === undefined) return;
    const index = this.toolIndex.size;
    this.toolIndex.set(e.contentBlockIndex, index);
    // Legacy `functions` answers carry one call, as the whole answer does: the first.
    const delta = toolCallDelta(index, { id: tool.toolUseId, type: 'function', function: { name: tool.name, arguments: '' } }, this.ctx.legacyFunctions);
    if (delta !== undefined) this.chunk(delta);
  }

  private blockDelta(e: ContentBlockDeltaEvent): void {
    const d = e.delta ?? {};
    if (typeof d.text === 'string') {
      this.chunk({ content: d.text });
    } else if (d.toolUse !== undefined) {
      const index = this.toolIndex.get(e.contentBlockIndex);
      if (index === undefined) return; // no contentBlockStart named this tool: nothing to attach it to
      const delta = toolCallDelta(index, { function: { arguments: d.toolUse.input } }, this.ctx.legacyFunctions);
      if (delta !== undefined) this.chunk(delta);
    } else if (typeof d.reasoningContent?.text === 'string') {
      // Signatures and redacted reasoning have no place in OpenAI's chunk.
      this.chunk({ reasoning_content: d.reasoningContent.text });
    }
  }

  private chunk(delta: Record<string, unknown>, finish: ReturnType<typeof finishReason> | null = null): void {
    this.push(sseEvent(chatChunk(this.id, this.ctx.model, this.created, delta, finish)));
  }

  /** The error in the contract's envelope as the last event; nothing follows it. */
  private fail(error: GatewayError): void {
    this.failed = true;
    this.push(sseEvent(error.toJSON()));
    this.push(null);
  }
}
