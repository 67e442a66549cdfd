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

export const contains: CheckDefinition<{ words: string[]; operator?: Operator }> = {
  hooks: ['before', 'after'],
  parameters: { words: strings, ...optional({ operator }) },
  prepare: asIs,
  run(s, p) {
    const op = p.operator ?? 'any';
    const found = p.words.filter((w) => s.text.includes(w));
    const missing = p.words.filter((w) => !s.text.includes(w));
    return judged(holdsFor(op, found.length, missing.length), `'${op}' of the words holds`, `'${op}' of the words does not hold`, {
      operator: op,
      foundWords: found,
      missingWords: missing,
    });
  },
};

export const endsWith: CheckDefinition<{ suffix: string }> = {
  hooks: ['before', 'after'],
  parameters: { suffix: nonEmptyStr },
  prepare: asIs,
  run(s, p) {
    const text = needText(s).trimEnd();
    const ends = text.endsWith(p.suffix) || text.endsWith(`${p.suffix}.`);
    return judged(ends, `the text ends with "${p.suffix}"`, `the text does not end with "${p.suffix}"`);
  },
};

function letterCase(upper: boolean): CheckDefinition<Record<string, never>> {
  // A lowercase letter (\p{Ll}) breaks all-uppercase; an uppercase or titlecase one breaks all-lowercase.
  const other = upper ? /\p{Ll}/u : /[\p{Lu}\p{Lt}]/u;
  const name = upper ? 'uppercase' : 'lowercase';
  return {
    hooks: ['before', 'after'],
    parameters: {},
    prepare: asIs,
    run: (s) => judged(!other.test(needText(s)), `every letter of the text is ${name}`, `the text has letters that are not ${name}`),
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
