/**
 * A request to a model endpoint or the generic proxy, from the client's bytes
 * to the provider's answer streamed back: read and check the input, pick the
 * plan, route, relay. Nothing here buffers an answer; back-pressure flows
 * through pipe() and a client that leaves aborts the provider call.
 */
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { AnswerCache, AnswerKeeper, CacheStatus } from '../cache/answer-cache.js';
import { parseConfigHeader } from '../config/schema.js';
import type { Config } from '../config/types.js';
import { planFor, type Plan } from '../routing/plan.js';
import { isHopByHop } from '../routing/headers.js';
import { mayRepeat, type RouteRequest, type RouteResult, type Router } from '../routing/router.js';
import type { Answer } from '../providers/contract.js';
import { AnswerCapture } from '../logs/capture.js';
import { readUsage } from '../logs/usage.js';
import type { UpstreamResponse } from '../upstream/client.js';
import { Cancel } from '../upstream/cancel.js';
import { invalid, type GatewayError, type Result } from '../shared/errors.js';
import { single } from '../shared/headers.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { RequestOutcome } from '../tracing/tracer.js';
import { readBody } from './body.js';
import type { AnswerUsage, RequestLimits } from './limits.js';
import type { Metrics } from './metrics.js';
import { parseGatewayHeaders } from './request-headers.js';
import { sendError } from './respond.js';
import { LOGGED_ANSWER_BYTES, RequestTrail, type RequestLogger, type TrailTarget } from './request-log.js';
import { stripAddedUsage, stripsAddedUsage } from './usage-strip.js';
import { HEADERS_ONLY, type PlanLookup, type SavedConfigs } from './saved-configs.js';
import { validateBody } from './validation.js';

export interface RelayDeps {
  router: Router;
  metrics: Metrics;
  maxBodyBytes: number;
  configs: SavedConfigs;
  limits: RequestLimits;
  cache: AnswerCache;
  /** Null when request logging is off. */
  logs: RequestLogger | null;
}

/** What the server knows of a request before relaying it. */
export interface RelayTarget extends TrailTarget {
  /** Path after /v1, query included. */
  path: string;
}

/** Relays one request, then counts it, ends its span and logs it, whatever happened to it. */
export async function relay(deps: RelayDeps, req: IncomingMessage, res: ServerResponse, t: RelayTarget): Promise<void> {
  const trail = new RequestTrail();
  await serve(deps, req, res, t, trail);
  observe(deps.metrics, t, trail);
  if (t.span.exporting) t.span.end(outcomeOf(t, trail));
  if (deps.logs !== null) deps.logs.write(t, req.method!, req.headers, trail);
}

