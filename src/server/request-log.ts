/**
 * The request log on the request path: a RequestTrail collects what the relay
 * learns of one request (config, body, routing result, cache status, the
 * answer as it passed), and once the last byte is out RequestLogger turns it
 * into a LogRecord (tokens, cost, redacted bodies) and hands it to the log
 * queue. Nothing here waits for the store.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CacheStatus } from '../cache/answer-cache.js';
import { catalog } from '../catalog/catalog.js';
import type { AnswerCapture } from '../logs/capture.js';
import type { LogQueue } from '../logs/queue.js';
import { LOG_FORMAT, type LogRecord } from '../logs/record.js';
import { logBody, redactMetadata, redactValue, safeHeaders, LOG_BODY_MAX_CHARS } from '../logs/redact.js';
import type { Endpoint } from '../providers/types.js';
import type { RouteResult } from '../routing/router.js';
import { GatewayError } from '../shared/errors.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { RequestSpan } from '../tracing/tracer.js';
import type { Metrics } from './metrics.js';
import { newId } from '../store/ids.js';
import type { Store } from '../store/store.js';
import { answerUsage, readUsage, type TokenUsage } from '../logs/usage.js';

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
    private readonly queue: LogQueue,
    private readonly bodies: LogBodies,
    private readonly metrics: Metrics,
    private readonly now: () => number = Date.now,
  ) {}

  write(t: TrailTarget, method: string, headers: IncomingHttpHeaders, trail: RequestTrail): void {
    const latencyMs = performance.now() - t.startedAt;
    const endedAt = this.now();
    const answer = answerOf(trail);
    const ok = trail.status >= 200 && trail.status < 300;
    // An answer without usage is counted with a tokenizer (loaded on first use): then the record waits for it, as it
    // waits for a workspace's log_bodies setting not cached yet; the request never does.
    const usage = !ok || answer === null ? null : (readUsage(answer.tail) ?? answerUsage(t.endpoint, trail.body, '', answer.text));
    const bodies = this.bodies.of(t.key.workspaceId);
    if (typeof bodies === 'boolean' && !(usage instanceof Promise)) {
      return this.enqueue(t, record(t, method, headers, trail, latencyMs, endedAt, bodies, answer?.text ?? null, usage));
    }
    Promise.all([Promise.resolve(bodies).catch(() => false), Promise.resolve(usage).catch(() => null)]).then(([on, u]) =>
      this.enqueue(t, record(t, method, headers, trail, latencyMs, endedAt, on, answer?.text ?? null, u)),
    );
  }

  private enqueue(t: TrailTarget, r: LogRecord): void {
    t.span.end(r);
    if (r.provider !== null && (r.totalTokens !== null || r.costUsd !== null)) {
      this.metrics.usage(r.provider, r.model ?? 'none', r.promptTokens, r.completionTokens, r.costUsd);
    }
    this.queue.enqueue(r);
  }
}

/** The answer as the log keeps it (its start) and its end (where its usage is); null when there was none. */
function answerOf(trail: RequestTrail): { text: string; tail: string } | null {
  if (trail.answerText !== null) return { text: trail.answerText, tail: trail.answerText };
  const c = trail.answer;
  if (c === null) return null;
  const text = c.headText();
  // The whole answer when the head holds it all, else its tail.
  return { text, tail: c.total === c.headLength ? text : c.tailText() };
}

function record(
  t: TrailTarget,
  method: string,
  headers: IncomingHttpHeaders,
  trail: RequestTrail,
  latencyMs: number,
  endedAt: number,
  bodies: boolean,
  answerText: string | null,
  usage: TokenUsage | null,
): LogRecord {
  const r = trail.result;
  const createdAtMs = Math.round(endedAt - latencyMs);
  const ok = trail.status >= 200 && trail.status < 300;
  const model = r?.model ?? trail.model ?? null;
  const provider = r?.provider ?? trail.servedBy ?? null;
  return {
    id: newId(createdAtMs),
    createdAtMs,
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
    promptId: null,
    provider,
    model,
    endpoint: t.endpoint,
    method,
    path: t.pathname.slice(3),
    status: trail.status,
    latencyMs: Math.round(latencyMs),
    upstreamTtfbMs: r?.firstByteMs == null ? null : Math.round(r.firstByteMs),
    promptTokens: usage?.promptTokens ?? null,
    completionTokens: usage?.completionTokens ?? null,
    totalTokens: usage?.totalTokens ?? null,
    tokensEstimated: usage?.estimated ?? false,
    // A cache hit called no provider: it cost nothing.
    costUsd: usage === null ? null : trail.cacheStatus === 'HIT' || trail.cacheStatus === 'SEMANTIC HIT' ? 0 : costOf(provider, model, usage, r?.credential?.pricingMultiplier ?? 1),
    cacheStatus: trail.cacheStatus,
    retryCount: r?.retries ?? 0,
    lastUsedOptionIndex: r?.path ?? null,
    metadata: redactMetadata(trail.metadata),
    error: errorOf(trail, answerText, ok),
    requestHeaders: safeHeaders(headers),
    requestBody: bodies && trail.requestBody !== null ? textBody(headers['content-type'], trail.requestBody) : null,
    responseBody: bodies && answerText !== null ? logBody(answerText) : null,
    logFormat: LOG_FORMAT,
  };
}

function costOf(provider: string | null, model: string | null, u: TokenUsage, multiplier: number): number | null {
  if (provider === null || model === null) return null;
  const usd = catalog.cost(provider, model, { prompt_tokens: u.promptTokens ?? 0, completion_tokens: u.completionTokens ?? 0 });
  return usd === null ? null : usd * multiplier;
}

function errorOf(trail: RequestTrail, answerText: string | null, ok: boolean): unknown {
  if (trail.error !== null) return trail.error.toJSON();
  if (trail.cut) return { error: { message: 'the client closed the connection before the answer ended', type: 'client_error', code: 'client_closed' } };
  if (ok || answerText === null) return null;
  // The provider's own error body, as the client got it.
  try {
    return redactValue(JSON.parse(answerText) as unknown);
  } catch {
    return logBody(answerText);
  }
}

/** Text bodies as text; a binary upload (audio, images, files) as a note of its size. */
function textBody(contentType: string | undefined, body: Buffer): string | null {
  if (body.length === 0) return null;
  if (contentType !== undefined && !TEXT_TYPE.test(contentType)) return `[${body.length} bytes of ${contentType.split(';')[0]}]`;
  return logBody(body);
}

const TEXT_TYPE = /^\s*(?:application\/(?:[\w.+-]*\+)?json|text\/|application\/x-www-form-urlencoded)/i;

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
