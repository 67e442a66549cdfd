// A file upload (POST /v1/files) never holds the gateway for more bytes than its limit allows:
// a form declared too long is a 413 before its body is sent; one sent without a length is read
// and dropped only up to twice the limit, then its connection is closed.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FORM_OVERHEAD_BYTES } from '../src/batches/upload.js';
import { ADMIN_KEY } from './support/gateway.js';
import { envelopeOf } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

const MAX_FILE_BYTES = 64 * 1024;
const BOUNDARY = 'sybound';

/** The form's opening: its purpose field, then the file part's head; its content follows. */
const FORM_HEAD = `--${BOUNDARY}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="a.jsonl"\r\ncontent-type: application/octet-stream\r\n\r\n`;

/** A chunk of a chunked body. */
const chunkOf = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

/** An upload's head and the form's opening; declared `length` bytes long, or chunked. */
function open(url: string, length: number | 'chunked'): Socket {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  const framing = length === 'chunked' ? 'transfer-encoding: chunked' : `content-length: ${length}`;
  socket.write(
    `POST /v1/files HTTP/1.1\r\nhost: ${hostname}\r\nx-gateway-api-key: ${ADMIN_KEY}\r\ncontent-type: multipart/form-data; boundary=${BOUNDARY}\r\n${framing}\r\n\r\n` +
      (length === 'chunked' ? chunkOf(FORM_HEAD) : FORM_HEAD),
  );
  return socket;
}

/** What came back on `socket` until it closed, or until `ms` passed. */
function received(socket: Socket, ms: number): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (s: string) => (text += s));
    socket.on('error', () => {});
    const timer = setTimeout(() => resolve({ text, closed: false }), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
  });
}

describe('file upload bounds', () => {
  const filesDir = mkdtempSync(join(tmpdir(), 'switchyard-upload-'));
  after(() => rmSync(filesDir, { recursive: true, force: true }));
  const gw = useGateway({ settings: { batches: { concurrency: 1, maxRunning: 1, pollMs: 50, leaseMs: 2_000, maxFileBytes: MAX_FILE_BYTES, filesDir } } });

  it('a form declared longer than the file limit and the form overhead is a 413 before its body is sent', async () => {
    const socket = open(gw.url, MAX_FILE_BYTES + FORM_OVERHEAD_BYTES + 1);
    const got = await received(socket, 3000);
    socket.destroy();
    assert.match(got.text, /^HTTP\/1\.1 413 /);
    assert.match(got.text, /connection: close/i);
    const body = got.text.slice(got.text.indexOf('\r\n\r\n') + 4);
    assert.equal(envelopeOf(body).code, 'payload_too_large');
    assert.equal(envelopeOf(body).param, 'file');
  });

  it('a chunked form past twice the limit has its connection closed: the rest is not read', async () => {
    const socket = open(gw.url, 'chunked');
    const got = received(socket, 10_000);
    // Chunks of 16 KiB while the socket stays open, up to far more than loopback's socket buffers hold.
    const chunk = 'x'.repeat(16 * 1024);
    const frame = chunkOf(chunk);
    let sent = 0;
    const limit = 64 * 1024 * 1024;
    await new Promise<void>((resolve) => {
      const more = (): void => {
        while (sent < limit && !socket.destroyed) {
          sent += chunk.length;
          if (!socket.write(frame)) return void socket.once('drain', more);
        }
        resolve();
      };
      socket.once('close', () => resolve());
      more();
    });
    const { closed, text } = await got;
    assert.ok(closed, 'the gateway closed the connection');
    assert.equal(text, '', 'closed without an answer: the body was neither malformed nor read to its end');
    assert.ok(sent < limit, `the client got ${sent} bytes in before the close, of ${limit} it would send`);
  });
});
