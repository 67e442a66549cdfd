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
 *   metadata           {usage, metrics}                            → the end (after messageStop): usage chunk, [DONE]
 *   exception / error                                              → `data: {"error":{…}}`, the end
 *
 * Payloads may carry a padding member `p`; unknown members and event types are ignored.
 * A stream ends as every translated stream does (shared/stream.ts): a corrupt
 * frame (CRC mismatch, impossible lengths) is `bad_upstream_stream`, a body
 * cut before messageStop (or inside a message) `incomplete_stream`.
 */
import { GatewayError } from '../../../shared/errors.js';
import { toolCallDelta, type OpenAIUsage } from '../../shared/openai-answer.js';
import { badStream, HELD_ENTRY, incompleteStream, TranslatedStream } from '../../shared/stream.js';
import { finishReason, toUsage } from './response.js';
import { streamException } from '../errors.js';
import { EventStreamDecoder, EventStreamError, type EventStreamMessage } from '../eventstream.js';
import type { ContentBlockDeltaEvent, ContentBlockStartEvent, MessageStopEvent, MetadataEvent } from '../wire.js';

/** `legacyFunctions`: the request used `functions`, so calls stream as function_call deltas. */
export function converseStream(model: string, legacyFunctions: boolean): ConverseStreamTranslator {
  return new ConverseStreamTranslator(model, legacyFunctions);
}

class ConverseStreamTranslator extends TranslatedStream {
  private readonly decoder = new EventStreamDecoder();
  /** contentBlockIndex of each tool use → its index among the answer's tool calls. */
  private readonly toolIndex = new Map<number, number>();
  /** messageStop arrived: the metadata event (usage) may still follow. */
  private stopped = false;
  private usage: OpenAIUsage | undefined;

  constructor(
    model: string,
    private readonly legacyFunctions: boolean,
  ) {
    super('bedrock', model, 'messageStop');
  }

  protected override decode(chunk: Buffer): void {
    let messages: EventStreamMessage[];
    try {
      messages = this.decoder.push(chunk);
    } catch (e) {
      if (!(e instanceof EventStreamError)) throw e;
      this.fail(badStream('bedrock', `stream is corrupt: ${e.message}`));
      return;
    }
    for (const m of messages) {
      this.handle(m);
      if (this.ended) break;
    }
  }

  protected override decodeEnd(): void {
    const left = this.decoder.pending;
    if (left > 0) this.fail(incompleteStream('bedrock', `inside a message (${left} bytes left)`));
    // A stream that stopped without its metadata event ends without usage.
    else if (this.stopped) this.complete(this.usage);
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
      this.fail(badStream('bedrock', `stream event '${String(m.headers[':event-type'])}' is not JSON`));
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
        this.chunk({}, finishReason((payload as MessageStopEvent).stopReason, this.legacyFunctions));
        break;
      case 'metadata': {
        const usage = (payload as MetadataEvent).usage;
        if (usage !== undefined) this.usage = toUsage(usage);
        if (this.stopped) this.complete(this.usage);
        break;
      }
      // contentBlockStop and event types added later carry nothing a chunk needs.
    }
  }

  private blockStart(e: ContentBlockStartEvent): void {
    const tool = e.start?.toolUse;
    if (tool === undefined || !this.hold(HELD_ENTRY)) return;
    const index = this.toolIndex.size;
    this.toolIndex.set(e.contentBlockIndex, index);
    // Legacy `functions` answers carry one call, as the whole answer does: the first.
    const delta = toolCallDelta(index, { id: tool.toolUseId, type: 'function', function: { name: tool.name, arguments: '' } }, this.legacyFunctions);
    if (delta !== undefined) this.chunk(delta);
  }

  private blockDelta(e: ContentBlockDeltaEvent): void {
    const d = e.delta ?? {};
    if (typeof d.text === 'string') {
      this.chunk({ content: d.text });
    } else if (d.toolUse !== undefined) {
      const index = this.toolIndex.get(e.contentBlockIndex);
      if (index === undefined) return; // no contentBlockStart named this tool: nothing to attach it to
      const delta = toolCallDelta(index, { function: { arguments: d.toolUse.input } }, this.legacyFunctions);
      if (delta !== undefined) this.chunk(delta);
    } else if (typeof d.reasoningContent?.text === 'string') {
      // Signatures and redacted reasoning have no place in OpenAI's chunk.
      this.chunk({ reasoning_content: d.reasoningContent.text });
    }
  }
}
