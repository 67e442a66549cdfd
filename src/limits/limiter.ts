/**
 * Rate-limit enforcement for one request: find the policies it falls under,
 * count it in each one's counter at once (all or nothing), and after the
 * answer charge its token usage to the token policies.
 *
 * When the counters cannot be reached (Redis away), the request is refused
 * if an applying policy fails closed, else admitted uncounted (every policy
 * fails open); either way the admission says so, for the answer and metrics.
 */
import type { RateLimitPolicy, RateLimitType } from '../store/rate-limit-policies.js';
import type { RateCheck, RateCounter, RateDecision } from './counter.js';
import { applies, counterKey, groupOf, type RequestFacts } from './policies.js';

export interface RateQuota {
  policyId: string;
  limit: number;
  remaining: number;
  /** Unix ms. */
  resetAt: number;
}

export interface RateAdmission {
  allowed: boolean;
  /** When refused by a limit: how long until it has room (for Retry-After). */
  retryAfterMs: number;
  /** Per type, the quota of the applying policy with the least room left (for the answer's headers); null when none applies. */
  quota: Record<RateLimitType, RateQuota | null>;
  /** The counters could not be reached: admitted or refused without counting. */
  unavailable: boolean;
  /** When unavailable and refused: the applying policy that fails closed. */
  failedClosed: string | null;
  /** What `charge` adds the answer's tokens to. */
  readonly tokenCounters: readonly RateCheck[];
}

export interface LimiterOptions {
  counter: RateCounter;
  /** The active policies of a workspace (a PolicyCache). */
  policies: (workspaceId: string) => readonly RateLimitPolicy[] | Promise<readonly RateLimitPolicy[]>;
  /** Told of every counter failure. */
  onUnavailable?: (err: unknown) => void;
  /** Told of every request the unreachable counters left uncounted: admitted, or refused by a policy that fails closed. */
  onUncounted?: (outcome: Uncounted) => void;
}

export type Uncounted = 'admitted' | 'refused';

const NO_CHECKS: readonly RateCheck[] = [];

/** Groups whose checks a policy keeps; past it they are dropped and built again as requests come (a check is cheap, a key per request adds up). */
const MAX_GROUPS = 10_000;
const NONE: RateAdmission = { allowed: true, retryAfterMs: 0, quota: { requests: null, tokens: null }, unavailable: false, failedClosed: null, tokenCounters: NO_CHECKS };

/** The admission once every counter has answered: per type, the quota of the applying policy with the least room. */
function admission(policies: readonly RateLimitPolicy[], decision: RateDecision, tokenCounters: readonly RateCheck[]): RateAdmission {
  const quota: RateAdmission['quota'] = { requests: null, tokens: null };
  for (let i = 0; i < policies.length; i++) {
    const p = policies[i]!;
    const c = decision.counters[i]!;
    const tightest = quota[p.type];
    if (tightest === null || c.remaining < tightest.remaining) quota[p.type] = { policyId: p.id, limit: p.value, remaining: c.remaining, resetAt: c.resetAt };
  }
  return { allowed: decision.allowed, retryAfterMs: decision.retryAfterMs, quota, unavailable: false, failedClosed: null, tokenCounters };
}

export class RateLimiter {
  /**
   * Per policy object (a re-read makes new ones, and these go with the old),
   * the check of each group's counter: made once, so a request builds, hashes
   * and drops no key string.
   */
  private readonly checks = new WeakMap<RateLimitPolicy, Map<string, RateCheck>>();

  constructor(private readonly opts: LimiterOptions) {}

  /** Synchronous when the policies are cached and the counter answers at once (the hot path). */
  check(facts: RequestFacts, now: number): RateAdmission | Promise<RateAdmission> {
    const all = this.opts.policies(facts.workspaceId);
    return all instanceof Promise ? all.then((ps) => this.against(ps, facts, now)) : this.against(all, facts, now);
  }

  private against(all: readonly RateLimitPolicy[], facts: RequestFacts, now: number): RateAdmission | Promise<RateAdmission> {
    // Loops, not filter/map: this runs for every request of a limited workspace, and its garbage adds up.
    let policies: RateLimitPolicy[] | null = null;
    for (const p of all) if (applies(p, facts)) (policies ??= []).push(p);
    if (policies === null) return NONE;
    const checks: RateCheck[] = [];
    let tokens: RateCheck[] | null = null;
    for (const p of policies) {
      const c = this.checkOf(p, facts);
      checks.push(c);
      if (p.type === 'tokens') (tokens ??= []).push(c);
    }
    const tokenCounters = tokens ?? NO_CHECKS;
    let decision;
    try {
      decision = this.opts.counter.hit(checks, now);
    } catch (err) {
      return this.unavailable(policies, tokenCounters, err);
    }
    return decision instanceof Promise
      ? decision.then(
          (d) => admission(policies, d, tokenCounters),
          (err: unknown) => this.unavailable(policies, tokenCounters, err),
        )
      : admission(policies, decision, tokenCounters);
  }

  private checkOf(p: RateLimitPolicy, facts: RequestFacts): RateCheck {
    let groups = this.checks.get(p);
    if (groups === undefined) this.checks.set(p, (groups = new Map()));
    const group = groupOf(p, facts);
    let c = groups.get(group);
    if (c === undefined) {
      if (groups.size >= MAX_GROUPS) groups.clear();
      c = { key: counterKey(p, facts), unit: p.unit, limit: p.value, cost: p.type === 'requests' ? 1 : 0 };
      groups.set(group, c);
    }
    return c;
  }

  private unavailable(policies: readonly RateLimitPolicy[], tokenCounters: readonly RateCheck[], err: unknown): RateAdmission {
    this.opts.onUnavailable?.(err);
    const closed = policies.find((p) => p.failMode === 'closed');
    this.opts.onUncounted?.(closed === undefined ? 'admitted' : 'refused');
    return { ...NONE, allowed: closed === undefined, unavailable: true, failedClosed: closed?.id ?? null, tokenCounters };
  }

  /** Adds an answer's token usage to the token policies the request fell under. Never throws: a lost charge is reported, not fatal. */
  async charge(admission: RateAdmission, tokens: number, now: number): Promise<void> {
    if (tokens <= 0 || admission.tokenCounters.length === 0) return;
    await Promise.all(
      admission.tokenCounters.map((c) => this.opts.counter.charge(c.key, c.unit, Math.round(tokens), now).catch((err: unknown) => this.opts.onUnavailable?.(err))),
    );
  }
}
