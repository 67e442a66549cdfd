/**
 * Decoder of AWS's binary event-stream framing (`application/vnd.amazon.eventstream`),
 * the body of ConverseStream. Source: the AWS "Event stream encoding" reference
 * (Transcribe / S3 Select docs) and awslabs/aws-c-event-stream:
 *
 *   message  = prelude, prelude CRC, headers, payload, message CRC
 *   prelude  = total length (uint32 BE, the whole message) + headers length (uint32 BE)
 *   CRCs     = CRC-32 (IEEE, as zlib) of the 8 prelude bytes, then of every byte before the message CRC
 *   header   = name length (uint8), name (UTF-8), value type (uint8), value:
 *              0 true, 1 false (no bytes), 2 int8, 3 int16 BE, 4 int32 BE, 5 int64 BE,
 *              6 bytes and 7 string (uint16 BE length + bytes), 8 timestamp (int64 ms), 9 UUID (16 bytes)
 *
 * A message whose CRC does not match is an error, never data: the caller stops.
 */
import { crc32 } from 'node:zlib'; // Node ≥ 20.15 (package.json asks for ≥ 20.18.1)

export type HeaderValue = boolean | number | bigint | string | Buffer | Date;

export interface EventStreamMessage {
  headers: Record<string, HeaderValue>;
  payload: Buffer;
}

export class EventStreamError extends Error {}

const PRELUDE = 8;
const PRELUDE_WITH_CRC = 12;
const MIN_MESSAGE = PRELUDE_WITH_CRC + 4;
/** aws-c-event-stream's limits: 16 MiB a message (also what the decoder may hold), 128 KiB of headers. */
export const MAX_MESSAGE = 16 * 1024 * 1024;
const MAX_HEADERS = 128 * 1024;

/**
 * Incremental: feed it bytes as they arrive, get back every message they
 * complete. A message that spans chunks is gathered in a buffer that doubles:
 * joining everything held on every chunk would cost a message the square of
 * its length. MAX_MESSAGE bounds what is held.
 */
export class EventStreamDecoder {
  /** The bytes not decoded yet are buf[from, to); buf is a chunk as it came, or one the decoder made. */
  private buf: Buffer = Buffer.alloc(0);
  private from = 0;
  private to = 0;

  /** Throws EventStreamError on a corrupt frame; nothing after it is decoded. */
  push(chunk: Buffer): EventStreamMessage[] {
    this.append(chunk);
    const out: EventStreamMessage[] = [];
    while (this.to - this.from >= PRELUDE_WITH_CRC) {
      const held = this.buf.subarray(this.from, this.to);
      // The prelude is checked before waiting for the rest, so a corrupt length cannot stall the stream.
      const total = checkPrelude(held);
      if (held.length < total) break;
      out.push(decodeMessage(held.subarray(0, total)));
      this.from += total;
    }
    return out;
  }

  /** Bytes of an incomplete message still held: non-zero at the end of the body means it was cut. */
  get pending(): number {
    return this.to - this.from;
  }

  /**
   * `chunk` after what is held: itself when nothing is, else copied past `to`
   * in a buffer of the decoder's, a new one twice as large when it is full
   * (never moved within: decoded messages may be views into it).
   */
  private append(chunk: Buffer): void {
    if (this.from === this.to) {
      this.buf = chunk;
      this.from = 0;
      this.to = chunk.length;
      return;
    }
    const held = this.to - this.from;
    if (this.buf.length - this.from < held + chunk.length) {
      const grown = Buffer.allocUnsafe(Math.max(held + chunk.length, 2 * held));
      this.buf.copy(grown, 0, this.from, this.to);
      this.buf = grown;
      this.from = 0;
      this.to = held;
    }
    chunk.copy(this.buf, this.to);
    this.to += chunk.length;
  }
}

/** Decodes one whole message (both CRCs checked). */
export function decodeMessage(frame: Buffer): EventStreamMessage {
  const total = checkPrelude(frame);
  if (frame.length !== total) throw new EventStreamError(`event-stream message is ${frame.length} bytes, its prelude says ${total}`);
  const expected = frame.readUInt32BE(total - 4);
  const actual = crc32(frame.subarray(0, total - 4));
  if (actual !== expected) {
    throw new EventStreamError(`event-stream message CRC mismatch (expected ${hex(expected)}, computed ${hex(actual)})`);
  }
  const headersEnd = PRELUDE_WITH_CRC + frame.readUInt32BE(4);
  return { headers: decodeHeaders(frame.subarray(PRELUDE_WITH_CRC, headersEnd)), payload: frame.subarray(headersEnd, total - 4) };
}

/** Checks the prelude's CRC and lengths; returns the message's total length. */
function checkPrelude(buf: Buffer): number {
  const expected = buf.readUInt32BE(PRELUDE);
  const actual = crc32(buf.subarray(0, PRELUDE));
  if (actual !== expected) throw new EventStreamError(`event-stream prelude CRC mismatch (expected ${hex(expected)}, computed ${hex(actual)})`);
  const total = buf.readUInt32BE(0);
  const headers = buf.readUInt32BE(4);
  if (total < MIN_MESSAGE || total > MAX_MESSAGE) throw new EventStreamError(`event-stream message length ${total} is out of range`);
  if (headers > MAX_HEADERS || headers > total - MIN_MESSAGE) throw new EventStreamError(`event-stream headers length ${headers} is out of range`);
  return total;
}

function decodeHeaders(buf: Buffer): Record<string, HeaderValue> {
  const headers: Record<string, HeaderValue> = {};
  let at = 0;
  const need = (n: number): void => {
    if (at + n > buf.length) throw new EventStreamError('event-stream header runs past the headers section');
  };
  while (at < buf.length) {
    need(1);
    const nameLength = buf.readUInt8(at);
    at += 1;
    need(nameLength + 1);
    const name = buf.toString('utf8', at, at + nameLength);
    at += nameLength;
    const type = buf.readUInt8(at);
    at += 1;
    let value: HeaderValue;
    switch (type) {
      case 0:
      case 1:
        value = type === 0;
        break;
      case 2:
        need(1);
        value = buf.readInt8(at);
        at += 1;
        break;
      case 3:
        need(2);
        value = buf.readInt16BE(at);
        at += 2;
        break;
      case 4:
        need(4);
        value = buf.readInt32BE(at);
        at += 4;
        break;
      case 5:
      case 8: {
        need(8);
        const n = buf.readBigInt64BE(at);
        at += 8;
        value = type === 5 ? n : new Date(Number(n));
        break;
      }
      case 6:
      case 7: {
        need(2);
        const length = buf.readUInt16BE(at);
        at += 2;
        need(length);
        value = type === 6 ? Buffer.from(buf.subarray(at, at + length)) : buf.toString('utf8', at, at + length);
        at += length;
        break;
      }
      case 9: {
        need(16);
        const h = buf.toString('hex', at, at + 16);
        value = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
        at += 16;
        break;
      }
      default:
        throw new EventStreamError(`event-stream header '${name}' has unknown value type ${type}`);
    }
    headers[name] = value;
  }
  return headers;
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}
