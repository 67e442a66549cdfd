/**
 * The one pooled HTTP client for every provider call and token exchange:
 * undici's pools keep connections alive per origin, which is most of the
 * gateway's speed, for a bounded number of origins (pools.ts). Timeouts are the router's job (request_timeout → 408), so
 * undici's own are off for headers and relaxed for bodies: a long stream must
 * not be cut. Every connection passes the upstream policy (policy.ts).
 * Redirects are never followed: a plain pool has no redirect interceptor,
 * so a 3xx comes back as the answer it is.
 */
import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import type { Dispatcher, Pool } from 'undici';
import { AbortedError, UpstreamCall, type UpstreamResponse } from './answer.js';
import type { Cancel } from './cancel.js';
import { policedConnector, policedNodeAgents, UpstreamPolicy } from './policy.js';
import { Pools } from './pools.js';

/** Pool settings, shared with the benchmark's node floor so both measure the same client. */
export const POOL_OPTIONS: Pool.Options = {
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
  connections: 512,
  pipelining: 1,
  headersTimeout: 0,
  bodyTimeout: 0,
};

let policy = new UpstreamPolicy();
let resolve: LookupFunction | undefined;
const newPools = (): Pools => new Pools({ ...POOL_OPTIONS, connect: policedConnector(policy, resolve) });
let pools = newPools();

/**
 * Where upstream calls may go, for the whole process (the pool is one per
 * process): a gateway sets it as it starts, with `lookup` from tests that
 * answer DNS themselves. Connections made under the previous policy close.
 */
export function policeUpstreams(next: UpstreamPolicy, lookup?: LookupFunction): void {
  policy = next;
  resolve = lookup;
  const previous = pools;
  pools = newPools();
  previous.close().catch(() => {});
}

/**
 * Node agents under the process's policy, for a client that cannot use the
 * pool (the AWS SDK): a client built for a caller-chosen host takes these.
 * The caller owns them (destroy() with its client).
 */
export function policedAgents(): ReturnType<typeof policedNodeAgents> {
  return policedNodeAgents(policy, resolve);
}

export interface UpstreamRequest {
  url: string;
  method: string;
  headers: Record<string, string | string[]>;
  body: string | Buffer | Readable | null;
  /** How long to wait for the answer once the request is sent: its headers, and the body of one read whole; undefined: no bound. */
  headersTimeoutMs?: number;
}

export type { UpstreamResponse };

/**
 * Sends a request through the pool with undici's dispatch API: no
 * AsyncResource, signal wrapper or body stream per call, as request() has,
 * and a small JSON answer (answer.ts) is read whole in the handler, so it
 * never becomes a stream at all. Resolves once the answer's headers came
 * (a whole answer: once its last byte did); rejects with undici's error (a
 * headers timeout, a refused connection, `signal` aborted).
 */
export function send(req: UpstreamRequest, signal: Cancel): Promise<UpstreamResponse> {
  // Split by hand: a WHATWG URL per call costs more than the rest of this function.
  const slash = req.url.indexOf('/', req.url.indexOf('://') + 3);
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new AbortedError());
    const call = new UpstreamCall(signal, req.method !== 'HEAD', resolve, reject, req.headersTimeoutMs);
    pools.dispatch(
      {
        origin: slash === -1 ? req.url : req.url.slice(0, slash),
        path: slash === -1 ? '/' : req.url.slice(slash),
        method: req.method as Dispatcher.HttpMethod,
        headers: req.headers,
        body: req.body,
        headersTimeout: req.headersTimeoutMs,
      },
      call,
    );
  });
}

/** The error `send` rejects with when headersTimeoutMs passed without an answer (its headers, or a whole answer's body: AnswerTimeout). */
export const isHeadersTimeout = (e: unknown): boolean => (e as { code?: unknown } | null)?.code === 'UND_ERR_HEADERS_TIMEOUT';

/** A 3xx: where an exchange expects a final answer (token endpoints), an error with this code, never followed. */
export const isRedirect = (status: number): boolean => status >= 300 && status < 400;
export const REDIRECT_CODE = 'upstream_redirect';

/** Let go of a response we will not relay (a failed attempt we retry or fall back from). */
export function discard(res: UpstreamResponse): void {
  res.discard();
}

/**
 * Closes the pool once its requests finish. Later calls get a fresh pool: the
 * pool is module-wide, and one gateway closing (tests start several in one
 * process) must not break the others.
 */
export function closeUpstreams(): Promise<void> {
  const closing = pools;
  pools = newPools();
  return closing.close();
}
