/**
 * The request log on the request path: a RequestTrail collects what the relay
 * learns of one request (config, body, routing result, cache status, the
 * answer as it passed), and once the last byte is out RequestLogger copies
 * the facts of it into a LogEntry for the log writer thread (logs/writer.ts),
 * which makes the record (tokens, cost, redacted bodies) and stores it.
 * Nothing here waits for the store, and nothing here outlives the turn.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CacheStatus } from '../shared/cache-status.js';
import type { AnswerCapture } from '../logs/capture.js';
import type { LogEntry } from '../logs/entry.js';
import { pickHeaders, LOG_BODY_MAX_CHARS } from '../logs/redact.js';
import type { LogWriter } from '../logs/writer.js';
import type { Endpoint } from '../shared/endpoint.js';
import type { RouteResult } from '../routing/router.js';
import type { GatewayError } from '../shared/errors.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { RequestSpan } from '../tracing/tracer.js';
import type { Store } from '../store/store.js';

/** Bytes of an answer the log keeps: as much as a logged body may hold. */
export const LOGGED_ANSWER_BYTES = LOG_BODY_MAX_CHARS;

/** What the relay learned of one request; fields stay at their defaults where it never got that far. */
export class RequestTrail {
  status = 0;
  configId: string | null = null;
  metadata: Readonly<Record<string, string>> | null = null;
  /** The request's bytes when the gateway read them (not a body streamed straight through). */
  requestBody: Buffer | null = null;
  /** The parsed JSON body of a model endpoint (for counting tokens when the answer has no usage). */
  body: Record<string, unknown> | null = null;
  /** The model the client asked for; the answering attempt's model wins when known. */
  model: string | undefined = undefined;
  cacheStatus: CacheStatus | null = null;
  result: RouteResult | null = null;
  /** The gateway's own error answer. */
  error: GatewayError | null = null;
  /** The answer as it passed (streamed), or its text (answers the gateway held whole). */
  answer: AnswerCapture | null = null;
  answerText: string | null = null;
  /** A cache hit: the provider that first answered. */
  servedBy: string | undefined = undefined;
  /** The client left before the answer ended. */
  cut = false;
}

/** Facts of the request known before relaying (RelayTarget's). */
export interface TrailTarget {
  endpoint: Endpoint;
  pathname: string;
  traceId: string;
  startedAt: number;
  key: ApiKeyRecord;
  /** The request's tracing span: the log's span ids; ended with the log's record. */
  span: RequestSpan;
}

export class RequestLogger {
  constructor(
    private readonly writer: LogWriter,
    private readonly bodies: LogBodies,
    private readonly now: () => number = Date.now,
  ) {}

  write(t: TrailTarget, method: string, headers: IncomingHttpHeaders, trail: RequestTrail): void {
    const latencyMs = performance.now() - t.startedAt;
    const endedAt = this.now();
    const bodies = this.bodies.of(t.key.workspaceId);
    // A workspace whose log_bodies setting is not cached yet: the entry waits for it; the request does not.
    if (typeof bodies === 'boolean') return this.writer.write(entry(t, method, headers, trail, latencyMs, endedAt, bodies));
    bodies.catch(() => false).then((on) => this.writer.write(entry(t, method, headers, trail, latencyMs, endedAt, on)));
  }
}

function entry(t: TrailTarget, method: string, headers: IncomingHttpHeaders, trail: RequestTrail, latencyMs: number, endedAt: number, bodies: boolean): LogEntry {
  const r = trail.result;
  const c = trail.answer;
  const request = trail.requestBody;
  const head = c === null ? null : c.head();
  return {
    createdAtMs: Math.round(endedAt - latencyMs),
    latencyMs,
    traceId: t.traceId,
    spanId: t.span.spanId,
    parentSpanId: t.span.parentSpanId,
    spanName: t.span.spanName,
    workspaceId: t.key.workspaceId,
    apiKeyId: t.key.id,
    userId: t.key.userId,
    configId: trail.configId,
    virtualKeyId: r?.credential?.id ?? null,
    integrationId: r?.credential?.integrationId ?? null,
    pricingMultiplier: r?.credential?.pricingMultiplier ?? 1,
    provider: r?.provider ?? trail.servedBy ?? null,
    model: r?.model ?? trail.model ?? null,
    endpoint: t.endpoint,
    method,
    path: t.pathname.slice(3),
    status: trail.status,
    upstreamTtfbMs: r?.firstByteMs ?? null,
    cacheStatus: trail.cacheStatus,
    retryCount: r?.retries ?? 0,
    lastUsedOptionIndex: r?.path ?? null,
    metadata: trail.metadata,
    gatewayError: trail.error?.toJSON() ?? null,
    cut: trail.cut,
    headers: pickHeaders(headers),
    contentType: headers['content-type'] ?? null,
    bodies,
    requestBody: request === null ? null : request.length > LOG_BODY_MAX_CHARS ? request.subarray(0, LOG_BODY_MAX_CHARS) : request,
    requestBytes: request?.length ?? 0,
    answerText: trail.answerText,
    answerHead: head,
    // The tail only when the head does not hold the whole answer.
    answerTail: c === null || c.total === c.headLength ? null : c.tail(),
  };
}

/**
 * Whether each workspace logs bodies (its `log_bodies` setting, the
 * organisation's unless overridden), cached: synchronous on the request
 * path once known, dropped when settings or the workspace change.
 */
export class LogBodies {
  private readonly known = new Map<string, boolean>();
  /** Bumped by every change: a read that began before it does not store its possibly stale answer. */
  private generation = 0;

  constructor(private readonly store: Store) {
    store.changes.subscribe((c) => {
      if (c.kind === 'settings' || c.kind === 'workspace' || c.kind === 'all') {
        this.known.clear();
        this.generation++;
      }
    });
  }

  of(workspaceId: string): boolean | Promise<boolean> {
    const on = this.known.get(workspaceId);
    if (on !== undefined) return on;
    const generation = this.generation;
    return this.store.settings.effective(workspaceId).then((s) => {
      if (generation === this.generation) this.known.set(workspaceId, s.log_bodies);
      return s.log_bodies;
    });
  }
}
