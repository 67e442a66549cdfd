/**
 * A request's hook results on their way to its log. The request thread
 * only flattens them (`flatten`: one list of primitives, which crosses to
 * the log writer thread without a key table per object, as the rest of the
 * entry does, logs/entry.ts); the writer thread makes what the log keeps
 * (store/log-record.ts LoggedHooks) with `forLog`, off the request thread:
 *
 * - `results`: hook_results as JSON without what is at its default — a
 *   hook's type `guardrail`, false deny, async and transformed, null
 *   feedback, and the created_at of the hook before it; a check's null data
 *   and error, false fail_on_error and transformed, and its hook's
 *   created_at — and times to the microsecond. Bytes are most of what a log
 *   row costs to write (bench/log-write.ts): this is about half the
 *   answer's form, which `unpackResults` gives back.
 * - `status` and `checks`: what the request's hooks came to, and each check
 *   it ran with its outcome, for the filters and groups of /v1/logs and
 *   /v1/analytics.
 */
import type { CheckOutcome, HookStatus, LoggedHooks } from '../store/log-record.js';
import type { CheckResult, HookResult, HookResults } from './engine.js';

const OUTCOME_RANK: Record<CheckOutcome, number> = { passed: 0, errored: 1, failed: 2 };

/** Values per hook before its checks, and per check, in a flat list (flatten's order). */
const HOOK_WIDTH = 7;
const CHECK_WIDTH = 7;
/** A hook's booleans in one number. */
const VERDICT = 1;
const DENY = 2;
const ASYNC = 4;
const TRANSFORMED = 8;
const DEFAULT = 16;
/** A check's: VERDICT, TRANSFORMED and this. */
const FAIL_ON_ERROR = 2;

const bit = (on: boolean | undefined, b: number): number => (on === true ? b : 0);

/**
 * Hook results as they cross to the writer: [before count, after count,
 * then each hook's fields and its checks' fields]. Each value costs the
 * copy, so booleans go as bits of one number, and what is at its usual
 * value as null: a type `guardrail`, a created_at equal to the one before
 * it (the hook before, the check's hook).
 */
export type FlatHooks = readonly unknown[];

export function flatten(r: HookResults): FlatHooks {
  const out: unknown[] = [r.before_request_hooks.length, r.after_request_hooks.length];
  for (const hooks of [r.before_request_hooks, r.after_request_hooks]) {
    let before = '';
    for (const h of hooks) {
      const flags = bit(h.verdict, VERDICT) | bit(h.deny, DENY) | bit(h.async, ASYNC) | bit(h.transformed, TRANSFORMED) | bit(h.default, DEFAULT);
      out.push(h.id, flags, h.type === 'guardrail' ? null : h.type, h.feedback, h.execution_time, h.created_at === before ? null : h.created_at, h.checks.length);
      for (const c of h.checks) {
        const checkFlags = bit(c.verdict, VERDICT) | bit(c.fail_on_error, FAIL_ON_ERROR) | bit(c.transformed, TRANSFORMED);
        out.push(c.id, checkFlags, c.explanation, c.data, c.error, c.execution_time, c.created_at === h.created_at ? null : c.created_at);
      }
      before = h.created_at;
    }
  }
  return out;
}

export function unflatten(v: FlatHooks): HookResults {
  let at = 2;
  const hooks = (n: number): HookResult[] => {
    const out: HookResult[] = [];
    let before = '';
    for (let i = 0; i < n; i++) {
      const h = at;
      const flags = v[h + 1] as number;
      const createdAt = (v[h + 5] as string | null) ?? before;
      before = createdAt;
      const checks: CheckResult[] = [];
      at += HOOK_WIDTH;
      for (let j = 0; j < (v[h + 6] as number); j++, at += CHECK_WIDTH) {
        const checkFlags = v[at + 1] as number;
        checks.push({
          id: v[at] as string,
          verdict: (checkFlags & VERDICT) !== 0,
          explanation: v[at + 2] as string,
          data: v[at + 3] as CheckResult['data'],
          error: v[at + 4] as CheckResult['error'],
          fail_on_error: (checkFlags & FAIL_ON_ERROR) !== 0,
          transformed: (checkFlags & TRANSFORMED) !== 0,
          execution_time: v[at + 5] as number,
          created_at: (v[at + 6] as string | null) ?? createdAt,
        });
      }
      out.push({
        id: v[h] as string,
        type: (v[h + 2] as string | null) ?? 'guardrail',
        verdict: (flags & VERDICT) !== 0,
        deny: (flags & DENY) !== 0,
        async: (flags & ASYNC) !== 0,
        transformed: (flags & TRANSFORMED) !== 0,
        feedback: v[h + 3] as HookResult['feedback'],
        execution_time: v[h + 4] as number,
        created_at: createdAt,
        checks,
        ...((flags & DEFAULT) !== 0 && { default: true as const }),
      });
    }
    return out;
  };
  const before = hooks(v[0] as number);
  return { before_request_hooks: before, after_request_hooks: hooks(v[1] as number) };
}

