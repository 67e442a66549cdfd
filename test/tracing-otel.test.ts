// The exporting tracer's spans, read from OTel's in-memory exporter: what the HTTP test
// cannot reach through the request path (token usage, provider names, sampling flags).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Endpoint } from '../src/shared/endpoint.js';
import { GatewayError } from '../src/shared/errors.js';
import { OtelTracer } from '../src/tracing/otel.js';
import { readRequestIds, type RequestOutcome } from '../src/tracing/tracer.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

function setup(): { tracer: OtelTracer; exported: () => ReadableSpan[] } {
  const memory = new InMemorySpanExporter();
  return { tracer: new OtelTracer('test-gateway', new SimpleSpanProcessor(memory)), exported: () => memory.getFinishedSpans() };
}

/** A request span as the server starts one: ids read from the headers first. */
function start(tracer: OtelTracer, headers: IncomingHttpHeaders, endpoint: Endpoint = 'chat', pathname = '/v1/chat/completions', method = 'POST') {
  const req = { method, headers } as IncomingMessage;
  return tracer.startRequest(req, readRequestIds(headers), endpoint, pathname, performance.now());
}

const outcome = (o: Partial<RequestOutcome> = {}): RequestOutcome => ({
  status: 200,
  provider: 'openai',
  model: 'gpt-4o-mini',
  cacheStatus: 'MISS',
  retryCount: 0,
  promptTokens: null,
  completionTokens: null,
  workspaceId: 'ws-1',
  error: null,
  ...o,
});

