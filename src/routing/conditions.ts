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
 * validateQuery runs when the config is validated. evaluateQuery never
 * throws, even on a query that was not validated: an unknown field root or
 * operator, a bad operand or a regex that does not compile does not match.
 */
import { getPath, parsePath } from '../shared/dot-path.js';

export interface QueryContext {
  metadata: Record<string, string>;
  params: Record<string, unknown>;
  url: { pathname: string };
}

type Query = Record<string, unknown>;

export function evaluateQuery(query: object, ctx: QueryContext): boolean {
  const q = query as Query;
  for (const key in q) {
    const cond = q[key];
    if (key === '$and') {
      if (!matchAll(cond, ctx)) return false;
    } else if (key === '$or') {
      if (!matchAny(cond, ctx)) return false;
    } else if (!isFieldKey(key) || !matchField(getPath(ctx, key), cond)) {
      return false;
    }
  }
  return true;
}

function matchAll(subs: unknown, ctx: QueryContext): boolean {
  if (!Array.isArray(subs) || subs.length === 0) return false;
  for (const sub of subs) if (!isPlainObject(sub) || !evaluateQuery(sub, ctx)) return false;
  return true;
}

function matchAny(subs: unknown, ctx: QueryContext): boolean {
  if (!Array.isArray(subs)) return false;
  for (const sub of subs) if (isPlainObject(sub) && evaluateQuery(sub, ctx)) return true;
  return false;
}

function isFieldKey(key: string): boolean {
  return key.startsWith('params.') || key.startsWith('metadata.') || key === 'url.pathname';
}

function matchField(value: unknown, cond: unknown): boolean {
  if (!isPlainObject(cond)) return value === cond;
  for (const op in cond) {
    if (!applyOperator(op, cond[op], value)) return false;
  }
  return true;
}

function applyOperator(op: string, operand: unknown, value: unknown): boolean {
  switch (op) {
    case '$eq':
      return value === operand;
    case '$ne':
      return value !== operand;
    case '$in':
      return Array.isArray(operand) && operand.includes(value);
    case '$nin':
      return Array.isArray(operand) && !operand.includes(value);
    case '$regex': {
      const re = typeof operand === 'string' ? regexFor(operand) : null;
      return re !== null && typeof value === 'string' && re.test(value);
    }
    case '$gt':
      return compare(value, operand) > 0;
    case '$gte':
      return compare(value, operand) >= 0;
    case '$lt':
      return compare(value, operand) < 0;
    case '$lte':
      return compare(value, operand) <= 0;
    case '$exists':
      return (value !== undefined) === operand;
    default:
      return false;
  }
}

// Decimal numbers only: Number() would also take '', ' ', '0x1f' and 'Infinity'.
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Sign of value - operand, or NaN (every comparison false) when they are not
 * comparable. The operand's type picks the ordering: a number compares
 * numerically, and then a decimal string value counts as its number, because
 * metadata values are always strings (`metadata.tier: {$gte: 2}` must work);
 * a string compares lexicographically with string values only.
 */
function compare(value: unknown, operand: unknown): number {
  if (typeof operand === 'number') {
    const v = typeof value === 'number' ? value : typeof value === 'string' && DECIMAL.test(value) ? Number(value) : NaN;
    return v < operand ? -1 : v > operand ? 1 : v === operand ? 0 : NaN;
  }
  if (typeof operand === 'string' && typeof value === 'string') {
    return value < operand ? -1 : value > operand ? 1 : 0;
  }
  return NaN;
}

// Compiled once per pattern; null marks a pattern that does not compile.
// Bounded because configs can arrive inline with each request.
const MAX_CACHED = 1024;
const regexCache = new Map<string, RegExp | null>();

function regexFor(pattern: string): RegExp | null {
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

function isPlainObject(v: unknown): v is Query {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isLiteral(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
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
