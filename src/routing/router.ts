/**
 * Walks a routing plan for one request: strategies choose targets, a leaf
 * makes its attempts (retries, timeout, circuit breaker) through its provider
 * adapter, and the first answer that ends the walk is returned unread so the
 * server can stream it to the client.
 *
 * One request's walk is bounded whatever its config (RoutingLimits): at most
 * maxAttempts upstream calls across its retries and fallbacks, and no waiting
 * past its deadline. A retry or fallback that would pass either is not made:
 * the last answer stands. An attempt still waiting at the deadline is cut (504).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import type { Answer, ResolvedTarget } from '../providers/contract.js';
import { canonicalProvider, findAdapter, prepareCall, type Adapter } from '../providers/registry.js';
import type { TargetSettings } from '../providers/settings.js';
import type { Endpoint } from '../shared/endpoint.js';
import type { RoutingLimits } from '../settings.js';
import type { Cancel } from '../upstream/cancel.js';
import { discard, isHeadersTimeout, send, type UpstreamResponse } from '../upstream/client.js';
import { UpstreamAddressDenied } from '../upstream/policy.js';
import { isCircuitFailure, type CircuitStore } from './circuit.js';
import { credentialRef, fillTarget, unknownCredential, type CredentialSource, type StoredCredential } from './credentials.js';
import { isPrivateHeader } from './headers.js';
import { evaluateQuery } from './conditions.js';
import { applyParamEdits } from './params.js';
import type { Plan, PlanGroup, PlanLeaf, PlanNode } from './plan.js';
import { backoffMs, isRetriable, retryAfterMs } from './retry.js';

export interface RouteRequest {
  endpoint: Endpoint;
  method: string;
  /** Path after /v1, query included. */
  path: string;
  pathname: string;
  /** Parsed JSON body of a model endpoint (absent in pass-through mode). */
  body: Record<string, unknown> | null;
  /** The model a body sent on unedited names (pass-through mode, the generic proxy's JSON). */
  sentModel: string | undefined;
  /** The client's body bytes, forwarded when nothing edits them. A stream (generic proxy) can be sent once only. */
  raw: Buffer | Readable | null;
  headers: IncomingHttpHeaders;
  metadata: Record<string, string>;
  /** The caller's workspace: virtual keys and `@slug` providers are looked up in it alone. */
  workspaceId: string;
  provider: string | undefined;
  customHost: string | undefined;
  authorization: string | undefined;
  virtualKey: string | undefined;
  forwardHeaders: readonly string[];
  timeoutMs: number | undefined;
  /** Aborted when the client goes away. */
  signal: Cancel;
  /** Told of each call to a provider (the request's tracing span); absent: nobody is. */
  observer?: AttemptObserver;
}

/** What the router tells of its calls to providers; it knows nothing of how they are recorded. */
export interface AttemptObserver {
  /** A call is about to be sent: `target` is the config path of the leaf, `retry` 0 for its first attempt. */
  attempt(provider: string, model: string | undefined, url: string, target: string, retry: number): AttemptEnd;
}

export interface AttemptEnd {
  /** The provider answered `status` (its body still unread), or none did and `error` says why. */
  end(status: number, error: GatewayError | null): void;
}

export interface RouteResult {
  /** The provider's answer, body unread; null when the gateway answers itself. */
  response: UpstreamResponse | null;
  error: GatewayError | null;
  status: number;
  provider: string | undefined;
  path: string;
  retries: number;
  /** When the answering attempt was sent (performance.now()). */
  answerStartedAt: number;
  /** How to read the provider's answer back into OpenAI's shape; absent: relay it as it is. */
  answer?: Answer;
  /** The answer carries stream usage the gateway asked for and the client did not: strip it on the way out. */
  addedUsage?: boolean;
  /** Time spent in attempts that did not answer, and in backoff waits (ms); filled in by route(). */
  failedUpstreamMs: number;
  waitedMs: number;
  /** Fallback targets tried after the first; filled in by route(). */
  fallbacks: number;
  /** The answering attempt's time from sending to the provider's response headers (ms); null when no provider answered. */
  firstByteMs: number | null;
  /** The model the answering attempt sent (after the target's param edits). */
  model: string | undefined;
  /** Stored credentials the answering attempt used (virtual key, integration, pricing), if any. */
  credential: StoredCredential | null;
}

