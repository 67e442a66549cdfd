/**
 * Checkers that carry their schema: a route's body or query is validated by
 * the very schema the OpenAPI document (GET /v1/openapi.json) shows, so the
 * two cannot drift apart. Both compile on the process's one Ajv, on first
 * use: compiling every admin route's schema at start held some megabytes in a
 * gateway that may only ever serve model requests.
 */
import type { SchemaObject } from 'ajv';
import { invalid, type Result } from './errors.js';
import { ajv, schemaError } from './json-schema.js';
import { lazy } from './memo.js';

/** Checks a value and says what it checks with: `schema`. */
export interface Checker<I, T> {
  (input: I): Result<T>;
  readonly schema: SchemaObject;
}

export type BodyChecker<T> = Checker<unknown, T>;
export type QueryChecker<T> = Checker<URLSearchParams, T>;

/**
 * A JSON body's checker: the schema's errors become a 400 naming the field
 * (`rotation_policy.key_transition_period_ms`); no body reads as `{}`.
 */
export function bodyChecker<T>(schema: SchemaObject): BodyChecker<T> {
  const compiled = lazy(() => ajv.compile(schema));
  const check = (body: unknown): Result<T> => {
    if (body === undefined) body = {};
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, error: invalid('request body must be a JSON object') };
    const validate = compiled();
    return validate(body) ? { ok: true, value: body as T } : { ok: false, error: schemaError(body, validate.errors ?? []) };
  };
  return Object.assign(check, { schema });
}

/**
 * A query string's checker, against an object schema whose properties are
 * the parameters. A parameter arrives as text: where the schema says
 * `integer` a run of digits becomes a number first (anything else stays text
 * and fails as "must be an integer"); a parameter the schema names given twice
 * is a 400, not a silent pick. Parameters it does not name pass unchecked
 * (the first of each) unless it says additionalProperties: false.
 */
export function queryChecker<T>(schema: SchemaObject): QueryChecker<T> {
  const compiled = lazy(() => ajv.compile(schema));
  const properties = (schema.properties ?? {}) as Record<string, SchemaObject>;
  const integers = new Set(Object.keys(properties).filter((name) => properties[name]!.type === 'integer'));
  const check = (params: URLSearchParams): Result<T> => {
    const values: Record<string, string | number> = {};
    for (const [name, value] of params) {
      if (Object.hasOwn(values, name)) {
        if (Object.hasOwn(properties, name)) return { ok: false, error: invalid(`query parameter '${name}' is given more than once`, name) };
        continue;
      }
      values[name] = integers.has(name) && /^-?\d{1,15}$/.test(value) ? Number(value) : value;
    }
    const validate = compiled();
    return validate(values) ? { ok: true, value: values as T } : { ok: false, error: schemaError(values, validate.errors ?? []) };
  };
  return Object.assign(check, { schema });
}
