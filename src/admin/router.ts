/**
 * The management API's dispatcher: a table of routes (method, path pattern,
 * handler), matched after authentication. Handlers get the caller, path
 * parameters, query and parsed JSON body, and return a reply or an error as
 * a value; this module writes either.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from '../server/body.js';
import { sendError, sendJson } from '../server/respond.js';
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { Store } from '../store/store.js';
import { resolveCaller, type Caller } from './access.js';
import type { Secrets } from '../store/secrets.js';

export interface AdminDeps {
  store: Store;
  /** Wall clock in ms (tests move it forward: rotations, transition periods). */
  now: () => number;
  apiKeyPrefix: string;
  secrets: Secrets;
  maxBodyBytes: number;
}

export interface AdminRequest {
  caller: Caller;
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** Parsed JSON body; undefined when the request had none. */
  body: unknown;
}

export interface Reply {
  status: number;
  body: unknown;
}

export type Handler = (req: AdminRequest, deps: AdminDeps) => Promise<Result<Reply>>;

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path after /v1 with `:name` parameters, e.g. `/api-keys/:id/rotate`. */
  path: string;
  handler: Handler;
}

interface Compiled {
  route: Route;
  segments: readonly string[];
}

export class AdminRouter {
  private readonly compiled: Compiled[];
  /** First path segments that belong to the management API; anything else under /v1 is a model endpoint or the proxy. */
  readonly roots: ReadonlySet<string>;

  constructor(routes: readonly Route[]) {
    // Literal segments win over parameters at the same position: `/api-keys/:id/rotate` before `/api-keys/:type/:subType`.
    this.compiled = routes.map((route) => ({ route, segments: route.path.slice(1).split('/') })).sort((a, b) => specificity(a.segments, b.segments));
    this.roots = new Set(this.compiled.map((c) => c.segments[0]!));
  }

  /** Whether `/v1/<sub>` is a management path (sub without the leading slash's first segment check done here). */
  owns(sub: string): boolean {
    const end = sub.indexOf('/', 1);
    return this.roots.has(end === -1 ? sub.slice(1) : sub.slice(1, end));
  }

  async handle(deps: AdminDeps, key: ApiKeyRecord, req: IncomingMessage, res: ServerResponse, sub: string, query: string): Promise<void> {
    const parts = sub.slice(1).split('/');
    let allowed = false;
    for (const c of this.compiled) {
      const params = match(c.segments, parts);
      if (params === null) continue;
      if (c.route.method !== req.method) {
        allowed = true;
        continue;
      }
      const body = await readJson(req, deps.maxBodyBytes);
      if (!body.ok) return sendError(res, body.error);
      const caller = await resolveCaller(deps.store, key);
      const out = await c.route.handler({ caller, params, query: new URLSearchParams(query), body: body.value }, deps);
      if (!out.ok) return sendError(res, out.error);
      if (out.value.status === 204) {
        res.writeHead(204).end();
        return;
      }
      return sendJson(res, out.value.status, out.value.body);
    }
    sendError(
      res,
      allowed
        ? new GatewayError(405, `method ${req.method} is not allowed on ${sub}`, { code: 'method_not_allowed' })
        : new GatewayError(404, `no route for ${req.method} /v1${sub}`, { code: 'route_not_found' }),
    );
  }
}

/**
 * Orders routes so that, among patterns of one length, a literal segment wins
 * over a parameter at the first position where they differ. A total order
 * (compared as strings of 0 = literal, 1 = parameter): a comparator that
 * calls unrelated routes equal would leave sort's result to chance.
 */
function specificity(a: readonly string[], b: readonly string[]): number {
  const x = shape(a);
  const y = shape(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function shape(segments: readonly string[]): string {
  return segments.map((s) => (s.startsWith(':') ? '1' : '0')).join('');
}

function match(segments: readonly string[], parts: readonly string[]): Record<string, string> | null {
  if (segments.length !== parts.length) return null;
  let params: Record<string, string> | null = null;
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    const p = parts[i]!;
    if (s.startsWith(':')) {
      if (p === '') return null;
      params ??= {};
      try {
        params[s.slice(1)] = decodeURIComponent(p);
      } catch {
        return null;
      }
    } else if (s !== p) return null;
  }
  return params ?? {};
}

async function readJson(req: IncomingMessage, limit: number): Promise<Result<unknown>> {
  const hasBody = req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0';
  if (!hasBody && req.headers['transfer-encoding'] === undefined) return { ok: true, value: undefined };
  const raw = await readBody(req, limit);
  if (!raw.ok) return raw;
  if (raw.value.length === 0) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(raw.value.toString('utf8')) };
  } catch (e) {
    return { ok: false, error: invalid(`request body is not valid JSON: ${(e as Error).message}`, null, 'invalid_json') };
  }
}
