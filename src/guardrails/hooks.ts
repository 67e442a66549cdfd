/**
 * A config's hooks made ready to run, once per config: the four config keys
 * (before_request_hooks, after_request_hooks, input_guardrails,
 * output_guardrails) read into one list of hooks per side, each check's
 * parameters validated and prepared (patterns compiled and weighed on the
 * config's budget). Config validation calls this for the 400 naming a bad
 * parameter; the routing plan keeps the result.
 *
 * `deny` is read where the spec puts it (a hook's `on_fail.deny`, a
 * guardrail's `deny` or `on_fail.deny`) and on the hook itself, where configs
 * written for Portkey put it. A guardrail item's keys other than its own
 * (id, deny, async, sequential, scope, on_fail, on_success) name checks. A guardrail
 * item that is a string names a saved guardrail (/v1/guardrails): its hook
 * holds the reference, resolved per workspace on the request path (saved.ts).
 */
import { formatPath, schemaProblem, type SchemaPath } from '../shared/json-schema.js';
import type { RegexBudget } from '../shared/linear-regex.js';
import type { CheckDefinition, HookKind } from './check.js';
import { CHECKS } from './registry.js';
import type { TextScope } from './text.js';

export interface ReadyCheck {
  /** As the config names it, e.g. default.regexMatch. */
  id: string;
  definition: CheckDefinition<unknown>;
  parameters: unknown;
  not: boolean;
  failOnError: boolean;
}

export interface Feedback {
  value?: number;
  weight?: number;
  metadata?: Record<string, unknown>;
}

export interface Hook {
  id: string;
  /** Portkey's hook types: a mutator's checks run one after another. */
  type: string;
  checks: readonly ReadyCheck[];
  deny: boolean;
  /** Runs beside the request: never changes or holds the answer; its results go to the log. */
  async: boolean;
  /** Checks run one after another, each seeing the text as the one before left it. */
  sequential: boolean;
  onSuccess: Feedback | undefined;
  onFail: Feedback | undefined;
  /** What text of a chat request its checks read (text.ts). */
  scope: TextScope;
  /** A saved guardrail named by the config (its id or slug), and where (`input_guardrails[0]`): resolved per workspace before it runs. */
  ref?: { name: string; at: string };
  /** A default guardrail of the organisation or workspace settings: marked so in hook_results. */
  isDefault?: true;
}

export interface Hooks {
  before: readonly Hook[];
  after: readonly Hook[];
  /** Characters of a streamed answer held back while after hooks judge it (guardrails_stream_window). */
  streamWindow: number;
  /**
   * Where a waited-for hook of each side first rewrites what it judges
   * (`output_guardrails[0]`, `default.regexReplace`), null where none does:
   * what cannot take a rewrite refuses the request with it (a stream, whose
   * text the client already has; the generic proxy, which sends the body as
   * it came).
   */
  transformAt: { before: TransformAt | null; after: TransformAt | null };
}

/** A hook (its config path, `output_guardrails[0]`) and the check of it that rewrites. */
export interface TransformAt {
  at: string;
  check: string;
}

/** Characters held back while output hooks judge a stream, unless the config's guardrails_stream_window says otherwise. */
export const DEFAULT_STREAM_WINDOW = 100;

export const NO_HOOKS: Hooks = { before: [], after: [], streamWindow: DEFAULT_STREAM_WINDOW, transformAt: { before: null, after: null } };

/**
 * Checks that always rewrite what they judge. A webhook may: what it returns
 * is applied where the body can take it and not on a stream or the proxy
 * (docs/guardrails.md), rather than refusing every such request.
 */
const TRANSFORMS = new Set(['default.regexReplace', 'default.addPrefix', 'default.inlineImageUrls']);

interface Outcome {
  deny?: boolean;
  feedback?: Feedback;
}

interface HookItem {
  id: string;
  type?: string;
  async?: boolean;
  deny?: boolean;
  sequential?: boolean;
  scope?: TextScope;
  checks?: readonly { id: string; parameters: Record<string, unknown> }[];
  on_fail?: Outcome;
  on_success?: Outcome;
}

