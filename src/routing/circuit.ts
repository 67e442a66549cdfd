/**
 * Circuit breaker per target. State lives behind CircuitStore so several
 * gateway processes can share it (Redis, later); the in-memory store serves
 * one process. Failures are consecutive: a success closes the circuit.
 * After `cooldown_interval` one caller gets the probe; its outcome closes the
 * circuit or opens it for another cooldown.
 */
import type { CircuitBreakerConfig } from '../config/types.js';
import { boundedMap, type OnEvict } from '../shared/bounded.js';

/** closed: go ahead; probe: go ahead, you are the one trial call; open: skip. */
export type Admission = 'closed' | 'probe' | 'open';

export interface CircuitStore {
  admit(key: string, now: number): Promise<Admission>;
  record(key: string, cfg: CircuitBreakerConfig, failed: boolean, now: number): Promise<void>;
  /** Read-only view for metrics and tests. */
  state(key: string, now: number): Promise<'closed' | 'open' | 'half-open'>;
}

interface Entry {
  failures: number;
  /** When the circuit may be probed; 0 while closed. */
  openUntil: number;
  probing: boolean;
}

/**
 * Circuits a process keeps in memory. A target that keeps failing keeps its
 * entry until a success, and inline configs (each its own hash) make new
 * targets at will: past this many, the least recently used circuit is
 * forgotten (it closes).
 */
export const MAX_MEMORY_CIRCUITS = 10_000;

export class MemoryCircuitStore implements CircuitStore {
  private readonly entries;

  constructor(opts: { max?: number; onEvict?: OnEvict } = {}) {
    this.entries = boundedMap<Entry>(opts.max ?? MAX_MEMORY_CIRCUITS, opts.onEvict);
  }

  async admit(key: string, now: number): Promise<Admission> {
    const e = this.entries.get(key);
    if (e === undefined || e.openUntil === 0) return 'closed';
    if (now < e.openUntil || e.probing) return 'open';
    e.probing = true;
    return 'probe';
  }

  async record(key: string, cfg: CircuitBreakerConfig, failed: boolean, now: number): Promise<void> {
    let e = this.entries.get(key);
    if (!failed) {
      if (e !== undefined) this.entries.delete(key);
      return;
    }
    if (e === undefined) {
      e = { failures: 0, openUntil: 0, probing: false };
      this.entries.set(key, e);
    }
    e.failures++;
    // A failed probe, or reaching the threshold, opens for a full cooldown.
    if (e.probing || e.failures >= cfg.failure_threshold) {
      e.openUntil = now + cfg.cooldown_interval;
      e.probing = false;
    }
  }

  async state(key: string, now: number): Promise<'closed' | 'open' | 'half-open'> {
    const e = this.entries.get(key);
    if (e === undefined || e.openUntil === 0) return 'closed';
    // While one caller probes, everyone else must route around the target (admit() refuses them).
    return now < e.openUntil || e.probing ? 'open' : 'half-open';
  }
}

/**
 * Without failure_status_codes, 500 and above count as failures, as the
 * reference product counts them (the spec's table says "above 500", which
 * would leave a provider answering 500 to every call in rotation);
 * failure_status_codes narrows it to the codes listed.
 */
export function isCircuitFailure(cfg: CircuitBreakerConfig, status: number): boolean {
  return cfg.failure_status_codes !== undefined ? cfg.failure_status_codes.includes(status) : status >= 500;
}
