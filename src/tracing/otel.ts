/**
 * The exporting tracer: OpenTelemetry's SDK with a batch processor and the
 * OTLP/HTTP exporter of the configured protocol. Imported only when an OTLP
 * endpoint is set (start.ts). The exporter itself reads the
 * other standard variables from the process environment
 * (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, certificates), the SDK
 * its sampler (OTEL_TRACES_SAMPLER) and batch limits (OTEL_BSP_*).
 *
 * Spans get their context explicitly (no context manager, no global
 * provider): several gateways in one process, as in tests, stay apart.
 */
import {
  createTraceState,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer as ApiTracer,
} from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  RandomIdGenerator,
  type IdGenerator,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { IncomingMessage } from 'node:http';
import type { Endpoint } from '../shared/endpoint.js';
import type { AttemptEnd } from '../routing/router.js';
import { single } from '../shared/headers.js';
import type { GatewayError } from '../shared/errors.js';
import type { OtlpSettings } from '../settings.js';
import { otelSpanId, otelTraceId, parseTraceparent } from './headers.js';
import { RequestIds, type RequestOutcome, type Tracer } from './tracer.js';

// GenAI semantic conventions (still "development" status, so not in the package's stable entry point).
const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
const GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
const GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
const GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
// The gateway's own.
const GATEWAY_TRACE_ID = 'gateway.trace_id';
const GATEWAY_WORKSPACE_ID = 'gateway.workspace_id';
const GATEWAY_CACHE_STATUS = 'gateway.cache_status';
const GATEWAY_RETRY_COUNT = 'gateway.retry_count';
const GATEWAY_TARGET = 'gateway.target';
const GATEWAY_ATTEMPT = 'gateway.attempt';

const OPERATIONS: Readonly<Record<Endpoint, string | undefined>> = {
  chat: 'chat',
  completions: 'text_completion',
  embeddings: 'embeddings',
  responses: 'chat',
  proxy: undefined,
};

/** gen_ai.provider.name's well-known values where they differ from the gateway's provider names. */
const GEN_AI_PROVIDERS: Readonly<Record<string, string>> = {
  bedrock: 'aws.bedrock',
  'vertex-ai': 'gcp.vertex_ai',
  google: 'gcp.gemini',
  'azure-openai': 'azure.ai.openai',
  'azure-ai': 'azure.ai.inference',
  'mistral-ai': 'mistral_ai',
  'x-ai': 'x_ai',
  'perplexity-ai': 'perplexity',
};

function genAiProvider(name: string): string {
  return GEN_AI_PROVIDERS[name] ?? name;
}

export async function exportingTracer(otlp: OtlpSettings, onExportError: (err: unknown) => void): Promise<Tracer> {
  const { OTLPTraceExporter } =
    otlp.protocol === 'http/json' ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto');
  const exporter = new ReportingExporter(new OTLPTraceExporter({ url: otlp.tracesUrl }), onExportError);
  return new OtelTracer(otlp.serviceName, new BatchSpanProcessor(exporter));
}

export class OtelTracer implements Tracer {
  private readonly ids = new PresetIds();
  private readonly provider: BasicTracerProvider;
  private readonly tracer: ApiTracer;

  constructor(serviceName: string, processor: SpanProcessor) {
    // OTEL_RESOURCE_ATTRIBUTES are added; the service name is the settings' (OTEL_SERVICE_NAME, default switchyard).
    const resource = defaultResource()
      .merge(detectResources({ detectors: [envDetector] }))
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }));
    this.provider = new BasicTracerProvider({ resource, idGenerator: this.ids, spanProcessors: [processor] });
    this.tracer = this.provider.getTracer('switchyard');
  }

  startRequest(req: IncomingMessage, ids: RequestIds, endpoint: Endpoint, pathname: string, startedAt: number): OtelRequestSpan {
    return new OtelRequestSpan(this, req, ids, endpoint, pathname, startedAt);
  }

  /** A span with the given ids (null: random); a trace id is used only for a span without a parent. */
  start(name: string, options: SpanOptions, ctx: Context, traceId: string | null = null, spanId: string | null = null): Span {
    this.ids.preset(traceId, spanId);
    try {
      return this.tracer.startSpan(name, options, ctx);
    } finally {
      this.ids.preset(null, null);
    }
  }

  close(): Promise<void> {
    return this.provider.shutdown();
  }
}

class OtelRequestSpan extends RequestIds {
  override get exporting(): boolean {
    return true;
  }
  private readonly span: Span;
  private readonly method: string;
  private readonly operation: string | undefined;
  /** The context of this span, made when the first attempt asks for it. */
  private context: Context | null = null;

