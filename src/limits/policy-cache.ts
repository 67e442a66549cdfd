/**
 * Active rate-limit policies per workspace, kept in memory for the request
 * path: the store is read on a miss and again after a short TTL, and every
 * entry is dropped at once when a policy changes (change notices, every
 * process with Postgres). Policies change rarely, so a notice drops all.
 */
import type { RateLimitPolicy } from '../store/rate-limit-policies.js';
import type { Store } from '../store/store.js';

const TTL_MS = 30_000;

export class PolicyCache {
  private readonly entries = new Map<string, { policies: readonly RateLimitPolicy[]; at: number }>();
  /** Bumped by every notice: a read that started before it must not be cached. */
  private generation = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: () => number = Date.now,
  ) {
    store.changes.subscribe((c) => {
      if (c.kind === 'all' || c.kind === 'rate_limit_policy') {
        this.generation++;
        this.entries.clear();
      }
    });
  }

  /** Synchronous on a hit (the hot path). */
  forWorkspace(workspaceId: string): readonly RateLimitPolicy[] | Promise<readonly RateLimitPolicy[]> {
    const now = this.clock();
    const hit = this.entries.get(workspaceId);
    if (hit !== undefined && now - hit.at <= TTL_MS) return hit.policies;
    const generation = this.generation;
    return this.store.rateLimitPolicies.active(workspaceId).then((policies) => {
      if (generation === this.generation) this.entries.set(workspaceId, { policies, at: now });
      return policies;
    });
  }
}
