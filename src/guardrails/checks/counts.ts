/**
 * default.wordCount, default.sentenceCount, default.characterCount: the
 * text's count within [min, max], both ends included; Portkey's defaults
 * when one is not given. Words are runs of non-space; sentences end in
 * `.`, `!` or `?`; characters are UTF-16 units, as Portkey counts them.
 */
import { int, optional } from '../../shared/json-schema.js';
import { judged, needText, type CheckDefinition, type Subject } from '../check.js';

interface Range {
  min: number;
  max: number;
  /** The explanations, made once: the count itself is in the data. */
  within: string;
  outside: string;
}

function counted(what: string, minKey: string, maxKey: string, max: number, count: (s: Subject) => number): CheckDefinition<Range> {
  return {
    hooks: ['before', 'after'],
    parameters: optional({ [minKey]: int(0), [maxKey]: int(0) }),
    prepare(p) {
      const min = (p[minKey] as number | undefined) ?? 0;
      const top = (p[maxKey] as number | undefined) ?? max;
      if (min > top) return { ok: false, problem: { path: [maxKey], message: `must be at least ${minKey} (${min})` } };
      return { ok: true, value: { min, max: top, within: `the number of ${what} is within ${min}-${top}`, outside: `the number of ${what} is outside ${min}-${top}` } };
    },
    run(s, r) {
      const n = count(s);
      return judged(n >= r.min && n <= r.max, r.within, r.outside, { count: n });
    },
  };
}

export const wordCount = counted('words', 'minWords', 'maxWords', 99_999, (s) => words(needText(s)));

/** Runs of characters outside JavaScript's `\s`: `trim().split(/\s+/).length` of a text with some, without the array. */
export function words(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i));
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

/** JavaScript's `\s`: WhiteSpace (Zs included) and LineTerminator. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

// An empty text is zero sentences, as in Portkey.
export const sentenceCount = counted('sentences', 'minSentences', 'maxSentences', 99_999, (s) => s.text.split(/[.!?]/).length - 1);

export const characterCount = counted('characters', 'minCharacters', 'maxCharacters', 9_999_999, (s) => needText(s).length);
