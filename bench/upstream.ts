/**
 * A mock OpenAI upstream for the bench and the soak: `POST /v1/chat/completions`
 * answered with an SSE stream when the body asks for one (first event at once,
 * the rest after STREAM_DELAY_MS; a usage chunk at the end when
 * stream_options.include_usage asks for it, as OpenAI does), else with
 * CHAT_RESPONSE; under `/fail/v1/` with OpenAI's 500 error instead (the soak's
 * upstream errors). The bench's non-streaming answers come from nginx's
 * `return`, which is far cheaper than any Node server and so never the
 * bottleneck; nginx cannot delay part of a response, hence this process.
 *
 * Usage: node dist/bench/upstream.js <port>
 */
import http from 'node:http';
import { CHAT_RESPONSE, STREAM_DELAY_MS, STREAM_DONE, STREAM_EVENTS, STREAM_USAGE_EVENT } from './fixtures.js';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: upstream.js <port>');
  process.exit(2);
}

const first = STREAM_EVENTS[0] ?? '';
const rest = STREAM_EVENTS.slice(1).join('') + STREAM_DONE;
const restWithUsage = STREAM_EVENTS.slice(1).join('') + STREAM_USAGE_EVENT + STREAM_DONE;
const SERVER_ERROR = JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } });

const server = http.createServer((req, res) => {
  const fail = req.url === '/fail/v1/chat/completions';
  if (req.method !== 'POST' || (req.url !== '/v1/chat/completions' && !fail)) {
    res.writeHead(404).end();
    return;
  }
  // Answer once the body is in, as a real upstream would; like OpenAI, with a usage chunk when the request asks for one.
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (s: string) => (body += s));
  req.on('end', () => {
    if (fail) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(SERVER_ERROR);
    } else if (!/"stream"\s*:\s*true/.test(body)) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(CHAT_RESPONSE);
    } else {
      const usage = /"include_usage"\s*:\s*true/.test(body);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(first);
      const timer = setTimeout(() => res.end(usage ? restWithUsage : rest), STREAM_DELAY_MS);
      res.once('close', () => clearTimeout(timer)); // the gateway left mid-stream (the soak's cancels)
    }
  });
});
// Outlive the clients' idle keep-alive connections so no run pays for reconnects.
server.keepAliveTimeout = 120_000;
server.listen(port, '127.0.0.1');

process.on('SIGTERM', () => process.exit(0));