  constructor(
    private readonly owner: OtelTracer,
    req: IncomingMessage,
    ids: RequestIds,
    endpoint: Endpoint,
    pathname: string,
    startedAt: number,
  ) {
    super(ids.traceId, ids.spanId, ids.parentSpanId, ids.spanName);
    const traceId = ids.traceId;
    this.method = req.method ?? 'GET';
    this.operation = OPERATIONS[endpoint];
    const w3c = parseTraceparent(single(req.headers.traceparent));
    let parent: SpanContext | null = null;
    if (w3c !== null) {
      const state = single(req.headers.tracestate);
      parent = { traceId: w3c.traceId, spanId: w3c.parentId, traceFlags: w3c.flags, isRemote: true, traceState: state === undefined ? undefined : createTraceState(state) };
    } else {
      const parentId = otelSpanId(this.parentSpanId);
      if (parentId !== null) parent = { traceId: otelTraceId(traceId), spanId: parentId, traceFlags: TraceFlags.SAMPLED, isRemote: true };
    }
    const route = endpoint === 'proxy' ? '/v1/*' : pathname;
    const attributes: Attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: this.method,
      [ATTR_HTTP_ROUTE]: route,
      [ATTR_URL_PATH]: pathname,
      [GATEWAY_TRACE_ID]: traceId,
    };
    if (this.operation !== undefined) attributes[GEN_AI_OPERATION_NAME] = this.operation;
    this.span = owner.start(
      this.spanName ?? `${this.method} ${route}`,
      { kind: SpanKind.SERVER, startTime: startedAt, attributes },
      parent === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent),
      parent === null ? otelTraceId(traceId) : null,
      otelSpanId(this.spanId),
    );
    // The log points at the exported span when the caller named none.
    if (this.spanId === null && this.span.isRecording()) this.spanId = this.span.spanContext().spanId;
  }

  override attempt(provider: string, model: string | undefined, url: string, target: string, retry: number): AttemptEnd {
    this.context ??= trace.setSpan(ROOT_CONTEXT, this.span);
    const attributes: Attributes = {
      [GEN_AI_PROVIDER_NAME]: genAiProvider(provider),
      [ATTR_HTTP_REQUEST_METHOD]: this.method,
      [GATEWAY_TARGET]: target,
      [GATEWAY_ATTEMPT]: retry + 1,
    };
    // An adapter's URL the client cannot send either fails in send(), as a 502: not here.
    if (URL.canParse(url)) {
      const { hostname, port, protocol } = new URL(url);
      attributes[ATTR_SERVER_ADDRESS] = hostname;
      attributes[ATTR_SERVER_PORT] = port === '' ? (protocol === 'https:' ? 443 : 80) : Number(port);
    }
    if (retry > 0) attributes[ATTR_HTTP_REQUEST_RESEND_COUNT] = retry;
    if (this.operation !== undefined) attributes[GEN_AI_OPERATION_NAME] = this.operation;
    if (model !== undefined) attributes[GEN_AI_REQUEST_MODEL] = model;
    // GenAI's span name ("chat gpt-4o") where it applies, HTTP's (the method) on the proxy.
    const name = this.operation !== undefined && model !== undefined ? `${this.operation} ${model}` : this.method;
    return new OtelAttempt(this.owner.start(name, { kind: SpanKind.CLIENT, attributes }, this.context));
  }

  override end(o: RequestOutcome): void {
    const s = this.span;
    s.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, o.status);
    s.setAttribute(GATEWAY_WORKSPACE_ID, o.workspaceId);
    s.setAttribute(GATEWAY_RETRY_COUNT, o.retryCount);
    if (o.provider !== null) s.setAttribute(GEN_AI_PROVIDER_NAME, genAiProvider(o.provider));
    if (o.model !== null) s.setAttribute(GEN_AI_REQUEST_MODEL, o.model);
    if (o.promptTokens !== null) s.setAttribute(GEN_AI_USAGE_INPUT_TOKENS, o.promptTokens);
    if (o.completionTokens !== null) s.setAttribute(GEN_AI_USAGE_OUTPUT_TOKENS, o.completionTokens);
    if (o.cacheStatus !== null) s.setAttribute(GATEWAY_CACHE_STATUS, o.cacheStatus);
    // A server span's 4xx are the client's mistakes, not the gateway's errors (HTTP semantic conventions).
    if (o.status >= 500) {
      const e = envelope(o.error);
      s.setAttribute(ATTR_ERROR_TYPE, e?.code ?? String(o.status));
      s.setStatus({ code: SpanStatusCode.ERROR, message: e?.message });
    }
    s.end();
  }
}

class OtelAttempt implements AttemptEnd {
  constructor(private readonly span: Span) {}

  end(status: number, error: GatewayError | null): void {
    const s = this.span;
    if (error !== null) {
      // No answer: the status is the gateway's (timeout, unreachable, client gone), not the provider's.
      s.setAttribute(ATTR_ERROR_TYPE, error.code);
      s.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    } else {
      s.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      // A client span's 4xx are errors too: the call did not get what it asked for.
      if (status >= 400) {
        s.setAttribute(ATTR_ERROR_TYPE, String(status));
        s.setStatus({ code: SpanStatusCode.ERROR });
      }
    }
    s.end();
  }
}

/** The contract's error envelope {error: {message, code}} of an outcome, when it is one. */
function envelope(error: unknown): { message?: string; code?: string } | null {
  const inner = (error as { error?: unknown } | null)?.error;
  if (inner === null || typeof inner !== 'object') return null;
  const { message, code } = inner as Record<string, unknown>;
  return { message: typeof message === 'string' ? message : undefined, code: typeof code === 'string' ? code : undefined };
}

/** Random ids, except for the one span whose ids start() presets: startSpan asks for them synchronously. */
class PresetIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private traceId: string | null = null;
  private spanId: string | null = null;

  preset(traceId: string | null, spanId: string | null): void {
    this.traceId = traceId;
    this.spanId = spanId;
  }

  generateTraceId(): string {
    return this.traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.spanId ?? this.random.generateSpanId();
  }
}

/** Hands export failures to the gateway's log: the SDK would only tell its own (silent) diagnostic logger. */
class ReportingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly onError: (err: unknown) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.onError(result.error);
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
