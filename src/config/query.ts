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
 * evaluates queries. `$regex` takes JavaScript's syntax without
 * backreferences or lookaround, and runs in linear time (shared/linear-regex.ts).
 */
import { parsePath } from '../shared/dot-path.js';
import { chargedRegex, MAX_PATTERN_WEIGHT, type RegexBudget } from '../shared/linear-regex.js';

type Query = Record<string, unknown>;

export type { RegexBudget };

/**
 * For config validation: null when `query` is valid, else one message naming
 * the offending place, e.g. `$or[1].params.model.$regex: invalid regular expression: …`.
 * Its patterns' weight is taken from `budget`, which the queries of one config share.
 */
export function validateQuery(query: unknown, budget: RegexBudget = { left: MAX_PATTERN_WEIGHT }): string | null {
  return isPlainObject(query) ? checkQuery(query, '', budget) : 'query: must be an object';
}

function checkQuery(q: Query, prefix: string, budget: RegexBudget): string | null {
  for (const key in q) {
    const at = prefix + key;
    const cond = q[key];
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(cond) || cond.length === 0) return `${at}: must be a non-empty array of queries`;
      for (let i = 0; i < cond.length; i++) {
        const sub: unknown = cond[i];
        const err = isPlainObject(sub) ? checkQuery(sub, `${at}[${i}].`, budget) : `${at}[${i}]: must be an object`;
        if (err !== null) return err;
      }
    } else if (key.startsWith('$')) {
      return `${at}: unknown operator ${key}`;
    } else {
      const err = checkFieldKey(key) ?? checkCondition(cond, budget);
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
function checkCondition(cond: unknown, budget: RegexBudget): string | null {
  if (isLiteral(cond)) return null;
  if (!isPlainObject(cond)) return ': must be a string, number, boolean, null or an object of operators';
  let empty = true;
  for (const op in cond) {
    empty = false;
    const err = checkOperand(op, cond[op], budget);
    if (err !== null) return `.${op}: ${err}`;
  }
  return empty ? ': must name at least one operator' : null;
}

function checkOperand(op: string, operand: unknown, budget: RegexBudget): string | null {
  switch (op) {
    case '$eq':
    case '$ne':
      return isLiteral(operand) ? null : 'must be a string, number, boolean or null';
    case '$in':
    case '$nin':
      return Array.isArray(operand) && operand.every(isLiteral)
        ? null
        : 'must be an array of strings, numbers, booleans or nulls';
    case '$regex': {
      if (typeof operand !== 'string') return 'must be a string';
      const re = chargedRegex(operand, budget);
      return re.ok ? null : re.message;
    }
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
