/** Reading management requests: JSON bodies checked against a schema, list paging, list replies. */
import type { SchemaObject } from 'ajv';
import { invalid, type GatewayError, type Result } from '../shared/errors.js';
import { ajv, schemaError } from '../shared/json-schema.js';
import type { OffsetPage, Page } from '../store/page.js';

/** What a management route answers. */
export interface Reply {
  status: number;
  body: unknown;
}

/**
 * A checker for one route's body: the schema's errors become a 400 naming the
 * field (`rotation_policy.key_transition_period_ms`). Unknown fields are
 * refused where the schema says additionalProperties: false.
 */
export function bodyChecker<T>(schema: SchemaObject): (body: unknown) => Result<T> {
  const validate = ajv.compile(schema);
  return (body) => {
    if (body === undefined) body = {};
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, error: invalid('request body must be a JSON object') };
    return validate(body) ? { ok: true, value: body as T } : { ok: false, error: schemaError(body, validate.errors ?? []) };
  };
}

export { pageRequest } from '../http/page-query.js';

/** `current_page` (0-based, default 0) and `page_size` 1..100 (default 20): the spec's paging of GET /guardrails. */
export function offsetPage(query: URLSearchParams): Result<OffsetPage> {
  const page = query.get('current_page') ?? '0';
  // Six digits: a page past a million of a hundred each is no page of this gateway's.
  if (!/^\d{1,6}$/.test(page)) return { ok: false, error: invalid('current_page: must be an integer between 0 and 999999', 'current_page') };
  const size = query.get('page_size') ?? '20';
  if (!/^\d{1,3}$/.test(size) || Number(size) < 1 || Number(size) > 100) {
    return { ok: false, error: invalid('page_size: must be an integer between 1 and 100', 'page_size') };
  }
  return { ok: true, value: { page: Number(page), size: Number(size) } };
}

/** `{object:"list", data, has_more, first_id, last_id}`. */
export function listReply<T extends { id: string }, J>(page: Page<T>, view: (item: T) => J): Result<Reply> {
  return {
    ok: true,
    value: {
      status: 200,
      body: {
        object: 'list',
        data: page.data.map(view),
        has_more: page.hasMore,
        first_id: page.data[0]?.id ?? null,
        last_id: page.data.at(-1)?.id ?? null,
      },
    },
  };
}

export function reply(status: number, body: unknown): Result<Reply> {
  return { ok: true, value: { status, body } };
}

/** ISO 8601 for an API answer; stored times are Unix seconds. */
export function iso(seconds: number | null): string | null {
  return seconds === null ? null : new Date(seconds * 1000).toISOString();
}

/** Ids are UUIDs; a chosen slug of that shape could name another object by its id. */
const ID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** 400 naming `slug` when a chosen slug (of an object found by id or slug) has the shape of an id. */
export function idShapedSlug(slug: string | undefined): GatewayError | null {
  return slug !== undefined && ID_SHAPE.test(slug) ? invalid('slug: must not have the shape of an id', 'slug') : null;
}

/** Common schema pieces. */
export const S = {
  name: { type: 'string', minLength: 1, maxLength: 255 },
  text: { type: ['string', 'null'], maxLength: 10_000 },
  slug: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{1,62}$', description: 'a slug: 2-63 lower-case letters, digits, - or _, starting with a letter or digit' },
  ref: { type: 'string', minLength: 1, maxLength: 255 },
  /** Spec Limits: 16 pairs, key 64 characters, value 512. */
  metadata: {
    type: ['object', 'null'],
    maxProperties: 16,
    propertyNames: { maxLength: 64 },
    additionalProperties: { type: 'string', maxLength: 512 },
  },
} satisfies Record<string, SchemaObject>;
