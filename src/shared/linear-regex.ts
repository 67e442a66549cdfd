/**
 * Regular expressions written by callers (a config's `$regex`; any pattern a
 * guardrail or policy matches must come through here too). JavaScript's
 * RegExp backtracks: `^(a+)+$` against 40 characters runs for hours on the
 * event loop. RE2 never backtracks, so its time is linear in the input.
 *
 * Linear is not yet cheap: when RE2's DFA runs out of memory it falls back to
 * an NFA whose cost per input character is the size of the compiled pattern,
 * and counted repetitions multiply that size (`(?:[a-z]?){1000}` is a
 * thousand states, ~150 ms over 8 KiB here). So both factors are bounded:
 * a pattern's weight (its atoms, each counted repetition multiplying what it
 * repeats) is charged to a budget per config, and a value longer than
 * MAX_MATCH_CHARS is never matched. Together they keep the worst request's
 * matching to tens of milliseconds.
 *
 * Syntax: JavaScript's (as RegExp without flags reads it), less what RE2
 * cannot run in linear time: backreferences and lookaround.
 */
import { createRequire } from 'node:module';
import type { AST, RegExpParser } from '@eslint-community/regexpp';
import RE2 from 're2';
import { boundedMemo, lazy } from './memo.js';

/** Values longer than this (UTF-16 units) do not match: a cut value would match `$` at the cut. */
export const MAX_MATCH_CHARS = 4096;
/** Total weight of the patterns one config may hold. */
export const MAX_PATTERN_WEIGHT = 500;

export type LinearRegex = { ok: true; re: RE2; weight: number } | { ok: false; message: string };

/**
 * The pattern parser, made with the first pattern: most gateways never see
 * one, and its module is ~0.5 MiB of heap at idle. compile() is synchronous,
 * so the package's CommonJS build is required rather than imported.
 */
const parser = lazy((): RegExpParser => {
  const { RegExpParser: Parser } = createRequire(import.meta.url)('@eslint-community/regexpp') as { RegExpParser: typeof RegExpParser };
  return new Parser();
});

/** The pattern compiled, once per pattern, failures included; the weight budget bounds each entry's size. */
export const linearRegex: (pattern: string) => LinearRegex = boundedMemo(1024, compile);

/** Whether `value` matches: false for a pattern that does not compile, and for a value over MAX_MATCH_CHARS. */
export function matchesLinear(pattern: string, value: string): boolean {
  if (value.length > MAX_MATCH_CHARS) return false;
  const compiled = linearRegex(pattern);
  return compiled.ok && compiled.re.test(value);
}

/** What is left of a config's pattern weight: one request may evaluate every pattern of its config. */
export interface RegexBudget {
  left: number;
}

/** `pattern` compiled and its weight taken from `budget`; the message says why it cannot be used. */
export function chargedRegex(pattern: string, budget: RegexBudget): LinearRegex {
  const re = linearRegex(pattern);
  if (!re.ok) return re;
  budget.left -= re.weight;
  return budget.left >= 0
    ? re
    : {
        ok: false,
        message: `the config's patterns weigh more than ${MAX_PATTERN_WEIGHT} (a character 1, a set of characters 10, a Unicode property 100, a counted repetition multiplies what it repeats)`,
      };
}

function compile(pattern: string): LinearRegex {
  let ast: AST.Pattern;
  try {
    // Read as RE2 reads it (`\p{L}{5}` is five letters), or else as RegExp without flags does (`\-` is a dash).
    ast = parseUnicode(pattern) ?? parser().parsePattern(pattern);
  } catch (e) {
    return { ok: false, message: `invalid regular expression: ${(e as Error).message}` };
  }
  try {
    // No flags: no `g`/`y`, so the shared instance keeps no lastIndex state.
    return { ok: true, re: new RE2(pattern), weight: weightOf(ast) };
  } catch (e) {
    return { ok: false, message: `not supported by the linear-time engine (no backreferences or lookaround): ${(e as Error).message}` };
  }
}

function parseUnicode(pattern: string): AST.Pattern | null {
  try {
    return parser().parsePattern(pattern, 0, pattern.length, { unicode: true });
  } catch {
    return null;
  }
}

/**
 * The size of the pattern as RE2 compiles it, roughly: a counted repetition
 * copies what it repeats; a set of characters (`.`, `\w`, a class) is ten,
 * because RE2 matches UTF-8 bytes and `[^a]` becomes a dozen byte ranges; a
 * Unicode property (`\p{L}`, which RE2 reads as one whatever the flags) is a
 * hundred.
 */
function weightOf(node: AST.Node): number {
  switch (node.type) {
    case 'Pattern':
    case 'Group':
    case 'CapturingGroup':
    case 'Assertion':
      return 'alternatives' in node ? sum(node.alternatives) : 1;
    case 'Alternative':
      return Math.max(1, sum(node.elements));
    case 'Quantifier':
      return weightOf(node.element) * (Number.isFinite(node.max) ? node.max : node.min + 1);
    case 'CharacterClass':
      return Math.max(SET, sum(node.elements));
    case 'CharacterSet':
      return node.kind === 'property' ? PROPERTY : SET;
    case 'Character':
      return node.raw.startsWith('\\p') || node.raw.startsWith('\\P') ? PROPERTY : 1;
    default:
      return 1;
  }
}

const SET = 10;
const PROPERTY = 100;

function sum(nodes: readonly AST.Node[]): number {
  let total = 0;
  for (const n of nodes) total += weightOf(n);
  return total;
}