export interface RouterDeps {
  circuits: CircuitStore;
  /** Wall clock for circuit cooldowns; tests move it forward instead of waiting 30 s. */
  now: () => number;
  /** Stored credentials: virtual keys and `@slug` providers. */
  credentials: CredentialSource;
  limits: RoutingLimits;
  /** Told a target's circuit state each time a request finds it (for metrics). */
  onCircuit?: (circuitKey: string, state: 'closed' | 'half-open' | 'open') => void;
}

/** Whether a plan may send the same body twice (then a streamed body must be buffered first). */
export function mayRepeat(node: PlanNode): boolean {
  if (node.kind === 'leaf') return (node.retry?.attempts ?? 0) > 0;
  return node.mode === 'fallback' ? node.targets.length > 1 || node.targets.some(mayRepeat) : node.targets.some(mayRepeat);
}

export class Router {
  constructor(private readonly deps: RouterDeps) {}

  async route(plan: Plan, req: RouteRequest): Promise<RouteResult> {
    const acc: Accumulator = { failedUpstreamMs: 0, waitedMs: 0, fallbacks: 0, attempts: 0, deadline: performance.now() + this.deps.limits.deadlineMs };
    const result = await this.node(plan.root, req, acc);
    result.failedUpstreamMs = acc.failedUpstreamMs;
    result.waitedMs = acc.waitedMs;
    result.fallbacks = acc.fallbacks;
    return result;
  }

  /** Not async: it hands on its branch's promise rather than wrapping it in one more. */
  private node(node: PlanNode, req: RouteRequest, acc: Accumulator): Promise<RouteResult> {
    if (node.kind === 'leaf') return this.leaf(node, req, acc);
    switch (node.mode) {
      case 'single':
        return this.node(node.targets[0]!, req, acc);
      case 'conditional':
        return this.node(this.choose(node, req), req, acc);
      case 'loadbalance':
        return this.loadbalance(node, req, acc);
      case 'fallback':
        return this.fallback(node, req, acc);
    }
  }

  private choose(group: PlanGroup, req: RouteRequest): PlanNode {
    const ctx = { metadata: req.metadata, params: req.body ?? {}, url: { pathname: req.pathname } };
    for (const c of group.conditions) {
      if (evaluateQuery(c.query, ctx)) return group.byName.get(c.then)!;
    }
    return group.byName.get(group.defaultName!)!;
  }

  private async loadbalance(group: PlanGroup, req: RouteRequest, acc: Accumulator): Promise<RouteResult> {
    const open = await this.openTargets(group);
    let total = 0;
    for (let i = 0; i < group.targets.length; i++) if (open?.[i] !== true) total += group.targets[i]!.weight;
    if (total <= 0) return gatewayAnswer(circuitOpen(group.path), group.path);
    let r = Math.random() * total;
    for (let i = 0; i < group.targets.length; i++) {
      if (open?.[i] === true) continue;
      const t = group.targets[i]!;
      r -= t.weight;
      if (r < 0 && t.weight > 0) return this.node(t, req, acc);
    }
    // Floating-point edge: the last eligible target.
    const last = group.targets.findLast((t: PlanNode, i: number) => open?.[i] !== true && t.weight > 0)!;
    return this.node(last, req, acc);
  }

  private async fallback(group: PlanGroup, req: RouteRequest, acc: Accumulator): Promise<RouteResult> {
    const open = await this.openTargets(group);
    let last: RouteResult | null = null;
    for (let i = 0; i < group.targets.length; i++) {
      if (open?.[i] === true) continue;
      if (last !== null) {
        if (!this.mayGoOn(acc, 0)) return last;
        if (last.response !== null) discard(last.response);
        // The earlier attempt's time is not the answer's.
        acc.failedUpstreamMs += performance.now() - last.answerStartedAt;
        acc.fallbacks++;
      }
      last = await this.node(group.targets[i]!, req, acc);
      if (isSuccess(last.status) || req.signal.aborted) return last;
      // A narrowed fallback returns statuses it was not told to handle.
      if (group.onStatusCodes !== undefined && last.response !== null && !group.onStatusCodes.includes(last.status)) return last;
    }
    return last ?? gatewayAnswer(circuitOpen(group.path), group.path);
  }

  /** Which targets are skipped because their circuit is open; null when no target has a breaker. */
  private async openTargets(group: PlanGroup): Promise<boolean[] | null> {
    if (!group.guarded) return null;
    const now = this.deps.now();
    const out: boolean[] = new Array(group.targets.length);
    for (let i = 0; i < group.targets.length; i++) out[i] = await this.isOpen(group.targets[i]!, now);
    return out;
  }

