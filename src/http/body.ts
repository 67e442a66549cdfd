/**
 * Reading a request body into memory, bounded. A body over the limit is
 * refused (413) while the rest of it is read and dropped, up to as much again
 * as the limit: a client that sends its whole body before it reads the answer
 * (curl, the OpenAI SDKs) then sees the 413 rather than a reset connection,
 * and would not retry the upload. A body larger still, or declared so, has
 * its connection closed once the 413 is out. How long any of this may take
 * is bounded by the server's body timeout.
 */
import type { IncomingMessage } from 'node:http';
import { pipeline, Transform, type TransformCallback } from 'node:stream';
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../shared/json-depth.js';

export function readBody(req: IncomingMessage, limit: number): Promise<Result<Buffer>> {
  if (Number(req.headers['content-length']) > limit) return Promise.resolve(refuse(req, limit, 0));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.off('end', onEnd);
      resolve(refuse(req, limit, size));
    };
    const onEnd = (): void => resolve({ ok: true, value: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', (e) => resolve({ ok: false, error: new GatewayError(400, `could not read request body: ${e.message}`) }));
  });
}

/** The 413 of a body over `limit` of which `read` bytes came; what follows is dropped, or the connection closed after the answer. */
function refuse(req: IncomingMessage, limit: number, read: number): Result<never> {
  const message = `request body exceeds ${limit} bytes`;
  let left = 2 * limit - read;
  if (Number(req.headers['content-length']) - read > left) {
    return { ok: false, error: new GatewayError(413, message, { code: 'payload_too_large', headers: { connection: 'close' } }) };
  }
  req.on('data', (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) req.socket.destroy();
  });
  req.resume();
  return { ok: false, error: new GatewayError(413, message, { code: 'payload_too_large' }) };
}

/**
 * A body streamed on unread (the generic proxy's, a file upload's), bounded as
 * readBody bounds one it reads: past `limit` bytes the client's connection is
 * closed (no answer: the rest of the body would have to be read first) and the
 * stream fails with a 413, which is what the request's log and metrics say.
 */
export function streamWithin(req: IncomingMessage, limit: number): Transform {
  // pipeline, not pipe: a client that leaves ends the copy too.
  return pipeline(req, new ByteLimit(req, limit), () => {});
}

class ByteLimit extends Transform {
  private left: number;

  constructor(
    private readonly req: IncomingMessage,
    private readonly limit: number,
  ) {
    super();
    this.left = limit;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.left -= chunk.length;
    if (this.left >= 0) return done(null, chunk);
    // Destroying the request alone leaves its socket open, the client blocked on a body nobody reads.
    this.req.socket.destroy();
    done(new GatewayError(413, `request body exceeds ${this.limit} bytes`, { code: 'payload_too_large' }));
  }
}

/** A body's bytes as JSON; a 400 saying why when they are not, or when they nest too deeply for the gateway to walk. */
export function parseJson(buf: Buffer): Result<unknown> {
  const text = buf.toString('utf8');
  if (nestsDeeperThan(text)) {
    return { ok: false, error: invalid(`request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`, null, 'invalid_json') };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    return { ok: false, error: invalid(`request body is not valid JSON: ${(e as Error).message}`, null, 'invalid_json') };
  }
}
