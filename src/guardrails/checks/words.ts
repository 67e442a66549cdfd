/**
 * Checks on the words and letters of the text: default.contains (any, all
 * or none of `words`, case-sensitive substrings, as Portkey's), default.endsWith
 * (the suffix, or the suffix and a period, trailing spaces aside),
 * default.alluppercase and default.alllowercase (no letter of the other
 * case, in any script), default.notNull (some part has more than spaces).
 */
import { Type } from '@sinclair/typebox';
import { enumOf, nonEmptyStr, optional } from '../../shared/json-schema.js';
import { asIs, judged, needText, type CheckDefinition } from '../check.js';

export type Operator = 'any' | 'all' | 'none';

export const operator = enumOf<Operator>(['any', 'all', 'none'], 'one of any, all, none');

/** A list of strings for a check: at least one, each non-empty. */
export const strings = Type.Array(nonEmptyStr, { minItems: 1, message: 'must be a non-empty array of strings' });

/** Whether found and missing items satisfy the operator. */
export function holdsFor(op: Operator, found: number, missing: number): boolean {
  return op === 'any' ? found > 0 : op === 'all' ? missing === 0 : found === 0;
}

export const contains: CheckDefinition<{ words: string[]; operator: Operator; holds: string; fails: string }> = {
  hooks: ['before', 'after'],
  parameters: { words: strings, ...optional({ operator }) },
  prepare(p) {
    const op = (p.operator as Operator | undefined) ?? 'any';
    return { ok: true, value: { words: p.words as string[], operator: op, holds: `'${op}' of the words holds`, fails: `'${op}' of the words does not hold` } };
  },
  run(s, p) {
    const found: string[] = [];
    const missing: string[] = [];
    for (const w of p.words) (s.text.includes(w) ? found : missing).push(w);
    return judged(holdsFor(p.operator, found.length, missing.length), p.holds, p.fails, { operator: p.operator, foundWords: found, missingWords: missing });
  },
};

export const endsWith: CheckDefinition<{ suffix: string; dotted: string; ends: string; doesNot: string }> = {
  hooks: ['before', 'after'],
  parameters: { suffix: nonEmptyStr },
  prepare(p) {
    const suffix = p.suffix as string;
    return { ok: true, value: { suffix, dotted: `${suffix}.`, ends: `the text ends with "${suffix}"`, doesNot: `the text does not end with "${suffix}"` } };
  },
  run(s, p) {
    const text = needText(s).trimEnd();
    return judged(text.endsWith(p.suffix) || text.endsWith(p.dotted), p.ends, p.doesNot);
  },
};

function letterCase(upper: boolean): CheckDefinition<Record<string, never>> {
  // A lowercase letter (\p{Ll}) breaks all-uppercase; an uppercase or titlecase one breaks all-lowercase.
  const other = upper ? /\p{Ll}/u : /[\p{Lu}\p{Lt}]/u;
  const name = upper ? 'uppercase' : 'lowercase';
  const holds = `every letter of the text is ${name}`;
  const fails = `the text has letters that are not ${name}`;
  return {
    hooks: ['before', 'after'],
    parameters: {},
    prepare: asIs,
    run: (s) => judged(!other.test(needText(s)), holds, fails),
  };
}

export const alluppercase = letterCase(true);
export const alllowercase = letterCase(false);

export const notNull: CheckDefinition<Record<string, never>> = {
  hooks: ['before', 'after'],
  parameters: {},
  prepare: asIs,
  run: (s) => judged(s.texts.some((t) => t.trim() !== ''), 'the text is not empty', 'the text is null or empty'),
};
