/**
 * Takes back out of a stream what the gateway's own include_usage put in
 * (providers/shared/stream-usage.ts), so the client gets the bytes it would
 * have got without it: the last chunk, whose `choices` is empty and whose
 * `usage` is an object, goes whole; the `"usage": null` OpenAI then puts in
 * every other chunk goes with its comma. Everything else passes byte for
 * byte (no decoding, no re-serialising).
 *
 * Events are edited whole, so a chunk is passed on up to its last complete
 * event (a blank line, LF or CRLF, ends one) and the rest waits for the next chunk; a
 * client's SSE parser could not act on a partial event anyway. A run of
 * events with no `"usage"` in it goes on as it came.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { ProviderHeaders } from '../providers/types.js';
import { through } from '../shared/through.js';

/**
 * Whether an answer is to be stripped: the gateway added usage, the answer is
 * a 2xx event stream the gateway can read (not compressed).
 */
export function stripsAddedUsage(added: boolean | undefined, status: number, headers: ProviderHeaders): boolean {
  if (added !== true || status < 200 || status >= 300) return false;
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') return false;
  const type = headers['content-type'];
  return typeof type === 'string' && type.toLowerCase().startsWith('text/event-stream');
}

/** `body` without the usage the gateway asked for. The answer's length changes: no content-length may go with it. */
export function stripAddedUsage(body: Readable): Readable {
  return through(body, new UsageStripper());
}

class UsageStripper extends Transform {
  /** The start of an event whose end has not come yet. */
  private pending: Buffer | null = null;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const data = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    const end = lastEventEnd(data);
    this.pending = end === data.length ? null : data.subarray(end);
    if (end > 0) this.push(strip(end === data.length ? data : data.subarray(0, end)));
    done();
  }

  override _flush(done: TransformCallback): void {
    // A last event without its blank line (a stream cut short) is still edited.
    if (this.pending !== null) this.push(strip(this.pending));
    done();
  }
}

const USAGE = Buffer.from('"usage"');

/** Complete events, edited; the same buffer when none mentions usage. */
function strip(events: Buffer): Buffer {
  if (events.indexOf(USAGE) === -1) return events;
  const parts: Buffer[] = [];
  let changed = false;
  for (let start = 0; start < events.length; ) {
    const end = nextEventEnd(events, start);
    const event = events.subarray(start, end);
    const edited = event.indexOf(USAGE) === -1 ? event : editEvent(event);
    if (edited !== event) changed = true;
    if (edited !== null) parts.push(edited);
    start = end;
  }
  return changed ? Buffer.concat(parts) : events;
}

/** The end of the event starting at `from` (after its blank line), or the buffer's end. */
function nextEventEnd(buf: Buffer, from: number): number {
  const lf = buf.indexOf('\n\n', from);
  const crlf = buf.indexOf('\n\r\n', from);
  if (lf === -1 && crlf === -1) return buf.length;
  if (crlf === -1 || (lf !== -1 && lf < crlf)) return lf + 2;
  return crlf + 3;
}

/** The end of the last complete event in `buf`; 0 when there is none. */
function lastEventEnd(buf: Buffer): number {
  const lf = buf.lastIndexOf('\n\n');
  const crlf = buf.lastIndexOf('\n\r\n');
  return Math.max(lf === -1 ? 0 : lf + 2, crlf === -1 ? 0 : crlf + 3);
}

/**
 * One event mentioning usage: null to drop it (the usage chunk), a shorter
 * copy without `"usage": null`, or the event itself.
 */
function editEvent(event: Buffer): Buffer | null {
  const data = dataField(event);
  if (data === null) return event;
  const { usage, emptyChoices } = topLevelKeys(event, data.start, data.end);
  if (usage === null) return event;
  if (usage.value === 'object') return emptyChoices ? null : event;
  if (usage.value !== 'null') return event;
  const [from, to] = nullUsageSpan(event, usage, data.start);
  return Buffer.concat([event.subarray(0, from), event.subarray(to)]);
}

/** The value of the event's one `data:` line; null with none or several (not a chunk of OpenAI's). */
function dataField(event: Buffer): { start: number; end: number } | null {
  let found: { start: number; end: number } | null = null;
  for (let line = 0; line < event.length; ) {
    let eol = line;
    while (eol < event.length && event[eol] !== 0x0a && event[eol] !== 0x0d) eol++;
    if (eol - line >= 5 && event.toString('latin1', line, line + 5) === 'data:') {
      if (found !== null) return null;
      const start = event[line + 5] === 0x20 ? line + 6 : line + 5;
      found = { start, end: eol };
    }
    line = eol + (event[eol] === 0x0d && event[eol + 1] === 0x0a ? 2 : 1);
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
        const value = buf.toString('latin1', v, v + 4) === 'null' ? 'null' : buf[v] === 0x7b /* { */ ? 'object' : 'other';
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
  return close - open + 1 === name.length && buf.compare(name, 0, name.length, open, close + 1) === 0;
}

/** The bytes to cut for `"usage": null`: with the comma before it, or the one after it when it is the first key. */
function nullUsageSpan(buf: Buffer, key: UsageKey, dataStart: number): [number, number] {
  let before = key.start - 1;
  while (before > dataStart && isSpace(buf[before]!)) before--;
  if (buf[before] === 0x2c /* , */) return [before, key.end];
  const after = skipSpace(buf, key.end, buf.length);
  return buf[after] === 0x2c ? [key.start, skipSpace(buf, after + 1, buf.length)] : [key.start, key.end];
}

function skipSpace(buf: Buffer, i: number, end: number): number {
  while (i < end && isSpace(buf[i]!)) i++;
  return i;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}
