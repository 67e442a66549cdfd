/**
 * JSON Schema (as OpenAI clients write it for tools and json_schema response
 * formats) → Gemini's Schema, the OpenAPI 3.0 subset documented at
 * https://ai.google.dev/api/caching#Schema and
 * https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Schema.
 *
 * Converted:
 * - `type` → upper case; a type list with "null" → that type + `nullable`;
 *   several non-null types → `anyOf` of one schema per type;
 * - `anyOf` / `oneOf` → `anyOf` (a `{type:"null"}` member becomes `nullable`;
 *   Gemini has no exclusive "one of", so oneOf loses its exclusivity);
 * - `allOf` → its members merged into one schema (properties and required united);
 * - `$ref` to `#/$defs/…` or `#/definitions/…` → inlined (Gemini has no
 *   references); a recursive reference cannot be inlined and is refused (400);
 * - `const` (string) → a one-value `enum`; `examples[0]` → `example`;
 * - `properties` → also `propertyOrdering` in the order written, because
 *   Gemini otherwise orders the generated keys alphabetically;
 * - no `type` but `properties` / `items` / `enum` → OBJECT / ARRAY / STRING.
 * Kept as they are: title, description, nullable, enum (strings), items,
 * required, min/maxItems, min/maxLength, min/maxProperties, pattern,
 * minimum, maximum, default, example; `format` only where Gemini accepts it
 * (string: date-time, enum; number: float, double; integer: int32, int64 —
 * the Gemini API refuses the request for any other string format).
 * Dropped, because Gemini's Schema has no such field: additionalProperties,
 * patternProperties, unevaluated*, dependent*, not, if/then/else,
 * exclusiveMinimum/Maximum, multipleOf, uniqueItems, contains, prefixItems,
 * readOnly/writeOnly, deprecated, $schema/$id/$comment and other annotations,
 * and `enum` / `const` values that are not strings (Gemini enums are strings).
 */
import { err, invalid, ok, type Result } from '../../shared/errors.js';
import type { GeminiSchema } from './wire.js';

type Json = Record<string, unknown>;

const TYPES: Readonly<Record<string, GeminiSchema['type']>> = {
  string: 'STRING',
  number: 'NUMBER',
  integer: 'INTEGER',
  boolean: 'BOOLEAN',
  array: 'ARRAY',
  object: 'OBJECT',
};

const FORMATS: Readonly<Record<string, readonly string[]>> = {
  STRING: ['date-time', 'enum'],
  NUMBER: ['float', 'double'],
  INTEGER: ['int32', 'int64'],
};

/** Gemini's int64 fields, written as JSON strings as its reference shows them. */
const COUNTS = ['minItems', 'maxItems', 'minLength', 'maxLength', 'minProperties', 'maxProperties'] as const;

/**
 * Schemas converted or flattened for one client schema. Inlining $refs copies
 * a definition at each use, and a type list becomes one schema per type, so
 * a few hundred bytes of definitions that each use the next twice expand to
 * 2^depth schemas; past this many the schema is refused, before it costs
 * the gateway's memory and thread.
 */
export const MAX_SCHEMA_NODES = 10_000;

/** `param` names the schema's place in the client's request, for 400 messages. */
export function toGeminiSchema(schema: unknown, param: string): Result<GeminiSchema> {
  if (!isObject(schema)) return err(invalid(`${param}: a JSON Schema must be an object`, param));
  const defs = { ...asObject(schema.definitions), ...asObject(schema.$defs) };
  const out = convert(schema, { defs, refs: [], left: MAX_SCHEMA_NODES });
  // What cannot be expressed is said of the whole schema, where the client wrote it.
  return typeof out === 'string' ? err(invalid(`${param}: ${out}`, param)) : ok(out);
}

interface Ctx {
  defs: Json;
  /** $refs being inlined on the current path: a repeat means recursion. */
  refs: string[];
  /** Of MAX_SCHEMA_NODES, the schemas still to be converted or flattened. */
  left: number;
}