  /** A leaf whose circuit is open (not yet due for a probe), or a group all of whose targets are. */
  private async isOpen(node: PlanNode, now: number): Promise<boolean> {
    if (node.kind === 'leaf') {
      if (node.cb === undefined) return false;
      const state = await this.deps.circuits.state(node.circuitKey, now);
      this.deps.onCircuit?.(node.circuitKey, state);
      return state === 'open';
    }
    if (!node.guarded) return false;
    for (const t of node.targets) if (!(await this.isOpen(t, now))) return false;
    return true;
  }

  private async leaf(leaf: PlanLeaf, req: RouteRequest, acc: Accumulator): Promise<RouteResult> {
    const { circuits } = this.deps;
    const admission = leaf.cb === undefined ? 'closed' : await circuits.admit(leaf.circuitKey, this.deps.now());
    if (leaf.cb !== undefined) this.deps.onCircuit?.(leaf.circuitKey, admission === 'probe' ? 'half-open' : admission);
    if (admission === 'open') return gatewayAnswer(circuitOpen(leaf.path), leaf.path);
    // Edited once per target, not per retry.
    const edited = req.body !== null && leaf.edits !== null ? applyParamEdits(req.body, leaf.edits) : req.body;
    let retries = 0;
    let result: RouteResult;
    for (;;) {
      result = await this.attempt(leaf, req, edited, retries, acc);
      if (isSuccess(result.status) || req.signal.aborted) break;
      const retry = leaf.retry;
      if (retry === undefined || retries >= retry.attempts || !retriesOn(retry, result)) break;
      const wait =
        (retry.use_retry_after_headers === true && result.response !== null ? retryAfterMs(result.response.headers) : null) ??
        backoffMs(retries);
      if (!this.mayGoOn(acc, wait)) break;
      if (result.response !== null) discard(result.response);
      acc.failedUpstreamMs += performance.now() - result.answerStartedAt;
      const waitStart = performance.now();
      if (!(await req.signal.sleep(wait))) break; // client gone
      acc.waitedMs += performance.now() - waitStart;
      retries++;
    }
    // A client that left, or a call the upstream policy refused, proves nothing about the provider: no
    // verdict, except that an unfinished probe must not close the circuit (nor leave it stuck probing).
    if (leaf.cb !== undefined && (req.signal.aborted || result.error instanceof UpstreamAddressDenied)) {
      if (admission === 'probe') await circuits.record(leaf.circuitKey, leaf.cb, true, this.deps.now());
    } else if (leaf.cb !== undefined) {
      const failed = result.response === null ? result.error!.status >= 500 || result.error!.status === 408 : isCircuitFailure(leaf.cb, result.status);
      await circuits.record(leaf.circuitKey, leaf.cb, failed, this.deps.now());
    }
    return result;
  }

  /** Whether one more attempt, after waiting `waitMs`, stays within the request's attempts and deadline. */
  private mayGoOn(acc: Accumulator, waitMs: number): boolean {
    return acc.attempts < this.deps.limits.maxAttempts && performance.now() + waitMs < acc.deadline;
  }