/** A saved guardrail's id, or checks by their ids (`default.regexMatch: {…}`) beside the item's own keys. */
type GuardrailItem = string | (Omit<HookItem, 'id' | 'checks' | 'type'> & { id?: string; [check: string]: unknown });

/** The config keys hooks come from, shaped as the config schema validates them. */
export interface HookConfig {
  before_request_hooks?: readonly HookItem[];
  after_request_hooks?: readonly HookItem[];
  input_guardrails?: readonly GuardrailItem[];
  output_guardrails?: readonly GuardrailItem[];
  guardrails_stream_window?: number;
}

export const HOOK_KEYS = ['before_request_hooks', 'after_request_hooks', 'input_guardrails', 'output_guardrails', 'guardrails_stream_window'] as const;

const GUARDRAIL_OWN_KEYS = new Set(['id', 'deny', 'async', 'sequential', 'scope', 'on_fail', 'on_success']);

export interface HookProblem {
  path: SchemaPath;
  message: string;
}

type Compiled<T> = { ok: true; value: T } | { ok: false; problem: HookProblem };

/** The check of a waited-for hook that rewrites what it judges, if any. */
export function transformOf(hook: Hook): string | undefined {
  return hook.async ? undefined : hook.checks.find((x) => TRANSFORMS.has(x.id))?.id;
}

/**
 * Checks one request runs, its config's own and the saved and default
 * guardrails it brings in (saved.ts): a check may call out (a webhook, a
 * partner's API) and a hook's checks run side by side, so without a bound one
 * config of a few kilobytes had the gateway make hundreds of calls at once.
 */
export const MAX_REQUEST_CHECKS = 64;

/** The checks past MAX_REQUEST_CHECKS, said of the place that passed it. */
export function tooManyChecks(n: number): string {
  return `brings the checks of one request to ${n}, more than the ${MAX_REQUEST_CHECKS} a request may run (each may call out)`;
}

export function compileHooks(c: HookConfig, budget: RegexBudget): Compiled<Hooks> {
  const out = {
    before: [] as Hook[],
    after: [] as Hook[],
    streamWindow: c.guardrails_stream_window ?? DEFAULT_STREAM_WINDOW,
    transformAt: { before: null as TransformAt | null, after: null as TransformAt | null },
  };
  let checks = 0;
  for (const [key, kind] of [['before_request_hooks', 'before'], ['input_guardrails', 'before'], ['after_request_hooks', 'after'], ['output_guardrails', 'after']] as const) {
    const items: readonly (HookItem | GuardrailItem)[] = c[key] ?? [];
    for (const [i, item] of items.entries()) {
      const hook = key.endsWith('_hooks') ? fromHook(item as HookItem, kind, [key, i], budget) : fromGuardrail(item as GuardrailItem, kind, [key, i], budget);
      if (!hook.ok) return hook;
      checks += hook.value.checks.length;
      if (checks > MAX_REQUEST_CHECKS) return { ok: false, problem: { path: [key, i], message: tooManyChecks(checks) } };
      out[kind].push(hook.value);
      const transform = transformOf(hook.value);
      if (transform !== undefined) out.transformAt[kind] ??= { at: `${key}[${i}]`, check: transform };
    }
  }
  return { ok: true, value: out };
}

function fromHook(h: HookItem, kind: HookKind | null, at: SchemaPath, budget: RegexBudget): Compiled<Hook> {
  const checks: ReadyCheck[] = [];
  for (const [j, c] of (h.checks ?? []).entries()) {
    const ready = readyCheck(c.id, c.parameters, kind, [...at, 'checks', j, 'id'], [...at, 'checks', j, 'parameters'], budget);
    if (!ready.ok) return ready;
    checks.push(ready.value);
  }
  const type = h.type ?? 'guardrail';
  return { ok: true, value: hook(denyDefault(h, checks), h.id, type, checks, type === 'mutator') };
}

