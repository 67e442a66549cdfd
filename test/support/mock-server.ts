// What the mock upstreams share: a loopback node:http server that reads and records
// every request, queues of scripted answers by path, and a close() that does not wait
// for keep-alive or streaming connections. Each mock supplies only its API's answers.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RecordedRequest {
  method: string;
  /** Path including the query string. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** Parsed body, present when the body is JSON (see MockServerOptions.json) and parses. */
  json?: any;
  /** Date.now() when the request arrived. */
  at: number;
}

export interface MockServerOptions {
  /** Which bodies are parsed: those with a JSON content type (default), or any non-empty one. */
  json?: 'content-type' | 'non-empty';
}

/**
 * Answers one recorded request. `signal` aborts once the peer goes away (or close()
 * runs), for pending delays and drain waits. A throw destroys the connection.
 */
export type MockHandler = (
  rec: RecordedRequest,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  signal: AbortSignal,
) => Promise<void> | void;

export interface MockServer<S> {
  /** http://127.0.0.1:<port>, no path. */
  readonly url: string;
  readonly port: number;
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Queue answers for a path without its query, consumed in order by next(). */
  enqueue(path: string, ...scripts: S[]): void;
  /** The next queued answer for a path, if any. */
  next(pathname: string): S | undefined;
  /** Clears recorded requests (in place) and queues. */
  reset(): void;
  close(): Promise<void>;
}

export async function startMockServer<S>(handle: MockHandler, opts: MockServerOptions = {}): Promise<MockServer<S>> {
  const requests: RecordedRequest[] = [];
  const queues = new Map<string, S[]>();

  const server = http.createServer((req, res) => {
    void receive(req, res).catch(() => res.destroy());
  });

  async function receive(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const at = Date.now();
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    const chunks: Buffer[] = [];
    try {
      for await (const c of req) chunks.push(c as Buffer);
    } catch {
      return; // client went away mid-body: nothing to record or answer
    }
    const body = Buffer.concat(chunks);
    const rec: RecordedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body, at };
    const isJson = opts.json === 'non-empty' ? body.length > 0 : /\bjson\b/i.test(req.headers['content-type'] ?? '');
    if (isJson) {
      try {
        rec.json = JSON.parse(body.toString('utf8'));
      } catch {
        // left undefined: each mock answers an unparsable body as its API does
      }
    }
    requests.push(rec);
    await handle(rec, req, res, ac.signal);
  }

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    enqueue: (path, ...scripts) => void queues.set(path, [...(queues.get(path) ?? []), ...scripts]),
    next: (pathname) => queues.get(pathname)?.shift(),
    reset() {
      requests.length = 0;
      queues.clear();
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Kill keep-alive and in-flight (delayed/streaming) connections so close() never hangs.
      server.closeAllConnections();
      await closed;
    },
  };
}

/** Resolves false if the peer went away during the pause. */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/** OpenAI's base64 embedding encoding: the vector as little-endian float32 bytes. */
export function float32Base64(vec: number[]): string {
  const buf = Buffer.alloc(vec.length * 4);
  vec.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

export function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