  private async attempt(
    leaf: PlanLeaf,
    req: RouteRequest,
    edited: Record<string, unknown> | null,
    retries: number,
    acc: Accumulator,
  ): Promise<RouteResult> {
    const start = performance.now();
    const model = edited === null ? req.sentModel : typeof edited.model === 'string' ? edited.model : undefined;
    let resolved = this.resolve(leaf, req, edited);
    if (resolved instanceof Promise) resolved = await resolved;
    if (!resolved.ok) return refused(resolved.error, leaf, retries, start, model, null);
    const { adapter, target, credential } = resolved.value;
    let call = prepareCall(adapter, { target, endpoint: req.endpoint, path: req.path, body: edited, method: req.method, raw: req.raw, signal: req.signal });
    if (call instanceof Promise) {
      call = await call;
      // Preparing may call out (a Vertex token exchange at a caller's token_uri, an Entra token): one that failed
      // counts as an attempt, or a fallback list of such targets would make a call per target past maxAttempts.
      if (!call.ok) acc.attempts++;
    }
    if (!call.ok) return refused(call.error, leaf, retries, start, model, credential, target.provider);

    const headers: Record<string, string | string[]> = call.value.headers;
    let body: string | Buffer | Readable | null;
    if (call.value.kind === 'translated' && req.endpoint === 'proxy') {
      // The adapter's own request in the provider's API: the client's headers (its content-length, its
      // accept-encoding) belong to the request it replaces.
      body = call.value.body;
    } else if (req.endpoint === 'proxy') {
      body = call.value.body ?? req.raw;
      copyProxyHeaders(req.headers, headers);
    } else {
      // Unedited bodies go on as the client's own bytes: no re-serialising.
      body = call.value.body ?? (edited !== req.body ? JSON.stringify(edited) : req.raw);
      headers['content-type'] ??= 'application/json';
    }
    forwardNamed(leaf.forwardHeaders, req.headers, headers);
    forwardNamed(req.forwardHeaders, req.headers, headers);

    // The timeout covers the wait for the provider's answer (its headers); a stream that has begun is not cut.
    // The request's deadline caps it. (undici's own headers timer: a timer and a child signal per attempt cost
    // some 2 µs of a proxied request's CPU, and every attempt has a deadline.)
    const configured = leaf.timeoutMs ?? req.timeoutMs;
    const left = Math.max(1, acc.deadline - performance.now());
    const timeout: Timeout = configured === undefined || left < configured ? { ms: left, deadlineMs: this.deps.limits.deadlineMs } : { ms: configured, deadlineMs: null };
    acc.attempts++;
    const observed = req.observer?.attempt(target.provider, model, call.value.url, leaf.path, retries);
    try {
      const method = (call.value.kind === 'translated' ? call.value.method : undefined) ?? req.method;
      const response = await send({ url: call.value.url, method, headers, body, headersTimeoutMs: timeout.ms }, req.signal);
      observed?.end(response.statusCode, null);
      return {
        response, error: null, status: response.statusCode, provider: target.provider, path: leaf.path, retries,
        answerStartedAt: start, failedUpstreamMs: 0, waitedMs: 0, fallbacks: 0, firstByteMs: response.headersAt - start, model, credential,
        answer: call.value.kind === 'translated' ? call.value.answer : undefined,
        addedUsage: call.value.kind === 'relayed' && call.value.addedUsage,
      };
    } catch (e) {
      const error = sendFailure(e, target.provider, isHeadersTimeout(e) ? timeout : undefined, req.signal.aborted);
      const failed = refused(error, leaf, retries, start, model, credential, target.provider);
      observed?.end(failed.status, failed.error);
      return failed;
    }
  }

  /**
   * The leaf's provider adapter and target: from stored credentials when the
   * target (or, for a target that leaves it to the request, a header) names a
   * virtual key or an `@slug` provider; else from the config and the request.
   * Synchronous when the credential and the adapter are in memory (the hot path).
   */
  private resolve(leaf: PlanLeaf, req: RouteRequest, edited: Record<string, unknown> | null): Resolved | Promise<Resolved> {
    const node = leaf.node;
    // A target without its own provider or virtual key takes them from the request's headers.
    const fromRequest = node.provider === undefined && node.virtual_key === undefined;
    const ref = credentialRef(node, leaf.path, req.virtualKey, req.provider);
    if (ref === null) {
      const name = node.provider ?? req.provider;
      if (name === undefined) {
        return { ok: false, error: invalid('no provider: send x-gateway-provider or a config naming one', 'x-gateway-provider', 'missing_provider') };
      }
      // The client's credential and host belong to the provider the client named.
      const ownsClientCredentials = fromRequest || req.provider === undefined || canonicalProvider(req.provider) === canonicalProvider(name);
      return withAdapter(
        {
          provider: name,
          settings: node,
          clientAuthorization: node.api_key === undefined && ownsClientCredentials ? req.authorization : undefined,
          customHost: node.custom_host ?? (fromRequest ? req.customHost : undefined),
        },
        null,
      );
    }
    const fromStored = (stored: Result<StoredCredential | null>): Resolved | Promise<Resolved> => {
      if (!stored.ok) return stored;
      // Another workspace's key is unknown here, exactly like one that does not exist.
      if (stored.value === null) return { ok: false, error: unknownCredential(ref) };
      const filled = fillTarget(stored.value, ref, node, leaf.path, fromRequest ? req.customHost : undefined, edited === null ? req.sentModel : edited.model);
      if (!filled.ok) return filled;
      // The stored credential is the whole credential: the client's Authorization is not mixed in.
      return withAdapter(
        { provider: stored.value.provider, settings: filled.value.node, clientAuthorization: undefined, customHost: filled.value.customHost },
        stored.value,
      );
    };
    const stored = this.deps.credentials.resolve(req.workspaceId, ref.kind, ref.ref);
    return stored instanceof Promise ? stored.then(fromStored) : fromStored(stored);
  }
}

