/**
 * The process's one JSON Schema validator and the one way its failures become
 * 400s. Request bodies (pipeline/validation.ts), management bodies
 * (admin/input.ts) and the config (config/schema.ts) are all compiled here,
 * once, at load.
 *
 * A failure is reported as a path in the checked value (`messages[0].role`,
 * `targets[1].retry.attempts`) and a message: the failing schema's own
 * `message` keyword when it has one (the config's schemas state each rule in
 * words), else a sentence made from the keyword and its limits ("must be
 * between 0 and 20").
 *
 * The builders at the end make TypeBox schemas that carry that `message`, so
 * a schema states its rule once and its TypeScript type follows from it
 * (`Static<typeof schema>`): the config (config/shape.ts) and the providers'
 * own config keys (providers/<name>/settings.ts) are written with them.
 */
import { Type, type SchemaOptions, type Static, type TArray, type TInteger, type TNever, type TNumber, type TObject, type TOptional, type TProperties, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type SchemaObject, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import RE2 from 're2';
import { invalid, type GatewayError } from './errors.js';
import { HEADER_VALUE } from './headers.js';
import { lazy } from './memo.js';

export const ajv = new Ajv({
  // Stop at the first failure: it is the one reported.
  allErrors: false,
  // Values are taken as written: no schema converts or fills in anything.
  coerceTypes: false,
  useDefaults: false,
  // Errors carry their schema, so messages can state the whole rule; it costs nothing until validation fails.
  verbose: true,
  allowUnionTypes: true,
  // The text after "<path>: " when the schema that carries it fails.
  keywords: ['message'],
});

/**
 * Schemas that callers write (a guardrail's `default.jsonSchema`), read as
 * draft 2020-12, the draft Portkey's check uses; apart from the gateway's own
 * schemas, so no caller's `$id` can shadow one of them. Every error is kept:
 * a check reports them all. Their `pattern`s run on RE2, in linear time.
 * Made when the first such schema arrives: most processes never see one.
 */
const callerAjv = lazy(
  () =>
    new Ajv2020({
      allErrors: true,
      strict: false,
      validateFormats: false,
      code: { regExp: ((pattern: string, flags: string) => new RE2(pattern, flags)) as unknown as RegExpEngine },
    }),
);

/**
 * A caller's schema compiled, or why it cannot be; not kept by Ajv (its
 * cache is keyed by schema and would grow with every config), so the
 * caller holds the validator as long as it needs it.
 */
export function compileCallerSchema(schema: object): { ok: true; validate: ValidateFunction } | { ok: false; message: string } {
  try {
    return { ok: true, validate: callerAjv().compile(schema) };
  } catch (e) {
    return { ok: false, message: `is not a valid JSON Schema: ${(e as Error).message}` };
  } finally {
    callerAjv().removeSchema(schema);
  }
}

export type SchemaPath = (string | number)[];

export interface SchemaProblem {
  /** Keys and indices from the checked value's root to the offending place. */
  path: SchemaPath;
  message: string;
}

/**
 * The failure to report from a validator's errors. With allErrors off the
 * last error is the one that failed validation; the ones before it are failed
 * anyOf branches, and an `if` error only repeats its `then`.
 */
export function schemaProblem(data: unknown, errors: readonly ErrorObject[] | null | undefined): SchemaProblem {
  let error: ErrorObject | undefined;
  for (let i = (errors?.length ?? 0) - 1; i >= 0 && error === undefined; i--) {
    if (errors![i]!.keyword !== 'if') error = errors![i];
  }
  if (error === undefined) return { path: [], message: 'is invalid' };
  const path = pointerToPath(data, error.instancePath);
  switch (error.keyword) {
    case 'required':
      return { path: [...path, (error.params as { missingProperty: string }).missingProperty], message: 'is required' };
    case 'additionalProperties':
      return { path: [...path, (error.params as { additionalProperty: string }).additionalProperty], message: 'is not a known field' };
    default: {
      const own = (error.parentSchema as { message?: unknown } | undefined)?.message;
      return { path, message: typeof own === 'string' ? own : describe(error) };
    }
  }
}

/** The 400 for a validator's failure on a request body (`messages[0].role: is required`); `at` is where the value sits in the body. */
export function schemaError(data: unknown, errors: readonly ErrorObject[] | null | undefined, at: SchemaPath = []): GatewayError {
  const { path, message } = schemaProblem(data, errors);
  const param = formatPath([...at, ...path]);
  return invalid(`${param || 'request body'}: ${message}`, param || null);
}

/** ['targets', 1, 'retry', 'attempts'] → "targets[1].retry.attempts". */
export function formatPath(path: SchemaPath): string {
  return path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc === '' ? key : `${acc}.${key}`), '');
}

/** `/targets/1/retry` → ['targets', 1, 'retry']; walks the data to tell indices from keys. */
function pointerToPath(data: unknown, pointer: string): SchemaPath {
  const path: SchemaPath = [];
  if (pointer === '') return path;
  let at = data;
  for (const segment of pointer.slice(1).split('/')) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    path.push(Array.isArray(at) ? Number(key) : key);
    at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
  }
  return path;
}

