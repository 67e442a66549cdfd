/** Reading a request body into memory, bounded by GATEWAY_MAX_BODY_BYTES. */
import type { IncomingMessage } from 'node:http';
import { GatewayError, invalid, type Result } from '../shared/errors.js';

export function tooLarge(limit: number): GatewayError {
  return new GatewayError(413, `request body exceeds ${limit} bytes`, { code: 'payload_too_large' });
}

export function readBody(req: IncomingMessage, limit: number): Promise<Result<Buffer>> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.resolve({ ok: false, error: tooLarge(limit) });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        // Stop reading; the 413 goes out with `connection: close`.
        req.pause();
        resolve({ ok: false, error: tooLarge(limit) });
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve({ ok: true, value: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) }));
    req.on('error', (e) => resolve({ ok: false, error: new GatewayError(400, `could not read request body: ${e.message}`) }));
  });
}

/** A body's bytes as JSON; a 400 saying why when they are not. */
export function parseJson(buf: Buffer): Result<unknown> {
  try {
    return { ok: true, value: JSON.parse(buf.toString('utf8')) };
  } catch (e) {
    return { ok: false, error: invalid(`request body is not valid JSON: ${(e as Error).message}`, null, 'invalid_json') };
  }
}
