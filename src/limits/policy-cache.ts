/**
 * Active policies per workspace (rate limits, or usage limits), kept in memory for the request
 * path: the store is read on a miss and again after a short TTL, and every
 * entry is dropped at once when a policy changes (change notices, every
 * process with Postgres). Policies change rarely, so a notice drops all.
 * Concurrent misses of one workspace share one read, and a failed re-read
 * keeps serving the policies read before (a database blip must neither fail
 * every request nor lift the limits).
 */
import type { ChangeKind } from '../store/changes.js';
import type { RateLimitPolicy } from '../store/rate-limit-policies.js';
import type { Store } from '../store/store.js';

const TTL_MS = 30_000;

/** Which policies a cache holds: how to read a workspace's active ones, and the notice that drops them. */
export interface PolicySource<T> {
  kind: ChangeKind;
  active(store: Store, workspaceId: string): Promise<T[]>;
}

export const RATE_LIMIT_POLICIES: PolicySource<RateLimitPolicy> = { kind: 'rate_limit_policy', active: (s, ws) => s.rateLimitPolicies.active(ws) };

export class PolicyCache<T = RateLimitPolicy> {
  private readonly entries = new Map<string, { policies: readonly T[]; at: number }>();
  private readonly reading = new Map<string, Promise<readonly T[]>>();
  /** Bumped by every notice: a read that started before it must not be cached. */
  private generation = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: () => number = Date.now,
    private readonly source: PolicySource<T> = RATE_LIMIT_POLICIES as unknown as PolicySource<T>,
  ) {
    store.changes.subscribe((c) => {
      if (c.kind === 'all' || c.kind === source.kind) {
        this.generation++;
        this.entries.clear();
        // Later callers must not join a read that may have seen the old rows.
        this.reading.clear();
      }
    });
  }

  /** Synchronous on a hit (the hot path). */
  forWorkspace(workspaceId: string): readonly T[] | Promise<readonly T[]> {
    const now = this.clock();
    const hit = this.entries.get(workspaceId);
    if (hit !== undefined && now - hit.at <= TTL_MS) return hit.policies;
    const joined = this.reading.get(workspaceId);
    if (joined !== undefined) return joined;
    const generation = this.generation;
    const read = this.source.active(this.store, workspaceId).then(
      (policies) => {
        if (generation === this.generation) this.entries.set(workspaceId, { policies, at: now });
        return policies;
      },
      (err: unknown) => {
        if (hit === undefined) throw err;
        return hit.policies;
      },
    );
    this.reading.set(workspaceId, read);
    const done = (): void => {
      if (this.reading.get(workspaceId) === read) this.reading.delete(workspaceId);
    };
    read.then(done, done);
    return read;
  }
}
