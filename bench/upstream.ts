/**
 * The streaming half of the bench upstream: `POST /v1/chat/completions`
 * answered with an SSE stream (first event at once, the rest after
 * STREAM_DELAY_MS; a usage chunk at the end when stream_options.include_usage
 * asks for it, as OpenAI does). Non-streaming answers come from nginx's `return`, which is
 * far cheaper than any Node server and so never the bottleneck; nginx cannot
 * delay part of a response, hence this process.
 *
 * Usage: node dist/bench/upstream.js <port>
 */
import http from 'node:http';
import { STREAM_DELAY_MS, STREAM_DONE, STREAM_EVENTS, STREAM_USAGE_EVENT } from './fixtures.js';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: upstream.js <port>');
  process.exit(2);
}

const first = STREAM_EVENTS[0] ?? '';
const rest = STREAM_EVENTS.slice(1).join('') + STREAM_DONE;
const restWithUsage = STREAM_EVENTS.slice(1).join('') + STREAM_USAGE_EVENT + STREAM_DONE;

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
    res.writeHead(404).end();
    return;
  }
  // Answer once the body is in, as a real upstream would; like OpenAI, with a usage chunk when the request asks for one.
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (s: string) => (body += s));
  req.on('end', () => {
    const usage = /"include_usage"\s*:\s*true/.test(body);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(first);
    setTimeout(() => res.end(usage ? restWithUsage : rest), STREAM_DELAY_MS);
  });
});
// Outlive the clients' idle keep-alive connections so no run pays for reconnects.
server.keepAliveTimeout = 120_000;
server.listen(port, '127.0.0.1');

process.on('SIGTERM', () => process.exit(0));
