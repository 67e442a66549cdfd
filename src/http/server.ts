/**
 * The HTTP server: health and metrics, authentication of /v1, the model
 * catalog, then the management API or the request pipeline (both handed in
 * by gateway.ts, so this layer knows neither); JSON errors even for requests
 * Node cannot parse, and a graceful drain on shutdown.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { listModels } from '../catalog/list.js';
import type { ConnectionLimits } from '../settings.js';
import { ENDPOINT_PATHS, type Endpoint } from '../shared/endpoint.js';
import { GatewayError, invalid } from '../shared/errors.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import { WriterUnavailable } from '../store/failover.js';
import { readRequestIds, type RequestIds } from '../tracing/tracer.js';
import { requireScope, type KeyAuthenticator } from './auth.js';
import { ConsoleFiles } from './console.js';
import { rawErrorResponse, sendError, sendJson } from './respond.js';

/** A request to a model endpoint or the generic proxy, authenticated and allowed: what the pipeline starts from. */
export interface Arrival {
  endpoint: Endpoint;
  /** Path after /v1, query included. */
  path: string;
  pathname: string;
  ids: RequestIds;
  /** performance.now() on arrival. */
  startedAt: number;
  key: ApiKeyRecord;
  /** A prompt run (POST /v1/prompts/:ref/completions): the prompt reference from the path. */
  promptRef?: string;
}

/** The management API: the /v1 paths it owns, answered with the caller's key. */
export interface ManagementApi {
  owns(sub: string): boolean;
  handle(key: ApiKeyRecord, req: IncomingMessage, res: ServerResponse, sub: string, query: string): Promise<void>;
}

/** Responses the gateway stored (GET and DELETE /v1/responses/:id, GET …/input_items); other ids are a provider's, for the proxy. */
export interface StoredResponsesApi {
  owns(method: string, sub: string): boolean;
  handle(key: ApiKeyRecord, req: IncomingMessage, res: ServerResponse, sub: string, query: string): Promise<void>;
}

/** Files the gateway keeps and batches it runs (batches/api.ts); a provider's own go on to the proxy. */
export interface JobsApi {
  owns(method: string, sub: string, headers: IncomingMessage['headers']): boolean;
  handle(key: ApiKeyRecord, req: IncomingMessage, res: ServerResponse, sub: string, query: string): Promise<void>;
}

/** The model endpoints and the generic proxy. */
export interface ModelApi {
  handle(req: IncomingMessage, res: ServerResponse, arrival: Arrival): Promise<void>;
}

export interface ServerDeps {
  limits: ConnectionLimits;
  auth: KeyAuthenticator;
  admin: ManagementApi;
  responses: StoredResponsesApi;
  jobs: JobsApi;
  models: ModelApi;
  /** Whether the store, and Redis when REDIS_URL is set, answer: for /health. */
  healthy: () => Promise<boolean>;
  /** The Prometheus exposition for /metrics. */
  metrics: () => Promise<{ contentType: string; text: string }>;
  /** The OpenAPI document, serialised, for GET /v1/openapi.json. */
  openapi: () => string;
  onError: (err: unknown) => void;
}

/** A path the server answers itself, described for GET /v1/openapi.json (test/openapi.test.ts fails on one without a description). */
export interface ServerRoute {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** Whether it needs x-gateway-api-key (everything under /v1 does). */
  keyed: boolean;
  description: string;
}

export const SERVER_ROUTES = {
  health: { method: 'GET', path: '/health', keyed: false, description: 'Liveness and readiness: {"status":"ok"}, or "degraded" (still 200) while the database writer or Redis is unreachable.' },
  metrics: { method: 'GET', path: '/metrics', keyed: false, description: 'Prometheus metrics in the text exposition format.' },
  models: { method: 'GET', path: '/v1/models', keyed: true, description: "The gateway's model catalog as an OpenAI model list, filtered by provider, mode and search." },
  openapi: { method: 'GET', path: '/v1/openapi.json', keyed: true, description: 'This document: every route of the gateway, OpenAPI 3.1.' },
  promptRun: {
    method: 'POST',
    path: '/v1/prompts/{id}/completions',
    keyed: true,
    description: "Runs a prompt (id or slug, @version or @label) with the call's variables: a chat completion through the pipeline (scope prompts.run).",
  },
  storedResponse: { method: 'GET', path: '/v1/responses/{id}', keyed: true, description: 'A response the gateway stored (its own ids); other ids go to the provider through the proxy.' },
  deleteResponse: { method: 'DELETE', path: '/v1/responses/{id}', keyed: true, description: 'Deletes a response the gateway stored.' },
  responseItems: { method: 'GET', path: '/v1/responses/{id}/input_items', keyed: true, description: 'The input items of a response the gateway stored, paged.' },
  uploadFile: { method: 'POST', path: '/v1/files', keyed: true, description: 'Uploads a file (multipart: file, purpose) the gateway keeps, for the batches it runs; with a provider named, it goes to the provider.' },
  listFiles: { method: 'GET', path: '/v1/files', keyed: true, description: 'The files the gateway keeps for the workspace, paged.' },
  file: { method: 'GET', path: '/v1/files/{id}', keyed: true, description: 'A file the gateway keeps.' },
  deleteFile: { method: 'DELETE', path: '/v1/files/{id}', keyed: true, description: 'Deletes a file the gateway keeps.' },
  fileContent: { method: 'GET', path: '/v1/files/{id}/content', keyed: true, description: "A kept file's bytes, streamed." },
  createBatch: { method: 'POST', path: '/v1/batches', keyed: true, description: 'Creates a batch (x-gateway-virtual-key required): over a kept file the gateway runs it line by line through the pipeline; over a provider file it goes to the provider.' },
  listBatches: { method: 'GET', path: '/v1/batches', keyed: true, description: 'The batches the gateway runs for the workspace, paged.' },
  batch: { method: 'GET', path: '/v1/batches/{id}', keyed: true, description: 'A batch, with its status, timestamps and request_counts.' },
  cancelBatch: { method: 'POST', path: '/v1/batches/{id}/cancel', keyed: true, description: 'Cancels a batch: lines in flight finish, no new ones start.' },
} as const satisfies Record<string, ServerRoute>;

