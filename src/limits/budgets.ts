/**
 * Usage-limit (budget) enforcement for one request: the policies it falls
 * under reserve its estimated usage before the call, all at once and only
 * if every budget has room (so a burst cannot overshoot: each request's
 * worst case is already counted when the next one asks), and the reservation
 * is settled from the real usage after the answer. A group whose usage has
 * reached the credit limit is refused until its period resets or the limit
 * is raised. Crossing the alert threshold or the limit is recorded on the
 * policy once per period.
 *
 * When the counters cannot be reached (Redis away) the request is refused
 * if an applying policy fails closed, else admitted unreserved, as rate
 * limits do.
 */
import type { UsageLimitPolicy, UsageLimitPolicyRepo } from '../store/usage-limit-policies.js';
import type { Amounts, Demand } from './budget-estimate.js';
import type { BudgetCheck, BudgetCounter } from './budget-counter.js';
import { periodOf } from './budget-period.js';
import { refuses } from './counter.js';
import type { Uncounted } from './limiter.js';
import { applies, counterKey, type RequestFacts } from './policies.js';

const NANO = 1e9;
/** A budget that never resets keeps its counter this long after the last write. */
const NO_RESET_KEEP_MS = 400 * 86_400_000;
/** Counters outlive their period a little, for processes whose clocks lag. */
const CLOCK_SKEW_GRACE_MS = 60_000;

interface Held extends BudgetCheck {
  policy: UsageLimitPolicy;
  periodStart: number;
}

/** What a request reserved; settled (or released) once. */
export interface Hold {
  readonly held: readonly Held[];
  settled: boolean;
}

export type BudgetAdmission =
  | { allowed: true; hold: Hold }
  | { allowed: false; policy: UsageLimitPolicy; exhausted: boolean; unavailable: boolean }
  /** A cost budget applies and the request may send a model nobody prices: what it costs could not be counted. */
  | { allowed: false; policy: UsageLimitPolicy; unpriced: string };

export interface BudgetOptions {
  counter: BudgetCounter;
  /** The active usage-limit policies of a workspace (a PolicyCache). */
  policies: (workspaceId: string) => readonly UsageLimitPolicy[] | Promise<readonly UsageLimitPolicy[]>;
  /** Where alerts are recorded. */
  repo: Pick<UsageLimitPolicyRepo, 'markAlert'>;
  /** Told of every counter or store failure (a lost settlement or alert is reported, not fatal). */
  onUnavailable?: (err: unknown) => void;
  /** Told of every request the unreachable counters left unreserved: admitted, or refused by a policy that fails closed. */
  onUncounted?: (outcome: Uncounted) => void;
}

/** A policy's limits in counter units: tokens, or nano-USD. */
const units = (p: UsageLimitPolicy, v: number): number => (p.type === 'cost' ? v * NANO : v);
const amountOf = (p: UsageLimitPolicy, a: Amounts): number => (p.type === 'cost' ? (a.cost ?? 0) : a.tokens);

export const NO_HOLD: Hold = { held: [], settled: true };
const UNRESERVED: BudgetAdmission = { allowed: true, hold: NO_HOLD };

export class BudgetLimiter {
  constructor(private readonly opts: BudgetOptions) {}

  /**
   * `demand` is asked only when a budget applies: a workspace without budgets
   * pays for no estimate, and (its policies cached) for no promise either.
   */
  reserve(facts: RequestFacts, demand: () => Demand | Promise<Demand>, now: number): BudgetAdmission | Promise<BudgetAdmission> {
    const all = this.opts.policies(facts.workspaceId);
    return all instanceof Promise ? all.then((ps) => this.against(ps, facts, demand, now)) : this.against(all, facts, demand, now);
  }

  private against(all: readonly UsageLimitPolicy[], facts: RequestFacts, demand: () => Demand | Promise<Demand>, now: number): BudgetAdmission | Promise<BudgetAdmission> {
    // No array unless a budget applies: most workspaces have none, and this runs for every request.
    let policies: UsageLimitPolicy[] | null = null;
    for (const p of all) if (applies(p, facts)) (policies ??= []).push(p);
    return policies === null ? UNRESERVED : this.reserveIn(policies, facts, demand, now);
  }

  private async reserveIn(policies: readonly UsageLimitPolicy[], facts: RequestFacts, demand: () => Demand | Promise<Demand>, now: number): Promise<BudgetAdmission> {
    const estimate = await demand();
    const costBudget = estimate.unpriced === null ? undefined : policies.find((p) => p.type === 'cost');
    if (costBudget !== undefined) return { allowed: false, policy: costBudget, unpriced: estimate.unpriced! };
    const held: Held[] = policies.map((p) => {
      const period = periodOf(p, now);
      return {
        policy: p,
        periodStart: period.start,
        key: `${counterKey(p, facts)}:${period.start}`,
        limit: units(p, p.creditLimit),
        amount: amountOf(p, estimate),
        expireAt: period.end === null ? now + NO_RESET_KEEP_MS : period.end + CLOCK_SKEW_GRACE_MS,
      };
    });
    let r;
    try {
      r = await this.opts.counter.reserve(held, now);
    } catch (err) {
      this.opts.onUnavailable?.(err);
      const closed = policies.find((p) => p.failMode === 'closed');
      this.opts.onUncounted?.(closed === undefined ? 'admitted' : 'refused');
      return closed === undefined ? { allowed: true, hold: NO_HOLD } : { allowed: false, policy: closed, exhausted: false, unavailable: true };
    }
    if (r.allowed) return { allowed: true, hold: { held, settled: false } };
    const i = held.findIndex((h, j) => refuses(r.used[j]!, h.amount, h.limit));
    const refusing = held[i]!;
    const exhausted = r.used[i]! >= refusing.limit;
    if (exhausted) await this.alert(refusing, 'exhausted_at', now);
    return { allowed: false, policy: refusing.policy, exhausted, unavailable: false };
  }

  /** Replaces the reservation with what the answer used; `used` null keeps the reservation as the charge. Never throws. */
  async settle(hold: Hold, used: Amounts | null, now: number): Promise<void> {
    if (hold.settled) return;
    hold.settled = true;
    await Promise.all(
      hold.held.map(async (h) => {
        try {
          // An adjustment of 0 still answers the group's usage, which the alerts need.
          const after = await this.opts.counter.adjust(h.key, used === null ? 0 : amountOf(h.policy, used) - h.amount, h.expireAt, now);
          const threshold = h.policy.alertThreshold;
          if (threshold !== null && after >= units(h.policy, threshold)) await this.alert(h, 'threshold_alerted_at', now);
          if (after >= h.limit) await this.alert(h, 'exhausted_at', now);
        } catch (err) {
          this.opts.onUnavailable?.(err);
        }
      }),
    );
  }

  /** Records an alert unless the (cached) policy shows it already recorded in this period. */
  private async alert(h: Held, field: 'threshold_alerted_at' | 'exhausted_at', now: number): Promise<void> {
    const at = field === 'exhausted_at' ? h.policy.exhaustedAt : h.policy.thresholdAlertedAt;
    const periodStart = Math.floor(h.periodStart / 1000);
    if (at !== null && at >= periodStart) return;
    await this.opts.repo.markAlert(h.policy.id, field, Math.floor(now / 1000), periodStart).catch((err: unknown) => this.opts.onUnavailable?.(err));
  }
}
