/**
 * What a check is: Portkey's built-in `default.*` checks, each a definition
 * of its parameters (validated when the config is, so a bad one is a 400
 * naming it) and a run over the subject of one hook — the request before it
 * is sent, or the answer before it is written.
 */
import type { TProperties } from '@sinclair/typebox';
import type { Result } from '../shared/errors.js';
import type { RegexBudget } from '../shared/linear-regex.js';

/** A before-request hook (and input guardrail) or an after-request hook (and output guardrail). */
export type HookKind = 'before' | 'after';

/** The endpoints hooks run for. */
export type HookEndpoint = 'chat' | 'completions' | 'embeddings';

/** A stored credential as a partner check uses it: the provider it is for and the keys stored with it (api_key, custom_host). */
export interface StoredKey {
  readonly provider: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * What a check may reach beyond the JSON it judges, handed in by the
 * pipeline: the client's headers, the provider, the workspace's stored
 * credentials (looked up as routing does: a virtual key's id or slug, or an
 * integration provider's slug).
 */
export interface Reach {
  /** The client's request headers, names in lower case. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The provider the request goes to (before) or that answered (after); undefined when not known yet (several targets). */
  readonly provider: string | undefined;
  /** null: no such credential in the request's workspace. */
  credential(kind: 'virtual_key' | 'provider', ref: string): Promise<Result<StoredKey | null>>;
}

/** A reach with nothing in it: hooks run outside a request (tests, tools). */
export const NO_REACH: Reach = {
  headers: {},
  provider: undefined,
  credential: () => Promise.resolve({ ok: true, value: null }),
};

/** What one check judges. Texts are read from the JSON by text.ts; a transform's result is written back there. */
export interface Subject {
  readonly kind: HookKind;
  readonly endpoint: HookEndpoint;
  /** Portkey's name of the request type: chatComplete, complete, embed, or stream-chatComplete, stream-complete. */
  readonly requestType: string;
  /** The model the request asks for. */
  readonly model: string | undefined;
  /** The request's x-gateway-metadata. */
  readonly metadata: Readonly<Record<string, string>>;
  /** The request body as it now stands (earlier transforms applied). */
  readonly request: Readonly<Record<string, unknown>>;
  /** The answer in OpenAI's shape (after-request hooks); null before the request. */
  readonly answer: Readonly<Record<string, unknown>> | null;
  /** The parts of text the check judges, in order (text.ts says which). */
  readonly texts: readonly string[];
  /** The parts joined by newlines. */
  readonly text: string;
  readonly reach: Reach;
}

/** A check's judgement. */
export interface Verdict {
  verdict: boolean;
  explanation: string;
  /** Facts for the log and hook_results; never the judged text itself (it may hold what bodies-off logging keeps out). */
  data?: Record<string, unknown>;
  /** A transform: the new text parts, one for each of `texts`. */
  texts?: readonly string[];
  /** A transform that reshapes the request (a new message): the whole new body. */
  request?: Record<string, unknown>;
  /** A transform of the whole answer (after-request hooks). */
  answer?: Record<string, unknown>;
}

/** Where a check's parameter went wrong: a path inside its parameters, and why. */
export interface ParamProblem {
  path: (string | number)[];
  message: string;
}

export interface CheckDefinition<P = unknown> {
  /** Hooks it may run in; a check outside them is refused when the config is validated. */
  readonly hooks: readonly HookKind[];
  /** Its parameters (TypeBox, checked by the one Ajv); `not` and `failOnError`, which the engine applies, are added to every check's. */
  readonly parameters: TProperties;
  /** A guardrail item holding this check denies unless it says `deny: false` (third-party guardrails). */
  readonly denies?: true;
  /** Rules the shape cannot state, and the parameters made ready to run (patterns compiled, charged to the config's budget). */
  prepare(parameters: Record<string, unknown>, budget: RegexBudget): { ok: true; value: P } | { ok: false; problem: ParamProblem };
  /** Throws when it cannot judge (no text, say): the check has errored, and its `failOnError` decides. */
  run(subject: Subject, parameters: P): Verdict | Promise<Verdict>;
}

/** A check with nothing to prepare: its parameters run as validated. */
export function asIs<P>(parameters: Record<string, unknown>): { ok: true; value: P } {
  return { ok: true, value: parameters as P };
}

/** A verdict whose explanation says which way it went. */
export function judged(holds: boolean, yes: string, no: string, data?: Record<string, unknown>): Verdict {
  return { verdict: holds, explanation: holds ? yes : no, data };
}

/** The text a check needs, or the error Portkey's checks raise without one. */
export function needText(s: Subject): string {
  if (s.text.trim() === '') throw new Error('there is no text to check');
  return s.text;
}
