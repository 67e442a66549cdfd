// GET /v1/openapi.json: every route described (the router's table, the
// server's own paths, the model endpoints), the document a well-formed
// OpenAPI 3.1 one whose schemas compile as JSON Schema 2020-12 and whose
// references resolve, the bodies and queries exactly the schemas the routes'
// checkers validate with, and the paths the official openai SDK calls present.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import OpenAI from 'openai';
import { ADMIN_ROUTES } from '../src/admin/routes.js';
import { PAGE_QUERY } from '../src/admin/input.js';
import { ENDPOINT_DESCRIPTIONS, SERVER_ROUTES } from '../src/http/server.js';
import { openApiDocument } from '../src/openapi/document.js';
import { MODEL_BODY_SCHEMAS, validateBody } from '../src/pipeline/validation.js';
import type { ModelEndpoint } from '../src/shared/endpoint.js';
import { ENDPOINT_PATHS } from '../src/shared/endpoint.js';
import { VERSION } from '../src/shared/version.js';
import { ADMIN_KEY } from './support/gateway.js';
import { engines } from './support/engines.js';
import { useGateway } from './support/use-gateway.js';

type Json = Record<string, any>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const doc = openApiDocument({ version: VERSION, adminRoutes: ADMIN_ROUTES }) as Json;
const docPath = (path: string): string => `/v1${path.replace(/:(\w+)/g, '{$1}')}`;
const plain = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema));

describe('OpenAPI: every route has a description', () => {
  it('every management route declares one', () => {
    const missing = ADMIN_ROUTES.filter((r) => typeof r.description !== 'string' || r.description.trim().length < 10).map((r) => `${r.method} ${r.path}`);
    assert.deepEqual(missing, []);
  });

  it("every path the server answers itself, and every endpoint, declares one", () => {
    for (const r of Object.values(SERVER_ROUTES)) assert.ok(r.description.trim().length >= 10, r.path);
    for (const [endpoint, text] of Object.entries(ENDPOINT_DESCRIPTIONS)) assert.ok(text.trim().length >= 10, endpoint);
  });

  it('the check catches a route without one', () => {
    const undescribed = [...ADMIN_ROUTES, { ...ADMIN_ROUTES[0]!, description: '' }];
    assert.equal(undescribed.filter((r) => r.description.trim() === '').length, 1);
  });

  it('every route is in the document, with its description', () => {
    for (const r of ADMIN_ROUTES) assert.equal(doc.paths[docPath(r.path)]?.[r.method.toLowerCase()]?.description, r.description, `${r.method} ${r.path}`);
    for (const r of Object.values(SERVER_ROUTES)) assert.equal(doc.paths[r.path]?.[r.method.toLowerCase()]?.description, r.description, r.path);
    for (const [endpoint, path] of Object.entries(ENDPOINT_PATHS)) {
      assert.equal(doc.paths[`/v1${path}`]?.post?.description, ENDPOINT_DESCRIPTIONS[endpoint as keyof typeof ENDPOINT_DESCRIPTIONS]);
    }
    assert.equal(doc.paths['/v1/{path}']?.post?.description, ENDPOINT_DESCRIPTIONS.proxy);
  });
});

