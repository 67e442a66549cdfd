/**
 * Rate-limit and usage-limit policies on the request path: the rate check
 * before the body is read (429 with Retry-After when over a limit), the quota
 * headers every answer then carries, the budget reservation once the body is
 * known (412 when a budget is exhausted), and after the answer its usage
 * charged to the token rate limits and settled against the budgets.
 *
 * Usage is read from the last bytes of the answer as they pass to the client
 * (logs/capture.ts): the body stays streamed, only its tail is read, and the
 * charge lands before the client sees the last byte, so the client's next
 * request counts it. A workspace with no applying policy costs one cache lookup and
 * none of this.
 */
import { refuses } from '../limits/counter.js';
import { countUsage } from '../logs/token-count.js';
import { lastUsage } from '../logs/usage.js';
import type { Endpoint } from '../shared/endpoint.js';
import { endpointType } from '../limits/endpoint-types.js';
import type { RateAdmission, RateLimiter } from '../limits/limiter.js';
import { actual, estimate, promptOf, promptTokens, type Demand } from '../limits/budget-estimate.js';
import type { Price } from '../catalog/price.js';
import type { SentTarget } from '../routing/sent-targets.js';
import type { BudgetAdmission, BudgetLimiter } from '../limits/budgets.js';
import type { RequestFacts } from '../limits/policies.js';
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { RateLimitType } from '../store/rate-limit-policies.js';

/**
 * Takes an answer's usage: `settle` with its usage object (null: unreadable,
 * the reservation stands) and the price of what was sent, or `release` when
 * nothing was used.
 */
interface Charger {
  settle(usage: Record<string, unknown> | null, price: Price | null): Promise<void>;
  release(): Promise<void>;
}

/** What tokens are counted from when an answer reports no usage. */
export interface CountedRequest {
  endpoint: Endpoint;
  body: Record<string, unknown> | null;
  /** The price of the model the answering attempt sent; null when unpriced or nothing was sent. */
  readonly sentPrice: Price | null;
}

/**
 * The chargers of an admitted request (rate-limit tokens, budgets): each
 * settles from the same usage, read once. Every request's chargers settle
 * exactly once, however it ends: the first of settle, keep and release wins,
 * and the record stage calls `finish` for the ones that ended otherwise.
 */
export class AnswerUsage {
  private settled = false;

  constructor(private readonly chargers: readonly Charger[]) {}

  with(c: Charger): AnswerUsage {
    return new AnswerUsage([...this.chargers, c]);
  }

  /** Whether any policy waits for this request's usage. */
  get charging(): boolean {
    return this.chargers.length > 0;
  }

  /**
   * Charges what the answer used: the last usage object in `tail` (a whole
   * JSON answer, or the end of a stream, where the usage is); when it reports
   * none (a stream cut short, a provider that gives none), the tokens counted
   * from the request and `passed()`, the text that reached the client.
   */
  async settle(tail: string, passed: () => string, request: CountedRequest): Promise<void> {
    if (this.done()) return;
    const usage = lastUsage(tail) ?? (await counted(request, passed()));
    await Promise.all(this.chargers.map((c) => c.settle(usage, request.sentPrice)));
  }

  /** The answer cannot be read (compressed): the reservations stand as the charge. */
  async keep(): Promise<void> {
    if (this.done()) return;
    await Promise.all(this.chargers.map((c) => c.settle(null, null)));
  }

  /** Nothing was used (no answer, an error answer): reservations are given back. */
  async release(): Promise<void> {
    if (this.done()) return;
    await Promise.all(this.chargers.map((c) => c.release()));
  }

  /**
   * For a request that ended before its answer settled (the client left, the
   * provider broke off, a bug): what passed is charged, the rest released.
   */
  finish(passed: () => string | null, request: CountedRequest): Promise<void> {
    if (this.settled || !this.charging) return Promise.resolve();
    const text = passed();
    return text === null || text === '' ? this.release() : this.settle(text, () => text, request);
  }

  /** Marks the chargers settled; true when they already were (or there are none). */
  private done(): boolean {
    if (this.settled || this.chargers.length === 0) return true;
    this.settled = true;
    return false;
  }
}

/** The tokenizer's count of a request and the answer text that passed, as a usage object. */
async function counted(request: CountedRequest, text: string): Promise<Record<string, unknown> | null> {
  const u = await countUsage(request.endpoint, request.body, text);
  return u === null ? null : { prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.totalTokens };
}

/** An admitted request: what waits for its usage, the quota headers every answer to it carries (null: no rate limit applies), and what policies match it by. */
export interface Admission {
  usage: AnswerUsage;
  headers: Record<string, string> | null;
  facts: RequestFacts;
}

