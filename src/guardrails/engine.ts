/**
 * Runs one side's hooks (before or after the request) over its subject.
 *
 * Hooks run in config order, each seeing the text as the ones before left it.
 * A hook's checks run side by side on the same text unless the hook is
 * sequential (or a mutator), when each sees the one before's transform;
 * side by side, transforms are applied in check order once all are done.
 * A check that throws has errored: it fails its hook only with
 * `failOnError`. `not` inverts a check's verdict. A hook fails when a
 * check does; a failed hook with deny denies the request. Async hooks run
 * after the others, on the text they left, and change nothing: their
 * results arrive later (`pending`), for the log.
 */
import { NO_REACH, type HookEndpoint, type HookKind, type Reach, type Subject, type Verdict } from './check.js';
import type { Feedback, Hook, ReadyCheck } from './hooks.js';
import { textsOf, withTexts, type TextScope } from './text.js';

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

/** What a side's hooks start from. */
export interface HookInput {
  kind: HookKind;
  endpoint: HookEndpoint;
  requestType: string;
  model: string | undefined;
  metadata: Readonly<Record<string, string>>;
  request: Record<string, unknown>;
  /** The answer in OpenAI's shape, for after-request hooks. */
  answer: Record<string, unknown> | null;
  /** What checks that call out may use; none by default. */
  reach?: Reach;
}

export interface HookRun {
  /** The results of the hooks that were waited for. */
  results: HookResult[];
  /** A failed hook has deny. */
  denied: boolean;
  /** A hook failed (denying or not). */
  failed: boolean;
  /** The request (before) or answer (after) as the hooks left it; the same object when none transformed it. */
  json: Record<string, unknown>;
  /** Results of the async hooks, once they end; null when there are none. */
  pending: Promise<HookResult[]> | null;
}

/** Synchronous when every check is (the built-in ones but webhook, jwt, inlineImageUrls and partners): no promise per hook or check. */
export function runHooks(hooks: readonly Hook[], input: HookInput): HookRun | Promise<HookRun> {
  const state = new State(input);
  const results: HookResult[] = [];
  const from = (i: number): HookRun | Promise<HookRun> => {
    for (; i < hooks.length; i++) {
      const h = hooks[i]!;
      if (h.async) continue;
      const r = runHook(h, state);
      if (r instanceof Promise) {
        const next = i + 1;
        return r.then((v) => {
          results.push(v);
          return from(next);
        });
      }
      results.push(r);
    }
    return ended(hooks, input, state, results);
  };
  return from(0);
}

function ended(hooks: readonly Hook[], input: HookInput, state: State, results: HookResult[]): HookRun {
  const later = hooks.some((h) => h.async) ? hooks.filter((h) => h.async) : null;
  // A copy: what async hooks transform is thrown away.
  const pending = later === null ? null : runAsync(later, new State({ ...input, ...state.sides() }));
  return { results, denied: results.some((r) => r.deny), failed: results.some((r) => !r.verdict), json: state.json, pending };
}

async function runAsync(hooks: readonly Hook[], state: State): Promise<HookResult[]> {
  const out: HookResult[] = [];
  for (const h of hooks) out.push(await runHook(h, state));
  return out;
}

/** The subject as transforms change it. */
class State {
  request: Record<string, unknown>;
  answer: Record<string, unknown> | null;
  subject: Subject;
  /** The scope of the hook now running. */
  private scope: TextScope = 'last_user_message';

  constructor(private readonly input: HookInput) {
    this.request = input.request;
    this.answer = input.answer;
    this.subject = this.make();
  }

  /** The judged side: the request before, the answer after. */
  get json(): Record<string, unknown> {
    return this.input.kind === 'before' ? this.request : this.answer!;
  }

  sides(): { request: Record<string, unknown>; answer: Record<string, unknown> | null } {
    return { request: this.request, answer: this.answer };
  }

  /** The hook that runs next reads its own scope of the text. */
  enter(h: Hook): void {
    if (h.scope === this.scope) return;
    this.scope = h.scope;
    this.subject = this.make();
  }

  apply(v: Verdict): boolean {
    if (v.request === undefined && v.answer === undefined && v.texts === undefined) return false;
    if (v.request !== undefined && this.input.kind === 'before') this.request = v.request;
    if (v.answer !== undefined && this.input.kind === 'after') this.answer = v.answer;
    if (v.texts !== undefined) {
      const json = withTexts(this.input.kind, this.input.endpoint, this.json, v.texts, this.scope);
      if (this.input.kind === 'before') this.request = json;
      else this.answer = json;
    }
    this.subject = this.make();
    return true;
  }

  private make(): Subject {
    const i = this.input;
    const texts = textsOf(i.kind, i.endpoint, this.json, this.scope);
    return { kind: i.kind, endpoint: i.endpoint, requestType: i.requestType, model: i.model, metadata: i.metadata, request: this.request, answer: this.answer, texts, text: texts.join('\n'), reach: i.reach ?? NO_REACH };
  }
}

/** A check's result, and its verdict for the transforms (null when it errored). */
type Ran = [CheckResult, Verdict | null];