const TOO_LARGE = `the schema expands to more than ${MAX_SCHEMA_NODES} schemas once its $refs are inlined and its type lists split (Gemini's schema has no references)`;

/** The converted schema, or why it cannot be expressed in Gemini's. */
type Converted<T> = T | string;

function convert(node: Json, ctx: Ctx): Converted<GeminiSchema> {
  // The $refs this node resolves stay on the path while its children are converted.
  const depth = ctx.refs.length;
  const flat = flatten(node, ctx);
  const out = typeof flat === 'string' ? flat : convertFlat(flat, ctx);
  ctx.refs.length = depth;
  return out;
}

function convertFlat(flat: Json, ctx: Ctx): Converted<GeminiSchema> {
  const out: GeminiSchema = {};
  let nullable = flat.nullable === true;

  let types = typeList(flat.type);
  if (types.includes('null')) {
    nullable = true;
    types = types.filter((t) => t !== 'null');
  }
  if (types.length > 1) {
    // One schema per type, each with the keywords that apply to it.
    const rest = { ...flat };
    delete rest.type;
    const members = convertAll(types.map((t) => ({ ...rest, type: t })), ctx);
    if (typeof members === 'string') return members;
    out.anyOf = members;
    if (typeof flat.description === 'string') out.description = flat.description;
    if (nullable) out.nullable = true;
    return out;
  }

  const alternatives = (Array.isArray(flat.anyOf) ? flat.anyOf : Array.isArray(flat.oneOf) ? flat.oneOf : []) as unknown[];
  if (alternatives.length > 0) {
    const members = alternatives.filter(isObject);
    const nonNull: Json[] = [];
    for (const m of members) {
      const isNull = isNullSchema(m, ctx);
      if (typeof isNull === 'string') return isNull;
      if (!isNull) nonNull.push(m);
    }
    if (nonNull.length < members.length) nullable = true;
    if (nonNull.length === 1) {
      // `X or null`: X itself, nullable; the outer keywords (description…) win.
      const { anyOf: _a, oneOf: _o, ...outer } = flat;
      const merged = convert({ ...nonNull[0]!, ...outer }, ctx);
      if (typeof merged !== 'string' && nullable) merged.nullable = true;
      return merged;
    }
    const converted = convertAll(nonNull, ctx);
    if (typeof converted === 'string') return converted;
    out.anyOf = converted;
  }

  const type = types.length === 1 ? TYPES[types[0]!] : inferType(flat);
  if (type !== undefined) out.type = type;
  if (typeof flat.format === 'string' && type !== undefined && FORMATS[type]?.includes(flat.format)) out.format = flat.format;
  if (typeof flat.title === 'string') out.title = flat.title;
  if (typeof flat.description === 'string') out.description = flat.description;
  if (nullable) out.nullable = true;

  const values = Array.isArray(flat.enum) ? (flat.enum as unknown[]) : typeof flat.const === 'string' ? [flat.const] : [];
  if (values.includes(null)) out.nullable = true;
  const strings = values.filter((v): v is string => typeof v === 'string');
  if (strings.length > 0 && strings.length === values.filter((v) => v !== null).length) out.enum = strings;

  if (isObject(flat.properties)) {
    const props: Record<string, GeminiSchema> = {};
    for (const [name, sub] of Object.entries(flat.properties)) {
      const converted = convert(isObject(sub) ? sub : {}, ctx);
      if (typeof converted === 'string') return converted;
      props[name] = converted;
    }
    out.properties = props;
    if (Object.keys(props).length > 1) out.propertyOrdering = Object.keys(props);
  }
  if (Array.isArray(flat.required)) {
    const names = (flat.required as unknown[]).filter((r): r is string => typeof r === 'string');
    out.required = out.properties === undefined ? names : names.filter((n) => n in out.properties!);
  }
  if (Array.isArray(flat.items)) return "tuple `items` (an array of schemas) cannot be expressed in Gemini's schema";
  if (isObject(flat.items)) {
    const items = convert(flat.items, ctx);
    if (typeof items === 'string') return items;
    out.items = items;
  }

  for (const key of COUNTS) {
    const v = flat[key];
    if (typeof v === 'number' && Number.isInteger(v)) out[key] = String(v);
  }
  if (typeof flat.pattern === 'string') out.pattern = flat.pattern;
  if (typeof flat.minimum === 'number') out.minimum = flat.minimum;
  if (typeof flat.maximum === 'number') out.maximum = flat.maximum;
  if (flat.default !== undefined) out.default = flat.default;
  if (flat.example !== undefined) out.example = flat.example;
  else if (Array.isArray(flat.examples) && flat.examples.length > 0) out.example = flat.examples[0];
  return out;
}

