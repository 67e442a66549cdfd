/**
 * A request's hook results as its log keeps them. They cross to the log
 * writer thread in the engine's flat form (results.ts); the writer thread
 * makes what the log keeps (store/log-record.ts LoggedHooks) with `forLog`,
 * off the request thread:
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
import type { CheckResult, HookResult, HookResults } from './results.js';

const OUTCOME_RANK: Record<CheckOutcome, number> = { passed: 0, errored: 1, failed: 2 };

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
