// Where a request's trace ids come from: W3C traceparent parsing, the precedence between it
// and the contract's x-gateway-* headers, the OTel ids derived from the gateway's, and the
// OTLP settings read from the environment.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { readSettings } from '../src/settings.js';
import { otelSpanId, otelTraceId, parseTraceparent } from '../src/tracing/headers.js';
import { startTracer } from '../src/tracing/start.js';
import { NO_EXPORT, readRequestIds } from '../src/tracing/tracer.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('version 00: trace id, parent id and flags', () => {
    assert.deepEqual(parseTraceparent(`00-${TRACE}-${SPAN}-01`), { traceId: TRACE, parentId: SPAN, flags: 1 });
    assert.deepEqual(parseTraceparent(`00-${TRACE}-${SPAN}-00`), { traceId: TRACE, parentId: SPAN, flags: 0 });
    assert.deepEqual(parseTraceparent(`00-${TRACE}-${SPAN}-03`)?.flags, 3);
  });

  it('a later version may carry more fields; version 00 may not, and ff is invalid', () => {
    assert.deepEqual(parseTraceparent(`01-${TRACE}-${SPAN}-01-extra`), { traceId: TRACE, parentId: SPAN, flags: 1 });
    assert.equal(parseTraceparent(`00-${TRACE}-${SPAN}-01-extra`), null);
    assert.equal(parseTraceparent(`ff-${TRACE}-${SPAN}-01`), null);
  });

  for (const bad of [
    undefined,
    '',
    `00-${'0'.repeat(32)}-${SPAN}-01`,
    `00-${TRACE}-${'0'.repeat(16)}-01`,
    `00-${TRACE.toUpperCase()}-${SPAN}-01`,
    `00-${TRACE.slice(1)}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}`,
    `00_${TRACE}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}-0g`,
    `0a-${TRACE}-${SPAN}-01x`,
    // Two traceparent headers, as Node joins them.
    `00-${TRACE}-${SPAN}-01, 00-${TRACE}-${SPAN}-01`,
  ]) {
    it(`is ignored when invalid: ${JSON.stringify(bad)}`, () => assert.equal(parseTraceparent(bad), null));
  }
});

describe("the gateway's ids (response header, request log)", () => {
  const ids = (h: IncomingHttpHeaders) => ({ ...readRequestIds(h) });

  it('x-gateway-trace-id is kept verbatim, whatever it is, before traceparent', () => {
    assert.equal(readRequestIds({ 'x-gateway-trace-id': 'order 42/β', traceparent: `00-${TRACE}-${SPAN}-01` }).traceId, 'order 42/β');
  });

  it("without it, the caller's W3C trace id; without either, a new UUID each time", () => {
    assert.equal(readRequestIds({ traceparent: `00-${TRACE}-${SPAN}-01` }).traceId, TRACE);
    const a = readRequestIds({ traceparent: 'garbage' }).traceId;
    assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.notEqual(readRequestIds({}).traceId, a);
  });

  it("the parent: x-gateway-parent-span-id as sent, else traceparent's parent-id, else none", () => {
    assert.equal(readRequestIds({ 'x-gateway-parent-span-id': 'step-3', traceparent: `00-${TRACE}-${SPAN}-01` }).parentSpanId, 'step-3');
    assert.equal(readRequestIds({ 'x-gateway-trace-id': 'order-42', traceparent: `00-${TRACE}-${SPAN}-01` }).parentSpanId, SPAN);
    assert.equal(readRequestIds({}).parentSpanId, null);
  });

  it('span id and name as sent, or none', () => {
    assert.deepEqual(ids({ 'x-gateway-trace-id': 't', 'x-gateway-span-id': 'span-a', 'x-gateway-span-name': 'checkout' }), {
      traceId: 't', spanId: 'span-a', parentSpanId: null, spanName: 'checkout',
    });
    assert.deepEqual(ids({ 'x-gateway-trace-id': 't' }), { traceId: 't', spanId: null, parentSpanId: null, spanName: null });
  });

  it('without export the span is the ids themselves; its attempts and end do nothing', () => {
    const read = readRequestIds({ 'x-gateway-trace-id': 't', 'x-gateway-span-id': 'span-a' });
    const span = NO_EXPORT.startRequest({ method: 'POST', headers: {} } as IncomingMessage, read, 'chat', '/v1/chat/completions', 0);
    assert.equal(span, read);
    span.attempt('openai', 'gpt-4o', 'https://api.openai.com/v1/chat/completions', 'config', 0).end(200, null);
    span.end({ status: 200, provider: 'openai', model: 'gpt-4o', cacheStatus: 'MISS', retryCount: 0, promptTokens: 1, completionTokens: 2, workspaceId: 'w', error: null });
    assert.deepEqual({ ...span }, { traceId: 't', spanId: 'span-a', parentSpanId: null, spanName: null });
  });
});

