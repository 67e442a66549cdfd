/**
 * The management API's dispatcher: a table of routes (method, path pattern,
 * declared checks, handler), matched after authentication. The router
 * applies a route's access, body and paging checks; the handler gets the
 * caller, path parameters, query and checked body, and returns a reply or an
 * error as a value; this module writes either.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseJson, readBody } from '../http/body.js';
import { sendError, sendJson } from '../http/respond.js';
import type { ManagementApi } from '../http/server.js';
import { sealedPath, SEALED_INPUT } from '../config/secrets.js';
import type { BodyChecker, QueryChecker } from '../shared/checker.js';
import { GatewayError, invalid, ok, type Result } from '../shared/errors.js';
import { formatPath } from '../shared/json-schema.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { Store } from '../store/store.js';
import type { PageRequest } from '../store/page.js';
import { isOrgAdmin, requireOrganisation, requireScope, resolveCaller, type Caller } from './access.js';
import type { Secrets } from '../store/secrets.js';
import { pageRequest, type Reply } from './input.js';

// Handlers name what they answer by the router's contract.
export type { Reply };

export interface AdminDeps {
  store: Store;
  /** Wall clock in ms (tests move it forward: rotations, transition periods). */
  now: () => number;
  apiKeyPrefix: string;
  secrets: Secrets;
}

/** Management bodies are small JSON objects; a larger one is refused (413) rather than held. */
export const MANAGEMENT_BODY_BYTES = 1024 * 1024;

export interface AdminRequest<B = unknown, P extends boolean = false> {
  caller: Caller;
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /** The body as the route's `body` checker passed it; without one, the parsed JSON (undefined when the request had none). */
  body: B;
  /** `limit` and `after`, on routes declared `paged: true`. */
  page: P extends true ? PageRequest : undefined;
}

/**
 * One management route. What every route checks first is declared here and
 * applied by the router before the handler runs, in this order:
 * `organisation` (403 for workspace keys), `scope` (403 without it),
 * `admins` (403 unless an organisation owner or admin) — all three before
 * the body is read — then `body` (at most MANAGEMENT_BODY_BYTES; 400 naming
 * the field), `paged` (400 for a bad `limit`), `query`. A route whose access check is
 * special declares `scope: null` and says where it checks.
 */
export interface Route<B = unknown, P extends boolean = boolean> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path after /v1 with `:name` parameters, e.g. `/api-keys/:id/rotate`. */
  path: string;
  /** What the route does, for GET /v1/openapi.json (a route without one fails test/openapi.test.ts). */
  description: string;
  /** What needs an organisation key ("creating a workspace"), checked before the scope. */
  organisation?: string;
  scope: string | null;
  /** The scope is not needed when the path's `:id` is the calling key itself (a key rotates itself). */
  ownKeyFree?: true;
  /** Only organisation owners and admins (checked after the scope). */
  admins?: true;
  /** The body's checker; its schema is the body the OpenAPI document shows. */
  body?: BodyChecker<B>;
  /**
   * The checker the handler applies to the body itself, after checks of its
   * own that must answer first (the object found, the caller's rank); the
   * router passes the body unread and the OpenAPI document shows its schema.
   */
  handlerBody?: BodyChecker<unknown>;
  /** Query parameters beyond paging, checked by the router before the handler reads them (it still reads `query`). */
  query?: QueryChecker<unknown>;
  paged?: P;
  // Method syntax (parameters checked bivariantly): one table holds routes of many body types; route() types each handler by its own checker.
  handler(req: AdminRequest<B, P>, deps: AdminDeps): Promise<Result<Reply>>;
}

/** A route with its handler typed by its declarations (`body` checker, `paged`). */
export function route<B = unknown, P extends boolean = false>(r: Route<B, P>): Route {
  return r;
}

interface Compiled {
  route: Route;
  segments: readonly string[];
}

export class AdminRouter implements ManagementApi {
  private readonly compiled: Compiled[];
  /** First path segments that belong to the management API; anything else under /v1 is a model endpoint or the proxy. */
  readonly roots: ReadonlySet<string>;

  constructor(
    routes: readonly Route[],
    private readonly deps: AdminDeps,
  ) {
    // Literal segments win over parameters at the same position: `/api-keys/:id/rotate` before `/api-keys/:type/:subType`.
    this.compiled = routes.map((route) => ({ route, segments: route.path.slice(1).split('/') })).sort((a, b) => specificity(a.segments, b.segments));
    this.roots = new Set(this.compiled.map((c) => c.segments[0]!));
  }

  /** Whether `/v1/<sub>` is a management path (sub without the leading slash's first segment check done here). */
  owns(sub: string): boolean {
    const end = sub.indexOf('/', 1);
    return this.roots.has(end === -1 ? sub.slice(1) : sub.slice(1, end));
  }

  async handle(key: ApiKeyRecord, req: IncomingMessage, res: ServerResponse, sub: string, query: string): Promise<void> {
    const deps = this.deps;
    const parts = sub.slice(1).split('/');
    let allowed = false;
    for (const c of this.compiled) {
      const params = match(c.segments, parts);
      if (params === null) continue;
      if (c.route.method !== req.method) {
        allowed = true;
        continue;
      }
      const caller = await resolveCaller(deps.store, key);
      // Before a byte of the body is read: a caller without the right uploads nothing.
      const denied = access(c.route, caller, params);
      if (denied !== null) return sendError(res, denied);
      const body = await readJson(req, MANAGEMENT_BODY_BYTES);
      if (!body.ok) return sendError(res, body.error);
      const out = await run(c.route, caller, params, new URLSearchParams(query), body.value, deps);
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

/** The route's declared access checks, in order: organisation, scope, admins. */
function access(route: Route, caller: Caller, params: Record<string, string>): GatewayError | null {
  const scope = route.scope === null || (route.ownKeyFree === true && params.id === caller.key.id) ? null : route.scope;
  const denied = (route.organisation === undefined ? null : requireOrganisation(caller, route.organisation)) ?? (scope === null ? null : requireScope(caller, scope));
  if (denied !== null) return denied;
  if (route.admins === true && !isOrgAdmin(caller)) {
    return new GatewayError(403, `${route.organisation ?? 'this'} needs an organisation owner or admin`, { code: 'permission_denied' });
  }
  return null;
}

/** The route's declared body and paging checks, then its handler. */
async function run(route: Route, caller: Caller, params: Record<string, string>, query: URLSearchParams, raw: unknown, deps: AdminDeps): Promise<Result<Reply>> {
  const sealed = sealedPath(raw);
  if (sealed !== null) return { ok: false, error: invalid(`${formatPath(sealed)}: ${SEALED_INPUT}`, formatPath(sealed), 'sealed_not_allowed') };
  const body = route.body === undefined ? ok(raw) : route.body(raw);
  if (!body.ok) return body;
  const page = route.paged === true ? pageRequest(query) : ok(undefined);
  if (!page.ok) return page;
  const checked = route.query?.(query);
  if (checked?.ok === false) return checked;
  return route.handler({ caller, params, query, body: body.value, page: page.value }, deps);
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
  return raw.value.length === 0 ? { ok: true, value: undefined } : parseJson(raw.value);
}
