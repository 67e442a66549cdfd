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
 *
 * Results are written into the flat list of results.ts as checks end; the
 * built-in checks but webhook, jwt, inlineImageUrls and partners are
 * synchronous, and a run of them makes no promise and no closure.
 */
import { NO_REACH, type HookEndpoint, type HookKind, type Reach, type Subject, type Verdict } from './check.js';
import type { Feedback, Hook, ReadyCheck } from './hooks.js';
import {
  appendSide,
  ASYNC,
  C_CREATED,
  C_DATA,
  C_ERROR,
  C_EXPLANATION,
  C_FLAGS,
  C_US,
  CHECK_WIDTH,
  DEFAULT,
  DENY,
  FAIL_ON_ERROR,
  H_FEEDBACK,
  H_CHECKS,
  H_CREATED,
  H_FLAGS,
  H_TYPE,
  H_US,
  HOOK_WIDTH,
  bothSides,
  NO_SIDE,
  resultsOf,
  TRANSFORMED,
  VERDICT,
  type FlatHooks,
  type FlatSide,
  type HookResult,
  type HookResults,
} from './results.js';
import { textsOf, withTexts, type TextScope } from './text.js';

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

/** What the hooks that were waited for came to: their results flat (results.ts), and what they decide. */
export class HookRun implements FlatSide {
  constructor(
    readonly flat: readonly unknown[],
    readonly count: number,
    /** A failed hook has deny. */
    readonly denied: boolean,
    /** A hook failed (denying or not). */
    readonly failed: boolean,
    /** The request (before) or answer (after) as the hooks left it; the same object when none transformed it. */
    readonly json: Record<string, unknown>,
    /** Results of the async hooks, once they end; null when there are none. */
    readonly pending: Promise<FlatSide> | null,
  ) {}

  /** As hook_results give them: made only where they are read. */
  get results(): HookResult[] {
    return resultsOf(this);
  }
}

/** Synchronous when every check is: no promise per hook or check. */
export function runHooks(hooks: readonly Hook[], input: HookInput): HookRun | Promise<HookRun> {
  const run = new Run(input, widthOf(hooks, false));
  const waiting = run.hooks(hooks, 0);
  return waiting === undefined ? run.ended(hooks) : waiting.then(() => run.ended(hooks));
}

async function runAsync(hooks: readonly Hook[], input: HookInput): Promise<FlatSide> {
  const run = new Run(input, widthOf(hooks, true));
  for (const h of hooks) await run.hook(h);
  return { flat: run.out, count: run.count };
}

/** Values the results of the (async or waited-for) hooks take in the flat list: it is made at its size once. */
function widthOf(hooks: readonly Hook[], async: boolean): number {
  let n = 0;
  for (const h of hooks) if (h.async === async) n += HOOK_WIDTH + h.checks.length * CHECK_WIDTH;
  return n;
}

/** A check's verdict for the transforms; null when it errored. */
type Judged = Verdict | null;

const slotOf = (at: number, j: number): number => at + HOOK_WIDTH + j * CHECK_WIDTH;

/** One run of hooks: the subject as transforms change it, and the results written so far. */
class Run {
  request: Record<string, unknown>;
  answer: Record<string, unknown> | null;
  subject: Subject;
  readonly out: unknown[];
  /** Values written to `out`. */
  private end = 0;
  count = 0;
  denied = false;
  failed = false;
  /** The scope of the hook now running. */
  private scope: TextScope = 'last_user_message';
  /** created_at of the hook before in this run: a hook with the same one writes null. */
  private lastCreated = '';

  constructor(
    private readonly input: HookInput,
    width: number,
  ) {
    this.out = new Array<unknown>(width);
    this.request = input.request;
    this.answer = input.answer;
    this.subject = this.make();
  }

  /** The judged side: the request before, the answer after. */
  get json(): Record<string, unknown> {
    return this.input.kind === 'before' ? this.request : this.answer!;
  }

  /** The waited-for hooks from the i-th on; a promise only once a check makes one. */
  hooks(hooks: readonly Hook[], i: number): Promise<unknown> | undefined {
    for (; i < hooks.length; i++) {
      const h = hooks[i]!;
      if (h.async) continue;
      const waiting = this.hook(h);
      if (waiting !== undefined) {
        const next = i + 1;
        return waiting.then(() => this.hooks(hooks, next));
      }
    }
    return undefined;
  }

  ended(hooks: readonly Hook[]): HookRun {
    let later: Hook[] | null = null;
    for (const h of hooks) if (h.async) (later ??= []).push(h);
    // A copy of the input: what async hooks transform is thrown away.
    const pending = later === null ? null : runAsync(later, { ...this.input, request: this.request, answer: this.answer });
    return new HookRun(this.out, this.count, this.denied, this.failed, this.json, pending);
  }