describe('OpenAPI: the document is well-formed OpenAPI 3.1', () => {
  it('has the required top-level shape', () => {
    assert.match(doc.openapi, /^3\.1\.\d+$/);
    assert.equal(typeof doc.info.title, 'string');
    assert.equal(doc.info.version, VERSION);
    assert.deepEqual(doc.security, [{ gatewayKey: [] }]);
    assert.deepEqual(doc.components.securitySchemes.gatewayKey, { type: 'apiKey', in: 'header', name: 'x-gateway-api-key', description: 'a gateway key' });
  });

  it('every operation: a unique operationId, responses, path parameters that match its template', () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      assert.match(path, /^\//);
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      for (const [method, op] of Object.entries(item as Json)) {
        assert.ok(METHODS.includes(method), `${method} ${path}`);
        assert.ok(!ids.has(op.operationId), `operationId ${op.operationId} is unique`);
        ids.add(op.operationId);
        assert.ok(Object.keys(op.responses).length > 0, `${method} ${path} has responses`);
        for (const [status, response] of Object.entries(op.responses as Json)) {
          assert.match(status, /^(?:[1-5](?:\d\d|XX)|default)$/);
          assert.equal(typeof response.description, 'string');
        }
        const params = (op.parameters ?? []) as Json[];
        for (const p of params) {
          assert.ok(['path', 'query', 'header', 'cookie'].includes(p.in), `${p.name} in ${p.in}`);
          assert.ok((p.schema === undefined) !== (p.content === undefined), `${p.name}: schema or content`);
        }
        const pathParams = params.filter((p) => p.in === 'path');
        assert.deepEqual(pathParams.map((p) => p.name).sort(), templated, `${method} ${path}`);
        assert.ok(pathParams.every((p) => p.required === true));
        const names = params.map((p) => `${p.in}:${p.name}`);
        assert.equal(new Set(names).size, names.length, `${method} ${path}: parameters are unique`);
      }
    }
  });

  it("every route's checkers and every model body schema compile on the gateway's own Ajv (they compile on first use: a bad one would fail its first request, not the start)", () => {
    let checked = 0;
    for (const r of ADMIN_ROUTES) {
      for (const body of [r.body, r.handlerBody]) {
        if (body === undefined) continue;
        assert.doesNotThrow(() => body({}), `${r.method} ${r.path}`);
        checked++;
      }
      if (r.query !== undefined) {
        assert.doesNotThrow(() => r.query!(new URLSearchParams()), `${r.method} ${r.path}`);
        checked++;
      }
    }
    assert.ok(checked > 50, `only ${checked} checkers found`);
    for (const endpoint of Object.keys(MODEL_BODY_SCHEMAS)) assert.doesNotThrow(() => validateBody(endpoint as ModelEndpoint, { model: 'm' }), endpoint);
  });

  it('every schema compiles as JSON Schema 2020-12 and every $ref resolves inside the document', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const base = 'https://switchyard.invalid/openapi.json';
    ajv.addSchema({ $id: base, components: doc.components });
    const refs: string[] = [];
    const rebase = (v: unknown): unknown =>
      JSON.parse(JSON.stringify(v), (k, x: unknown) => {
        if (k === '$ref' && typeof x === 'string') {
          refs.push(x);
          return x.startsWith('#/') ? base + x : x;
        }
        return x;
      });
    const schemas: unknown[] = [];
    for (const item of Object.values(doc.paths as Json)) {
      for (const op of Object.values(item as Json)) {
        for (const p of op.parameters ?? []) schemas.push(p.schema ?? p.content['application/json'].schema);
        for (const media of Object.values((op.requestBody?.content ?? {}) as Json)) schemas.push(media.schema);
        for (const response of Object.values(op.responses as Json)) for (const media of Object.values((response.content ?? {}) as Json)) schemas.push(media.schema);
      }
    }
    for (const s of [...schemas, ...Object.values(doc.components.schemas)]) assert.doesNotThrow(() => ajv.compile(rebase(s) as object));
    assert.ok(refs.length > 0);
    for (const ref of refs) {
      assert.match(ref, /^#\/components\/schemas\/\w+$/, ref);
      assert.ok(doc.components.schemas[ref.split('/').at(-1)!] !== undefined, ref);
    }
  });
});

