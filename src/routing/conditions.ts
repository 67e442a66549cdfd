/**
 * Evaluates the query language of `strategy.mode: conditional` (config/query.ts
 * describes it and validates queries when the config is validated) against a
 * request. evaluateQuery never throws, even on a query that was not
 * validated: an unknown field root or operator, a bad operand or a regex that
 * does not compile does not match.
 */
import { getPath } from '../shared/dot-path.js';
import { matchesLinear } from '../shared/linear-regex.js';

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
    case '$regex':
      return typeof operand === 'string' && typeof value === 'string' && matchesLinear(operand, value);
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

function isPlainObject(v: unknown): v is Query {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
