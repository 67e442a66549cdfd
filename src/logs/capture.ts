/**
 * A copy of an answer as it passes to the client, for the request log and
 * the usage charge: the first `headBytes` (the logged body) and the last
 * TAIL_BYTES (where an answer's or a stream's usage is). Chunks are passed
 * on unchanged and only referenced, never copied, until the end; `onEnd`
 * runs before the stream ends, so what it charges lands before the client
 * sees the last byte.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** Enough for the usage object and what follows it at the end of a JSON answer or the last events of a stream. */
export const TAIL_BYTES = 8192;

export class AnswerCapture extends Transform {
  private readonly head: Buffer[] = [];
  /** Bytes of the head kept so far. */
  headLength = 0;
  private readonly tail: Buffer[] = [];
  private tailLength = 0;
  /** Bytes that passed. */
  total = 0;
  /** The stream reached its end (not cut by either side). */
  ended = false;

  constructor(
    private readonly headBytes: number,
    private readonly onEnd: (c: AnswerCapture) => Promise<void> | void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.total += chunk.length;
    if (this.headLength < this.headBytes) {
      const room = this.headBytes - this.headLength;
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.head.push(part);
      this.headLength += part.length;
    }
    this.tail.push(chunk);
    this.tailLength += chunk.length;
    while (this.tailLength - this.tail[0]!.length >= TAIL_BYTES) this.tailLength -= this.tail.shift()!.length;
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    this.ended = true;
    const settled = this.onEnd(this);
    if (settled === undefined) return done();
    settled.then(
      () => done(),
      () => done(),
    );
  }

  /** The first headBytes of the answer, as text (its end cut off when longer). */
  headText(): string {
    return Buffer.concat(this.head, this.headLength).toString('utf8');
  }

  /** The last TAIL_BYTES (or fewer) of the answer, as text; the whole answer when it was that short. */
  tailText(): string {
    const all = Buffer.concat(this.tail, this.tailLength);
    return (all.length > TAIL_BYTES ? all.subarray(all.length - TAIL_BYTES) : all).toString('utf8');
  }
}