function describe(error: ErrorObject): string {
  const parent = (error.parentSchema ?? {}) as SchemaObject;
  switch (error.keyword) {
    case 'pattern':
      return typeof parent.description === 'string' ? `must be ${parent.description}` : `must match ${String(error.schema)}`;
    case 'maxLength':
      return `must be at most ${parent.maxLength} characters long`;
    case 'format':
      return `must be a valid ${String(error.schema)}`;
    case 'type':
      return `must be ${alternatives((Array.isArray(error.schema) ? error.schema : [error.schema]).map(typeName))}`;
    case 'minimum':
    case 'maximum':
      return bounds('must be', parent.minimum, parent.maximum, '');
    case 'minItems':
    case 'maxItems':
      return bounds('must contain', parent.minItems, parent.maxItems, ' item');
    case 'minLength':
      return parent.minLength === 1 ? 'must not be empty' : `must be at least ${parent.minLength} characters long`;
    case 'enum':
      return `must be one of ${(error.schema as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(error.schema)}`;
    case 'anyOf':
      return typeof parent.description === 'string' ? `must be ${parent.description}` : 'does not match any allowed form';
    default:
      return error.message ?? 'is invalid';
  }
}

function bounds(verb: string, min: unknown, max: unknown, unit: string): string {
  const plural = (limit: unknown): string => (unit === '' ? '' : limit === 1 ? unit : `${unit}s`);
  if (min !== undefined && max !== undefined) return `${verb} between ${min} and ${max}${plural(max)}`;
  if (min !== undefined) return `${verb} at least ${min}${plural(min)}`;
  return `${verb} at most ${max}${plural(max)}`;
}

function typeName(type: unknown): string {
  switch (type) {
    case 'null': return 'null';
    case 'integer': return 'an integer';
    case 'object': return 'an object';
    case 'array': return 'an array';
    default: return `a ${String(type)}`;
  }
}

function alternatives(items: string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

// ---------------------------------------------------------------------------
// Schemas that say what they require

/** The `message` of a schema that fails when the value is not `what`. */
export const must = (what: string): { message: string } => ({ message: `must be ${what}` });

/** `base` with one more constraint that has its own, more specific message. */
export function refine<T extends TSchema>(base: T, constraint: SchemaOptions, message: string): T {
  return { ...base, allOf: [{ ...constraint, message }] };
}

export const str = Type.String(must('a string'));
export const nonEmptyStr = refine(str, { minLength: 1 }, 'must be a non-empty string');
/** The rule of a string sent in an upstream call's header (an API key, an organisation id), as a schema constraint with its message. */
export const HEADER_SAFE = {
  pattern: HEADER_VALUE.source,
  message: 'must hold only characters an HTTP header value may: no CR, LF, NUL or other control characters, nothing beyond \\xff',
} as const;
/** A string that becomes an upstream header value: what undici would refuse is a 400 naming it, never a failed call. */
export const headerValue = refine(str, { pattern: HEADER_SAFE.pattern }, HEADER_SAFE.message);

export const bool = Type.Boolean(must('a boolean'));
export const number = Type.Number(must('a number'));

/** Any JSON value: what override_params, check parameters and the like may hold (registered once, referred to by id). */
export const JSON_VALUE = {
  $id: 'json',
  type: ['string', 'number', 'boolean', 'null', 'array', 'object'],
  items: { $ref: 'json' },
  additionalProperties: { $ref: 'json' },
  ...must('a JSON value'),
} as const;
ajv.addSchema(JSON_VALUE);

export const jsonObject = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: { $ref: 'json' }, ...must('a JSON object') });

export function enumOf<const T extends string>(values: readonly T[], what: string): TUnsafe<T> {
  return Type.Unsafe<T>({ enum: values, ...must(what) });
}

export function int(minimum: number, maximum?: number): TInteger {
  const what = maximum === undefined ? `an integer of at least ${minimum}` : `an integer between ${minimum} and ${maximum}`;
  // Larger integers are not exact in a JS number.
  return Type.Integer({ minimum, maximum: maximum ?? Number.MAX_SAFE_INTEGER, ...must(what) });
}

export const num = (minimum: number): TNumber => Type.Number({ minimum, ...must(`a number of at least ${minimum}`) });

/** A key that a sibling schema allows but this one must not carry: absent, in its type. */
export const notAllowed = (reason: string): TNever => Type.Never({ message: reason });

/** Every property optional, as the keys of a config object are unless the spec requires them. */
export type Optionals<P extends TProperties> = { [K in keyof P]: TOptional<P[K]> };

export function optional<P extends TProperties>(properties: P): Optionals<P> {
  return Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)])) as Optionals<P>;
}

/** An object schema: only the listed keys (the non-optional ones required); any other is an "unknown key". */
export function object<P extends TProperties>(properties: P, what = 'an object'): TObject<P> {
  return Type.Object(properties, { additionalProperties: notAllowed('unknown key'), ...must(what) });
}

export const arrayOf = <T extends TSchema>(items: T, what: string): TArray<T> => Type.Array(items, must(what));

/** The values an object schema of optional keys admits. */
export type OptionalValues<P extends TProperties> = Static<TObject<Optionals<P>>>;
