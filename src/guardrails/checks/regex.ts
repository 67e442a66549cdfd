/**
 * default.regexMatch (passes when the pattern matches the text) and
 * default.regexReplace (a transform: each match replaced by `redactText`;
 * fails only with `failOnDetection` and a match). Patterns run on RE2
 * (shared/linear-regex.ts) and weigh on the config's pattern budget.
 */
import RE2 from 're2';
import { bool, nonEmptyStr, optional, str } from '../../shared/json-schema.js';
import { chargedRegex } from '../../shared/linear-regex.js';
import { judged, needText, type CheckDefinition, type Subject } from '../check.js';

/**
 * Longer texts are not matched (the check errors): RE2 is linear, but its
 * slowest path costs the pattern's size per character, and a config's
 * patterns may weigh 500.
 */
export const MAX_MATCHED_CHARS = 100_000;

function matchable(s: Subject): string {
  const text = needText(s);
  if (text.length > MAX_MATCHED_CHARS) throw new Error(`the text is longer than ${MAX_MATCHED_CHARS} characters, more than patterns are matched against`);
  return text;
}

export const regexMatch: CheckDefinition<{ re: RE2; matched: string; unmatched: string }> = {
  hooks: ['before', 'after'],
  parameters: { rule: nonEmptyStr },
  prepare(p, budget) {
    const rule = p.rule as string;
    const re = chargedRegex(rule, budget);
    // The explanations are made once here, not per request.
    return re.ok
      ? { ok: true, value: { re: re.re, matched: `the pattern ${rule} matched the text`, unmatched: `the pattern ${rule} did not match the text` } }
      : { ok: false, problem: { path: ['rule'], message: re.message } };
  },
  run(s, p) {
    // search: the index without a match array.
    const at = p.re.search(matchable(s));
    return judged(at >= 0, p.matched, p.unmatched, { matchIndex: at >= 0 ? at : null });
  },
};

/** Portkey's `/pattern/flags` form; flags RE2 runs that keep no state between texts. */
const SLASHED = /^\/(.+)\/([gimsu]*)$/s;

interface Replace {
  re: RE2;
  rule: string;
  redactText: string;
  failOnDetection: boolean;
}

export const regexReplace: CheckDefinition<Replace> = {
  hooks: ['before', 'after'],
  parameters: { rule: nonEmptyStr, ...optional({ redactText: str, failOnDetection: bool }) },
  prepare(p, budget) {
    const rule = p.rule as string;
    const slashed = SLASHED.exec(rule);
    const pattern = slashed?.[1] ?? rule;
    const charged = chargedRegex(pattern, budget);
    if (!charged.ok) return { ok: false, problem: { path: ['rule'], message: charged.message } };
    const flags = slashed?.[2] ?? '';
    return {
      ok: true,
      value: {
        // A new instance for the flags; the pattern was checked and weighed above.
        re: flags === '' ? charged.re : new RE2(pattern, flags),
        rule,
        redactText: (p.redactText as string | undefined) ?? '[REDACTED]',
        failOnDetection: p.failOnDetection === true,
      },
    };
  },
  run(s, p) {
    matchable(s);
    let matched = 0;
    const texts = s.texts.map((t) => {
      p.re.lastIndex = 0;
      if (!p.re.test(t)) return t;
      matched++;
      p.re.lastIndex = 0;
      return t.replace(p.re, p.redactText);
    });
    const verdict = !(p.failOnDetection && matched > 0);
    const explanation = matched > 0 ? `the pattern ${p.rule} matched in ${matched} part(s) and was replaced` : `the pattern ${p.rule} did not match`;
    return { verdict, explanation, data: { replacedParts: matched }, ...(matched > 0 ? { texts } : {}) };
  },
};
