/**
 * Tracing of requests: one span per request to a model endpoint or the
 * generic proxy, one child per call to a provider. Without an OTLP endpoint
 * the tracer only reads the ids the request log needs from the headers: no
 * OpenTelemetry module is loaded and nothing but the ids object is made.
 * With one, otel.ts (loaded on demand by start.ts) records and exports real
 * spans.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { LogRecord } from '../store/log-record.js';
import type { Endpoint } from '../shared/endpoint.js';
import type { AttemptEnd, AttemptObserver } from '../routing/router.js';
import { single } from '../shared/headers.js';
import { newId } from '../store/ids.js';
import { parseTraceparent } from './headers.js';

/** The request's ids as the log keeps them (headers.ts says where each comes from). */
export interface SpanIds {
  readonly traceId: string;
  /** x-gateway-span-id as sent; else, when spans are exported, the id of the request's span. */
  readonly spanId: string | null;
  readonly parentSpanId: string | null;
  /** x-gateway-span-name as sent. */
  readonly spanName: string | null;
}

/** How a request ended; a LogRecord is one, so the record stage could hand over a record it built. */
export type RequestOutcome = Pick<
  LogRecord,
  'status' | 'provider' | 'model' | 'cacheStatus' | 'retryCount' | 'promptTokens' | 'completionTokens' | 'workspaceId' | 'error'
>;

/** A request's span: its ids, a child per provider call (the router's observer), and its end. */
export interface RequestSpan extends SpanIds, AttemptObserver {
  /** Spans are exported: end() wants the outcome (tokens included); else it does nothing and need not be called. */
  readonly exporting: boolean;
  /** Once, after the last byte went out (or the gateway answered itself). */
  end(outcome: RequestOutcome): void;
}

export interface Tracer {
  /**
   * The span of a request whose ids the server read on arrival (readRequestIds);
   * `startedAt` is performance.now() at arrival.
   */
  startRequest(req: IncomingMessage, ids: RequestIds, endpoint: Endpoint, pathname: string, startedAt: number): RequestSpan;
  /** Exports what is still buffered and stops. */
  close(): Promise<void>;
}

const NO_ATTEMPT: AttemptEnd = { end() {} };

/**
 * A request's ids, read once from its headers when it arrives (for every
 * /v1 request: refusals carry the trace id too). When nothing is exported
 * this is the request's span as well: its hooks do nothing.
 */
export class RequestIds implements RequestSpan {
  get exporting(): boolean {
    return false;
  }

  constructor(
    readonly traceId: string,
    public spanId: string | null,
    readonly parentSpanId: string | null,
    readonly spanName: string | null,
  ) {}

  attempt(_provider: string, _model: string | undefined, _url: string, _target: string, _retry: number): AttemptEnd {
    return NO_ATTEMPT;
  }

  end(_outcome: RequestOutcome): void {}
}

/** headers.ts says where each id comes from; traceparent is parsed only when a gateway header is missing. */
export function readRequestIds(h: IncomingHttpHeaders): RequestIds {
  const traceId = single(h['x-gateway-trace-id']);
  const parentSpanId = single(h['x-gateway-parent-span-id']);
  const w3c = traceId === undefined || parentSpanId === undefined ? parseTraceparent(single(h.traceparent)) : null;
  return new RequestIds(
    // Time-ordered (UUIDv7): the request log's trace index then grows at its end, not at a random page per request.
    traceId ?? w3c?.traceId ?? newId(),
    single(h['x-gateway-span-id']) ?? null,
    parentSpanId ?? w3c?.parentId ?? null,
    single(h['x-gateway-span-name']) ?? null,
  );
}

/** The tracer when no OTLP endpoint is set: the span is the ids. */
export const NO_EXPORT: Tracer = {
  startRequest: (_req, ids) => ids,
  close: async () => {},
};
