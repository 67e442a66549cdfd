// OTLP export, black-box: a gateway started with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a
// mock collector that decodes what arrives on the wire (protobuf or JSON). The requests
// are sent first, then the gateway is stopped, which must flush the batch: the spans are
// read after that, with no waiting on the exporter's schedule.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startTestGateway } from './support/gateway.js';
import { SPAN_KIND, STATUS_CODE, startOtlpCollector, type ExportedSpan, type OtlpCollector } from './support/otlp-collector.js';
import { assertRouted, chat, startUpstreams, target, type Reply, type Upstream } from './support/routing.js';

const CHAT = '/v1/chat/completions';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
const TRACESTATE = 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7';
const fail500 = { status: 500, body: { error: { message: 'boom', type: 'server_error', param: null, code: null } } };

/** A loopback port nothing listens on: a provider that cannot be reached. */
async function closedPort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

const inTrace = (spans: ExportedSpan[], traceId: string) => spans.filter((s) => s.traceId === traceId);
const byAttempt = (a: ExportedSpan, b: ExportedSpan) => Number(a.attributes['gateway.attempt']) - Number(b.attributes['gateway.attempt']);

for (const protocol of ['http/protobuf', 'http/json'] as const) {
  describe(`spans exported over OTLP ${protocol}`, { timeout: 60_000 }, () => {
    let collector: OtlpCollector;
    let A: Upstream;
    let retried: Reply;
    let named: Reply;
    let unreachable: Reply;
    let unreachablePort: number;
    let logs: { span_id: string; parent_span_id: string }[] = [];

    before(async () => {
      collector = await startOtlpCollector();
      ({ A } = await startUpstreams('A'));
      // Read by the exporter itself from the process environment, as OTel's exporters do.
      process.env.OTEL_EXPORTER_OTLP_HEADERS = 'x-collector-key=test-key';
      const gw = await startTestGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol });
      try {
        A.enqueue(CHAT, fail500);
        retried = await chat(gw, target(A, { retry: { attempts: 1 } }), { headers: { traceparent: TRACEPARENT, tracestate: TRACESTATE } });
        named = await chat(gw, target(A), {
          headers: {
            'x-gateway-trace-id': 'order-42',
            'x-gateway-span-id': 'a1b2c3d4e5f60718',
            'x-gateway-parent-span-id': 'b7ad6b7169203331',
            'x-gateway-span-name': 'checkout',
          },
        });
        unreachablePort = await closedPort();
        unreachable = await chat(gw, { provider: 'openai', custom_host: `http://127.0.0.1:${unreachablePort}/v1`, api_key: 'sk-x' }, {
          headers: { 'x-gateway-trace-id': 'dead-end' },
        });
        // The request log is written in batches: wait for the retried request's.
        for (let i = 0; i < 100 && logs.length === 0; i++) {
          logs = ((await (await gw.call(`/logs?trace_id=${CALLER_TRACE}`)).json()) as { data: typeof logs }).data;
          if (logs.length === 0) await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        // close() flushes what the batch processor still holds.
        await gw.stop();
        delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
      }
    });
    after(async () => {
      await collector.close();
      await A.close();
    });

    it('posts to /v1/traces in the protocol asked for, with the exporter headers and the service name', () => {
      assert.ok(collector.requests.length > 0, 'something was exported');
      for (const r of collector.requests) {
        assert.equal(r.headers['content-type'], protocol === 'http/json' ? 'application/json' : 'application/x-protobuf');
        assert.equal(r.headers['x-collector-key'], 'test-key');
      }
      assert.equal(collector.spans[0]!.resource['service.name'], 'switchyard');
    });

    it("the request span continues the caller's W3C trace: its trace id, its span as parent, its tracestate", () => {
      assertRouted(retried, { status: 200, retries: 1 });
      // Without x-gateway-trace-id the gateway's trace id is the caller's W3C one.
      assert.equal(retried.headers.get('x-gateway-trace-id'), CALLER_TRACE);
      const server = inTrace(collector.spans, CALLER_TRACE).filter((s) => s.kind === SPAN_KIND.SERVER);
      assert.equal(server.length, 1);
      const s = server[0]!;
      assert.equal(s.parentSpanId, CALLER_SPAN);
      assert.equal(s.traceState, TRACESTATE);
      assert.equal(s.name, 'POST /v1/chat/completions');
      assert.equal(s.status.code, STATUS_CODE.UNSET);
      assert.deepEqual(
        { ...s.attributes, 'gateway.workspace_id': typeof s.attributes['gateway.workspace_id'] },
        {
          'http.request.method': 'POST',
          'http.route': '/v1/chat/completions',
          'url.path': '/v1/chat/completions',
          'http.response.status_code': 200,
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o-mini',
          // The answer's usage, as the request log read it.
          'gen_ai.usage.input_tokens': retried.json.usage.prompt_tokens,
          'gen_ai.usage.output_tokens': retried.json.usage.completion_tokens,
          'gateway.trace_id': CALLER_TRACE,
          'gateway.cache_status': 'DISABLED',
          'gateway.retry_count': 1,
          'gateway.workspace_id': 'string',
        },
      );
    });

    it("the request's log carries the exported span's ids", () => {
      const server = inTrace(collector.spans, CALLER_TRACE).find((s) => s.kind === SPAN_KIND.SERVER)!;
      assert.equal(logs.length, 1);
      assert.equal(logs[0]!.span_id, server.spanId);
      assert.equal(logs[0]!.parent_span_id, CALLER_SPAN);
    });

    it('each upstream attempt is a CLIENT child of the request span: the 500, then the 200', () => {
      const spans = inTrace(collector.spans, CALLER_TRACE);
      const server = spans.find((s) => s.kind === SPAN_KIND.SERVER)!;
      const attempts = spans.filter((s) => s.kind === SPAN_KIND.CLIENT).sort(byAttempt);
      assert.equal(attempts.length, 2);
      for (const a of attempts) {
        assert.equal(a.parentSpanId, server.spanId);
        assert.equal(a.name, 'chat gpt-4o-mini');
        assert.equal(a.attributes['gen_ai.provider.name'], 'openai');
        assert.equal(a.attributes['gen_ai.request.model'], 'gpt-4o-mini');
        assert.equal(a.attributes['server.address'], '127.0.0.1');
        assert.equal(a.attributes['server.port'], A.port);
        assert.equal(a.attributes['gateway.target'], 'config');
      }
      const [first, second] = attempts as [ExportedSpan, ExportedSpan];
      assert.equal(first.attributes['gateway.attempt'], 1);
      assert.equal(first.attributes['http.response.status_code'], 500);
      assert.equal(first.attributes['error.type'], '500');
      assert.equal(first.status.code, STATUS_CODE.ERROR);
      assert.equal(first.attributes['http.request.resend_count'], undefined);
      assert.equal(second.attributes['gateway.attempt'], 2);
      assert.equal(second.attributes['http.request.resend_count'], 1);
      assert.equal(second.attributes['http.response.status_code'], 200);
      assert.equal(second.status.code, STATUS_CODE.UNSET);
    });

    it('without traceparent the x-gateway-* headers place the span: a derived trace id, their span id, parent and name', () => {
      assertRouted(named, { status: 200 });
      assert.equal(named.headers.get('x-gateway-trace-id'), 'order-42');
      const traceId = createHash('sha256').update('order-42').digest('hex').slice(0, 32);
      const s = inTrace(collector.spans, traceId).find((x) => x.kind === SPAN_KIND.SERVER);
      assert.ok(s, `a request span in trace ${traceId}`);
      assert.equal(s.spanId, 'a1b2c3d4e5f60718');
      assert.equal(s.parentSpanId, 'b7ad6b7169203331');
      assert.equal(s.name, 'checkout');
      assert.equal(s.attributes['gateway.trace_id'], 'order-42');
      const attempts = inTrace(collector.spans, traceId).filter((x) => x.kind === SPAN_KIND.CLIENT);
      assert.equal(attempts.length, 1);
      assert.equal(attempts[0]!.parentSpanId, 'a1b2c3d4e5f60718');
    });

    it('a provider that cannot be reached: both spans are errors and say why', () => {
      assert.equal(unreachable.status, 502);
      const spans = inTrace(collector.spans, createHash('sha256').update('dead-end').digest('hex').slice(0, 32));
      const server = spans.find((s) => s.kind === SPAN_KIND.SERVER)!;
      assert.equal(server.parentSpanId, '', 'no parent was given: a root span');
      assert.equal(server.status.code, STATUS_CODE.ERROR);
      assert.match(server.status.message, /could not reach openai/);
      assert.equal(server.attributes['error.type'], 'upstream_unreachable');
      assert.equal(server.attributes['http.response.status_code'], 502);
      const attempt = spans.find((s) => s.kind === SPAN_KIND.CLIENT)!;
      assert.equal(attempt.status.code, STATUS_CODE.ERROR);
      assert.equal(attempt.attributes['error.type'], 'upstream_unreachable');
      assert.equal(attempt.attributes['server.port'], unreachablePort);
      assert.equal(attempt.attributes['http.response.status_code'], undefined, 'no provider answered');
    });
  });
}

describe('a collector that refuses the export', { timeout: 60_000 }, () => {
  it("is reported in the gateway's log, and the request is not affected", async () => {
    const collector = await startOtlpCollector({ status: 400 });
    const { A } = await startUpstreams('A');
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const gw = await startTestGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }, {}, pino({ level: 'warn' }, sink));
    try {
      assertRouted(await chat(gw, target(A)), { status: 200 });
    } finally {
      await gw.stop();
      await collector.close();
      await A.close();
    }
    assert.equal(collector.requests.length, 1);
    assert.match(lines.join(''), /could not export trace spans/);
  });
});