describe('OpenAPI: the schemas are the ones requests are checked with', () => {
  it("a management route's body schema is its checker's", () => {
    let bodies = 0;
    for (const r of ADMIN_ROUTES) {
      const checker = r.body ?? r.handlerBody;
      const shown = doc.paths[docPath(r.path)][r.method.toLowerCase()].requestBody?.content['application/json'].schema;
      if (checker === undefined) {
        assert.equal(shown, undefined, `${r.method} ${r.path}`);
        continue;
      }
      bodies++;
      assert.deepEqual(shown, plain(checker.schema), `${r.method} ${r.path}`);
    }
    assert.ok(bodies >= 30, `${bodies} routes with bodies`);
  });

  it('every PUT and PATCH route declares the body it takes', () => {
    const undeclared = ADMIN_ROUTES.filter((r) => (r.method === 'PUT' || r.method === 'PATCH') && r.body === undefined && r.handlerBody === undefined);
    assert.deepEqual(undeclared.map((r) => `${r.method} ${r.path}`), []);
  });

  it("a route's query parameters are its paging and its declared query checker's", () => {
    for (const r of ADMIN_ROUTES) {
      const shown = ((doc.paths[docPath(r.path)][r.method.toLowerCase()].parameters ?? []) as Json[]).filter((p) => p.in === 'query');
      const expected = { ...(r.paged === true ? PAGE_QUERY.schema.properties : {}), ...(r.query?.schema.properties ?? {}) };
      assert.deepEqual(Object.fromEntries(shown.map((p) => [p.name, p.schema])), plain(expected), `${r.method} ${r.path}`);
    }
  });

  it("the model endpoints' body schemas are the validator's", () => {
    for (const [endpoint, path] of Object.entries(ENDPOINT_PATHS)) {
      assert.deepEqual(doc.paths[`/v1${path}`].post.requestBody.content['application/json'].schema, plain(MODEL_BODY_SCHEMAS[endpoint as keyof typeof MODEL_BODY_SCHEMAS]));
    }
  });
});

for (const engine of engines()) {
  describe(`GET /v1/openapi.json (${engine.name})`, () => {
    const gw = useGateway(engine);

    it('needs a gateway key, and answers the document to any valid key', async () => {
      const anonymous = await fetch(`${gw.v1}/openapi.json`);
      assert.equal(anonymous.status, 401);
      assert.equal(((await anonymous.json()) as Json).error.type !== undefined, true);
      const res = await gw.call('/openapi.json');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(await res.json(), plain(doc));
      // A key without any scope reads it too.
      const made = await gw.call('/api-keys/organisation/service', { body: { name: 'no scopes', scopes: ['logs.view'] } });
      assert.equal(made.status, 201, await made.clone().text());
      const { key } = (await made.json()) as { key: string };
      const other = await fetch(`${gw.v1}/openapi.json`, { headers: { 'x-gateway-api-key': key } });
      assert.equal(other.status, 200);
      await other.arrayBuffer();
    });

    it('holds every path the official openai SDK calls for the endpoints the gateway serves', async () => {
      const called: string[] = [];
      const client = new OpenAI({
        apiKey: 'unused',
        baseURL: gw.v1,
        defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY },
        maxRetries: 0,
        fetch: async (url, init) => {
          called.push(`${(init?.method ?? 'GET').toLowerCase()} ${new URL(String(url)).pathname}`);
          return new Response(JSON.stringify({ object: 'list', data: [] }), { status: 200, headers: { 'content-type': 'application/json' } });
        },
      });
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
      await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi' });
      await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hi', encoding_format: 'float' });
      await client.models.list();
      assert.deepEqual(called, ['post /v1/chat/completions', 'post /v1/completions', 'post /v1/embeddings', 'get /v1/models']);
      for (const call of called) {
        const [method, path] = call.split(' ') as [string, string];
        assert.ok(doc.paths[path]?.[method] !== undefined, `${call} is in the document`);
      }
      // And the gateway answers each documented fixed path it owns (no route_not_found).
      for (const path of Object.keys(doc.paths).filter((p) => !p.includes('{') && doc.paths[p].get !== undefined)) {
        const res = await fetch(`${gw.url}${path}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
        const text = await res.text();
        assert.ok(!text.includes('route_not_found'), `${path}: ${text.slice(0, 200)}`);
      }
    });
  });
}