/** An attempt that got no answer from the provider: the gateway's own error stands for it. */
function refused(
  error: GatewayError,
  leaf: PlanLeaf,
  retries: number,
  start: number,
  model: string | undefined,
  credential: StoredCredential | null,
  provider?: string,
): RouteResult {
  return {
    response: null, error, status: error.status, provider, path: leaf.path, retries, answerStartedAt: start,
    failedUpstreamMs: 0, waitedMs: 0, fallbacks: 0, firstByteMs: null, model, credential,
  };
}

type Resolved = Result<{ adapter: Adapter; target: ResolvedTarget<TargetSettings>; credential: StoredCredential | null }>;

/** The target's adapter (its module loaded on first use), and the provider's canonical name on the target. */
function withAdapter(target: ResolvedTarget<TargetSettings>, credential: StoredCredential | null): Resolved | Promise<Resolved> {
  const done = (found: Result<Adapter>): Resolved => {
    if (!found.ok) return found;
    target.provider = found.value.name;
    return { ok: true, value: { adapter: found.value, target, credential } };
  };
  const found = findAdapter(target.provider);
  return found instanceof Promise ? found.then(done) : done(found);
}

interface Accumulator {
  failedUpstreamMs: number;
  waitedMs: number;
  fallbacks: number;
  /** Upstream calls made so far. */
  attempts: number;
  /** performance.now() past which nothing more is waited for. */
  deadline: number;
}

/** What limits one attempt's wait: its request_timeout, or what is left of the request's deadline. */
interface Timeout {
  ms: number;
  /** The deadline, when it is what limits. */
  deadlineMs: number | null;
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** Network failures are always worth another try; a refused address never; anything else only when the policy names it. */
function retriesOn(retry: NonNullable<PlanLeaf['retry']>, r: RouteResult): boolean {
  if (r.response === null && r.error!.code === 'upstream_unreachable') return true;
  if (r.error instanceof UpstreamAddressDenied) return false;
  return isRetriable(retry, r.status);
}

/** Why a call got no answer: the upstream policy, the timeout or deadline, the client leaving, or the network. */
function sendFailure(e: unknown, provider: string, timedOut: Timeout | undefined, clientGone: boolean): GatewayError {
  if (e instanceof UpstreamAddressDenied) return e;
  // The client's own body, streamed on, went past its limit (http/body.ts streamWithin): the client's fault, not the provider's.
  if (e instanceof GatewayError && e.status === 413) return e;
  if (timedOut !== undefined && timedOut.deadlineMs !== null) {
    return new GatewayError(504, `no answer from ${provider} within the request's deadline of ${timedOut.deadlineMs} ms`, { code: 'deadline_exceeded' });
  }
  if (timedOut !== undefined) return new GatewayError(408, `request to ${provider} timed out after ${timedOut.ms} ms`, { code: 'request_timeout' });
  if (clientGone) return new GatewayError(499, 'client closed the request', { code: 'client_closed' });
  const reason = (e as { code?: string; message?: string }).code ?? (e as Error).message;
  return new GatewayError(502, `could not reach ${provider}: ${reason}`, { code: 'upstream_unreachable' });
}

function circuitOpen(path: string): GatewayError {
  return new GatewayError(503, `circuit open for every target of ${path}`, { code: 'circuit_open' });
}

function gatewayAnswer(error: GatewayError, path: string): RouteResult {
  return {
    response: null, error, status: error.status, provider: undefined, path, retries: 0,
    answerStartedAt: performance.now(), failedUpstreamMs: 0, waitedMs: 0, fallbacks: 0, firstByteMs: null, model: undefined, credential: null,
  };
}

/** forward_headers: the named client headers go to the provider, never the gateway's own or hop-by-hop ones. */
function forwardNamed(names: readonly string[], from: IncomingHttpHeaders, to: Record<string, string | string[]>): void {
  for (const name of names) {
    const v = from[name];
    if (v !== undefined && !isPrivateHeader(name)) to[name] = v;
  }
}

/** Generic proxy: the client's own headers go on, except the gateway's and hop-by-hop ones. */
function copyProxyHeaders(from: IncomingHttpHeaders, to: Record<string, string | string[]>): void {
  // Headers the client named in Connection are hop-by-hop too (RFC 9110 §7.6.1).
  const connection = from.connection;
  const named = connection === undefined ? null : connection.toLowerCase().split(',').map((s) => s.trim());
  for (const name in from) {
    if (isPrivateHeader(name) || name in to || named?.includes(name) === true) continue;
    const v = from[name];
    if (v !== undefined) to[name] = v;
  }
  const len = from['content-length'];
  if (len !== undefined) to['content-length'] = len;
}
