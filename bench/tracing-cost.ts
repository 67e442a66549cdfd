/**
 * What tracing costs a request, in-process (a micro-benchmark, not part of
 * `npm run bench`): the server's trace id plus the request span's life —
 * start, one attempt, end — with the no-export tracer (OTEL unset, the hot
 * path) and, for scale, the exporting one (spans batched, exporter idle).
 * The baseline is what the server did before tracing: x-gateway-trace-id or
 * a random UUID.
 *
 * Usage: npm run build && node dist/bench/tracing-cost.js
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { single } from '../src/shared/headers.js';
import { OtelTracer } from '../src/tracing/otel.js';
import { NO_EXPORT, readRequestIds, type RequestOutcome, type Tracer } from '../src/tracing/tracer.js';

const N = 1_000_000;
const ROUNDS = 5;

const request = (headers: Record<string, string>) => ({ method: 'POST', headers }) as unknown as IncomingMessage;
const REQUESTS: Record<string, IncomingMessage> = {
  'no trace headers': request({}),
  'x-gateway-trace-id': request({ 'x-gateway-trace-id': 'order-42' }),
  traceparent: request({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }),
  'all of them': request({
    'x-gateway-trace-id': 'order-42',
    'x-gateway-span-id': 'a1b2c3d4e5f60718',
    'x-gateway-parent-span-id': 'b7ad6b7169203331',
    'x-gateway-span-name': 'checkout',
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  }),
};

/** Drops what it is handed: the cost measured is the SDK's, not a network's. */
const idle: SpanExporter = { export: (_s: ReadableSpan[], done) => done({ code: 0 }), shutdown: async () => {} };

let sink = 0;
const STARTED_AT = performance.now();

function baseline(req: IncomingMessage): void {
  sink += (single(req.headers['x-gateway-trace-id']) ?? randomUUID()).length;
}

function traced(tracer: Tracer): (req: IncomingMessage) => void {
  return (req) => {
    // startedAt is the server's own arrival time, taken before tracing: not counted.
    const span = tracer.startRequest(req, readRequestIds(req.headers), 'chat', '/v1/chat/completions', STARTED_AT);
    span.attempt('openai', 'gpt-4o-mini', 'https://api.openai.com/v1/chat/completions', 'config', 0).end(200, null);
    // The outcome the relay builds is counted.
    const outcome: RequestOutcome = {
      status: 200, provider: 'openai', model: 'gpt-4o-mini', cacheStatus: 'DISABLED', retryCount: 0,
      promptTokens: null, completionTokens: null, workspaceId: 'ws', error: null,
    };
    span.end(outcome);
    sink += span.traceId.length;
  };
}

/** Best of ROUNDS: ns per call. */
function measure(fn: (req: IncomingMessage) => void, req: IncomingMessage, n: number): number {
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn(req);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / n);
  }
  return best;
}

const otel = new OtelTracer('bench', new BatchSpanProcessor(idle));
const rows: string[] = ['| headers | before tracing | no-export tracer | exporting tracer |', '| --- | ---: | ---: | ---: |'];
for (const [name, req] of Object.entries(REQUESTS)) {
  const cells = [baseline, traced(NO_EXPORT)].map((fn) => measure(fn, req, N));
  cells.push(measure(traced(otel), req, N / 20));
  rows.push(`| ${name} | ${cells.map((ns) => `${ns.toFixed(0)} ns`).join(' | ')} |`);
}
await otel.close();
console.log(`Node ${process.version}, best of ${ROUNDS} rounds per cell, ns per request\n`);
console.log(rows.join('\n'));
if (sink === 0) console.log('');
