/**
 * A copy of an answer as it passes to the client, for the request log and
 * the usage charge: the first `headBytes` (the logged body) and the last
 * TAIL_BYTES (where an answer's or a stream's usage is). Chunks are only
 * referenced, never copied, until the end.
 *
 * Two ways to watch a stream: `listen` adds a 'data' listener beside the
 * pipe to the client (no extra stream: the log's case), `tap` puts a
 * Transform in the way whose end waits for `onEnd` — what charges usage to
 * limits, which must land before the client sees the last byte.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { through } from '../shared/through.js';

/** Enough for the usage object and what follows it at the end of a JSON answer or the last events of a stream. */
export const TAIL_BYTES = 8192;

export class AnswerCapture {
  private readonly headChunks: Buffer[] = [];
  /** Bytes of the head kept so far. */
  headLength = 0;
  private readonly tailChunks: Buffer[] = [];
  private tailLength = 0;
  /** Bytes that passed. */
  total = 0;

  constructor(private readonly headBytes: number) {}

  /** Watches `body` with a listener; returns it unchanged. */
  listen(body: Readable): Readable {
    body.on('data', (chunk: Buffer) => this.add(chunk));
    return body;
  }

  /** `body` through a Transform that copies each chunk and, at the end, waits for `onEnd` before ending. */
  tap(body: Readable, onEnd: (c: AnswerCapture) => Promise<void>): Readable {
    return through(body, new Tap(this, onEnd));
  }

  add(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headLength < this.headBytes) {
      const room = this.headBytes - this.headLength;
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.headChunks.push(part);
      this.headLength += part.length;
    }
    this.tailChunks.push(chunk);
    this.tailLength += chunk.length;
    while (this.tailLength - this.tailChunks[0]!.length >= TAIL_BYTES) this.tailLength -= this.tailChunks.shift()!.length;
  }

  /** The first headBytes of the answer (its end cut off when longer). */
  head(): Buffer {
    return this.headChunks.length === 1 ? this.headChunks[0]! : Buffer.concat(this.headChunks, this.headLength);
  }

  /** The last TAIL_BYTES (or fewer) of the answer; the whole answer when it was that short. */
  tail(): Buffer {
    const all = this.tailChunks.length === 1 ? this.tailChunks[0]! : Buffer.concat(this.tailChunks, this.tailLength);
    return all.length > TAIL_BYTES ? all.subarray(all.length - TAIL_BYTES) : all;
  }

  tailText(): string {
    return this.tail().toString('utf8');
  }

  /**
   * The answer as far as it is kept: whole when it fit the head, else its
   * head and tail (the middle of a longer answer is not kept).
   */
  text(): string {
    const head = this.head().toString('utf8');
    return this.total === this.headLength ? head : head + this.tailText();
  }
}

class Tap extends Transform {
  constructor(
    private readonly capture: AnswerCapture,
    private readonly onEnd: (c: AnswerCapture) => Promise<void>,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.capture.add(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    this.onEnd(this.capture).then(
      () => done(),
      () => done(),
    );
  }
}
