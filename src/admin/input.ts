/** Reading management requests: JSON bodies checked against a schema, list paging, list replies. */
import { Type } from '@sinclair/typebox';
import type { SchemaObject } from 'ajv';
import { queryChecker, type QueryChecker } from '../shared/checker.js';
import { invalid, type GatewayError, type Result } from '../shared/errors.js';
import { int } from '../shared/json-schema.js';
import type { OffsetPage, Page } from '../store/page.js';

/** What a management route answers. */
export interface Reply {
  status: number;
  body: unknown;
}

export { bodyChecker } from '../shared/checker.js';

export { PAGE_QUERY, pageRequest } from '../http/page-query.js';

/** `current_page` (0-based, default 0) and `page_size` 1..100 (default 20): the spec's paging of GET /guardrails. */
export const OFFSET_QUERY = queryChecker<{ current_page?: number; page_size?: number }>(
  Type.Object({
    // A page past a million of a hundred each is no page of this gateway's.
    current_page: Type.Optional({ ...int(0, 999_999), description: '0-based page number' }),
    page_size: Type.Optional({ ...int(1, 100), description: 'default 20' }),
  }),
);

export function offsetPage(query: URLSearchParams): Result<OffsetPage> {
  const q = OFFSET_QUERY(query);
  return q.ok ? { ok: true, value: { page: q.value.current_page ?? 0, size: q.value.page_size ?? 20 } } : q;
}

/**
 * A route's query parameters beyond paging: each a string described in words,
 * or a schema of its own (an enum). The router refuses a parameter given
 * twice or outside its schema; the handler reads the values it was declared with.
 */
export function queryOf(params: Record<string, string | SchemaObject>): QueryChecker<unknown> {
  const properties = Object.fromEntries(
    Object.entries(params).map(([name, p]) => [name, Type.Optional(Type.Unsafe(typeof p === 'string' ? { type: 'string', description: p } : p))]),
  );
  return queryChecker(Type.Object(properties));
}

/** `workspace_id` of a list (access.ts listedWorkspace). */
export const LISTED_WORKSPACE = { workspace_id: 'narrows the list to this workspace (id or slug); workspace keys see their own' };
/** `workspace_id` where an object is named by slug (access.ts byIdOrSlug). */
export const SLUG_WORKSPACE = { workspace_id: 'the workspace (id or slug) a slug is looked up in; default: the caller\'s own' };

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
