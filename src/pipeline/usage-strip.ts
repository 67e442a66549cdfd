/**
 * Takes back out of a stream what the gateway's own include_usage put in
 * (providers/shared/stream-usage.ts), so the client gets the bytes it would
 * have got without it: the last chunk, whose `choices` is empty and whose
 * `usage` is an object, goes whole; the `"usage": null` OpenAI then puts in
 * every other chunk goes with its comma. Everything else passes byte for
 * byte (no decoding, no re-serialising).
 *
 * Events are edited whole, so a chunk is passed on up to its last complete
 * event (a blank line ends one; LF or CRLF line ends, as providers send them)
 * and the rest waits for the next chunk: a client's SSE parser could not act
 * on a partial event anyway. A run of events with no `"usage"` in it goes on
 * as the same buffer, unread past that one search. Only new bytes are
 * searched for an event's end, and an event still open is gathered in a
 * buffer that doubles: joining and searching all of it on every chunk would
 * cost a long event the square of its length.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { ProviderHeaders } from '../providers/contract.js';
import { EVENT_TOO_LONG, MAX_EVENT_BYTES } from '../providers/shared/sse.js';
import { isEventStreamType, isReadable } from '../shared/content-type.js';
import { through } from '../shared/through.js';

/**
 * Whether an answer is to be stripped: the gateway added usage, the answer is
 * a 2xx event stream the gateway can read (not compressed).
 */
export function stripsAddedUsage(added: boolean | undefined, status: number, headers: ProviderHeaders): boolean {
  return added === true && status >= 200 && status < 300 && isReadable(headers) && isEventStreamType(headers['content-type']);
}

/** `body` without the usage the gateway asked for. The answer's length changes: no content-length may go with it. */
export function stripAddedUsage(body: Readable): Readable {
  return through(body, new UsageStripper());
}

const EMPTY = Buffer.alloc(0);

class UsageStripper extends Transform {
  /**
   * The start of an event whose end has not come yet: pending[0, pendingLength), in
   * a chunk as it came or, once more come, a buffer of the stripper's that
   * doubles as it fills. That one is never written into once passed on.
   */
  private pending: Buffer = EMPTY;
  private pendingLength = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    // What is pending holds no event end (it starts after the last one), but its last two bytes may begin one.
    const end = lastEventEnd(chunk, this.byteBefore(1), this.byteBefore(2));
    if (end > 0) {
      const head = end === chunk.length ? chunk : chunk.subarray(0, end);
      this.push(strip(this.pendingLength === 0 ? head : this.joined(head)));
    }
    if (end < chunk.length) {
      this.append(end === 0 ? chunk : chunk.subarray(end));
      // At most one event's bound, as the SSE reader's: a provider the caller can choose (custom_host) could send one that never ends.
      if (this.pendingLength > MAX_EVENT_BYTES) return done(EVENT_TOO_LONG);
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    // A last event without its blank line (a stream cut short) is still edited.
    if (this.pendingLength > 0) this.push(strip(this.joined(EMPTY)));
    done();
  }

  /** The byte `back` places before the end of what is pending (1: the last); -1 when there is none. */
  private byteBefore(back: number): number {
    return back <= this.pendingLength ? this.pending[this.pendingLength - back]! : -1;
  }

  private append(bytes: Buffer): void {
    if (this.pendingLength === 0) {
      this.pending = bytes;
      this.pendingLength = bytes.length;
      return;
    }
    const length = this.pendingLength + bytes.length;
    if (length > this.pending.length) {
      const grown = Buffer.allocUnsafe(Math.max(length, 2 * this.pendingLength));
      this.pending.copy(grown, 0, 0, this.pendingLength);
      this.pending = grown;
    }
    bytes.copy(this.pending, this.pendingLength);
    this.pendingLength = length;
  }

  /** What is pending, then `rest`, as one buffer; nothing is pending after. */
  private joined(rest: Buffer): Buffer {
    this.append(rest);
    const all = this.pending.subarray(0, this.pendingLength);
    this.pending = EMPTY;
    this.pendingLength = 0;
    return all;
  }
}

const USAGE = Buffer.from('"usage"');
const DATA = Buffer.from('data:');
const NULL = Buffer.from('null');

/** Complete events, edited; the same buffer when none mentions usage. */
function strip(events: Buffer): Buffer {
  let usageAt = events.indexOf(USAGE);
  if (usageAt === -1) return events;
  const parts: Buffer[] = [];
  let kept = 0; // events[kept..] is still to be copied out
  for (let start = 0; usageAt !== -1; ) {
    const end = nextEventEnd(events, start);
    if (usageAt < end) {
      const cut = cutOf(events, start, end);
      if (cut !== null) {
        parts.push(events.subarray(kept, cut[0]));
        kept = cut[1];
      }
      usageAt = events.indexOf(USAGE, end);
    }
    start = end;
  }
  if (kept === 0) return events;
  parts.push(events.subarray(kept));
  return Buffer.concat(parts);
}

