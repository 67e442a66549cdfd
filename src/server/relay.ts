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
import type { Endpoint, Translator } from '../providers/types.js';
import type { UpstreamResponse } from '../upstream/client.js';
import { Cancel } from '../upstream/cancel.js';
import { invalid, type GatewayError, type Result } from '../shared/errors.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { RequestSpan } from '../tracing/tracer.js';
import { readBody } from './body.js';
import type { AnswerUsage, RequestLimits } from './limits.js';
import type { Metrics } from './metrics.js';
import { parseGatewayHeaders, single } from './request-headers.js';
import { sendError } from './respond.js';
import { HEADERS_ONLY, type PlanLookup, type SavedConfigs } from './saved-configs.js';
import { validateBody } from './validation.js';

export interface RelayDeps {
  router: Router;
  metrics: Metrics;
  maxBodyBytes: number;
  configs: SavedConfigs;
  limits: RequestLimits;
  cache: AnswerCache;
}

/** What the server knows of a request before relaying it. */
export interface RelayTarget {
  endpoint: Endpoint;
  /** Path after /v1, query included. */
  path: string;
  pathname: string;
  traceId: string;
  startedAt: number;
  /** The authenticated gateway key: its workspace scopes saved configs and stored credentials. */
  key: ApiKeyRecord;
  /** The request's tracing span: ids for the log, a child per provider call, ended once in observe(). */
  span: RequestSpan;
}

export async function relay(deps: RelayDeps, req: IncomingMessage, res: ServerResponse, t: RelayTarget): Promise<void> {
  const { endpoint, path, pathname, startedAt } = t;
  const fail = (error: GatewayError): void => {
    // An oversized upload is not worth draining: close once the 413 is out.
    if (error.status === 413) res.setHeader('connection', 'close');
    res.setHeader('x-gateway-trace-id', t.traceId);
    res.setHeader('x-gateway-cache-status', 'DISABLED');
    sendError(res, error);
    observe(deps.metrics, t, undefined, { status: error.status, provider: undefined, retries: 0, error }, 'DISABLED', 0, 0);
  };

  const gh = parseGatewayHeaders(req.headers);
  if (!gh.ok) return fail(gh.error);
  // Before the body is read: a client over its limit costs no upload and no provider call.
  const usage = await deps.limits.admit(res, req.method!, pathname, t.key, gh.value.metadata);
  if (!usage.ok) return fail(usage.error);
  let plan = resolvePlan(deps.configs, req.headers, t.key);
  if (plan instanceof Promise) plan = await plan;
  if (!plan.ok) return fail(plan.error);

  let body: Record<string, unknown> | null = null;
  let raw: RouteRequest['raw'] = null;
  if (endpoint === 'proxy') {
    const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && mayRepeat(plan.value.root)) {
      const read = await readBody(req, deps.maxBodyBytes);
      if (!read.ok) return fail(read.error);
      raw = read.value;
    } else if (hasBody) {
      raw = req; // streamed straight through: one attempt only
    }
  } else {
    const read = await readBody(req, deps.maxBodyBytes);
    if (!read.ok) return fail(read.error);
    raw = read.value;
    if (!plan.value.passthrough) {
      const parsed = parseJsonBody(read.value);
      if (!parsed.ok) return fail(parsed.error);
      const problem = validateBody(endpoint, parsed.value) ?? strictCheck(plan.value, gh.value.strict, parsed.value);
      if (problem !== null) return fail(problem);
      body = parsed.value as Record<string, unknown>;
    }
  }

  const model = typeof body?.model === 'string' ? body.model : undefined;
  let cache = deps.cache.open(plan.value, { workspaceId: t.key.workspaceId, method: req.method!, path, headers: req.headers, body });
  if (cache instanceof Promise) cache = await cache;
  if (!cache.ok) return fail(cache.error);
  const { hit, status: cacheStatus } = cache.value;
  if (hit !== null) {
    cache.value.replay(res, gatewayHeaders({}, { provider: hit.provider, path: hit.path, retries: 0 }, t.traceId, cacheStatus));
    return observe(deps.metrics, t, model, { status: hit.status, provider: hit.provider, retries: 0, error: null }, cacheStatus, 0, 0);
  }

  // Budgets reserve the request's estimated usage once the body is known; nothing is sent when one is exhausted.
  const answer = await deps.limits.reserve(usage.value, req.method!, pathname, t.key, gh.value.metadata, body, single(req.headers['x-gateway-provider']));
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
  if (result.response === null) {
    void answer.value.release();
    if (result.status === 499) return; // the client is gone; nobody to answer
    const headers = gatewayHeaders({}, result, t.traceId, cacheStatus);
    for (const name in headers) res.setHeader(name, headers[name]!);
    sendError(res, result.error!);
    observe(deps.metrics, t, model, result, cacheStatus, result.failedUpstreamMs, result.waitedMs);
    return;
  }
  const upstream = result.response;
  const keeper = cache.value.keeper(result);
  if (result.translator !== undefined) {
    await relayTranslated(result.translator, upstream, res, gatewayHeaders({}, result, t.traceId, cacheStatus), body?.stream === true, answer.value, keeper);
  } else {
    // One header object for writeHead: Node's fast path, no per-header setHeader.
    const out: OutgoingHttpHeaders = {};
    for (const name in upstream.headers) {
      if (!isHopByHop(name)) out[name] = upstream.headers[name];
    }
    res.writeHead(upstream.statusCode, gatewayHeaders(out, result, t.traceId, cacheStatus));
    await relayBody(answer.value.watch(keeper.watch(upstream.body, upstream.statusCode, upstream.headers), upstream.headers, upstream.statusCode), res);
  }
  const upstreamMs = result.failedUpstreamMs + (performance.now() - result.answerStartedAt);
  observe(deps.metrics, t, model, result, cacheStatus, upstreamMs, result.waitedMs);
}