function convertAll(nodes: Json[], ctx: Ctx): Converted<GeminiSchema[]> {
  const out: GeminiSchema[] = [];
  for (const n of nodes) {
    const converted = convert(n, ctx);
    if (typeof converted === 'string') return converted;
    out.push(converted);
  }
  return out;
}

function isNullSchema(node: Json, ctx: Ctx): Converted<boolean> {
  const depth = ctx.refs.length;
  const flat = flatten(node, ctx);
  ctx.refs.length = depth;
  return typeof flat === 'string' ? flat : flat.type === 'null';
}

/**
 * Resolves $ref and merges allOf, so the rest of the conversion sees one plain
 * schema; the refs resolved are left on ctx.refs for the caller to unwind.
 */
function flatten(node: Json, ctx: Ctx): Converted<Json> {
  // Every conversion flattens its node first, so this counts both.
  if (--ctx.left < 0) return TOO_LARGE;
  let cur = node;
  if (typeof cur.$ref === 'string') {
    const ref = cur.$ref;
    const m = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
    const name = m === null ? undefined : decodePointer(m[1]!);
    const target = name === undefined ? undefined : ctx.defs[name];
    if (!isObject(target)) return `$ref '${ref}' does not name a schema under $defs or definitions`;
    if (ctx.refs.includes(ref)) return `recursive $ref '${ref}' cannot be expressed in Gemini's schema (it has no references)`;
    const { $ref: _, ...siblings } = cur;
    ctx.refs.push(ref);
    const resolved = flatten(target, ctx);
    if (typeof resolved === 'string') return resolved;
    cur = { ...resolved, ...siblings };
  }
  if (Array.isArray(cur.allOf)) {
    const { allOf, ...rest } = cur;
    let merged: Json = rest;
    for (const member of allOf as unknown[]) {
      if (!isObject(member)) continue;
      const flat = flatten(member, ctx);
      if (typeof flat === 'string') return flat;
      merged = mergeSchemas(merged, flat);
    }
    cur = merged;
  }
  return cur;
}

function mergeSchemas(a: Json, b: Json): Json {
  // a's keywords win; properties keep the order they are met in.
  const out: Json = { ...b, ...a };
  if (isObject(a.properties) || isObject(b.properties)) out.properties = { ...asObject(a.properties), ...asObject(b.properties) };
  if (Array.isArray(a.required) || Array.isArray(b.required)) {
    out.required = [...new Set([...((a.required as unknown[]) ?? []), ...((b.required as unknown[]) ?? [])])];
  }
  return out;
}

function inferType(s: Json): GeminiSchema['type'] {
  if (isObject(s.properties)) return 'OBJECT';
  if (s.items !== undefined) return 'ARRAY';
  if (typeof s.const === 'string') return 'STRING';
  if (Array.isArray(s.enum) && s.enum.some((v) => typeof v === 'string') && s.enum.every((v) => typeof v === 'string' || v === null)) return 'STRING';
  return undefined;
}

function typeList(t: unknown): string[] {
  if (typeof t === 'string') return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  return [];
}

function decodePointer(s: string): string {
  return decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~');
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function asObject(v: unknown): Json {
  return isObject(v) ? v : {};
}
