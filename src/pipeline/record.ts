/**
 * Record: once the request has ended, however it ended — its metrics, the
 * end of its span, its log entry handed to the log writer thread
 * (logs/writer.ts), which makes the record (tokens, cost, redacted bodies)
 * and stores it, and the settlement of usage its answer did not settle.
 * Nothing here waits for the store.
 */
import type { LogEntry } from '../logs/entry.js';
import type { LogBodies } from '../logs/log-bodies.js';
import { pickHeaders, LOG_BODY_MAX_CHARS } from '../logs/redact.js';
import { readUsage } from '../logs/usage.js';
import type { LogSink } from '../logs/writer.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RequestOutcome } from '../tracing/tracer.js';
import type { RecordStage, RequestContext } from './context.js';

/** Bytes of an answer the log keeps: as much as a logged body may hold. */
export const LOGGED_ANSWER_BYTES = LOG_BODY_MAX_CHARS;

export class Recorder implements RecordStage {
  constructor(
    private readonly metrics: Metrics,
    /** Null when request logging is off. */
    private readonly logs: RequestLogger | null,
  ) {}

  record(ctx: RequestContext): void {
    const r = ctx.result;
    const totalMs = performance.now() - ctx.startedAt;
    this.metrics.record({
      endpoint: ctx.endpoint,
      provider: ctx.provider ?? 'none',
      model: ctx.sentModel ?? 'none',
      status: ctx.status,
      totalMs,
      // Provider time: every attempt that did not answer, and the answering one until its last byte.
      upstreamMs: r === null ? 0 : r.failedUpstreamMs + (r.response === null ? 0 : performance.now() - r.answerStartedAt),
      waitedMs: r?.waitedMs ?? 0,
      retries: r?.retries ?? 0,
      fallbacks: r?.fallbacks ?? 0,
      cacheStatus: ctx.cacheStatus,
    });
    if (ctx.span.exporting) ctx.span.end(outcomeOf(ctx));
    this.logs?.write(ctx, totalMs);
    // An answer that did not settle its usage on the way (cut short, or no answer at all): what passed is charged, the rest released.
    if (ctx.usage !== null) void ctx.usage.finish(() => ctx.capture?.text() ?? null, ctx);
  }
}

/** The answer's text when the gateway held it whole (a translated answer, a cache hit). */
function heldText(ctx: RequestContext): string | null {
  return ctx.answerText ?? ctx.cache?.hit?.body.toString('utf8') ?? null;
}

/** How the request ended, for its span: tokens from the answer's usage when the answer was watched (logs on, or usage charged). */
function outcomeOf(ctx: RequestContext): RequestOutcome {
  const ok = ctx.status >= 200 && ctx.status < 300;
  const answer = heldText(ctx) ?? ctx.capture?.tailText() ?? null;
  const usage = ok && answer !== null ? readUsage(answer) : null;
  return {
    status: ctx.status,
    provider: ctx.provider ?? null,
    model: ctx.sentModel ?? null,
    cacheStatus: ctx.cacheStatus,
    retryCount: ctx.result?.retries ?? 0,
    promptTokens: usage?.promptTokens ?? null,
    completionTokens: usage?.completionTokens ?? null,
    workspaceId: ctx.key.workspaceId,
    error: ctx.error?.toJSON() ?? (ok || answer === null ? null : providerError(answer)),
  };
}

/** A provider's error answer as JSON (its envelope's message and code go on the span); null when it is not JSON. */
function providerError(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** The request log on the request path: the facts of a request copied into a LogEntry for the writer thread. */
export class RequestLogger {
  constructor(
    private readonly writer: LogSink,
    private readonly bodies: LogBodies,
    private readonly now: () => number = Date.now,
  ) {}

  write(ctx: RequestContext, latencyMs: number): void {
    const endedAt = this.now();
    const bodies = this.bodies.of(ctx.key.workspaceId);
    // Async hooks still running: the entry waits for their results; the request does not.
    const hooks = ctx.hooks?.settled() ?? null;
    // A workspace whose log_bodies setting is not cached yet: the entry waits for it too.
    if (typeof bodies === 'boolean' && hooks === null) return this.writer.write(entry(ctx, latencyMs, endedAt, bodies));
    void Promise.all([typeof bodies === 'boolean' ? bodies : bodies.catch(() => false), hooks]).then(([on]) => this.writer.write(entry(ctx, latencyMs, endedAt, on)));
  }
}

function entry(ctx: RequestContext, latencyMs: number, endedAt: number, bodies: boolean): LogEntry {
  const r = ctx.result;
  const c = ctx.capture;
  const request = ctx.requestBody;
  const headers = ctx.req.headers;
  const head = c === null ? null : c.head();
  const span = ctx.span;
  return {
    createdAtMs: Math.round(endedAt - latencyMs),
    latencyMs,
    traceId: ctx.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    spanName: span.spanName,
    workspaceId: ctx.key.workspaceId,
    apiKeyId: ctx.key.id,
    userId: ctx.key.userId,
    configId: ctx.configId,
    virtualKeyId: r?.credential?.id ?? null,
    integrationId: r?.credential?.integrationId ?? null,
    promptId: ctx.prompt?.prompt.id ?? null,
    promptVersion: ctx.prompt?.version.version ?? null,
    pricingMultiplier: r?.credential?.pricingMultiplier ?? 1,
    customPricing: r?.model === undefined ? null : (r.credential?.models.get(r.model)?.pricing ?? null),
    provider: ctx.provider ?? null,
    model: ctx.sentModel ?? null,
    endpoint: ctx.endpoint,
    method: ctx.req.method!,
    path: ctx.pathname.slice(3),
    status: ctx.status,
    upstreamTtfbMs: r?.firstByteMs ?? null,
    cacheStatus: ctx.cacheStatus,
    retryCount: r?.retries ?? 0,
    lastUsedOptionIndex: r?.path ?? null,
    metadata: ctx.gateway?.metadata ?? null,
    gatewayError: ctx.error?.toJSON() ?? null,
    hooks: ctx.hooks === null ? null : ctx.hooks.logged(),
    cut: ctx.cut,
    headers: pickHeaders(headers),
    contentType: headers['content-type'] ?? null,
    bodies,
    requestBody: request === null ? null : request.length > LOG_BODY_MAX_CHARS ? request.subarray(0, LOG_BODY_MAX_CHARS) : request,
    requestBytes: request?.length ?? 0,
    answerText: heldText(ctx),
    answerHead: head,
    // The tail only when the head does not hold the whole answer.
    answerTail: c === null || c.total === c.headLength ? null : c.tail(),
  };
}