async function serve(deps: RelayDeps, req: IncomingMessage, res: ServerResponse, t: RelayTarget, trail: RequestTrail): Promise<void> {
  const { endpoint, path, pathname } = t;
  // The rate-limit quota headers, once admitted: every answer carries them.
  let quota: Record<string, string> | null = null;
  const fail = (error: GatewayError): void => {
    // An oversized upload is not worth draining: close once the 413 is out.
    if (error.status === 413) res.setHeader('connection', 'close');
    if (quota !== null) for (const name in quota) res.setHeader(name, quota[name]!);
    res.setHeader('x-gateway-trace-id', t.traceId);
    res.setHeader('x-gateway-cache-status', 'DISABLED');
    sendError(res, error);
    trail.status = error.status;
    trail.error = error;
  };

  const gh = parseGatewayHeaders(req.headers);
  if (!gh.ok) return fail(gh.error);
  trail.metadata = gh.value.metadata;
  // Before the body is read: a client over its limit costs no upload and no provider call.
  let admitted = deps.limits.admit(req.method!, pathname, t.key, gh.value.metadata);
  if (admitted instanceof Promise) admitted = await admitted;
  if (!admitted.ok) return fail(admitted.error);
  quota = admitted.value.headers;
  let plan = resolvePlan(deps.configs, req.headers, t.key);
  if (plan instanceof Promise) plan = await plan;
  if (!plan.ok) return fail(plan.error);
  trail.configId = plan.value.configId;

  let body: Record<string, unknown> | null = null;
  let raw: RouteRequest['raw'] = null;
  if (endpoint === 'proxy') {
    const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && mayRepeat(plan.value.root)) {
      const read = await readBody(req, deps.maxBodyBytes);
      if (!read.ok) return fail(read.error);
      raw = trail.requestBody = read.value;
    } else if (hasBody) {
      raw = req; // streamed straight through: one attempt only
    }
  } else {
    const read = await readBody(req, deps.maxBodyBytes);
    if (!read.ok) return fail(read.error);
    raw = trail.requestBody = read.value;
    if (!plan.value.passthrough) {
      const parsed = parseJsonBody(read.value);
      if (!parsed.ok) return fail(parsed.error);
      const problem = validateBody(endpoint, parsed.value) ?? strictCheck(plan.value, gh.value.strict, parsed.value);
      if (problem !== null) return fail(problem);
      body = trail.body = parsed.value as Record<string, unknown>;
    }
  }

  if (typeof body?.model === 'string') trail.model = body.model;
  let cache = deps.cache.open(plan.value, { workspaceId: t.key.workspaceId, method: req.method!, path, headers: req.headers, body });
  if (cache instanceof Promise) cache = await cache;
  if (!cache.ok) return fail(cache.error);
  const { hit, status: cacheStatus } = cache.value;
  trail.cacheStatus = cacheStatus;
  if (hit !== null) {
    cache.value.replay(res, gatewayHeaders(quota ?? {}, { provider: hit.provider, path: hit.path, retries: 0 }, t.traceId, cacheStatus));
    trail.status = hit.status;
    trail.servedBy = hit.provider;
    if (deps.logs !== null) trail.answerText = hit.body.toString('utf8');
    return;
  }

  // Budgets reserve the request's estimated usage once the body is known; nothing is sent when one is exhausted.
  let answer = deps.limits.reserve(admitted.value, body, single(req.headers['x-gateway-provider']));
  if (answer instanceof Promise) answer = await answer;
  if (!answer.ok) return fail(answer.error);
  const cancel = new Cancel();
  res.once('close', () => {
    if (!res.writableFinished) cancel.abort();
  });
  const routeReq: RouteRequest = {
    endpoint,
    method: req.method!,
    path,
    pathname,
    body,
    raw,
    headers: req.headers,
    metadata: gh.value.metadata,
    workspaceId: t.key.workspaceId,
    provider: single(req.headers['x-gateway-provider']),
    customHost: single(req.headers['x-gateway-custom-host']),
    authorization: single(req.headers.authorization),
    virtualKey: single(req.headers['x-gateway-virtual-key']),
    forwardHeaders: gh.value.forwardHeaders,
    timeoutMs: gh.value.timeoutMs,
    signal: cancel,
    observer: t.span,
  };
  const result = await deps.router.route(plan.value, routeReq);
  trail.result = result;
  trail.status = result.status;
  if (result.response === null) {
    void answer.value.release();
    trail.error = result.error;
    if (result.status === 499) return; // the client is gone; nobody to answer
    const headers = gatewayHeaders(quota ?? {}, result, t.traceId, cacheStatus);
    for (const name in headers) res.setHeader(name, headers[name]!);
    sendError(res, result.error!);
    return;
  }
  const upstream = result.response;
  const keeper = cache.value.keeper(result);
  const out = gatewayHeaders(quota ?? {}, result, t.traceId, cacheStatus);
  if (result.answer !== undefined) {
    await relayTranslated(result.answer, upstream, res, out, answer.value, keeper, trail, deps.logs !== null);
    return;
  }
  // One header object for writeHead: Node's fast path, no per-header setHeader.
  for (const name in upstream.headers) {
    if (!isHopByHop(name)) out[name] = upstream.headers[name];
  }
  const strip = stripsAddedUsage(result.addedUsage, upstream.statusCode, upstream.headers);
  if (strip) delete out['content-length']; // the answer gets shorter
  res.writeHead(upstream.statusCode, out);
  // Usage is read before the usage the client did not ask for is stripped; the cache keeps what the client gets.
  const read = watchAnswer(upstream.body, upstream.statusCode, upstream.headers['content-encoding'], answer.value, trail, deps.logs !== null);
  trail.cut = !(await relayBody(keeper.watch(strip ? stripAddedUsage(read) : read, upstream.statusCode, upstream.headers), res));
}

