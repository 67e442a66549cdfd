// Without an OTLP endpoint the gateway exports nothing and never loads OpenTelemetry's SDK,
// exporters or its own exporting tracer. This file imports the gateway only after it starts
// watching imports, so a static import of the SDK anywhere on the path would show too.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { watchImports } from './support/import-watch.js';

const watch = watchImports();
const { startTestGateway } = await import('./support/gateway.js');
const { startOtlpCollector } = await import('./support/otlp-collector.js');
const { assertRouted, chat, startUpstreams, target } = await import('./support/routing.js');

// The SDK's packages and the module that uses them; @opentelemetry/api alone is loaded anyway (by prom-client).
const EXPORTING = /\/@opentelemetry\/(?!api\/)|\/src\/tracing\/otel\.js$/;

describe('tracing without an OTLP endpoint', { timeout: 60_000 }, () => {
  let collector: Awaited<ReturnType<typeof startOtlpCollector>>;
  before(async () => {
    collector = await startOtlpCollector();
  });
  after(() => collector.close());

  it('exports nothing and loads none of OpenTelemetry beyond its API', async () => {
    // An exporter built anyway would read this and post to the collector.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.url;
    const { A } = await startUpstreams('A');
    const gw = await startTestGateway();
    try {
      const r = await chat(gw, target(A), { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
      assertRouted(r, { status: 200 });
      assert.equal(r.headers.get('x-gateway-trace-id'), '4bf92f3577b34da6a3ce929d0e0e4736');
    } finally {
      await gw.stop();
      await A.close();
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    }
    assert.equal(collector.requests.length, 0);
    const seen = await watch.seen();
    assert.ok(seen.some((u) => u.endsWith('/src/gateway.js')), 'the watch saw the gateway load');
    assert.deepEqual(seen.filter((u) => EXPORTING.test(u)), []);
  });

  it('with one, the same watch sees the SDK and the exporting tracer load', async () => {
    const gw = await startTestGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    await gw.stop();
    const loaded = (await watch.seen()).filter((u) => EXPORTING.test(u));
    assert.ok(loaded.some((u) => u.endsWith('/src/tracing/otel.js')), 'otel.js');
    assert.ok(loaded.some((u) => u.includes('/@opentelemetry/sdk-trace-base/')), 'sdk-trace-base');
    assert.ok(loaded.some((u) => u.includes('/@opentelemetry/exporter-trace-otlp-proto/')), 'the protobuf exporter');
  });
});
