/**
 * The simple cache on the request path. Before routing, `open` decides the
 * request's cache status (DISABLED without a `cache` in the config or without
 * a JSON body; REFRESH on `x-gateway-cache-force-refresh: true`; else HIT or
 * MISS) and finds a stored answer. After routing, the ticket's keeper copies
 * a successful answer as it passes to the client (streams included, up to
 * MAX_ENTRY_BYTES) and stores it once the last byte has been read, before
 * the client sees the end, so the next identical request is a hit.
 *
 * The cache applies at the config's top level, as Portkey's does: the target
 * that will answer is not known before routing, so the key is the config's
 * identity, not the target's. `semantic` mode matches exactly first (a
 * repeat is a HIT), then by meaning (semantic.ts: SEMANTIC HIT); its stored
 * answers, refreshed ones included, are indexed by their vector too.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { Plan } from '../routing/plan.js';
import type { CacheStatus } from '../shared/cache-status.js';
import { single as first } from '../shared/headers.js';
import { invalid, type Result } from '../shared/errors.js';
import { through } from '../shared/through.js';
import { cacheKey, type KeyParts } from './key.js';
import { DEFAULT_SIMILARITY_THRESHOLD, type SemanticCache, type SemanticQuery } from './semantic.js';
import type { CachedAnswer, CacheStore } from './store.js';

/** Portkey's default and largest cache age. */
export const DEFAULT_MAX_AGE_S = 7 * 24 * 3600;
export const MAX_MAX_AGE_S = 90 * 24 * 3600;
/** A larger answer (a long stream) passes uncached rather than held in memory. */
export const MAX_ENTRY_BYTES = 10 * 1024 * 1024;

/** The answer headers a replay needs; the rest belonged to the provider's connection. */
const KEPT_HEADERS = ['content-type', 'content-encoding', 'cache-control'] as const;

export interface CacheRequest {
  workspaceId: string;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; null (proxy, passthrough) disables the cache. */
  body: Record<string, unknown> | null;
}

/** Who answered, for the gateway headers of a later hit. */
export interface Served {
  provider: string | undefined;
  path: string;
}

type AnswerHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface AnswerKeeper {
  /** The answer's body on its way to the client; a copy is stored at its end when the status is 2xx. */
  watch(body: Readable, status: number, headers: AnswerHeaders): Readable;
  /** Stores a whole answer the gateway holds. */
  keep(status: number, headers: AnswerHeaders, body: string | Buffer): Promise<void>;
}

export interface CacheTicket {
  status: CacheStatus;
  hit: CachedAnswer | null;
  keeper(served: Served): AnswerKeeper;
  /** Writes the hit: its status, content headers and `headers` (the gateway's), then its bytes. */
  replay(res: ServerResponse, headers: OutgoingHttpHeaders): void;
}

const KEEP_NOTHING: AnswerKeeper = { watch: (body) => body, keep: async () => {} };
const DISABLED: Result<CacheTicket> = { ok: true, value: ticket('DISABLED', null, () => KEEP_NOTHING) };

export class AnswerCache {
  constructor(
    private readonly store: CacheStore,
    private readonly semantic: SemanticCache,
    private readonly now: () => number,
  ) {}

  /** Synchronous when the cache is off (most requests): no promise, no key. */
  open(plan: Plan, r: CacheRequest): Result<CacheTicket> | Promise<Result<CacheTicket>> {
    const refresh = forceRefresh(r.headers['x-gateway-cache-force-refresh']);
    if (!refresh.ok) return refresh;
    if (plan.cache === undefined || r.body === null) return DISABLED;
    return this.lookup(plan, plan.cache, r, r.body, refresh.value);
  }