  hook(h: Hook): Promise<unknown> | undefined {
    const out = this.out;
    const at = this.end;
    this.end += HOOK_WIDTH + h.checks.length * CHECK_WIDTH;
    const createdAt = isoNow();
    out[at] = h.id;
    out[at + H_TYPE] = h.type === 'guardrail' ? null : h.type;
    out[at + H_CREATED] = createdAt === this.lastCreated ? null : createdAt;
    out[at + H_CHECKS] = h.checks.length;
    // The rest of the hook's values are written when it ends; each check's, by runCheck.
    this.lastCreated = createdAt;
    this.count++;
    const t0 = performance.now();
    if (h.scope !== this.scope) {
      this.scope = h.scope;
      this.subject = this.make();
    }
    const waiting = h.sequential ? this.oneByOne(h, at, createdAt, 0) : this.sideBySide(h, at);
    if (waiting === undefined) return void this.hookEnded(h, at, t0);
    return waiting.then(() => this.hookEnded(h, at, t0));
  }

  /** Each check sees the one before's transform. */
  private oneByOne(h: Hook, at: number, createdAt: string, j: number, waited = false): Promise<unknown> | undefined {
    for (; j < h.checks.length; j++) {
      const slot = slotOf(at, j);
      // Checks that start as their hook does take its created_at; after a wait, their own.
      const v = runCheck(h.checks[j]!, this.subject, this.out, slot, this.startedAt(createdAt, waited));
      if (v instanceof Promise) {
        const next = j + 1;
        return v.then((w) => {
          this.take(w, slot);
          return this.oneByOne(h, at, createdAt, next, true);
        });
      }
      this.take(v, slot);
    }
    return undefined;
  }

  /**
   * Every check on the same subject. Transforms apply in check order: those
   * before the first check that makes a promise at once, the rest once all
   * have ended.
   */
  private sideBySide(h: Hook, at: number): Promise<unknown> | undefined {
    const subject = this.subject;
    let waiting: (Judged | Promise<Judged>)[] | null = null;
    for (let j = 0; j < h.checks.length; j++) {
      // All start as their hook does: its created_at is theirs (null).
      const v = runCheck(h.checks[j]!, subject, this.out, slotOf(at, j), null);
      if (waiting === null && !(v instanceof Promise)) this.take(v, slotOf(at, j));
      else (waiting ??= []).push(v);
    }
    if (waiting === null) return undefined;
    const first = h.checks.length - waiting.length;
    return Promise.all(waiting).then((all) => all.forEach((v, k) => this.take(v, slotOf(at, first + k))));
  }

  /** A check's created_at as the flat list has it: null when it is its hook's. */
  private startedAt(hookCreatedAt: string, waited: boolean): string | null {
    if (!waited) return null;
    const now = isoNow();
    return now === hookCreatedAt ? null : now;
  }

  private take(v: Judged, slot: number): void {
    if (v !== null && this.apply(v)) this.out[slot + C_FLAGS] = (this.out[slot + C_FLAGS] as number) | TRANSFORMED;
  }

  private hookEnded(h: Hook, at: number, t0: number): void {
    const out = this.out;
    let verdict = true;
    let transformed = false;
    for (let j = 0; j < h.checks.length; j++) {
      const slot = slotOf(at, j);
      const flags = out[slot + C_FLAGS] as number;
      // An errored check fails its hook only with failOnError.
      if ((flags & VERDICT) === 0 && (out[slot + C_ERROR] === null || (flags & FAIL_ON_ERROR) !== 0)) verdict = false;
      if ((flags & TRANSFORMED) !== 0) transformed = true;
    }
    const deny = h.deny && !verdict;
    out[at + H_FLAGS] = (verdict ? VERDICT : 0) | (deny ? DENY : 0) | (h.async ? ASYNC : 0) | (transformed ? TRANSFORMED : 0) | (h.isDefault === true ? DEFAULT : 0);
    out[at + H_FEEDBACK] = feedbackOf(verdict ? h.onSuccess : h.onFail, h, out, at);
    out[at + H_US] = elapsedUs(t0);
    this.denied ||= deny;
    this.failed ||= !verdict;
  }

