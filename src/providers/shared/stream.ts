/**
 * The base of every translated stream: the provider's streamed answer in,
 * OpenAI's chat.completion.chunk events out. One rule for how a stream ends:
 *
 * - the provider's end marker arrived (`complete`): the usage chunk (every
 *   translated stream reports usage; the respond stage strips it where the client did
 *   not ask for it), then `data: [DONE]`;
 * - anything else ends it in an error event, `data: {"error": …}` in the
 *   contract's envelope (OpenAI's SDKs raise it), and never a `[DONE]`, so
 *   no client takes a cut answer for a whole one: the provider's own error
 *   event (`fail`), an event the gateway cannot read (502
 *   `bad_upstream_stream`), or a body that ends before the end marker (502
 *   `incomplete_stream`).
 *
 * After either, nothing the provider sends counts; after an error the stream
 * ends at once and lets go of the provider's body.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { GatewayError } from '../../shared/errors.js';
import { chatChunk, completionId, nowSeconds, SSE_DONE, sseEvent, usageChunk, type FinishReason, type OpenAIUsage } from './openai-answer.js';
import { MAX_EVENT_BYTES, SseReader, type SseEvent } from './sse.js';

/** The 502 of a stream event the gateway cannot read (`what` follows the provider's name). */
export function badStream(provider: string, what: string): GatewayError {
  return new GatewayError(502, `${provider} ${what}`, { code: 'bad_upstream_stream' });
}

/** The 502 of a stream that ended before its end marker (`when`: "before message_stop"). */
export function incompleteStream(provider: string, when: string): GatewayError {
  return new GatewayError(502, `${provider} stream ended ${when}`, { code: 'incomplete_stream' });
}

/**
 * Characters a translator may hold of one stream at once to send again later
 * (a thinking block until its end, the Responses API's whole output for
 * response.completed), an entry per tool call or candidate counted as
 * HELD_ENTRY: past it the stream ends in a 502, so a provider, or a caller's
 * custom_host, that streams without end cannot fill the gateway's memory.
 * An eighth of MAX_EVENT_BYTES: the event made of what is held (each
 * character at most 6 bytes of JSON, as a \uXXXX escape) stays readable by
 * the readers after it (the stream guardrail, the Responses translator).
 * Answers are far below it (128 k tokens are about half a million characters).
 */
export const MAX_HELD_CHARS = MAX_EVENT_BYTES / 8;
export const HELD_ENTRY = 64;

/** The 502 of a stream past MAX_HELD_CHARS. */
export function heldTooMuch(provider: string): GatewayError {
  return new GatewayError(502, `${provider} streamed more than the ${MAX_HELD_CHARS} characters the gateway holds of a stream it translates`, { code: 'upstream_answer_too_large' });
}

export abstract class TranslatedStream extends Transform {
  /** The answer's id, model and creation time, as every chunk repeats them; subclasses take the provider's where it sends them. */
  protected id = completionId();
  protected created = nowSeconds();
  private over = false;
  private held = 0;

  /**
   * `provider` names it in errors; `endMarker` is what a whole stream ends
   * with ("message_stop"), named when a stream ends without it.
   */
  constructor(
    protected readonly provider: string,
    protected model: string,
    private readonly endMarker: string,
  ) {
    super();
  }

  /** Provider bytes: the events they complete, handled. */
  protected abstract decode(chunk: Buffer): void;
  /** The provider's body ended: what is still buffered, handled. */
  protected abstract decodeEnd(): void;

  /** The stream has ended (end marker or error): nothing more counts. */
  protected get ended(): boolean {
    return this.over;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (!this.over) this.decode(chunk);
    done();
  }

  override _flush(done: TransformCallback): void {
    if (!this.over) this.decodeEnd();
    if (!this.over) this.fail(incompleteStream(this.provider, `before ${this.endMarker}`));
    done();
  }

  /** Counts `n` more characters held until later (fewer, when negative: given up); false, the stream ended, once past MAX_HELD_CHARS: nothing more may be pushed. */
  protected hold(n: number): boolean {
    if (this.over) return false;
    this.held += n;
    if (this.held <= MAX_HELD_CHARS) return true;
    this.fail(heldTooMuch(this.provider));
    return false;
  }

  /** A chat.completion.chunk of choice `index` carrying `delta`. */
  protected chunk(delta: Record<string, unknown>, finish: FinishReason | null = null, logprobs: unknown = null, index = 0): void {
    const out = chatChunk(this.id, this.model, this.created, delta, finish);
    if (index !== 0 || logprobs !== null) {
      const choice = (out.choices as Record<string, unknown>[])[0]!;
      choice.index = index;
      choice.logprobs = logprobs;
    }
    this.push(sseEvent(out));
  }

  /** The provider's end marker arrived: the usage chunk (when the provider reported usage), then [DONE]. */
  protected complete(usage: OpenAIUsage | undefined): void {
    if (usage !== undefined) this.push(sseEvent(usageChunk(this.id, this.model, this.created, usage)));
    this.push(SSE_DONE);
    this.over = true;
  }

  /** An error ends the stream: its event, no [DONE]; the provider's body is let go once the client has read it. */
  protected fail(error: GatewayError): void {
    this.push(sseEvent(error.toJSON()));
    this.over = true;
    this.push(null);
    this.once('end', () => this.destroy());
  }
}

/**
 * A provider that streams server-sent events of JSON: each event's data
 * parsed, `event(data, name)` left to the subclass. Empty events (keep-alives)
 * and the `[DONE]` some providers add after their own end event are skipped.
 */
export abstract class SseTranslatedStream extends TranslatedStream {
  private readonly reader = new SseReader();

  protected abstract event(data: unknown, name: string | undefined): void;

  protected override decode(chunk: Buffer): void {
    this.dispatch(this.reader.push(chunk));
  }

  protected override decodeEnd(): void {
    // end() still counts a last event without its blank line.
    this.dispatch(this.reader.end());
  }

  private dispatch(events: SseEvent[]): void {
    for (const e of events) {
      if (this.ended) return;
      if (e.data === '' || e.data === '[DONE]') continue;
      let data: unknown;
      try {
        data = JSON.parse(e.data);
      } catch {
        this.fail(badStream(this.provider, 'sent a stream event that is not JSON'));
        return;
      }
      this.event(data, e.event);
    }
  }
}
