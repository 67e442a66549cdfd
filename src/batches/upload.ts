/**
 * A multipart/form-data upload (`file` and `purpose`, as OpenAI's SDKs send
 * them) streamed to a scratch file with busboy: never whole in memory,
 * refused past the size limit while it arrives.
 */
import type { IncomingMessage } from 'node:http';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type busboy from 'busboy';
import { streamWithin } from '../http/body.js';
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import { lazy } from '../shared/memo.js';

/** Imported with the first upload: most gateways never receive one. */
const parser = lazy(async () => (await import('busboy')).default);

export interface Upload {
  path: string;
  filename: string;
  purpose: string;
}

/** The purposes of OpenAI's Files API. */
export const PURPOSES = new Set(['batch', 'fine-tune', 'assistants', 'vision', 'user_data', 'evals']);

/** What a form may hold besides its file: its few small fields (1 KiB each), part headers and boundaries. */
export const FORM_OVERHEAD_BYTES = 64 * 1024;

/**
 * The form streamed to `path`, its file at most `maxBytes`. A form declared
 * longer than that (and the overhead) is refused before a byte is read; one
 * sent without a length is read and dropped past the file's limit (busboy
 * truncates it) up to twice that, then its connection is closed: an upload
 * never holds the gateway for more bytes than the limit allows.
 */
export async function receiveUpload(req: IncomingMessage, path: string, maxBytes: number): Promise<Result<Upload>> {
  const type = req.headers['content-type'] ?? '';
  if (!type.toLowerCase().startsWith('multipart/form-data')) return { ok: false, error: invalid('content-type: a file upload is multipart/form-data', 'content-type') };
  const bound = maxBytes + FORM_OVERHEAD_BYTES;
  if (Number(req.headers['content-length']) > bound) return { ok: false, error: tooLarge(maxBytes, { connection: 'close' }) };
  const makeParser = await parser();
  let bb: busboy.Busboy;
  try {
    bb = makeParser({ headers: req.headers, limits: { files: 1, fields: 8, fieldSize: 1024, fileSize: maxBytes, parts: 10 } });
  } catch (e) {
    return { ok: false, error: invalid(`content-type: ${(e as Error).message}`, 'content-type') };
  }
  let purpose: string | null = null;
  let filename: string | null = null;
  let truncated = false;
  let written: Promise<void> | null = null;
  const parsed = new Promise<void>((resolve, reject) => {
    bb.on('field', (name, value) => {
      if (name === 'purpose') purpose = value;
    });
    bb.on('file', (name, stream, info) => {
      if (name !== 'file' || written !== null) {
        stream.resume();
        return;
      }
      filename = info.filename ?? 'file';
      stream.on('limit', () => (truncated = true));
      written = pipeline(stream, createWriteStream(path, { mode: 0o600 }));
      // Handled now, awaited below: a form cut inside the file part fails both this and the parser, and a
      // rejection nobody listened to yet would end the process.
      written.catch(() => {});
    });
    bb.on('close', resolve);
    bb.on('error', reject);
  });
  try {
    // pipeline, not pipe: a client that leaves destroys the parser and rejects here, instead of a wait for ever.
    await Promise.all([pipeline(streamWithin(req, 2 * bound), bb), parsed]);
    await written;
  } catch (e) {
    await rm(path, { force: true });
    return { ok: false, error: invalid(`the upload could not be read: ${(e as Error).message}`, 'file') };
  }
  const fail = async (error: GatewayError): Promise<Result<Upload>> => {
    await rm(path, { force: true });
    return { ok: false, error };
  };
  if (truncated) return fail(tooLarge(maxBytes));
  if (filename === null) return fail(invalid('file: the form has no file part', 'file', 'missing_required_parameter'));
  if (purpose === null) return fail(invalid('purpose: required', 'purpose', 'missing_required_parameter'));
  if (!PURPOSES.has(purpose)) return fail(invalid(`purpose: must be one of ${[...PURPOSES].join(', ')}`, 'purpose'));
  return { ok: true, value: { path, filename, purpose } };
}

function tooLarge(maxBytes: number, headers?: Record<string, string>): GatewayError {
  return new GatewayError(413, `file: larger than ${maxBytes} bytes`, { code: 'payload_too_large', param: 'file', ...(headers && { headers }) });
}
