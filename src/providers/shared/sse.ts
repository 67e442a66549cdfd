/**
 * Reads a server-sent-events body as it arrives (WHATWG HTML, "Parsing an
 * event stream"): lines end in LF, CRLF or CR; `event:` names the event,
 * `data:` lines join with LF, `:` starts a comment, a blank line dispatches.
 * Chunks may split anywhere, even inside a UTF-8 character or a CRLF.
 *
 * Each byte is searched once and a line not ended yet is kept as bytes, in a
 * buffer that doubles: rescanning or re-joining it on every chunk would cost a
 * long line the square of its length. A line is decoded once it ends (LF and
 * CR never occur inside a UTF-8 character), so a character split between
 * chunks needs no care.
 */

import { GatewayError } from '../../shared/errors.js';

export interface SseEvent {
  event: string | undefined;
  data: string;
}

/**
 * The most one event may hold while it is read, in bytes: its data lines so
 * far and the line not ended yet. SSE sets no limit, and an upstream the
 * caller can choose (custom_host) could send one line that never ends. 16 MiB,
 * as one Bedrock event-stream message (eventstream.ts): far past any real
 * event (a delta is a few KB; a Responses event carrying a whole answer or a
 * partial image, a few MB).
 */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;

/**
 * What an event past MAX_EVENT_BYTES is read as: an event with this data, the
 * last the reader returns. It is not JSON, so the readers of JSON events fail
 * the stream on it as on any event they cannot read (502
 * bad_upstream_stream); a reader that passes events on unread (the stream
 * guardrail) asks `tooLong`. Not thrown: readers push from stream callbacks
 * that do not catch, where a throw would be uncaught.
 */
export const TOO_LONG_EVENT = `event longer than ${MAX_EVENT_BYTES} bytes`;

/** The 502 a stream ends with on an event past MAX_EVENT_BYTES, where the gateway relays events it does not translate (the stream guardrail, the usage stripper). */
export const EVENT_TOO_LONG = new GatewayError(502, `the provider sent a stream event longer than the ${MAX_EVENT_BYTES} bytes the gateway reads`, { code: 'bad_upstream_stream' });

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = Buffer.alloc(0);

export class SseReader {
  /** The line not ended yet: partial[0, partialLength). */
  private partial = EMPTY;
  private partialLength = 0;
  /** The held line ended in a CR that was a chunk's last byte: an LF opening the next chunk is part of its line end. */
  private cr = false;
  private event: string | undefined;
  private data: string[] = [];
  /** The bytes of the event's data lines. */
  private dataBytes = 0;
  /** An event went past MAX_EVENT_BYTES: nothing more is read. */
  private failed = false;

  /** Whether the reader stopped at an event past MAX_EVENT_BYTES: the last event it returned is then TOO_LONG_EVENT, its own. */
  get tooLong(): boolean {
    return this.failed;
  }

  /** Feeds bytes; returns the events they complete. */
  push(chunk: Buffer): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.failed || chunk.length === 0) return out;
    let start = 0;
    if (this.cr) {
      this.cr = false;
      this.take(chunk, 0, 0, out);
      if (chunk[0] === LF) start = 1;
    }
    // The next LF and CR at or after `start` (chunk.length: none), each searched for once.
    let lf = -1;
    let cr = -1;
    while (!this.failed) {
      if (lf < start) lf = next(chunk, LF, start);
      if (cr < start) cr = next(chunk, CR, start);
      const end = Math.min(lf, cr);
      if (end === chunk.length) {
        this.keep(chunk, start, end, out);
        break;
      }
      // A CR at the very end may be the first half of a CRLF: its line waits for the next chunk.
      if (end === cr && end === chunk.length - 1) {
        this.cr = true;
        this.keep(chunk, start, end, out);
        break;
      }
      this.take(chunk, start, end, out);
      start = end === cr && lf === end + 1 ? end + 2 : end + 1;
    }
    return out;
  }

  /**
   * The body ended. The standard drops an event without its closing blank
   * line; here it still counts, so a provider that omits the last blank line
   * loses nothing.
   */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.failed) return out;
    if (this.cr || this.partialLength > 0) this.take(EMPTY, 0, 0, out);
    this.line('', 0, out);
    return out;
  }

  /** Holds chunk[from, to) as part of a line not ended yet. */
  private keep(chunk: Buffer, from: number, to: number, out: SseEvent[]): void {
    if (this.partialLength + (to - from) + this.dataBytes > MAX_EVENT_BYTES) return this.fail(out);
    this.append(chunk, from, to);
  }

  /** Ends the held line with chunk[from, to) and reads it. */
  private take(chunk: Buffer, from: number, to: number, out: SseEvent[]): void {
    const bytes = this.partialLength + (to - from);
    if (bytes + this.dataBytes > MAX_EVENT_BYTES) return this.fail(out);
    if (this.partialLength === 0) return this.line(chunk.toString('utf8', from, to), bytes, out);
    this.append(chunk, from, to);
    const line = this.partial.toString('utf8', 0, bytes);
    this.partial = EMPTY;
    this.partialLength = 0;
    this.line(line, bytes, out);
  }

  private append(chunk: Buffer, from: number, to: number): void {
    const length = this.partialLength + (to - from);
    if (length > this.partial.length) {
      const grown = Buffer.allocUnsafe(Math.max(length, 2 * this.partial.length));
      this.partial.copy(grown, 0, 0, this.partialLength);
      this.partial = grown;
    }
    chunk.copy(this.partial, this.partialLength, from, to);
    this.partialLength = length;
  }

  private fail(out: SseEvent[]): void {
    this.failed = true;
    this.partial = EMPTY;
    this.partialLength = 0;
    this.data = [];
    out.push({ event: undefined, data: TOO_LONG_EVENT });
  }

  /** One line, `bytes` long on the wire. */
  private line(line: string, bytes: number, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event, data: this.data.join('\n') });
      this.event = undefined;
      this.data = [];
      this.dataBytes = 0;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' comment
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') {
      this.data.push(value);
      this.dataBytes += bytes;
    }
  }
}

function next(chunk: Buffer, byte: number, from: number): number {
  const at = chunk.indexOf(byte, from);
  return at === -1 ? chunk.length : at;
}