/** What each endpoint does, for the OpenAPI document; the proxy is every other path under /v1. */
export const ENDPOINT_DESCRIPTIONS: Readonly<Record<Endpoint, string>> = {
  chat: 'Chat completion in OpenAI\'s shape, routed by the config to any provider (translated where the provider speaks another API); JSON or a server-sent event stream.',
  completions: 'Text completion in OpenAI\'s shape, routed by the config.',
  embeddings: 'Embeddings in OpenAI\'s shape, routed by the config.',
  responses: "OpenAI's Responses API for every provider: stored and chained by previous_response_id, translated where the provider has no such API.",
  proxy: "The generic proxy: any other path under /v1 is sent to the provider's own API as it is, with the gateway's routing, retries, limits and logs.",
};

const MODEL_ENDPOINTS: Readonly<Record<string, Endpoint>> = {
  '/chat/completions': 'chat',
  '/completions': 'completions',
  '/embeddings': 'embeddings',
  '/responses': 'responses',
};
const PROXY_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

export interface GatewayServer {
  server: Server;
  /** Stop accepting, let in-flight requests and streams finish (bounded), then close the rest. */
  drain(graceMs: number): Promise<void>;
}

export function createGatewayServer(deps: ServerDeps): GatewayServer {
  let inflight = 0;
  let draining = false;
  let idle: (() => void) | null = null;

  // The response being written on each connection, for clientError below.
  const answering = new WeakMap<Duplex, ServerResponse>();
  const consoleFiles = new ConsoleFiles();
  const server = createServer(serverOptions(deps.limits), (req, res) => {
    inflight++;
    answering.set(req.socket, res);
    if (draining) res.setHeader('connection', 'close');
    // on, not once: 'close' comes once, and once() wraps every listener in two more objects.
    res.on('close', () => {
      if (--inflight === 0 && idle !== null) idle();
    });
    handle(deps, consoleFiles, req, res).catch((err: unknown) => {
      // Writer HA mode (store/failover.ts): the writer's absence is the answer, not a fault of the gateway's.
      if (err instanceof WriterUnavailable) return sendError(res, new GatewayError(503, err.message, { code: 'database_unavailable', headers: { 'retry-after': '1' } }));
      deps.onError(err);
      sendError(res, new GatewayError(500, 'internal gateway error', { code: 'internal_error' }));
    });
  });
  // Past the cap a new connection is closed as it comes, before it costs a parser.
  server.maxConnections = deps.limits.max;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // A 400 written now would land inside an answer already under way (a stream's chunks): that answer ends as it would, then the connection closes.
    const current = answering.get(socket);
    if (current?.headersSent === true && !current.writableFinished) {
      current.once('close', () => socket.destroy());
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const message = status === 431 ? 'request headers too large' : status === 408 ? 'request timed out' : `malformed HTTP request: ${err.code ?? err.message}`;
    // Closed once the answer is written, without waiting for the client's end: a client that never ends (a slowloris) holds nothing.
    socket.end(rawErrorResponse(status, STATUS_CODES[status]!, new GatewayError(status, message)), () => socket.destroy());
  });

  return {
    server,
    drain(graceMs: number): Promise<void> {
      draining = true;
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        if (inflight === 0) return;
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        idle = () => {
          clearTimeout(timer);
          server.closeIdleConnections();
        };
      });
    },
  };
}

/**
 * Node's own timeouts: the head, then the whole request (body included) must
 * arrive in time, or the client gets a 408 and the connection closes; an
 * answer, however long it streams, is not timed.
 */
