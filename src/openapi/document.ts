/**
 * GET /v1/openapi.json: the OpenAPI 3.1 document of every route, made at
 * start from the tables that route requests — the server's own paths and
 * model endpoints (http/server.ts), the management routes (admin/routes.ts)
 * — and from the schemas their checkers validate with, so the document
 * cannot say other than what the gateway does.
 */
import type { SchemaObject } from 'ajv';
import type { Route } from '../admin/router.js';
import { PAGE_QUERY } from '../admin/input.js';
import { NODE } from '../config/shape.js';
import { MODELS_QUERY } from '../catalog/list.js';
import { ENDPOINT_DESCRIPTIONS, SERVER_ROUTES, type ServerRoute } from '../http/server.js';
import { MODEL_BODY_SCHEMAS } from '../pipeline/validation.js';
import { ENDPOINT_PATHS, type ModelEndpoint } from '../shared/endpoint.js';
import { JSON_VALUE } from '../shared/json-schema.js';

type Json = Record<string, unknown>;

/** Schemas registered on the one Ajv by id, and where the document keeps them. */
const SHARED_SCHEMAS: Readonly<Record<string, string>> = { json: 'JsonValue', node: 'Config' };

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const ERROR_RESPONSE = { description: "An error in the gateway's envelope", content: { 'application/json': { schema: ERROR_REF } } };
const JSON_RESPONSE = { description: 'Success', content: { 'application/json': { schema: {} } } };

/** The contract's request headers of the model endpoints and the proxy. */
const GATEWAY_HEADERS: readonly (readonly [string, string])[] = [
  ['x-gateway-provider', 'provider name, or @slug of an integration\'s provider'],
  ['x-gateway-custom-host', 'base URL of the provider endpoint'],
  ['x-gateway-virtual-key', 'id or slug of stored provider credentials'],
  ['x-gateway-metadata', 'JSON object of string values, stored with the log'],
  ['x-gateway-trace-id', 'trace id; generated when absent'],
  ['x-gateway-span-id', 'span id'],
  ['x-gateway-parent-span-id', 'parent span id'],
  ['x-gateway-span-name', 'span name'],
  ['x-gateway-cache-namespace', 'partitions the cache'],
  ['x-gateway-cache-force-refresh', 'true: call the provider and store the new answer'],
  ['x-gateway-request-timeout', 'milliseconds, as the config\'s request_timeout'],
  ['x-gateway-forward-headers', 'comma-separated header names forwarded to the provider'],
  ['x-gateway-strict-compat-compliance', 'false allows provider-specific fields'],
];

export interface OpenApiSources {
  version: string;
  adminRoutes: readonly Route[];
}

export function openApiDocument({ version, adminRoutes }: OpenApiSources): Json {
  const paths: Record<string, Record<string, Json>> = {};
  const add = (path: string, method: string, operation: Json): void => {
    (paths[path] ??= {})[method.toLowerCase()] = { operationId: operationId(method, path), ...operation };
  };

  for (const r of Object.values(SERVER_ROUTES) as ServerRoute[]) add(r.path, r.method, serverOperation(r));
  for (const [endpoint, path] of Object.entries(ENDPOINT_PATHS) as [ModelEndpoint, string][]) {
    add(`/v1${path}`, 'POST', modelOperation(ENDPOINT_DESCRIPTIONS[endpoint], MODEL_BODY_SCHEMAS[endpoint]));
  }
  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
    add('/v1/{path}', method, {
      summary: 'Generic proxy',
      description: ENDPOINT_DESCRIPTIONS.proxy,
      parameters: [{ name: 'path', in: 'path', required: true, description: "the provider API's own path", schema: { type: 'string' } }, ...headerParameters()],
      ...(method === 'GET' || method === 'DELETE' ? {} : { requestBody: { content: { '*/*': { schema: {} } } } }),
      responses: { default: { description: "The provider's answer as it sent it, or an error in the gateway's envelope" } },
    });
  }
  for (const r of adminRoutes) add(`/v1${r.path.replace(/:(\w+)/g, '{$1}')}`, r.method, adminOperation(r));

  return {
    openapi: '3.1.0',
    info: { title: 'Switchyard', version, description: 'Model gateway: one OpenAI-compatible API in front of many model providers, and its management API.' },
    servers: [{ url: '/' }],
    security: [{ gatewayKey: [] }],
    paths,
    components: {
      securitySchemes: { gatewayKey: { type: 'apiKey', in: 'header', name: 'x-gateway-api-key', description: 'a gateway key' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['message', 'type'],
              properties: { message: { type: 'string' }, type: { type: 'string' }, code: { type: ['string', 'null'] }, param: { type: ['string', 'null'] } },
            },
          },
        },
        JsonValue: portable(JSON_VALUE),
        Config: portable(NODE),
      },
    },
  };
}

