/**
 * What hooks come to, in two forms. The engine writes each check's result
 * as it runs into a flat list of primitives, one per side: it is all a
 * passing request keeps of its hooks until it is logged, a few values per
 * check instead of an object tree, and it crosses to the log writer thread
 * as it is (a structured clone without a key table per object, as the rest
 * of the entry does, logs/entry.ts). The objects of hook_results (Portkey's
 * shape) are made from it only where they are read: a 246 or 446 answer,
 * a stream's results event, the writer thread (log-form.ts).
 */
import type { Feedback } from './hooks.js';

/** Portkey's shape of a check's result, as hook_results carry it. */
export interface CheckResult {
  id: string;
  verdict: boolean;
  explanation: string;
  data: Record<string, unknown> | null;
  error: { message: string } | null;
  fail_on_error: boolean;
  transformed: boolean;
  /** Milliseconds. */
  execution_time: number;
  created_at: string;
}

export interface HookResult {
  id: string;
  type: string;
  verdict: boolean;
  deny: boolean;
  async: boolean;
  transformed: boolean;
  /** The on_success or on_fail feedback, with which checks passed, failed and errored. */
  feedback: (Feedback & { metadata: Record<string, unknown> }) | null;
  execution_time: number;
  created_at: string;
  checks: CheckResult[];
  /** A default guardrail of the organisation or workspace settings. */
  default?: true;
}

/** hook_results: both sides' results, as answers and logs give them. */
export interface HookResults {
  before_request_hooks: HookResult[];
  after_request_hooks: HookResult[];
}

/**
 * One side's hooks, flat: per hook HOOK_WIDTH values, then its checks'
 * CHECK_WIDTH values each. Each value costs the copy to the writer, so
 * booleans go as bits of one number, times as whole microseconds (small
 * integers, not heap numbers), and what is at its usual value as null: a
 * type `guardrail`, a created_at equal to the one before it (the hook
 * before in the same run, the check's hook).
 *
 * hook:  [id, flags, type | null, feedback, µs, created_at | null, number of checks]
 * check: [id, flags, explanation, data, error, µs, created_at | null]
 */
export interface FlatSide {
  readonly flat: readonly unknown[];
  /** Hooks in it. */
  readonly count: number;
}

export const HOOK_WIDTH = 7;
export const CHECK_WIDTH = 7;
/** Offsets in a hook's values. */
export const H_FLAGS = 1;
export const H_TYPE = 2;
export const H_FEEDBACK = 3;
export const H_US = 4;
export const H_CREATED = 5;
export const H_CHECKS = 6;
/** Offsets in a check's values. */
export const C_FLAGS = 1;
export const C_EXPLANATION = 2;
export const C_DATA = 3;
export const C_ERROR = 4;
export const C_US = 5;
export const C_CREATED = 6;

/** A hook's flags; a check has VERDICT, TRANSFORMED and FAIL_ON_ERROR. */
export const VERDICT = 1;
export const DENY = 2;
export const FAIL_ON_ERROR = 2;
export const ASYNC = 4;
export const TRANSFORMED = 8;
export const DEFAULT = 16;

/** Both sides, as the log entry carries them: [before count, before's flat list, after count, after's]. */
export type FlatHooks = readonly [number, readonly unknown[], number, readonly unknown[]];

export const NO_SIDE: FlatSide = { flat: [], count: 0 };

export function bothSides(before: FlatSide, after: FlatSide): FlatHooks {
  return [before.count, before.flat, after.count, after.flat];
}

/** One side after another of it (async hooks after those waited for); neither is changed. */
export function appendSide(a: FlatSide, b: FlatSide): FlatSide {
  if (a.count === 0) return b;
  if (b.count === 0) return a;
  return { flat: a.flat.concat(b.flat), count: a.count + b.count };
}

export function unflatten(v: FlatHooks): HookResults {
  return { before_request_hooks: decode(v[1], v[0]), after_request_hooks: decode(v[3], v[2]) };
}

export function resultsOf(side: FlatSide): HookResult[] {
  return decode(side.flat, side.count);
}

const ms = (us: number): number => us / 1000;

function decode(v: readonly unknown[], n: number): HookResult[] {
  const hooks: HookResult[] = [];
  let at = 0;
  let before = '';
  for (let i = 0; i < n; i++) {
    const h = at;
    const flags = v[h + H_FLAGS] as number;
    const createdAt = (v[h + H_CREATED] as string | null) ?? before;
    before = createdAt;
    const checks: CheckResult[] = [];
    at += HOOK_WIDTH;
    for (let j = 0; j < (v[h + H_CHECKS] as number); j++, at += CHECK_WIDTH) {
      const checkFlags = v[at + C_FLAGS] as number;
      checks.push({
        id: v[at] as string,
        verdict: (checkFlags & VERDICT) !== 0,
        explanation: v[at + C_EXPLANATION] as string,
        data: v[at + C_DATA] as CheckResult['data'],
        error: v[at + C_ERROR] as CheckResult['error'],
        fail_on_error: (checkFlags & FAIL_ON_ERROR) !== 0,
        transformed: (checkFlags & TRANSFORMED) !== 0,
        execution_time: ms(v[at + C_US] as number),
        created_at: (v[at + C_CREATED] as string | null) ?? createdAt,
      });
    }
    hooks.push({
      id: v[h] as string,
      type: (v[h + H_TYPE] as string | null) ?? 'guardrail',
      verdict: (flags & VERDICT) !== 0,
      deny: (flags & DENY) !== 0,
      async: (flags & ASYNC) !== 0,
      transformed: (flags & TRANSFORMED) !== 0,
      feedback: v[h + H_FEEDBACK] as HookResult['feedback'],
      execution_time: ms(v[h + H_US] as number),
      created_at: createdAt,
      checks,
      ...((flags & DEFAULT) !== 0 && { default: true as const }),
    });
  }
  return hooks;
}
