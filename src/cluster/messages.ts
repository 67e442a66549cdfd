/**
 * What a cluster's primary and its workers say to each other over the IPC
 * channel node:cluster opens (advanced serialization: Buffers, typed arrays
 * and ArrayBuffers cross as they are). Every message carries `sy`, so
 * messages of anything else on the channel are left alone.
 */
import type { PackedBatch } from '../logs/entry.js';
import type { Change } from '../store/changes.js';

/** Operations on the state the primary holds for its workers (primary-state.ts). */
export type Op = 'script' | 'cache.get' | 'cache.set' | 'semantic.nearest' | 'semantic.add' | 'semantic.forget';

/** Calls the primary answers itself: every worker's metrics, summed (metrics-gather.ts). */
export type Call = Op | 'metrics';

export type ToPrimary =
  | { sy: 'call'; id: number; op: Call; args: unknown[] }
  /** This worker's registry series, asked by `gather`. */
  | { sy: 'gathered'; id: number; series: unknown }
  /** Request log entries, packed as for the writer thread (log-forwarder.ts). */
  | { sy: 'logs'; batch: PackedBatch }
  /** The last of them was sent (a closing worker): the primary need not wait for the channel's end to have them all. */
  | { sy: 'logs-end' }
  /** A store change this worker made: the primary relays it to every other worker (change-relay.ts). */
  | { sy: 'change'; change: Change };

export type ToWorker =
  | { sy: 'reply'; id: number; ok: true; value: unknown }
  | { sy: 'reply'; id: number; ok: false; message: string }
  /** Send this worker's registry series (getMetricsAsJSON) as `gathered`. */
  | { sy: 'gather'; id: number }
  /** A store change another worker made: drop the cache entries it names. */
  | { sy: 'change'; change: Change };

export function isOurs<T extends { sy: string }>(m: unknown): m is T {
  return typeof m === 'object' && m !== null && typeof (m as { sy?: unknown }).sy === 'string';
}