function serverOperation(r: ServerRoute): Json {
  const op: Json = { description: r.description, responses: { '200': JSON_RESPONSE, default: ERROR_RESPONSE } };
  if (!r.keyed) op.security = [];
  if (r === SERVER_ROUTES.metrics) op.responses = { '200': { description: 'Prometheus text', content: { 'text/plain': { schema: { type: 'string' } } } } };
  if (r === SERVER_ROUTES.models) op.parameters = queryParameters(MODELS_QUERY.schema);
  const ids = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1]!, in: 'path', required: true, schema: { type: 'string' } }));
  if (ids.length > 0) op.parameters = ids;
  return op;
}

function modelOperation(description: string, body: SchemaObject): Json {
  return {
    description,
    parameters: headerParameters(),
    requestBody: { required: true, content: { 'application/json': { schema: portable(body) } } },
    responses: {
      '200': { description: 'The answer in OpenAI\'s shape', content: { 'application/json': { schema: {} }, 'text/event-stream': { schema: { type: 'string' } } } },
      '246': { description: 'Answered, though a guardrail check without deny failed', content: { 'application/json': { schema: {} } } },
      '446': { description: 'Denied by a guardrail', content: { 'application/json': { schema: {} } } },
      default: ERROR_RESPONSE,
    },
  };
}

function adminOperation(r: Route): Json {
  const pathParams = [...r.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1]!, in: 'path', required: true, schema: { type: 'string' } }));
  const query = [...(r.paged === true ? queryParameters(PAGE_QUERY.schema) : []), ...(r.query === undefined ? [] : queryParameters(r.query.schema))];
  const body = r.body ?? r.handlerBody;
  const access = r.scope === null ? 'access checked by the route itself' : `scope ${r.scope}${r.ownKeyFree === true ? ' (not for the calling key itself)' : ''}`;
  return {
    description: r.description,
    'x-gateway-access': [r.organisation === undefined ? null : 'organisation key', access, r.admins === true ? 'organisation owner or admin' : null].filter((s) => s !== null).join('; '),
    parameters: [...pathParams, ...query],
    ...(body === undefined ? {} : { requestBody: { required: false, content: { 'application/json': { schema: portable(body.schema) } } } }),
    responses: { '2XX': JSON_RESPONSE, default: ERROR_RESPONSE },
  };
}

/** An object schema's properties as query parameters. */
function queryParameters(schema: SchemaObject): Json[] {
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  return Object.entries((schema.properties ?? {}) as Record<string, SchemaObject>).map(([name, s]) => ({
    name,
    in: 'query',
    required: required.has(name),
    ...(typeof s.description === 'string' && { description: s.description }),
    schema: portable(s),
  }));
}

function headerParameters(): Json[] {
  return [
    {
      name: 'x-gateway-config',
      in: 'header',
      required: false,
      description: 'a config as inline JSON, or the id or slug of a saved config',
      schema: { anyOf: [{ type: 'string' }, { $ref: '#/components/schemas/Config' }] },
    },
    { name: 'Authorization', in: 'header', required: false, description: 'Bearer <provider key>, with x-gateway-provider', schema: { type: 'string' } },
    ...GATEWAY_HEADERS.map(([name, description]) => ({ name, in: 'header', required: false, description, schema: { type: 'string' } })),
  ];
}

/**
 * A validator's schema as the document carries it: plain JSON (no TypeBox
 * symbols), references to schemas registered by id pointing into
 * components, ids dropped (they name schemas on the gateway's Ajv, not here).
 */
function portable(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => {
    if (key === '$id') return undefined;
    if (key === '$ref' && typeof value === 'string' && SHARED_SCHEMAS[value] !== undefined) return `#/components/schemas/${SHARED_SCHEMAS[value]}`;
    return value;
  }) as Json;
}

/** `post /v1/api-keys/{id}/rotate` → `post_api_keys_id_rotate`: unique, as the method and path are. */
function operationId(method: string, path: string): string {
  return `${method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+/g, '_').replace(/_$/, '')}`;
}
