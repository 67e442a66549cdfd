/**
 * "node floor": the smallest proxy built on the gateway's own stack, so the
 * bench can tell what Node and undici cost on this machine from what the
 * gateway's own work costs (auth, config, validation, routing, metrics).
 *
 * Per request, only what any gateway on this stack must do: node:http server
 * (the gateway's server options), read the whole body, JSON.parse it (the
 * gateway parses to validate), send the same bytes upstream through one
 * keep-alive undici Agent (the gateway's pool options) with
 * `agent.request({ origin, path, method, headers, body })`, write status and
 * headers, pipe the body back. No auth, config, validation, routing, metrics
 * or logging. One listening port per upstream, as nginx has, so nothing is
 * decided per request.
 *
 * Usage: node dist/bench/node-floor.js <port>=<upstream origin> [...]
 *   e.g. node dist/bench/node-floor.js 8001=http://127.0.0.1:9001 8002=http://127.0.0.1:9002
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import { POOL_OPTIONS } from '../src/upstream/client.js';

const agent = new Agent(POOL_OPTIONS);

/** Upstream response headers not relayed: the gateway's hop-by-hop set (src/routing/headers.ts); content-length stays. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function fail(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: { message, type: 'floor_error' } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

function forward(origin: string, req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (req.headers.authorization !== undefined) headers.authorization = req.headers.authorization;
  agent
    .request({ origin, path: req.url ?? '/', method: req.method as Dispatcher.HttpMethod, headers, body })
    .then(
      (up) => {
        const out: Record<string, string | string[]> = {};
        for (const name in up.headers) {
          const v = up.headers[name];
          if (v !== undefined && !HOP_BY_HOP.has(name)) out[name] = v;
        }
        res.writeHead(up.statusCode, out);
        up.body.once('error', () => res.destroy());
        res.once('close', () => {
          if (!up.body.readableEnded) up.body.destroy();
        });
        up.body.pipe(res);
      },
      (err: Error) => fail(res, 502, `upstream: ${err.message}`),
    );
}

function serve(port: number, origin: string): void {
  const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      try {
        JSON.parse(body.toString('utf8'));
      } catch {
        fail(res, 400, 'request body is not valid JSON');
        return;
      }
      forward(origin, req, res, body);
    });
  });
  server.listen(port, '127.0.0.1');
}

const pairs = process.argv.slice(2).map((arg) => {
  const at = arg.indexOf('=');
  const port = Number(arg.slice(0, at));
  const origin = arg.slice(at + 1);
  if (at < 1 || !Number.isInteger(port) || port <= 0 || !/^http:\/\/[^/]+$/.test(origin)) {
    console.error(`bad argument '${arg}': usage: node-floor.js <port>=http://<host>:<port> [...]`);
    process.exit(2);
  }
  return { port, origin };
});
if (pairs.length === 0) {
  console.error('usage: node-floor.js <port>=http://<host>:<port> [...]');
  process.exit(2);
}
for (const { port, origin } of pairs) serve(port, origin);

process.on('SIGTERM', () => process.exit(0));
