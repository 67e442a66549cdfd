/**
 * Scheduled key rotation (`rotation_policy`): a key whose next_rotation_at has
 * passed gets a new secret; the old one works for the policy's transition
 * period; next_rotation_at moves to the period's next rotation after now (a
 * one-off date is cleared). Several processes on one database may sweep at
 * once: each rotation is a conditional UPDATE on the key's due time and
 * secret, so exactly one of them rotates a key. Nobody is there to receive the
 * new secret, so it is kept sealed (AES-256-GCM, bound to the key's id) until
 * the key's owner or an admin (never the key itself) claims it once through
 * POST /v1/api-keys/:id/rotated-key (api-keys.ts maySecretOf).
 */
import { generateKey, hashKey, keyHint } from '../http/auth.js';
import type { ApiKeyRecord, RotationPolicy } from '../store/api-keys.js';
import type { Secrets } from '../store/secrets.js';
import type { Store } from '../store/store.js';
import { DEFAULT_TRANSITION_MS, nextRotation } from './rotation.js';

/** Rotations fall on UTC midnights; a minute late is on time. */
export const SWEEP_INTERVAL_MS = 60_000;
const BATCH = 100;

export interface SweepDeps {
  store: Store;
  secrets: Secrets;
  /** Wall clock in ms (tests move it). */
  now: () => number;
  apiKeyPrefix: string;
}

/** Rotates every key that is due; resolves to how many this process rotated. */
export async function rotateDueKeys(deps: SweepDeps): Promise<number> {
  let rotated = 0;
  for (;;) {
    const nowMs = deps.now();
    const due = await deps.store.apiKeys.dueForRotation(Math.floor(nowMs / 1000), BATCH);
    let progress = 0;
    for (const k of due) if (await rotateOne(deps, k, nowMs)) progress++;
    rotated += progress;
    // Keys lost to another process are no longer due; a batch with no progress at all is left for the next sweep.
    if (due.length < BATCH || progress === 0) return rotated;
  }
}

function rotateOne(deps: SweepDeps, k: ApiKeyRecord, nowMs: number): Promise<boolean> {
  const policy = k.rotationPolicy!;
  const secret = generateKey(deps.apiKeyPrefix);
  const next: RotationPolicy = {
    ...policy,
    next_rotation_at: policy.rotation_period === null ? null : Math.floor(nextRotation(policy.rotation_period, nowMs) / 1000),
  };
  return deps.store.apiKeys.rotate({
    id: k.id,
    fromHash: k.hash,
    hash: hashKey(secret),
    keyHint: keyHint(secret),
    transitionEndsAt: Math.floor((nowMs + (policy.key_transition_period_ms ?? DEFAULT_TRANSITION_MS)) / 1000),
    at: Math.floor(nowMs / 1000),
    scheduled: { sealedKey: deps.secrets.encrypt(secret, k.id), due: policy.next_rotation_at!, next },
  });
}

/** The sweep of one gateway process: once at start, then on an unref'd timer; runs never overlap. */
export class KeyRotationSweep {
  private timer: NodeJS.Timeout | undefined;
  private last: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: SweepDeps,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(intervalMs = SWEEP_INTERVAL_MS): void {
    const tick = (): void => void this.run().catch(() => {});
    tick();
    this.timer = setInterval(tick, intervalMs).unref();
  }

  /** One pass, after any pass under way (tests call it after moving the clock); failures also go to onError. */
  run(): Promise<number> {
    const pass = this.last.then(() => rotateDueKeys(this.deps));
    this.last = pass.catch(this.onError);
    return pass;
  }

  /** Stops the timer and waits for a pass under way, so the store can close under it. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.last;
  }
}
