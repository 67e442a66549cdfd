/**
 * Reads a server-sent-events body as it arrives (WHATWG HTML, "Parsing an
 * event stream"): lines end in LF, CRLF or CR; `event:` names the event,
 * `data:` lines join with LF, `:` starts a comment, a blank line dispatches.
 * Chunks may split anywhere, even inside a UTF-8 character or a CRLF.
 */
import { StringDecoder } from 'node:string_decoder';

export interface SseEvent {
  event: string | undefined;
  data: string;
}

export class SseReader {
  private readonly decoder = new StringDecoder('utf8');
  private buf = '';
  private event: string | undefined;
  private data: string[] = [];

  /** Feeds bytes; returns the events they complete. */
  push(chunk: Buffer): SseEvent[] {
    return this.lines(this.buf + this.decoder.write(chunk), false);
  }

  /**
   * The body ended. The standard drops an event without its closing blank
   * line; here it still counts, so a provider that omits the last blank line
   * loses nothing.
   */
  end(): SseEvent[] {
    const out = this.lines(this.buf + this.decoder.end(), true);
    this.line('', out);
    return out;
  }

  private lines(text: string, final: boolean): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (c === 13 && i === text.length - 1 && !final) break;
      this.line(text.slice(start, i), out);
      if (c === 13 && text.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
    }
    this.buf = text.slice(start);
    if (final && this.buf !== '') {
      this.line(this.buf, out);
      this.buf = '';
    }
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event, data: this.data.join('\n') });
      this.event = undefined;
      this.data = [];
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ':' comment
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
  }
}
