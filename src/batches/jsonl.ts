/**
 * The lines of a JSONL stream with their byte offsets, so a batch can record
 * where it is and resume from that byte. Lines are split on \n (a \r before
 * it dropped) as bytes arrive; one longer than `maxBytes` is reported as too
 * long and skipped, never held.
 */
import type { Readable } from 'node:stream';

export interface JsonlLine {
  /** 0-based line number in the file. */
  line: number;
  /** The line's text; null when it was longer than maxBytes. */
  text: string | null;
  /** Byte offset just past the line (and its newline). */
  end: number;
}

const NL = 0x0a;

export async function* readLines(stream: Readable, firstLine: number, firstOffset: number, maxBytes: number): AsyncGenerator<JsonlLine> {
  let line = firstLine;
  let offset = firstOffset;
  let parts: Buffer[] = [];
  let held = 0;
  let tooLong = false;
  const take = (piece: Buffer, end: number): JsonlLine => {
    let text: string | null = null;
    if (!tooLong) {
      const all = parts.length === 0 ? piece : Buffer.concat([...parts, piece]);
      text = all.toString('utf8');
      if (text.endsWith('\r')) text = text.slice(0, -1);
    }
    const out = { line: line++, text, end };
    parts = [];
    held = 0;
    tooLong = false;
    return out;
  };
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let from = 0;
    for (let nl = chunk.indexOf(NL, from); nl !== -1; nl = chunk.indexOf(NL, from)) {
      const piece = chunk.subarray(from, nl);
      offset += nl - from + 1;
      if (held + piece.length > maxBytes) tooLong = true;
      yield take(piece, offset);
      from = nl + 1;
    }
    const rest = chunk.subarray(from);
    offset += rest.length;
    if (rest.length > 0 && !tooLong) {
      held += rest.length;
      if (held > maxBytes) {
        tooLong = true;
        parts = [];
      } else parts.push(Buffer.from(rest));
    }
  }
  if (held > 0 || tooLong) yield take(Buffer.alloc(0), offset);
}

/**
 * Lines gathered into windows of at most maxLines lines and maxChars
 * characters of text (at least one line each: a longer line is a window of
 * its own). A batch's window of lines is held whole until its outcomes are
 * recorded, so the text it holds is bounded in characters, not only in
 * lines: 256 lines of up to GATEWAY_MAX_BODY_BYTES each could otherwise hold
 * gigabytes. This bounds the input side only: the answers the window holds
 * until they are recorded are bounded by the runner (runner.ts,
 * WINDOW_ANSWER_BYTES).
 */
export async function* windows(lines: AsyncIterable<JsonlLine>, maxLines: number, maxChars: number): AsyncGenerator<JsonlLine[]> {
  let window: JsonlLine[] = [];
  let chars = 0;
  for await (const l of lines) {
    window.push(l);
    chars += l.text?.length ?? 0;
    if (window.length < maxLines && chars < maxChars) continue;
    yield window;
    window = [];
    chars = 0;
  }
  if (window.length > 0) yield window;
}