describe('exporting tracer', () => {
  it('token usage and the provider go on the request span under the GenAI names', () => {
    const { tracer, exported } = setup();
    start(tracer, {}).end(
      outcome({ provider: 'bedrock', model: 'anthropic.claude-3-haiku', promptTokens: 12, completionTokens: 34, cacheStatus: 'HIT' }),
    );
    const [s] = exported();
    assert.equal(s!.kind, SpanKind.SERVER);
    assert.equal(s!.resource.attributes['service.name'], 'test-gateway');
    assert.equal(s!.attributes['gen_ai.provider.name'], 'aws.bedrock');
    assert.equal(s!.attributes['gen_ai.request.model'], 'anthropic.claude-3-haiku');
    assert.equal(s!.attributes['gen_ai.usage.input_tokens'], 12);
    assert.equal(s!.attributes['gen_ai.usage.output_tokens'], 34);
    assert.equal(s!.attributes['gateway.cache_status'], 'HIT');
    assert.equal(s!.attributes['gateway.workspace_id'], 'ws-1');
  });

  it("a 5xx is an error with the envelope's code and message; a 4xx is the client's and leaves the status unset", () => {
    const { tracer, exported } = setup();
    const error = new GatewayError(503, 'circuit open for every target of config', { code: 'circuit_open' }).toJSON();
    start(tracer, {}).end(outcome({ status: 503, provider: null, error }));
    start(tracer, {}).end(outcome({ status: 429, error: { error: { message: 'slow down', code: 'rate_limited' } } }));
    const [five, four] = exported();
    assert.deepEqual(five!.status, { code: SpanStatusCode.ERROR, message: 'circuit open for every target of config' });
    assert.equal(five!.attributes['error.type'], 'circuit_open');
    assert.equal(five!.attributes['gen_ai.provider.name'], undefined);
    assert.equal(four!.status.code, SpanStatusCode.UNSET);
    assert.equal(four!.attributes['error.type'], undefined);
  });

  it('the proxy: a route template as name, no GenAI operation; an attempt is named by its method', () => {
    const { tracer, exported } = setup();
    const span = start(tracer, {}, 'proxy', '/v1/files/file-abc', 'GET');
    span.attempt('openai', undefined, 'https://api.openai.com/v1/files/file-abc', 'config', 0).end(404, null);
    span.end(outcome({ status: 404 }));
    const [attempt, server] = exported();
    assert.equal(server!.name, 'GET /v1/*');
    assert.equal(server!.attributes['url.path'], '/v1/files/file-abc');
    assert.equal(server!.attributes['gen_ai.operation.name'], undefined);
    assert.equal(attempt!.name, 'GET');
    assert.equal(attempt!.attributes['server.address'], 'api.openai.com');
    assert.equal(attempt!.attributes['server.port'], 443);
    // A client span's 4xx is an error.
    assert.equal(attempt!.status.code, SpanStatusCode.ERROR);
    assert.equal(attempt!.attributes['error.type'], '404');
  });

  it('an attempt without an answer records the gateway error, not a provider status', () => {
    const { tracer, exported } = setup();
    const span = start(tracer, {}, 'embeddings', '/v1/embeddings');
    span.attempt('vertex-ai', 'text-embedding-004', 'https://europe-west4-aiplatform.googleapis.com/v1/x', 'config.targets[1]', 2).end(408, new GatewayError(408, 'timed out', { code: 'request_timeout' }));
    span.end(outcome({ status: 408 }));
    const [attempt] = exported();
    assert.equal(attempt!.kind, SpanKind.CLIENT);
    assert.equal(attempt!.name, 'embeddings text-embedding-004');
    assert.equal(attempt!.attributes['gen_ai.provider.name'], 'gcp.vertex_ai');
    assert.equal(attempt!.attributes['gateway.attempt'], 3);
    assert.equal(attempt!.attributes['http.request.resend_count'], 2);
    assert.equal(attempt!.attributes['gateway.target'], 'config.targets[1]');
    assert.equal(attempt!.attributes['http.response.status_code'], undefined);
    assert.deepEqual(attempt!.status, { code: SpanStatusCode.ERROR, message: 'timed out' });
  });

  it('an attempt to a URL that does not parse is still a span, without a server address (send() reports the failure)', () => {
    const { tracer, exported } = setup();
    const span = start(tracer, {});
    span.attempt('openai', 'gpt-4o', 'not a url', 'config', 0).end(502, new GatewayError(502, 'could not reach openai: ERR_INVALID_URL', { code: 'upstream_unreachable' }));
    span.end(outcome({ status: 502 }));
    const [attempt] = exported();
    assert.equal(attempt!.attributes['server.address'], undefined);
    assert.equal(attempt!.attributes['error.type'], 'upstream_unreachable');
  });

  it("the log's span id is the exported span's when the caller named none; a named one is the span's own", () => {
    const { tracer, exported } = setup();
    const unnamed = start(tracer, { 'x-gateway-trace-id': TRACE });
    const named = start(tracer, { 'x-gateway-span-id': 'A1B2C3D4E5F60718' });
    const logical = start(tracer, { 'x-gateway-span-id': 'step-3' });
    for (const s of [unnamed, named, logical]) s.end(outcome());
    const [a, b, c] = exported();
    assert.equal(unnamed.spanId, a!.spanContext().spanId);
    assert.equal(a!.spanContext().traceId, TRACE);
    assert.equal(b!.spanContext().spanId, 'a1b2c3d4e5f60718');
    // Kept for the log as sent; the span got an id of its own.
    assert.equal(logical.spanId, 'step-3');
    assert.match(c!.spanContext().spanId, /^[0-9a-f]{16}$/);
  });

  it("a caller's unsampled trace is not recorded, and the log keeps no span id for it", () => {
    const { tracer, exported } = setup();
    const span = start(tracer, { traceparent: `00-${TRACE}-${SPAN}-00` });
    span.attempt('openai', 'gpt-4o', 'https://api.openai.com/v1/chat/completions', 'config', 0).end(200, null);
    span.end(outcome());
    assert.equal(exported().length, 0);
    assert.equal(span.spanId, null);
    assert.equal(span.parentSpanId, SPAN);
  });

  it('traceparent wins over x-gateway-parent-span-id for the OTel parent; the log keeps the header', () => {
    const { tracer, exported } = setup();
    const span = start(tracer, { traceparent: `00-${TRACE}-${SPAN}-01`, 'x-gateway-trace-id': 'order-1', 'x-gateway-parent-span-id': 'b7ad6b7169203331' });
    span.end(outcome());
    const [s] = exported();
    assert.equal(s!.spanContext().traceId, TRACE);
    assert.equal(s!.parentSpanContext?.spanId, SPAN);
    assert.equal(span.parentSpanId, 'b7ad6b7169203331');
    assert.equal(span.traceId, 'order-1');
  });
});
