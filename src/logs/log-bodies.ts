import type { Store } from '../store/store.js';

/**
 * Whether each workspace logs bodies (its `log_bodies` setting, the
 * organisation's unless overridden), cached: synchronous on the request
 * path once known, dropped when settings or the workspace change.
 */
export class LogBodies {
  private readonly known = new Map<string, boolean>();
  /** Bumped by every change: a read that began before it does not store its possibly stale answer. */
  private generation = 0;

  constructor(private readonly store: Store) {
    store.changes.subscribe((c) => {
      if (c.kind === 'settings' || c.kind === 'workspace' || c.kind === 'all') {
        this.known.clear();
        this.generation++;
      }
    });
  }

  of(workspaceId: string): boolean | Promise<boolean> {
    const on = this.known.get(workspaceId);
    if (on !== undefined) return on;
    const generation = this.generation;
    return this.store.settings.effective(workspaceId).then((s) => {
      if (generation === this.generation) this.known.set(workspaceId, s.log_bodies);
      return s.log_bodies;
    });
  }
}