/** Usage nothing waits for (a cache hit's: the provider was not called). */
export const UNCHARGED = new AnswerUsage([]);

const TYPES: readonly RateLimitType[] = ['requests', 'tokens'];

/**
 * Retry-After of a request a fail-closed policy refused while its counters
 * were unreachable: Redis is reconnected to within 2 s of its return
 * (state/redis.ts), so a retry after this finds the counters back if Redis is.
 */
const UNCHECKED_RETRY_S = 2;

/**
 * A fail-closed policy's refusal while its counters are unreachable: the
 * status of its kind's limit (429, or 412 as an exhausted budget), with a
 * code of its own and a Retry-After, since it is not the limit that refuses.
 */
function unchecked(status: 429 | 412, kind: 'rate' | 'usage', policyId: string): GatewayError {
  return new GatewayError(status, `${kind} limits cannot be checked now and policy ${policyId} fails closed; retry after ${UNCHECKED_RETRY_S} s`, {
    code: `${kind}_limit_unavailable`,
    headers: { 'retry-after': String(UNCHECKED_RETRY_S) },
  });
}

export class RequestLimits {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly budgets: BudgetLimiter,
    private readonly now: () => number,
  ) {}

  /**
   * Checks a request against its workspace's policies; a request over a
   * limit is refused (counted nowhere), its error carrying the quota headers.
   * The headers are handed back rather than set on the response: the respond stage
   * writes every header in one writeHead, Node's fast path. Synchronous
   * when the policies are cached and the counters answer at once.
   */
  admit(method: string, pathname: string, key: ApiKeyRecord, metadata: Readonly<Record<string, string>>): Result<Admission> | Promise<Result<Admission>> {
    const now = this.now();
    const facts = factsOf(method, pathname, key, metadata);
    const a = this.limiter.check(facts, now);
    return a instanceof Promise ? a.then((x) => this.admitted(x, facts, now)) : this.admitted(a, facts, now);
  }

  private admitted(a: RateAdmission, facts: RequestFacts, now: number): Result<Admission> {
    const headers = quotaHeaders(a, now);
    if (!a.allowed) return { ok: false, error: refusal(a, headers) };
    // Counters unreachable: admitted uncounted, so nothing to charge either.
    const usage = a.tokenCounters.length === 0 || a.unavailable ? UNCHARGED : new AnswerUsage([this.tokenCharger(a)]);
    return { ok: true, value: { usage, headers, facts } };
  }

  /**
   * Once the body is known: reserves the request's estimated usage in the
   * budgets it falls under (412 when one is exhausted or has no room for it;
   * 400 under a cost budget when a target would send a model nobody prices),
   * adding their settlement, at the price of what was sent, to the admission's
   * usage. `targets` is asked only when a budget applies.
   */
  reserve(admitted: Admission, targets: () => Promise<readonly SentTarget[]>): Result<AnswerUsage> | Promise<Result<AnswerUsage>> {
    const a = this.budgets.reserve(admitted.facts, async () => demandOf(await targets()), this.now());
    const reserved = (b: BudgetAdmission): Result<AnswerUsage> => {
      if (!b.allowed) return { ok: false, error: budgetRefusal(b) };
      if (b.hold.settled) return { ok: true, value: admitted.usage };
      const hold = b.hold;
      return {
        ok: true,
        value: admitted.usage.with({
          settle: (u, price) => this.budgets.settle(hold, u === null ? null : actual(u, price), this.now()),
          release: () => this.budgets.settle(hold, { tokens: 0, cost: 0 }, this.now()),
        }),
      };
    };
    return a instanceof Promise ? a.then(reserved) : reserved(a);
  }

  private tokenCharger(a: RateAdmission): Charger {
    return {
      settle: async (u) => {
        const tokens = u === null ? null : tokensOf(u);
        if (tokens !== null) await this.limiter.charge(a, tokens, this.now());
      },
      release: async () => {},
    };
  }
}

function factsOf(method: string, pathname: string, key: ApiKeyRecord, metadata: Readonly<Record<string, string>>): RequestFacts {
  return { workspaceId: key.workspaceId, apiKeyId: key.id, endpointType: endpointType(method, pathname.slice(3)), metadata, keyMetadata: keyMetadata(key) ?? NO_METADATA };
}

const NO_METADATA: Readonly<Record<string, string>> = Object.freeze({});

/** The metadata a key's owner set (`defaults.metadata`, checked to be strings when the key was written). */
export function keyMetadata(key: ApiKeyRecord): Readonly<Record<string, string>> | undefined {
  return (key.defaults?.metadata ?? undefined) as Readonly<Record<string, string>> | undefined;
}