/** The end of the event starting at `from` (after its blank line: LF LF, or LF CR LF), or the buffer's end. */
function nextEventEnd(buf: Buffer, from: number): number {
  for (let lf = buf.indexOf(0x0a, from); lf !== -1; lf = buf.indexOf(0x0a, lf + 1)) {
    if (buf[lf + 1] === 0x0a) return lf + 2;
    if (buf[lf + 1] === 0x0d && buf[lf + 2] === 0x0a) return lf + 3;
  }
  return buf.length;
}

/** The end of the last complete event in `buf`, 0 when there is none; `before1` and `before2` are the bytes before it (-1: none). */
function lastEventEnd(buf: Buffer, before1: number, before2: number): number {
  const at = (i: number): number => (i >= 0 ? buf[i]! : i === -1 ? before1 : before2);
  for (let lf = buf.lastIndexOf(0x0a); lf !== -1; lf = lf === 0 ? -1 : buf.lastIndexOf(0x0a, lf - 1)) {
    if (at(lf - 1) === 0x0a || (at(lf - 1) === 0x0d && at(lf - 2) === 0x0a)) return lf + 1;
  }
  return 0;
}

/**
 * What to cut from the event in [start, end) that mentions usage: all of it
 * (the usage chunk), its `"usage": null`, or nothing (null).
 */
function cutOf(buf: Buffer, start: number, end: number): [number, number] | null {
  const data = dataField(buf, start, end);
  if (data === null) return null;
  const { usage, emptyChoices } = topLevelKeys(buf, data.start, data.end);
  if (usage === null) return null;
  if (usage.value === 'object') return emptyChoices ? [start, end] : null;
  return usage.value === 'null' ? nullUsageSpan(buf, usage, data.start, data.end) : null;
}

/** The value of the one `data:` line of the event in [start, end); null with none or several (not a chunk of OpenAI's). */
function dataField(buf: Buffer, start: number, end: number): { start: number; end: number } | null {
  let found: { start: number; end: number } | null = null;
  for (let line = start; line < end; ) {
    let eol = line;
    while (eol < end && buf[eol] !== 0x0a && buf[eol] !== 0x0d) eol++;
    if (eol - line >= 5 && bytesAt(buf, line, DATA)) {
      if (found !== null) return null;
      found = { start: buf[line + 5] === 0x20 ? line + 6 : line + 5, end: eol };
    }
    line = eol + (buf[eol] === 0x0d && buf[eol + 1] === 0x0a ? 2 : 1);
  }
  return found;
}

interface UsageKey {
  /** The key's opening quote. */
  start: number;
  /** Just after the value (for null: after `null`). */
  end: number;
  value: 'null' | 'object' | 'other';
}

const CHOICES = Buffer.from('"choices"');

/**
 * The top-level `"usage"` key of the JSON object in [start, end), and whether
 * its top-level `choices` is empty, skipping strings and nested values, so a
 * message that merely mentions usage is never edited. An object cut short
 * (a stream that broke) is read as far as it goes.
 */
function topLevelKeys(buf: Buffer, start: number, end: number): { usage: UsageKey | null; emptyChoices: boolean } {
  let usage: UsageKey | null = null;
  let emptyChoices = false;
  let depth = 0;
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c === 0x22 /* " */) {
      const open = i;
      for (i++; i < end && buf[i] !== 0x22; i++) if (buf[i] === 0x5c /* \ */) i++;
      if (depth !== 1) continue;
      const colon = skipSpace(buf, i + 1, end);
      if (buf[colon] !== 0x3a /* : */) continue; // a string value, not a key
      const v = skipSpace(buf, colon + 1, end);
      if (isName(buf, open, i, USAGE)) {
        const value = v + 4 <= end && bytesAt(buf, v, NULL) ? 'null' : buf[v] === 0x7b /* { */ ? 'object' : 'other';
        usage = { start: open, end: value === 'null' ? v + 4 : v, value };
      } else if (isName(buf, open, i, CHOICES)) {
        emptyChoices = buf[v] === 0x5b /* [ */ && buf[skipSpace(buf, v + 1, end)] === 0x5d; /* ] */
      }
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return { usage, emptyChoices };
}

/** Whether the string from quote `open` to quote `close` is `name` (quotes included). */
function isName(buf: Buffer, open: number, close: number, name: Buffer): boolean {
  return close - open + 1 === name.length && bytesAt(buf, open, name);
}

/** Whether `buf` holds `bytes` at `at` (a loop: cheaper than a native compare for a few bytes). */
function bytesAt(buf: Buffer, at: number, bytes: Buffer): boolean {
  for (let k = 0; k < bytes.length; k++) if (buf[at + k] !== bytes[k]) return false;
  return true;
}

/** The bytes to cut for `"usage": null`: with the comma before it, or the one after it when it is the first key. */
function nullUsageSpan(buf: Buffer, key: UsageKey, dataStart: number, dataEnd: number): [number, number] {
  let before = key.start - 1;
  while (before > dataStart && isSpace(buf[before]!)) before--;
  if (buf[before] === 0x2c /* , */) return [before, key.end];
  const after = skipSpace(buf, key.end, dataEnd);
  return buf[after] === 0x2c ? [key.start, skipSpace(buf, after + 1, dataEnd)] : [key.start, key.end];
}

function skipSpace(buf: Buffer, i: number, end: number): number {
  while (i < end && isSpace(buf[i]!)) i++;
  return i;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}