  private apply(v: Verdict): boolean {
    if (v.request === undefined && v.answer === undefined && v.texts === undefined) return false;
    const kind = this.input.kind;
    if (v.request !== undefined && kind === 'before') this.request = v.request;
    if (v.answer !== undefined && kind === 'after') this.answer = v.answer;
    if (v.texts !== undefined) {
      const json = withTexts(kind, this.input.endpoint, this.json, v.texts, this.scope);
      if (kind === 'before') this.request = json;
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

/** `createdAt`: null when the check starts as its hook did. */
function runCheck(c: ReadyCheck, subject: Subject, out: unknown[], slot: number, createdAt: string | null): Judged | Promise<Judged> {
  const t0 = performance.now();
  out[slot] = c.id;
  out[slot + C_DATA] = null;
  out[slot + C_ERROR] = null;
  out[slot + C_CREATED] = createdAt;
  let v: Verdict | Promise<Verdict>;
  try {
    v = c.definition.run(subject, c.parameters);
  } catch (e) {
    return errored(c, out, slot, e, t0);
  }
  if (v instanceof Promise) return v.then((w) => judged(c, out, slot, w, t0), (e: unknown) => errored(c, out, slot, e, t0));
  return judged(c, out, slot, v, t0);
}

function judged(c: ReadyCheck, out: unknown[], slot: number, v: Verdict, t0: number): Verdict {
  out[slot + C_FLAGS] = ((c.not ? !v.verdict : v.verdict) ? VERDICT : 0) | (c.failOnError ? FAIL_ON_ERROR : 0);
  out[slot + C_EXPLANATION] = c.not ? inverted(c, v.explanation) : v.explanation;
  out[slot + C_DATA] = v.data ?? null;
  out[slot + C_US] = elapsedUs(t0);
  return v;
}

/** The last inverted explanation of each check: most checks say one of two fixed things, so this makes no string per request. */
const INVERTED = new WeakMap<ReadyCheck, { from: string; to: string }>();

function inverted(c: ReadyCheck, explanation: string): string {
  const last = INVERTED.get(c);
  if (last?.from === explanation) return last.to;
  const to = `${explanation} (inverted by not)`;
  INVERTED.set(c, { from: explanation, to });
  return to;
}

function errored(c: ReadyCheck, out: unknown[], slot: number, e: unknown, t0: number): null {
  const message = e instanceof Error ? e.message : String(e);
  out[slot + C_FLAGS] = c.failOnError ? FAIL_ON_ERROR : 0;
  out[slot + C_EXPLANATION] = `the check could not run: ${message}`;
  out[slot + C_ERROR] = { message };
  out[slot + C_US] = elapsedUs(t0);
  return null;
}

/** Whole microseconds: small integers in the flat list, not heap numbers. */
const elapsedUs = (t0: number): number => Math.round((performance.now() - t0) * 1000);

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

type Outcome = 'passed' | 'failed' | 'errored';

function outcomeAt(out: readonly unknown[], slot: number): Outcome {
  return out[slot + C_ERROR] !== null ? 'errored' : ((out[slot + C_FLAGS] as number) & VERDICT) !== 0 ? 'passed' : 'failed';
}

function feedbackOf(f: Feedback | undefined, h: Hook, out: readonly unknown[], at: number): HookResult['feedback'] {
  if (f === undefined) return null;
  const ids = (outcome: Outcome): string => {
    const picked: string[] = [];
    for (let j = 0; j < h.checks.length; j++) if (outcomeAt(out, slotOf(at, j)) === outcome) picked.push(out[slotOf(at, j)] as string);
    return picked.join(', ');
  };
  return { ...f, metadata: { ...f.metadata, successfulChecks: ids('passed'), failedChecks: ids('failed'), erroredChecks: ids('errored') } };
}

/** One request's hook results, both sides: those waited for (the answer's hook_results) and, once they end, the async ones (the log's). */
export class HookLog {
  private waitedBefore = NO_SIDE;
  private waitedAfter = NO_SIDE;
  private laterBefore = NO_SIDE;
  private laterAfter = NO_SIDE;
  private pending: Promise<void>[] | null = null;
  /** A hook that was waited for failed: the answer is a 246. */
  failed = false;

  add(kind: HookKind, run: HookRun): void {
    if (kind === 'before') this.waitedBefore = appendSide(this.waitedBefore, run);
    else this.waitedAfter = appendSide(this.waitedAfter, run);
    this.failed ||= run.failed;
    // runHooks catches what checks throw; should it fail otherwise (a bug), the log entry still goes, without these results.
    if (run.pending !== null) (this.pending ??= []).push(run.pending.then((s) => this.addLater(kind, s), () => {}));
  }

  private addLater(kind: HookKind, s: FlatSide): void {
    if (kind === 'before') this.laterBefore = appendSide(this.laterBefore, s);
    else this.laterAfter = appendSide(this.laterAfter, s);
  }

  /** Resolves when the async hooks have ended; null when there are none. */
  settled(): Promise<unknown> | null {
    return this.pending === null ? null : Promise.all(this.pending);
  }

  /** hook_results of the answer: the hooks waited for. */
  answered(): HookResults {
    return { before_request_hooks: resultsOf(this.waitedBefore), after_request_hooks: resultsOf(this.waitedAfter) };
  }

  /** hook_results of the log, flat: every hook's, async ones included once ended. */
  logged(): FlatHooks {
    return bothSides(appendSide(this.waitedBefore, this.laterBefore), appendSide(this.waitedAfter, this.laterAfter));
  }
}