/**
 * The most any target may use: the dearest target's estimate; a target
 * sending an unpriced model names it. Targets share their prompt unless an
 * edit replaced it, so each prompt is serialised once, not once per target.
 */
function demandOf(targets: readonly SentTarget[]): Demand {
  let tokens = 0;
  let cost: number | null = null;
  let unpriced: string | null = null;
  const counted = new Map<unknown, number>();
  for (const t of targets) {
    const input = promptOf(t.body);
    let prompt = counted.get(input);
    if (prompt === undefined) counted.set(input, (prompt = promptTokens(input)));
    const e = estimate(t.body, t.price, prompt);
    tokens = Math.max(tokens, e.tokens);
    if (e.cost !== null) cost = Math.max(cost ?? 0, e.cost);
    if (t.price === null && t.model !== undefined) unpriced ??= t.model;
  }
  return { tokens, cost, unpriced };
}

function budgetRefusal(a: Extract<BudgetAdmission, { allowed: false }>): GatewayError {
  const p = a.policy;
  if ('unpriced' in a) {
    return invalid(
      `model '${a.unpriced}' has no known price, and cost budget ${p.id} applies: give the model a price (the integration model's pricing_config) or send a priced model`,
      'model',
      'model_not_priced',
    );
  }
  if (a.unavailable) return unchecked(412, 'usage', p.id);
  const limit = `${p.creditLimit} ${p.type === 'cost' ? 'USD' : 'tokens'}`;
  const why = a.exhausted
    ? `usage limit of ${limit} exhausted (policy ${p.id})`
    : `usage limit of ${limit} has no room for this request's estimated usage (policy ${p.id})`;
  return new GatewayError(412, why, { code: 'usage_limit_exceeded' });
}

/**
 * Quota header names per type, named after OpenAI's but under the gateway's
 * prefix (an OpenAI-family answer already carries the provider's own
 * x-ratelimit-*); made once, since computed names cost a string and a slow
 * property store per answer.
 */
const QUOTA_HEADERS: Record<RateLimitType, readonly [limit: string, remaining: string, reset: string]> = {
  requests: ['x-gateway-ratelimit-limit-requests', 'x-gateway-ratelimit-remaining-requests', 'x-gateway-ratelimit-reset-requests'],
  tokens: ['x-gateway-ratelimit-limit-tokens', 'x-gateway-ratelimit-remaining-tokens', 'x-gateway-ratelimit-reset-tokens'],
};

/** The quota headers of an admission (the reset in seconds until the window ends); null when no rate limit applies. */
function quotaHeaders(a: RateAdmission, now: number): Record<string, string> | null {
  let out: Record<string, string> | null = null;
  for (const type of TYPES) {
    const q = a.quota[type];
    if (q === null) continue;
    const [limit, remaining, reset] = QUOTA_HEADERS[type];
    out ??= {};
    out[limit] = String(q.limit);
    // Whole requests or tokens: a fractional limit (the spec allows any number) admits whole requests.
    out[remaining] = String(Math.floor(q.remaining));
    out[reset] = String(Math.ceil((q.resetAt - now) / 1000));
  }
  return out;
}

function refusal(a: RateAdmission, quota: Record<string, string> | null): GatewayError {
  if (a.failedClosed !== null) return unchecked(429, 'rate', a.failedClosed);
  const seconds = Math.max(1, Math.ceil(a.retryAfterMs / 1000));
  // The tightest quota of a type refused when it has no room for this request's cost (1 request, 0 tokens).
  const type = TYPES.find((t) => {
    const q = a.quota[t];
    return q !== null && refuses(q.limit - q.remaining, t === 'requests' ? 1 : 0, q.limit);
  });
  const q = type === undefined ? null : a.quota[type]!;
  const what = q === null ? 'rate limit reached' : `rate limit of ${q.limit} ${type} reached (policy ${q.policyId})`;
  return new GatewayError(429, `${what}; retry after ${seconds} s`, { headers: { ...quota, 'retry-after': String(seconds) } });
}

/**
 * The tokens of the last `"usage": {…}` object in `text` (logs/usage.ts):
 * total_tokens, else input plus output tokens; null when there is none.
 */
export function usageTokens(text: string): number | null {
  const u = lastUsage(text);
  return u === null ? null : tokensOf(u);
}

function tokensOf(u: Record<string, unknown>): number | null {
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
  if (typeof u.total_tokens === 'number') return n(u.total_tokens);
  const sum = n(u.prompt_tokens) + n(u.completion_tokens) + n(u.input_tokens) + n(u.output_tokens);
  return sum > 0 ? sum : null;
}