function serverOptions(limits: ConnectionLimits): ServerOptions {
  return {
    headersTimeout: Math.min(limits.headersTimeoutMs, limits.bodyTimeoutMs),
    requestTimeout: limits.bodyTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node answers a missing Host with a bare 400; handle() answers it in the envelope.
    requireHostHeader: false,
    // How often Node checks the two timeouts above: often enough that neither runs far over.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, limits.headersTimeoutMs / 4)),
  };
}

async function handle(deps: ServerDeps, consoleFiles: ConsoleFiles, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const startedAt = performance.now();
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  // RFC 9112 §3.2: an HTTP/1.1 request without Host is answered 400.
  if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
    res.setHeader('connection', 'close');
    return sendError(res, invalid('request has no Host header, which HTTP/1.1 requires', 'host'));
  }

  // 200 either way (contract): 'degraded' tells a load balancer's probe the database writer or the shared Redis is unreachable.
  if (req.method === 'GET' && pathname === SERVER_ROUTES.health.path) return sendJson(res, 200, { status: (await deps.healthy()) ? 'ok' : 'degraded' });
  if (req.method === 'GET' && pathname === SERVER_ROUTES.metrics.path) {
    const { contentType, text } = await deps.metrics();
    res.writeHead(200, { 'content-type': contentType });
    res.end(text);
    return;
  }
  // The console's files are public; everything it shows comes from /v1 with the key signed in with.
  if (ConsoleFiles.owns(pathname)) return consoleFiles.serve(req, res, pathname);
  if (pathname !== '/v1' && !pathname.startsWith('/v1/')) {
    return sendError(res, new GatewayError(404, `no route for ${req.method} ${pathname}`, { code: 'route_not_found' }));
  }

  const ids = readRequestIds(req.headers);
  const traceId = ids.traceId;
  const refuse = (error: GatewayError): void => {
    res.setHeader('x-gateway-trace-id', traceId);
    sendError(res, error);
  };
  let key = deps.auth.authenticate(req.headers['x-gateway-api-key']);
  if (key instanceof Promise) key = await key;
  if (!key.ok) return refuse(key.error);
  // The gateway's own model catalog, not a provider's list; open to every valid key (spec 1.15.0), so before the scope check.
  if (req.method === 'GET' && pathname === SERVER_ROUTES.models.path) {
    const list = listModels(new URLSearchParams(q === -1 ? '' : url.slice(q + 1)));
    return list.ok ? sendJson(res, 200, list.value, { 'x-gateway-trace-id': traceId }) : refuse(list.error);
  }
  // Any valid key may read it: it describes routes, not what the key may do on them.
  if (req.method === 'GET' && pathname === SERVER_ROUTES.openapi.path) {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'x-gateway-trace-id': traceId });
    res.end(deps.openapi());
    return;
  }

  const sub = pathname.slice(3);
  // Running a prompt is a chat request through the pipeline (sent on as one), though its path is among the management API's.
  const promptRef = req.method === 'POST' ? promptRun(sub) : null;
  if (promptRef !== null) {
    const denied = requireScope(key.value, 'prompts.run');
    if (denied !== null) return refuse(denied);
    return deps.models.handle(req, res, { endpoint: 'chat', path: ENDPOINT_PATHS.chat, pathname, ids, startedAt, key: key.value, promptRef });
  }
  if (deps.admin.owns(sub)) {
    res.setHeader('x-gateway-trace-id', traceId);
    return deps.admin.handle(key.value, req, res, sub, q === -1 ? '' : url.slice(q + 1));
  }
  if (deps.responses.owns(req.method ?? '', sub)) {
    const denied = requireScope(key.value, 'completions.write');
    if (denied !== null) return refuse(denied);
    res.setHeader('x-gateway-trace-id', traceId);
    return deps.responses.handle(key.value, req, res, sub, q === -1 ? '' : url.slice(q + 1));
  }
  if (deps.jobs.owns(req.method ?? '', sub, req.headers)) {
    const denied = requireScope(key.value, 'completions.write');
    if (denied !== null) return refuse(denied);
    res.setHeader('x-gateway-trace-id', traceId);
    return deps.jobs.handle(key.value, req, res, sub, q === -1 ? '' : url.slice(q + 1));
  }
  const endpoint = req.method === 'POST' ? MODEL_ENDPOINTS[sub] : undefined;
  if (endpoint === undefined && !PROXY_METHODS.has(req.method ?? '')) {
    return refuse(new GatewayError(405, `method ${req.method} is not allowed`, { code: 'method_not_allowed' }));
  }
  const denied = requireScope(key.value, 'completions.write');
  if (denied !== null) return refuse(denied);
  return deps.models.handle(req, res, { endpoint: endpoint ?? 'proxy', path: url.slice(3), pathname, ids, startedAt, key: key.value });
}

const PROMPT_RUN = /^\/prompts\/([^/]+)\/completions$/;

/** The prompt reference of `/prompts/<ref>/completions` (not the partials' routes); null for any other path. */
function promptRun(sub: string): string | null {
  const m = PROMPT_RUN.exec(sub);
  if (m === null || m[1] === 'partials') return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
}