/**
 * A provider with its own wire format: streams go through the translator's
 * transform event by event; whole answers and errors are read, translated and
 * sent as OpenAI JSON (errors in the contract's envelope, the status kept).
 */
async function relayTranslated(
  tr: Translator,
  upstream: UpstreamResponse,
  res: ServerResponse,
  headers: OutgoingHttpHeaders,
  streamed: boolean,
  usage: AnswerUsage,
  keeper: AnswerKeeper,
): Promise<void> {
  const ok = upstream.statusCode >= 200 && upstream.statusCode < 300;
  if (ok && streamed) {
    const events = tr.stream();
    upstream.body.once('error', (e) => events.destroy(e));
    events.once('close', () => {
      if (!upstream.body.readableEnded) upstream.body.destroy();
    });
    const sse = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
    res.writeHead(200, { ...headers, ...sse });
    upstream.body.pipe(events);
    await relayBody(usage.watch(keeper.watch(events, 200, sse)), res);
    return;
  }
  let raw: Buffer;
  try {
    raw = Buffer.from(await upstream.body.arrayBuffer());
  } catch {
    res.destroy();
    return;
  }
  for (const name in headers) res.setHeader(name, headers[name]!);
  const text = ok ? tr.response(raw, upstream.headers) : null;
  if (text === null || !text.ok) {
    void usage.release();
    return sendError(res, text === null ? tr.error(upstream.statusCode, raw, upstream.headers) : text.error);
  }
  await usage.charge(text.value);
  await keeper.keep(200, { 'content-type': 'application/json' }, text.value);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text.value) });
  res.end(text.value);
}

/**
 * Streams the provider's body to the client. pipe() keeps back-pressure; a
 * provider that breaks mid-stream closes the client's connection, and a
 * client that leaves stops the provider's stream. (Not stream.pipeline: its
 * per-call AbortController costs more than the rest of the relay.)
 */
function relayBody(body: Readable, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    if (res.closed) {
      // The client left while the provider was answering.
      body.destroy();
      resolve();
      return;
    }
    body.once('error', () => res.destroy());
    res.once('close', () => {
      if (!body.readableEnded) body.destroy();
      resolve();
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

/** The request is over: count it and end its span. */
function observe(
  m: Metrics,
  t: RelayTarget,
  model: string | undefined,
  r: Pick<RouteResult, 'status' | 'provider' | 'retries' | 'error'>,
  cacheStatus: CacheStatus,
  upstreamMs: number,
  waitedMs: number,
): void {
  m.record(t.endpoint, r.provider ?? 'none', model ?? 'none', r.status, performance.now() - t.startedAt, upstreamMs, waitedMs, r.retries);
  // Tokens are not known here yet: the request log's record will carry them (it is a RequestOutcome too).
  t.span.end({
    status: r.status, provider: r.provider ?? null, model: model ?? null, cacheStatus, retryCount: r.retries,
    promptTokens: null, completionTokens: null, workspaceId: t.key.workspaceId, error: r.error?.toJSON() ?? null,
  });
}