function runHook(h: Hook, state: State): HookResult | Promise<HookResult> {
  const createdAt = isoNow();
  const t0 = performance.now();
  const checks: CheckResult[] = [];
  const take = ([result, v]: Ran): void => {
    result.transformed = v !== null && state.apply(v);
    checks.push(result);
  };
  const done = (): HookResult => hookResult(h, checks, t0, createdAt);
  state.enter(h);
  if (h.sequential) {
    // Each check sees the one before's transform.
    const from = (i: number): HookResult | Promise<HookResult> => {
      for (; i < h.checks.length; i++) {
        const r = runCheck(h.checks[i]!, state.subject);
        if (r instanceof Promise) {
          const next = i + 1;
          return r.then((ran) => {
            take(ran);
            return from(next);
          });
        }
        take(r);
      }
      return done();
    };
    return from(0);
  }
  const subject = state.subject;
  const ran = h.checks.map((c) => runCheck(c, subject));
  if (ran.some((r) => r instanceof Promise)) {
    return Promise.all(ran).then((all) => {
      all.forEach(take);
      return done();
    });
  }
  (ran as Ran[]).forEach(take);
  return done();
}

function hookResult(h: Hook, checks: CheckResult[], t0: number, createdAt: string): HookResult {
  const verdict = checks.every((c) => c.verdict || (c.error !== null && !c.fail_on_error));
  return {
    id: h.id,
    type: h.type,
    verdict,
    deny: h.deny && !verdict,
    async: h.async,
    transformed: checks.some((c) => c.transformed),
    feedback: feedbackOf(verdict ? h.onSuccess : h.onFail, checks),
    execution_time: performance.now() - t0,
    created_at: createdAt,
    checks,
    ...(h.isDefault === true && { default: true as const }),
  };
}

function runCheck(c: ReadyCheck, subject: Subject): Ran | Promise<Ran> {
  const t0 = performance.now();
  const result: CheckResult = {
    id: c.id,
    verdict: false,
    explanation: '',
    data: null,
    error: null,
    fail_on_error: c.failOnError,
    transformed: false,
    execution_time: 0,
    created_at: isoNow(),
  };
  let v: Verdict | Promise<Verdict>;
  try {
    v = c.definition.run(subject, c.parameters);
  } catch (e) {
    return errored(result, e, t0);
  }
  if (v instanceof Promise) return v.then((w) => judged(c, result, w, t0), (e: unknown) => errored(result, e, t0));
  return judged(c, result, v, t0);
}

function judged(c: ReadyCheck, result: CheckResult, v: Verdict, t0: number): Ran {
  result.verdict = c.not ? !v.verdict : v.verdict;
  result.explanation = c.not ? `${v.explanation} (inverted by not)` : v.explanation;
  result.data = v.data ?? null;
  result.execution_time = performance.now() - t0;
  return [result, v];
}

function errored(result: CheckResult, e: unknown, t0: number): Ran {
  const message = e instanceof Error ? e.message : String(e);
  result.error = { message };
  result.explanation = `the check could not run: ${message}`;
  result.execution_time = performance.now() - t0;
  return [result, null];
}

/**
 * The time as created_at says it. A Date is formatted once a second; the
 * milliseconds are put after it, and the string is made once per
 * millisecond (the checks of one hook mostly start within one).
 */
let lastMs = 0;
let lastIso = '';
let second = 0;
let secondIso = '';
function isoNow(): string {
  const ms = Date.now();
  if (ms === lastMs) return lastIso;
  const s = Math.floor(ms / 1000);
  if (s !== second) {
    second = s;
    secondIso = new Date(s * 1000).toISOString().slice(0, 20); // up to the seconds' dot
  }
  lastMs = ms;
  lastIso = `${secondIso}${String(ms - s * 1000).padStart(3, '0')}Z`;
  return lastIso;
}

function feedbackOf(f: Feedback | undefined, checks: readonly CheckResult[]): HookResult['feedback'] {
  if (f === undefined) return null;
  const ids = (pick: (c: CheckResult) => boolean): string => checks.filter(pick).map((c) => c.id).join(', ');
  return {
    ...f,
    metadata: {
      ...f.metadata,
      successfulChecks: ids((c) => c.error === null && c.verdict),
      failedChecks: ids((c) => c.error === null && !c.verdict),
      erroredChecks: ids((c) => c.error !== null),
    },
  };
}

/** One request's hook results, both sides: those waited for (the answer's hook_results) and, once they end, the async ones (the log's). */
export class HookLog {
  private readonly waited = { before: [] as HookResult[], after: [] as HookResult[] };
  private readonly later = { before: [] as HookResult[], after: [] as HookResult[] };
  private readonly pending: Promise<void>[] = [];
  /** A hook that was waited for failed: the answer is a 246. */
  failed = false;

  add(kind: HookKind, run: HookRun): void {
    this.waited[kind].push(...run.results);
    this.failed ||= run.failed;
    // runHooks catches what checks throw; should it fail otherwise (a bug), the log entry still goes, without these results.
    if (run.pending !== null) this.pending.push(run.pending.then((r) => void this.later[kind].push(...r), () => {}));
  }

  /** Resolves when the async hooks have ended; null when there are none. */
  settled(): Promise<unknown> | null {
    return this.pending.length === 0 ? null : Promise.all(this.pending);
  }

  /** hook_results of the answer: the hooks waited for. */
  answered(): HookResults {
    return { before_request_hooks: this.waited.before, after_request_hooks: this.waited.after };
  }

  /** hook_results of the log: every hook's, async ones included once ended. */
  logged(): HookResults {
    return { before_request_hooks: [...this.waited.before, ...this.later.before], after_request_hooks: [...this.waited.after, ...this.later.after] };
  }
}