/**
 * The answer's body on its way to the client, copied for the log and the
 * usage charge when either wants it (logs/capture.ts); the same stream when
 * neither does. An error answer used nothing: reservations are given back at
 * once. A compressed answer cannot be read on the way: reservations stand.
 */
function watchAnswer(body: Readable, status: number, encoding: string | string[] | undefined, usage: AnswerUsage, trail: RequestTrail, logging: boolean): Readable {
  const ok = status >= 200 && status < 300;
  if (!ok) void usage.release();
  const readable = encoding === undefined || encoding === 'identity';
  if (!readable) {
    if (ok) void usage.settle(null);
    return body;
  }
  const charge = ok && usage.charging;
  if (!logging && !charge) return body;
  const capture = (trail.answer = new AnswerCapture(logging ? LOGGED_ANSWER_BYTES : 0));
  return charge ? capture.tap(body, (c) => usage.settle(c.tailText())) : capture.listen(body);
}

/**
 * A provider with its own wire format: streams go through the translator's
 * transform event by event; whole answers and errors are read, translated and
 * sent as OpenAI JSON (errors in the contract's envelope, the status kept).
 */
async function relayTranslated(
  tr: Answer,
  upstream: UpstreamResponse,
  res: ServerResponse,
  headers: OutgoingHttpHeaders,
  usage: AnswerUsage,
  keeper: AnswerKeeper,
  trail: RequestTrail,
  logging: boolean,
): Promise<void> {
  const ok = upstream.statusCode >= 200 && upstream.statusCode < 300;
  if (ok && tr.streamed) {
    const events = tr.stream();
    upstream.body.once('error', (e) => events.destroy(e));
    events.once('close', () => {
      if (!upstream.body.readableEnded) upstream.body.destroy();
    });
    res.writeHead(200, { ...headers, ...tr.headers });
    upstream.body.pipe(events);
    const read = watchAnswer(events, 200, undefined, usage, trail, logging);
    trail.cut = !(await relayBody(keeper.watch(tr.addedUsage ? stripAddedUsage(read) : read, 200, tr.headers), res));
    return;
  }
  let raw: Buffer;
  try {
    raw = Buffer.from(await upstream.body.arrayBuffer());
  } catch {
    res.destroy();
    trail.cut = true;
    return;
  }
  for (const name in headers) res.setHeader(name, headers[name]!);
  const text = ok && !tr.streamed ? tr.response(raw, upstream.headers) : null;
  if (text === null || !text.ok) {
    void usage.release();
    const error = text === null ? tr.error(upstream.statusCode, raw, upstream.headers) : text.error;
    trail.status = error.status;
    trail.error = error;
    return sendError(res, error);
  }
  trail.answerText = text.value;
  await usage.settle(text.value);
  await keeper.keep(200, tr.headers, text.value);
  res.writeHead(200, { ...tr.headers, 'content-length': Buffer.byteLength(text.value) });
  res.end(text.value);
}

/**
 * Streams the provider's body to the client. pipe() keeps back-pressure; a
 * provider that breaks mid-stream closes the client's connection, and a
 * client that leaves stops the provider's stream; resolves to whether the
 * whole answer went out. (Not stream.pipeline: its
 * per-call AbortController costs more than the rest of the relay.)
 */
function relayBody(body: Readable, res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    if (res.closed) {
      // The client left while the provider was answering.
      body.destroy();
      resolve(false);
      return;
    }
    body.once('error', () => res.destroy());
    res.once('close', () => {
      if (!body.readableEnded) body.destroy();
      resolve(res.writableFinished);
    });
    body.pipe(res);
  });
}