  private async lookup(plan: Plan, cache: NonNullable<Plan['cache']>, r: CacheRequest, body: Record<string, unknown>, refresh: boolean): Promise<Result<CacheTicket>> {
    const h = r.headers;
    const parts: KeyParts = {
      workspaceId: r.workspaceId,
      config: plan.identity,
      namespace: first(h['x-gateway-cache-namespace']),
      method: r.method,
      path: r.path,
      target: [h['x-gateway-provider'], h['x-gateway-custom-host'], h['x-gateway-virtual-key'], h.authorization].map(first),
      body,
    };
    const key = cacheKey(parts);
    const now = this.now();
    const hit = refresh ? null : await this.store.get(key, now);
    if (hit !== null) return { ok: true, value: ticket('HIT', hit, () => KEEP_NOTHING) };
    // Only on an exact miss (or a refresh, whose answer is indexed): the embedding costs a provider call.
    const query = cache.mode === 'semantic' ? await this.semantic.query(plan, parts, body, r) : null;
    const ttlMs = Math.min(cache.max_age ?? DEFAULT_MAX_AGE_S, MAX_MAX_AGE_S) * 1000;
    const keeper = (served: Served): AnswerKeeper => new Keeper(this.store, this.semantic, this.now, key, ttlMs, served, query);
    if (refresh) return { ok: true, value: ticket('REFRESH', null, keeper) };
    const similar = query === null ? null : await this.semantic.find(query, cache.similarity_threshold ?? DEFAULT_SIMILARITY_THRESHOLD, now);
    return { ok: true, value: ticket(similar === null ? 'MISS' : 'SEMANTIC HIT', similar, keeper) };
  }
}

function ticket(status: CacheStatus, hit: CachedAnswer | null, keeper: (served: Served) => AnswerKeeper): CacheTicket {
  return {
    status,
    hit,
    keeper,
    replay(res, headers) {
      res.writeHead(hit!.status, { ...hit!.headers, 'content-length': hit!.body.length, ...headers });
      res.end(hit!.body);
    },
  };
}

class Keeper implements AnswerKeeper {
  constructor(
    private readonly store: CacheStore,
    private readonly semantic: SemanticCache,
    private readonly now: () => number,
    private readonly key: string,
    private readonly ttlMs: number,
    private readonly served: Served,
    /** The request's vector when it is indexed (semantic mode); null otherwise. */
    private readonly query: SemanticQuery | null,
  ) {}

  watch(body: Readable, status: number, headers: AnswerHeaders): Readable {
    if (status < 200 || status >= 300) return body;
    return through(body, new CacheTap((bytes) => this.keep(status, headers, bytes)));
  }

  async keep(status: number, headers: AnswerHeaders, body: string | Buffer): Promise<void> {
    if (status < 200 || status >= 300) return;
    const kept: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const v = first(headers[name]);
      if (v !== undefined) kept[name] = v;
    }
    const now = this.now();
    const answer: CachedAnswer = {
      status,
      headers: kept,
      body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
      provider: this.served.provider,
      path: this.served.path,
      expiresAt: now + this.ttlMs,
    };
    await this.store.set(this.key, answer, now);
    if (this.query !== null) await this.semantic.add(this.query, this.key, answer.expiresAt, now);
  }
}

/** Passes chunks through unchanged, keeping a copy; at the end, stores it (unless it grew past MAX_ENTRY_BYTES) before ending. */
class CacheTap extends Transform {
  private chunks: Buffer[] | null = [];
  private size = 0;

  constructor(private readonly store: (body: Buffer) => Promise<void>) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.chunks !== null) {
      this.size += chunk.length;
      if (this.size > MAX_ENTRY_BYTES) this.chunks = null;
      else this.chunks.push(chunk);
    }
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    if (this.chunks === null) return done();
    // The stores never reject (a failed write is a miss later); the guard keeps the stream ending regardless.
    this.store(Buffer.concat(this.chunks, this.size)).then(
      () => done(),
      () => done(),
    );
  }
}

function forceRefresh(v: string | string[] | undefined): Result<boolean> {
  const s = first(v)?.toLowerCase();
  if (s === undefined || s === 'false') return { ok: true, value: false };
  if (s === 'true') return { ok: true, value: true };
  return { ok: false, error: invalid('x-gateway-cache-force-refresh: must be true or false', 'x-gateway-cache-force-refresh') };
}