describe('OTel ids derived from the gateway ids', () => {
  it('a 32-hex trace id is used as it is (lowercased), a UUID by its digits', () => {
    assert.equal(otelTraceId(TRACE.toUpperCase()), TRACE);
    assert.equal(otelTraceId('4BF92F35-77B3-4DA6-A3CE-929D0E0E4736'), TRACE);
  });

  it('anything else is the first 16 bytes of its SHA-256: the same string, the same trace', () => {
    const want = createHash('sha256').update('order-42').digest('hex').slice(0, 32);
    assert.equal(otelTraceId('order-42'), want);
    assert.equal(otelTraceId('order-42'), otelTraceId('order-42'));
    assert.notEqual(otelTraceId('order-43'), want);
    // All zeros is not a valid OTel trace id: hashed too.
    assert.equal(otelTraceId('0'.repeat(32)), createHash('sha256').update('0'.repeat(32)).digest('hex').slice(0, 32));
  });

  it('a span id is usable when it is 16 hex digits, not all zero', () => {
    assert.equal(otelSpanId(SPAN.toUpperCase()), SPAN);
    assert.equal(otelSpanId('step-3'), null);
    assert.equal(otelSpanId('0'.repeat(16)), null);
    assert.equal(otelSpanId(`${SPAN}0`), null);
    assert.equal(otelSpanId(null), null);
  });
});

describe('OTLP settings', () => {
  it('unset: no export, and the tracer is the no-export one', async () => {
    assert.equal(readSettings({}).otlp, undefined);
    assert.equal(await startTracer(undefined, () => {}), NO_EXPORT);
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT gets /v1/traces; the traces endpoint is used as given and wins', () => {
    assert.equal(readSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).otlp?.tracesUrl, 'http://collector:4318/v1/traces');
    assert.equal(readSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/otlp/' }).otlp?.tracesUrl, 'http://collector:4318/otlp/v1/traces');
    assert.equal(
      readSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/in' }).otlp?.tracesUrl,
      'https://traces.example/in',
    );
  });

  it('protocol: http/protobuf by default, http/json when asked (the traces variable first); grpc is refused', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    assert.equal(readSettings(base).otlp?.protocol, 'http/protobuf');
    assert.equal(readSettings({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).otlp?.protocol, 'http/json');
    assert.equal(readSettings({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).otlp?.protocol, 'http/protobuf');
    assert.throws(() => readSettings({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), /OTEL_EXPORTER_OTLP_PROTOCOL.*grpc is not supported/);
    assert.throws(() => readSettings({ ...base, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'thrift' }), /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL/);
  });

  it('the service name defaults to switchyard; OTEL_SDK_DISABLED=true turns export off; a bad URL is named', () => {
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    assert.equal(readSettings(base).otlp?.serviceName, 'switchyard');
    assert.equal(readSettings({ ...base, OTEL_SERVICE_NAME: 'edge-gw' }).otlp?.serviceName, 'edge-gw');
    assert.equal(readSettings({ ...base, OTEL_SDK_DISABLED: 'TRUE' }).otlp, undefined);
    assert.throws(() => readSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), /OTEL_EXPORTER_OTLP_ENDPOINT must be an http/);
    assert.throws(() => readSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://x' }), /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http/);
  });
});
