/**
 * A provider's answer as the pool's dispatch handler receives it (client.ts):
 * status and headers, then either the body as a stream (back-pressure passed
 * on to the socket) or, for a small JSON answer, the whole body as bytes.
 *
 * Why whole: a JSON answer is usable only once its last byte came, and one
 * with a declared length of at most WHOLE_ANSWER_BYTES arrives in a read or
 * two. Held as a Buffer it goes to the client in one write with the gateway's
 * headers, and to the log, the usage charge and the cache as it is, without a
 * stream, a pipe and the listeners each of them needs. Anything else (an
 * event stream, an answer of unknown or larger length, compressed or binary
 * bytes) streams.
 */
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { GatewayError } from '../shared/errors.js';
import type { Cancel } from './cancel.js';

/** The largest declared content-length read whole. */
export const WHOLE_ANSWER_BYTES = 64 * 1024;
/**
 * The most a streamed answer read whole (UpstreamBody.bytes) holds by default: a translated provider's JSON answer
 * (a chat completion, a large embeddings answer) fits many times over; a provider that sends more is not buffered.
 */
export const MAX_READ_BYTES = 64 * 1024 * 1024;
/** The most a token endpoint's answer (OAuth, a few KiB) is read to. */
export const TOKEN_ANSWER_BYTES = 1024 * 1024;

/** An answer read whole that was longer than its reader's limit: a 502 naming the limit; the call was aborted. */
export class AnswerTooLarge extends GatewayError {
  constructor(readonly limit: number) {
    super(502, `the upstream answer is larger than the ${limit} bytes the gateway reads of it`, { code: 'upstream_answer_too_large' });
  }
}

type Headers = Record<string, string | string[] | undefined>;

export class UpstreamResponse {
  #body: UpstreamBody | null;

  constructor(
    readonly statusCode: number,
    readonly headers: Headers,
    /** performance.now() when the headers came. */
    readonly headersAt: number,
    /** A small JSON answer's bytes, read whole; null for one that streams (`body`). */
    readonly whole: Buffer | null,
    body: UpstreamBody | null,
  ) {
    this.#body = body;
  }

  /** The bytes as a stream; for a whole answer, made on first use. */
  get body(): UpstreamBody {
    if (this.#body === null) {
      this.#body = new UpstreamBody(null);
      this.#body.push(this.whole);
      this.#body.push(null);
    }
    return this.#body;
  }

  /** Let go of an answer nobody will read: a stream is read off (up to 64 KiB within 5 s, so the connection can be reused) or closed. */
  discard(): void {
    if (this.whole === null) this.body.dump(64 * 1024, 5_000);
  }
}

/** An answer's body as it streams; reading pauses the socket when the reader falls behind. */
export class UpstreamBody extends Readable {
  constructor(private controller: Dispatcher.DispatchController | null) {
    super({ highWaterMark: 64 * 1024 });
  }

  override _read(): void {
    this.controller?.resume();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // A reader that stops early ends the provider's call; one that read to the end leaves the connection pooled.
    if (!this.readableEnded) this.controller?.abort(err ?? new Error('upstream body closed before its end'));
    this.controller = null;
    callback(err);
  }

  /** The whole body as text (token endpoints, small answers), at most `limit` bytes (see bytes()). */
  async text(limit = MAX_READ_BYTES): Promise<string> {
    return (await this.bytes(limit)).toString('utf8');
  }

  /**
   * The whole body, at most `limit` bytes: past it the rest is not read (the body is closed, which aborts the
   * provider's call) and the read rejects with an AnswerTooLarge, rather than holding whatever a provider sends.
   */
  async bytes(limit = MAX_READ_BYTES): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of this) {
      size += (chunk as Buffer).length;
      if (size > limit) {
        this.destroy();
        throw new AnswerTooLarge(limit);
      }
      chunks.push(chunk as Buffer);
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  }

  /**
   * Reads and drops up to `limit` bytes, then closes: a short answer's connection goes back to the
   * pool. One that does not end within `ms` is closed too: a provider stalling a body nobody reads
   * must not hold a connection.
   */
  dump(limit: number, ms: number): void {
    let left = limit;
    const timer = setTimeout(() => this.destroy(), ms);
    this.once('close', () => clearTimeout(timer));
    this.on('data', (chunk: Buffer) => {
      left -= chunk.length;
      if (left < 0) this.destroy();
    });
    this.on('error', () => {});
  }
}

