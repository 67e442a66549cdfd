/**
 * The one rule for what becomes of an OpenAI parameter at a provider. Each
 * translator declares its policy as a table (parameter → rule), which
 * docs/providers.md shows per provider:
 *
 * - mapped: the translator writes it as the provider's counterpart (`to`
 *   says which);
 * - passed: sent on as written, where the provider takes its own parameters
 *   (top-level, or Bedrock's additionalModelRequestFields);
 * - dropped: the provider has no counterpart and nothing the client can rely
 *   on changes without it (`why`);
 * - refused: a 400 naming the parameter (`why`): the provider cannot do what
 *   it asks.
 *
 * `unless` names the value at which a passed or refused parameter asks for
 * nothing (n = 1, logprobs false): it is then left out, not sent nor refused.
 * A parameter the table does not name is passed on (a provider's own, such as
 * Anthropic's top_k) or refused, as the policy's `others` says. null is
 * OpenAI's "not set": never sent, never refused.
 */
import { err, invalid, ok, type Result } from '../../shared/errors.js';

/** A value at which a parameter asks for nothing, and how the docs write it. */
export interface Neutral {
  readonly says: string;
  readonly is: (value: unknown) => boolean;
}

export type ParamRule =
  | { readonly how: 'mapped'; readonly to: string }
  | { readonly how: 'passed'; readonly unless?: Neutral }
  | { readonly how: 'dropped'; readonly why: string }
  | { readonly how: 'refused'; readonly why: string; readonly unless?: Neutral };

export interface ParamPolicy {
  readonly rules: Readonly<Record<string, ParamRule>>;
  /** What becomes of a parameter the table does not name. */
  readonly others: 'passed' | 'refused';
}

export const mapped = (to: string): ParamRule => ({ how: 'mapped', to });
export const dropped = (why: string): ParamRule => ({ how: 'dropped', why });
export const refused = (why: string, unless?: Neutral): ParamRule => (unless === undefined ? { how: 'refused', why } : { how: 'refused', why, unless });
export const passed = (unless?: Neutral): ParamRule => (unless === undefined ? { how: 'passed' } : { how: 'passed', unless });

export const ONE: Neutral = { says: '1', is: (v) => v === 1 };
export const ZERO: Neutral = { says: '0', is: (v) => v === 0 };
export const FALSE: Neutral = { says: 'false', is: (v) => v === false };
export const EMPTY: Neutral = { says: '{}', is: (v) => typeof v === 'object' && v !== null && Object.keys(v).length === 0 };
export const TEXT_ONLY: Neutral = { says: '["text"]', is: (v) => Array.isArray(v) && v.every((m) => m === 'text') };

/**
 * Applies `policy` to the body's top-level parameters: the first refused one
 * is a 400 naming it; else the parameters to pass on as written.
 */
export function applyPolicy(body: Record<string, unknown>, policy: ParamPolicy, provider: string): Result<Record<string, unknown>> {
  const pass: Record<string, unknown> = {};
  for (const key in body) {
    const value = body[key];
    if (value === undefined || value === null) continue;
    const rule = policy.rules[key];
    if (rule === undefined) {
      if (policy.others === 'refused') return err(unsupported(key, provider));
      pass[key] = value;
      continue;
    }
    switch (rule.how) {
      case 'passed':
        if (rule.unless?.is(value) !== true) pass[key] = value;
        break;
      case 'refused':
        if (rule.unless?.is(value) !== true) return err(unsupported(key, provider, rule.why));
        break;
      case 'mapped':
      case 'dropped':
        break;
    }
  }
  return ok(pass);
}

function unsupported(key: string, provider: string, why?: string) {
  return invalid(`${key}: not supported by provider '${provider}'${why === undefined ? '' : ` (${why})`}`, key, 'unsupported_parameter');
}
