// The pool's dispatch handler against a real HTTP server on loopback: which answers are read whole,
// which stream, what aborting, cutting and over-long answers do, and the bound on a body read whole.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endlessAnswer } from '../../test/support/http.js';
import { AnswerTooLarge, WHOLE_ANSWER_BYTES } from './answer.js';
import { Cancel } from './cancel.js';
import { send } from './client.js';

type Route = (req: IncomingMessage, res: ServerResponse) => void;
const routes = new Map<string, Route>();
let server: Server;
let base = '';

before(async () => {
  server = createServer((req, res) => routes.get(req.url!)!(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const json = (text: string, headers: Record<string, string> = {}): Route => (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
};
const get = (path: string, signal = new Cancel(), method = 'POST') => send({ url: base + path, method, headers: {}, body: method === 'HEAD' ? null : '{}' }, signal);

describe('upstream answers: read whole or streamed', () => {
  it('a JSON answer with a declared length within the bound is read whole, bytes exact', async () => {
    const text = JSON.stringify({ ok: 'é'.repeat(1000) });
    routes.set('/small', json(text));
    const r = await get('/small');
    assert.equal(r.statusCode, 200);
    assert.equal(r.whole?.toString('utf8'), text);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    // The stream view of a whole answer is made on demand and holds the same bytes.
    assert.equal(await r.body.text(), text);
  });

  it('an error answer in JSON is read whole too (its status kept)', async () => {
    routes.set('/err', (_req, res) => {
      const body = '{"error":{"message":"rate limited"}}';
      res.writeHead(429, { 'content-type': 'application/problem+json', 'content-length': body.length, 'retry-after': '2' });
      res.end(body);
    });
    const r = await get('/err');
    assert.equal(r.statusCode, 429);
    assert.equal(r.headers['retry-after'], '2');
    assert.equal(r.whole?.toString(), '{"error":{"message":"rate limited"}}');
  });

  it('streams what is not a small JSON answer: an event stream, no length, too long, compressed, HEAD', async () => {
    routes.set('/sse', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n');
      res.end('data: [DONE]\n\n');
    });
    routes.set('/chunked', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"a":1}');
    });
    const big = JSON.stringify({ x: 'y'.repeat(WHOLE_ANSWER_BYTES) });
    routes.set('/big', json(big));
    routes.set('/gzip', json('not really gzip', { 'content-encoding': 'gzip' }));
    routes.set('/head', json('{"a":1}'));
    for (const [path, expected] of [['/sse', 'data: 1\n\ndata: [DONE]\n\n'], ['/chunked', '{"a":1}'], ['/big', big], ['/gzip', 'not really gzip']] as const) {
      const r = await get(path);
      assert.equal(r.whole, null, path);
      assert.equal(await r.body.text(), expected, path);
    }
    const head = await get('/head', new Cancel(), 'HEAD');
    assert.equal(head.whole, null);
    assert.equal(head.headers['content-length'], '7');
    assert.equal(await head.body.text(), '');
  });

  it('a streamed answer keeps back-pressure: the server waits while nobody reads', async () => {
    let written = 0;
    let drained = false;
    routes.set('/slow-reader', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 97);
      const pump = (): void => {
        while (written < 64 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        drained = true;
        res.end();
      };
      pump();
    });
    const r = await get('/slow-reader');
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Socket buffers and the stream's own hold a few MiB at most, not the 64 MiB the server has to send.
    assert.equal(drained, false);
    assert.ok(written < 16 * 1024 * 1024, `server wrote ${written} bytes with nobody reading`);
    r.body.destroy();
  });

  it('aborting the signal before the answer rejects the call; after it, the stream errors', async () => {
    routes.set('/hang', () => {});
    const c = new Cancel();
    const p = get('/hang', c);
    setTimeout(() => c.abort(), 20);
    await assert.rejects(p, (e: Error & { code?: string }) => e.code === 'UND_ERR_ABORTED');

    const pre = new Cancel();
    pre.abort();
    await assert.rejects(get('/small', pre));

    routes.set('/endless', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n');
    });
    const c2 = new Cancel();
    const r = await get('/endless', c2);
    const failed = once(r.body, 'error');
    r.body.resume();
    c2.abort();
    await failed;
    assert.equal(c2.listenerCount('abort'), 0, 'the call lets go of its signal');
  });

  it('a whole answer cut before its declared length rejects, as one longer than the bound would', async () => {
    routes.set('/cut', (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
      setTimeout(() => req.socket.destroy(), 10);
    });
    await assert.rejects(get('/cut'));
  });

  it('a stream nobody reads is dumped: closed past its byte limit, or when it stalls past the time limit', { timeout: 5_000 }, async () => {
    let closed = 0;
    routes.set('/stall', (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n');
      req.socket.once('close', () => closed++);
    });
    const stalled = await get('/stall');
    stalled.body.dump(64 * 1024, 50);
    await once(stalled.body, 'close');
    routes.set('/flood', (req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(256 * 1024));
      req.socket.once('close', () => closed++);
    });
    const flood = await get('/flood');
    flood.body.dump(64 * 1024, 60_000);
    await once(flood.body, 'close');
    // Both calls were aborted: their connections closed, not left open for answers that never end.
    for (let i = 0; i < 100 && closed < 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(closed, 2);
  });

  it('a body read whole is bounded: within the limit its bytes exact; past it a 502 naming the limit, the rest not read, the call aborted', { timeout: 5_000 }, async () => {
    const LIMIT = 256 * 1024;
    const exact = Buffer.alloc(LIMIT, 98);
    routes.set('/at-limit', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(exact);
    });
    assert.deepEqual(await (await get('/at-limit')).body.bytes(LIMIT), exact);
    assert.equal(await (await get('/at-limit')).body.text(LIMIT), exact.toString('utf8'));

    // An answer that never ends: read unbounded it would fill the memory; its server writes as the reader reads.
    let written = (): number => 0;
    let socketClosed = false;
    routes.set('/endless-bytes', (req, res) => {
      req.socket.once('close', () => (socketClosed = true));
      written = endlessAnswer(res, 'application/json', 97);
    });
    for (const read of [(r: Awaited<ReturnType<typeof get>>) => r.body.bytes(LIMIT), (r: Awaited<ReturnType<typeof get>>) => r.body.text(LIMIT)]) {
      socketClosed = false;
      const r = await get('/endless-bytes');
      await assert.rejects(read(r), (e: unknown) => {
        assert.ok(e instanceof AnswerTooLarge);
        assert.deepEqual([e.status, e.code, e.limit], [502, 'upstream_answer_too_large', LIMIT]);
        assert.match(e.message, /larger than the 262144 bytes/);
        return true;
      });
      assert.equal(r.body.destroyed, true);
      for (let i = 0; i < 100 && !socketClosed; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(socketClosed, true, 'the call was aborted: its connection closed');
      // Only what the socket buffers held past the limit was sent, not the endless rest.
      assert.ok(written() < 16 * 1024 * 1024, `server wrote ${written()} bytes`);
    }
  });

  it('a finished call leaves no listener on its signal', async () => {
    const c = new Cancel();
    await get('/small', c);
    const s = await get('/sse', c);
    await s.body.text();
    assert.equal(c.listenerCount('abort'), 0);
  });
});