/** The contract's response headers of the model endpoints, added to `out`. */
function gatewayHeaders(
  out: OutgoingHttpHeaders,
  r: Pick<RouteResult, 'provider' | 'path' | 'retries'>,
  traceId: string,
  cacheStatus: CacheStatus,
): OutgoingHttpHeaders {
  out['x-gateway-trace-id'] = traceId;
  if (r.provider !== undefined) out['x-gateway-provider'] = r.provider;
  out['x-gateway-cache-status'] = cacheStatus;
  out['x-gateway-retry-attempt-count'] = String(r.retries);
  out['x-gateway-last-used-option-index'] = r.path;
  return out;
}

/**
 * The config of a request: x-gateway-config (inline JSON, or a saved config's
 * id or slug), else the key's pinned config (`defaults.config_id`), else, when
 * the request names no provider, its workspace's default config; else headers.
 */
function resolvePlan(saved: SavedConfigs, headers: IncomingHttpHeaders, key: ApiKeyRecord): PlanLookup {
  const header = single(headers['x-gateway-config']);
  if (header !== undefined && header !== '') {
    if (header.trimStart().startsWith('{')) {
      const parsed = parseConfigHeader(header);
      return parsed.ok ? { ok: true, value: planFor(parsed.value as Config) } : parsed;
    }
    return saved.byRef(key.workspaceId, header);
  }
  const pinned = key.defaults?.config_id;
  if (typeof pinned === 'string' && pinned !== '') return saved.byRef(key.workspaceId, pinned);
  if (headers['x-gateway-provider'] === undefined && headers['x-gateway-virtual-key'] === undefined) return saved.defaultOf(key.workspaceId);
  return HEADERS_ONLY;
}

function parseJsonBody(buf: Buffer): Result<unknown> {
  try {
    return { ok: true, value: JSON.parse(buf.toString('utf8')) };
  } catch (e) {
    return { ok: false, error: invalid(`request body is not valid JSON: ${(e as Error).message}`, null, 'invalid_json') };
  }
}

/** Provider-specific fields such as `thinking` need strict compatibility turned off (spec: Chat completions). */
function strictCheck(plan: Plan, headerStrict: boolean | undefined, body: unknown): GatewayError | null {
  const strict = plan.strict ?? headerStrict ?? true;
  if (strict && (body as Record<string, unknown>).thinking !== undefined) {
    return invalid('thinking: requires strict_compat_compliance false (x-gateway-strict-compat-compliance: false)', 'thinking');
  }
  return null;
}

/** How the request ended, for its span: tokens from the answer's usage when the answer was watched (logs on, or usage charged). */
function outcomeOf(t: RelayTarget, trail: RequestTrail): RequestOutcome {
  const r = trail.result;
  const ok = trail.status >= 200 && trail.status < 300;
  const answer = trail.answerText ?? trail.answer?.tailText() ?? null;
  const usage = ok && answer !== null ? readUsage(answer) : null;
  return {
    status: trail.status,
    provider: r?.provider ?? trail.servedBy ?? null,
    model: r?.model ?? trail.model ?? null,
    cacheStatus: trail.cacheStatus,
    retryCount: r?.retries ?? 0,
    promptTokens: usage?.promptTokens ?? null,
    completionTokens: usage?.completionTokens ?? null,
    workspaceId: t.key.workspaceId,
    error: trail.error?.toJSON() ?? (ok || answer === null ? null : providerError(answer)),
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

function observe(m: Metrics, t: RelayTarget, trail: RequestTrail): void {
  const r = trail.result;
  // Provider time: every attempt that did not answer, and the answering one until its last byte.
  const upstreamMs = r === null ? 0 : r.failedUpstreamMs + (r.response === null ? 0 : performance.now() - r.answerStartedAt);
  const provider = r?.provider ?? trail.servedBy ?? 'none';
  m.record(t.endpoint, provider, r?.model ?? trail.model ?? 'none', trail.status, performance.now() - t.startedAt, upstreamMs, r?.waitedMs ?? 0, r?.retries ?? 0, r?.fallbacks ?? 0, trail.cacheStatus);
}
