/**
 * How long a cluster's primary waits before it replaces a worker that died,
 * per worker slot: the delay doubles from MIN_MS to MAX_MS each time the
 * slot's worker dies, and starts over only once a worker of that slot had
 * lived HEALTHY_MS. One delay shared by every slot, reset by any worker that
 * lived a while, restarted a worker that crashed on its first request (after
 * a quiet start) at once, forever.
 */
export const MIN_MS = 100;
export const MAX_MS = 10_000;
/** Long enough that a worker crashing on the first requests it takes is not healthy; short enough that a rare crash costs one short wait. */
export const HEALTHY_MS = 60_000;

export class RestartBackoff {
  /** The last delay of each slot (0: none since its worker was healthy). */
  private readonly last: number[];

  constructor(slots: number) {
    this.last = new Array<number>(slots).fill(0);
  }

  /** The wait before the next worker of `slot` starts, its last one having started at `startedAt` and died at `now`. */
  next(slot: number, startedAt: number, now: number): number {
    const previous = now - startedAt >= HEALTHY_MS ? 0 : this.last[slot]!;
    const delay = previous === 0 ? MIN_MS : Math.min(MAX_MS, previous * 2);
    this.last[slot] = delay;
    return delay;
  }
}
