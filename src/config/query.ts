/**
 * The query language of `strategy.mode: conditional`, after Portkey's
 * conditional router, extended with nested params paths and $exists.
 *
 *   { "metadata.tier": "pro",                          literal: implicit $eq
 *     "params.messages[0].role": { "$in": ["system", "developer"] },
 *     "$or": [ { "url.pathname": { "$regex": "/embeddings$" } }, { "params.n": { "$gt": 1 } } ] }
 *
 * Keys of one object are ANDed. Field keys are `metadata.<key>` (one
 * segment: metadata is a flat map), `params.<dot path>` into the request body
 * and `url.pathname`; they are dot paths into the context object itself.
 * Operators: $eq $ne $in $nin $regex $gt $gte $lt $lte $exists; logical
 * $and / $or take non-empty arrays of queries.
 *
 * validateQuery runs when the config is validated, so a bad operator or
 * regex is a 400, never a request-time surprise; routing/conditions.ts
 * evaluates queries.
 */
import { parsePath } from '../shared/dot-path.js';

type Query = Record<string, unknown>;

// Compiled once per pattern; null marks a pattern that does not compile.
// Bounded because configs can arrive inline with each request.
const MAX_CACHED = 1024;
const regexCache = new Map<string, RegExp | null>();

/** The compiled pattern, shared with the evaluator; null when it does not compile. */
export function regexFor(pattern: string): RegExp | null {
  let re = regexCache.get(pattern);
  if (re === undefined) {
    try {
      // No flags: no `g`/`y`, so the shared instance keeps no lastIndex state.
      re = new RegExp(pattern);
    } catch {
      re = null;
    }
    if (regexCache.size >= MAX_CACHED) regexCache.delete(regexCache.keys().next().value!);
    regexCache.set(pattern, re);
  }
  return re;
}

/**
 * For config validation: null when `query` is valid, else one message naming
 * the offending place, e.g. `$or[1].params.model.$regex: invalid regular expression`.
 */
export function validateQuery(query: unknown): string | null {
  return isPlainObject(query) ? checkQuery(query, '') : 'query: must be an object';
}

function checkQuery(q: Query, prefix: string): string | null {
  for (const key in q) {
    const at = prefix + key;
    const cond = q[key];
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(cond) || cond.length === 0) return `${at}: must be a non-empty array of queries`;
      for (let i = 0; i < cond.length; i++) {
        const sub: unknown = cond[i];
        const err = isPlainObject(sub) ? checkQuery(sub, `${at}[${i}].`) : `${at}[${i}]: must be an object`;
        if (err !== null) return err;
      }
    } else if (key.startsWith('$')) {
      return `${at}: unknown operator ${key}`;
    } else {
      const err = checkFieldKey(key) ?? checkCondition(cond);
      if (err !== null) return `${at}${err}`;
    }
  }
  return null;
}

/** An error message (": …" after the key) or null. */
function checkFieldKey(key: string): string | null {
  if (key.startsWith('metadata.')) {
    return parsePath(key)?.length === 2 ? null : ': metadata.<key> takes a single key';
  }
  if (key.startsWith('params.')) {
    return parsePath(key) !== null ? null : ': invalid path (expected keys joined by "." with optional [index] suffixes)';
  }
  if (key === 'url.pathname') return null;
  return ': unknown field (expected metadata.<key>, params.<path> or url.pathname)';
}

/** An error message (": …" or ".$op: …" after the key) or null. */
function checkCondition(cond: unknown): string | null {
  if (isLiteral(cond)) return null;
  if (!isPlainObject(cond)) return ': must be a string, number, boolean, null or an object of operators';
  let empty = true;
  for (const op in cond) {
    empty = false;
    const err = checkOperand(op, cond[op]);
    if (err !== null) return `.${op}: ${err}`;
  }
  return empty ? ': must name at least one operator' : null;
}

function checkOperand(op: string, operand: unknown): string | null {
  switch (op) {
    case '$eq':
    case '$ne':
      return isLiteral(operand) ? null : 'must be a string, number, boolean or null';
    case '$in':
    case '$nin':
      return Array.isArray(operand) && operand.every(isLiteral)
        ? null
        : 'must be an array of strings, numbers, booleans or nulls';
    case '$regex':
      if (typeof operand !== 'string') return 'must be a string';
      return regexFor(operand) === null ? 'invalid regular expression' : null;
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return typeof operand === 'number' || typeof operand === 'string' ? null : 'must be a number or a string';
    case '$exists':
      return typeof operand === 'boolean' ? null : 'must be true or false';
    default:
      return `unknown operator ${op}`;
  }
}

function isPlainObject(v: unknown): v is Query {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isLiteral(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}