export function forLog(r: HookResults): LoggedHooks {
  const checks: Record<string, CheckOutcome> = {};
  let denied = false;
  let failed = false;
  for (const hooks of [r.before_request_hooks, r.after_request_hooks]) {
    for (const h of hooks) {
      // An async hook's deny refuses nothing: it ended after the answer.
      denied ||= h.deny && !h.async;
      failed ||= !h.verdict;
      for (const c of h.checks) {
        // A check that failed in one hook and passed in another failed in the request.
        const outcome: CheckOutcome = c.error !== null ? 'errored' : c.verdict ? 'passed' : 'failed';
        const was = checks[c.id];
        if (was === undefined || OUTCOME_RANK[outcome] > OUTCOME_RANK[was]) checks[c.id] = outcome;
      }
    }
  }
  const status: HookStatus = denied ? 'denied' : failed ? 'failed' : 'passed';
  return { results: JSON.stringify({ before_request_hooks: packHooks(r.before_request_hooks), after_request_hooks: packHooks(r.after_request_hooks) }), status, checks };
}

function packHooks(hooks: readonly HookResult[]): Record<string, unknown>[] {
  return hooks.map((h, i) => packHook(h, i === 0 ? undefined : hooks[i - 1]!.created_at));
}

/** Microseconds: what a JavaScript timer can tell apart. */
const us = (ms: number): number => Math.round(ms * 1000) / 1000;

function packHook(h: HookResult, before: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { id: h.id, verdict: h.verdict, execution_time: us(h.execution_time) };
  if (h.type !== 'guardrail') out.type = h.type;
  if (h.created_at !== before) out.created_at = h.created_at;
  if (h.deny) out.deny = true;
  if (h.async) out.async = true;
  if (h.transformed) out.transformed = true;
  if (h.feedback !== null) out.feedback = h.feedback;
  if (h.default === true) out.default = true;
  out.checks = h.checks.map((c) => packCheck(c, h.created_at));
  return out;
}

function packCheck(c: CheckResult, hookCreatedAt: string): Record<string, unknown> {
  const out: Record<string, unknown> = { id: c.id, verdict: c.verdict, explanation: c.explanation, execution_time: us(c.execution_time) };
  if (c.data !== null) out.data = c.data;
  if (c.error !== null) out.error = c.error;
  if (c.fail_on_error) out.fail_on_error = true;
  if (c.transformed) out.transformed = true;
  if (c.created_at !== hookCreatedAt) out.created_at = c.created_at;
  return out;
}

type Packed = Partial<HookResult> & { checks?: Partial<CheckResult>[] };

/** hook_results in the answer's form from what the log keeps (logs written whole, before this form, read as they are). */
export function unpackResults(results: string): HookResults {
  const r = JSON.parse(results) as { before_request_hooks?: Packed[]; after_request_hooks?: Packed[] };
  return { before_request_hooks: unpackHooks(r.before_request_hooks ?? []), after_request_hooks: unpackHooks(r.after_request_hooks ?? []) };
}

function unpackHooks(hooks: readonly Packed[]): HookResult[] {
  let before = '';
  return hooks.map((h) => {
    const hook = unpackHook(h, before);
    before = hook.created_at;
    return hook;
  });
}

function unpackHook(h: Packed, before: string): HookResult {
  const createdAt = h.created_at ?? before;
  return {
    id: h.id ?? '',
    type: h.type ?? 'guardrail',
    verdict: h.verdict ?? false,
    deny: h.deny ?? false,
    async: h.async ?? false,
    transformed: h.transformed ?? false,
    feedback: h.feedback ?? null,
    execution_time: h.execution_time ?? 0,
    created_at: createdAt,
    checks: (h.checks ?? []).map((c) => ({
      id: c.id ?? '',
      verdict: c.verdict ?? false,
      explanation: c.explanation ?? '',
      data: c.data ?? null,
      error: c.error ?? null,
      fail_on_error: c.fail_on_error ?? false,
      transformed: c.transformed ?? false,
      execution_time: c.execution_time ?? 0,
      created_at: c.created_at ?? createdAt,
    })),
    ...(h.default === true && { default: true as const }),
  };
}