function fromGuardrail(g: GuardrailItem, kind: HookKind, at: SchemaPath, budget: RegexBudget): Compiled<Hook> {
  if (typeof g === 'string') return { ok: true, value: { ...hook({}, g, 'guardrail', [], false), ref: { name: g, at: formatPath(at) } } };
  const checks: ReadyCheck[] = [];
  for (const [key, parameters] of Object.entries(g)) {
    if (GUARDRAIL_OWN_KEYS.has(key)) continue;
    const ready = readyCheck(key, parameters as Record<string, unknown>, kind, [...at, key], [...at, key], budget);
    if (!ready.ok) return ready;
    checks.push(ready.value);
  }
  return { ok: true, value: hook(denyDefault(g, checks), g.id ?? `${String(at[0])}[${String(at[1])}]`, 'guardrail', checks, false) };
}

/** A third-party guardrail denies unless the item says otherwise (its deny, or its on_fail's). */
function denyDefault<H extends { deny?: boolean; on_fail?: Outcome }>(h: H, checks: readonly ReadyCheck[]): H {
  const denies = h.deny === undefined && h.on_fail?.deny === undefined && checks.some((c) => c.definition.denies === true);
  return denies ? { ...h, deny: true } : h;
}

function hook(h: Omit<HookItem, 'id'>, id: string, type: string, checks: ReadyCheck[], sequential: boolean): Hook {
  return {
    id,
    type,
    checks,
    deny: h.deny === true || h.on_fail?.deny === true,
    async: h.async === true,
    sequential: sequential || h.sequential === true,
    onSuccess: h.on_success?.feedback,
    onFail: h.on_fail?.feedback,
    scope: h.scope ?? 'last_user_message',
  };
}

/** `kind` null: a saved guardrail's check, which may run on either side (each use checks its side: `sidesOf`). */
function readyCheck(id: string, parameters: Record<string, unknown>, kind: HookKind | null, idAt: SchemaPath, at: SchemaPath, budget: RegexBudget): Compiled<ReadyCheck> {
  const check = CHECKS.get(id);
  if (check === undefined) {
    return { ok: false, problem: { path: idAt, message: `is not a check this gateway runs (built in: ${[...CHECKS.keys()].join(', ')})` } };
  }
  const { definition } = check;
  if (kind !== null && !definition.hooks.includes(kind)) {
    return { ok: false, problem: { path: idAt, message: 'runs only before the request (in before_request_hooks or input_guardrails)' } };
  }
  const validate = check.validate();
  if (!validate(parameters)) {
    const p = schemaProblem(parameters, validate.errors);
    return { ok: false, problem: { path: [...at, ...p.path], message: p.message } };
  }
  const prepared = definition.prepare(parameters, budget);
  if (!prepared.ok) return { ok: false, problem: { path: [...at, ...prepared.problem.path], message: prepared.problem.message } };
  return { ok: true, value: { id, definition, parameters: prepared.value, not: parameters.not === true, failOnError: parameters.failOnError === true } };
}

/** What a saved guardrail holds (store/guardrails.ts): checks, and the actions a config's guardrail item would carry. */
export interface SavedGuardrail {
  id: string;
  checks: readonly { id: string; parameters: Record<string, unknown> }[];
  actions: Record<string, unknown>;
}

/**
 * A saved guardrail's checks, validated and prepared as a config's are, on
 * either side: the one validation of /v1/guardrails bodies and of saved
 * guardrails made ready to run. Its patterns weigh on a budget of its own.
 * A problem's path is from the guardrail's body (`checks[1].parameters.rule`).
 */
export function compileGuardrail(g: SavedGuardrail, budget: RegexBudget): Compiled<Hook> {
  return fromHook({ ...(g.actions as Omit<HookItem, 'id' | 'checks'>), id: g.id, type: 'guardrail', checks: g.checks }, null, [], budget);
}

/** The sides a hook's checks all run on. */
export function sidesOf(h: Hook): HookKind[] {
  return (['before', 'after'] as const).filter((kind) => h.checks.every((c) => c.definition.hooks.includes(kind)));
}