/** Whether an answer with these headers is read whole (see the module's comment). */
function readsWhole(status: number, headers: Headers): boolean {
  if (status === 204 || status === 304) return false;
  const length = headers['content-length'];
  if (typeof length !== 'string') return false;
  const n = Number(length);
  if (!(n <= WHOLE_ANSWER_BYTES)) return false;
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') return false;
  const type = headers['content-type'];
  return typeof type === 'string' && isJson(type);
}

/** application/json, or a +json type, with any parameters. */
function isJson(type: string): boolean {
  const semi = type.indexOf(';');
  const t = (semi === -1 ? type : type.slice(0, semi)).trim().toLowerCase();
  return t === 'application/json' || t.endsWith('+json');
}

/**
 * The dispatch handler of one call: resolves the answer once its headers came
 * (a whole answer: once its last byte did), passes a stream's chunks on, and
 * aborts the call when `signal` aborts.
 */
export class UpstreamCall implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private status = 0;
  private headers: Headers | null = null;
  private headersAt = 0;
  private chunks: Buffer[] | null = null;
  private size = 0;
  private body: UpstreamBody | null = null;
  private settled = false;
  private readonly onAbort = (): void => this.controller?.abort(new AbortedError());
  /** A whole answer's read, bounded by timeoutMs from its headers. */
  private wholeTimer: NodeJS.Timeout | null = null;
  private readonly onWholeTimeout = (): void => this.controller?.abort(new AnswerTimeout());

  constructor(
    private readonly signal: Cancel,
    /** False where a body is not what the headers describe (HEAD): such an answer always streams. */
    private readonly mayReadWhole: boolean,
    private readonly resolve: (r: UpstreamResponse) => void,
    private readonly reject: (e: Error) => void,
    /**
     * How long the caller waits for the answer (undici's headersTimeout bounds its headers). A whole answer is
     * read before the call resolves, so its body gets the same wait again, from its headers: an upstream that sends
     * its headers and part of a body, then nothing, would otherwise hold the request forever. (Not what is left of
     * the wait: that starts once the request is written, which this handler is not told.) A stream is not bounded.
     */
    private readonly timeoutMs?: number,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.signal.aborted) controller.abort(new AbortedError());
    else this.signal.on('abort', this.onAbort); // a Cancel aborts once: no once() wrapper needed
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Headers): void {
    if (statusCode < 200) return; // an informational answer; the final one follows
    this.status = statusCode;
    this.headers = headers;
    this.headersAt = performance.now();
    if (this.mayReadWhole && readsWhole(statusCode, headers)) {
      this.chunks = [];
      if (this.timeoutMs !== undefined) this.wholeTimer = setTimeout(this.onWholeTimeout, this.timeoutMs);
      return;
    }
    this.body = new UpstreamBody(controller);
    this.settle(new UpstreamResponse(statusCode, headers, this.headersAt, null, this.body));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.chunks !== null) {
      this.size += chunk.length;
      // A server that sends more than it declared: what came is not the answer it described.
      if (this.size > WHOLE_ANSWER_BYTES) return controller.abort(new Error('upstream answer longer than its content-length'));
      this.chunks.push(chunk);
    } else if (this.body !== null && !this.body.push(chunk)) {
      controller.pause();
    }
  }

  onResponseEnd(): void {
    this.signal.off('abort', this.onAbort);
    if (this.wholeTimer !== null) clearTimeout(this.wholeTimer);
    if (this.chunks !== null) {
      const whole = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
      this.chunks = null;
      this.settle(new UpstreamResponse(this.status, this.headers!, this.headersAt, whole, null));
    } else {
      this.body?.push(null);
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    this.signal.off('abort', this.onAbort);
    if (this.wholeTimer !== null) clearTimeout(this.wholeTimer);
    this.chunks = null;
    if (!this.settled) {
      this.settled = true;
      this.reject(error);
    } else if (this.body !== null && !this.body.destroyed) {
      this.body.destroy(error);
    }
  }

  private settle(r: UpstreamResponse): void {
    this.settled = true;
    this.resolve(r);
  }
}

/** What a call rejects with when a whole answer's body did not come within its wait: a timeout, as one for headers. */
export class AnswerTimeout extends Error {
  readonly code = 'UND_ERR_HEADERS_TIMEOUT';
  constructor() {
    super('the answer did not come whole within the wait for it');
  }
}

/** What a call aborted by its signal rejects with (the router tells a client's leaving by the signal, not by this). */
export class AbortedError extends Error {
  readonly code = 'UND_ERR_ABORTED';
  constructor() {
    super('Request aborted');
    this.name = 'AbortError';
  }
}
