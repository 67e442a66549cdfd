// Black-box tests of GET /v1/models: the gateway's own catalog over HTTP and through the
// official OpenAI SDK — filters, cursor paging, the filtered total_count, errors and access.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { catalog } from '../src/catalog/catalog.js';
import type { ModelList } from '../src/catalog/list.js';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { assertEnvelope } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

describe('GET /v1/models', () => {
  const gw = useGateway();

  async function list(query = ''): Promise<ModelList> {
    const res = await gw.call(`/models${query}`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    return (await res.json()) as ModelList;
  }

  /** Follows `after` to the end; checks every page's bookkeeping and returns all ids in order. */
  async function pageThrough(filters: string, limit: number): Promise<{ ids: string[]; total: number; pages: number }> {
    const ids: string[] = [];
    let total = -1;
    let pages = 0;
    let cursor: string | null = null;
    for (;;) {
      const page = await list(`?${filters}&limit=${limit}${cursor === null ? '' : `&after=${encodeURIComponent(cursor)}`}`);
      pages++;
      if (total === -1) total = page.total_count;
      assert.equal(page.total_count, total, 'total_count is the filtered total on every page');
      assert.ok(page.data.length <= limit);
      assert.equal(page.first_id, page.data[0]?.id ?? null);
      assert.equal(page.last_id, page.data.at(-1)?.id ?? null);
      ids.push(...page.data.map((m) => m.id));
      if (!page.has_more) break;
      assert.equal(page.data.length, limit, 'a page before the last is full');
      cursor = page.last_id;
    }
    return { ids, total, pages };
  }

  it('lists the catalog: an OpenAI list of model objects, 20 by default, with the total', async () => {
    const page = await list();
    assert.equal(page.object, 'list');
    assert.equal(page.data.length, 20);
    assert.equal(page.total_count, catalog.models.length);
    assert.equal(page.has_more, true);
    assert.equal(page.first_id, page.data[0]!.id);
    assert.equal(page.last_id, page.data[19]!.id);
    const gpt4o = (await list('?search=openai/gpt-4o&limit=1')).data[0]!;
    const known = catalog.find('openai', 'gpt-4o')!;
    assert.deepEqual(gpt4o, {
      id: 'openai/gpt-4o',
      object: 'model',
      created: Date.parse(catalog.asOf) / 1000,
      owned_by: 'openai',
      provider: 'openai',
      model: 'gpt-4o',
      mode: 'chat',
      context_window: known.contextWindow,
      max_output_tokens: known.maxOutputTokens,
      pricing: { input: known.pricing.input, output: known.pricing.output, cached_input: known.pricing.cachedInput },
      deprecation_date: known.deprecationDate,
    });
  });

  it('pages through the whole catalog with after: every id exactly once, in catalog order', async () => {
    const { ids, total, pages } = await pageThrough('', 37);
    assert.equal(total, catalog.models.length);
    assert.deepEqual(ids, catalog.models.map((m) => m.id));
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(pages, Math.ceil(total / 37));
  });

  it('pages through a filtered list: total_count is the filtered total', async () => {
    const bedrock = catalog.models.filter((m) => m.provider === 'bedrock').map((m) => m.id);
    const { ids, total } = await pageThrough('provider=bedrock', 10);
    assert.equal(total, bedrock.length);
    assert.deepEqual(ids, bedrock);

    const embeddings = catalog.models.filter((m) => m.mode === 'embedding').map((m) => m.id);
    const all = await pageThrough('mode=embedding', 100);
    assert.deepEqual(all.ids, embeddings);
    assert.equal(all.total, embeddings.length);
  });

  it('filters by provider (aliases too), mode and id substring, alone and together', async () => {
    const count = (pred: (m: (typeof catalog.models)[number]) => boolean): number => catalog.models.filter(pred).length;

    const openai = await list('?provider=openai&limit=100');
    assert.ok(openai.data.length > 0 && openai.data.every((m) => m.provider === 'openai' && m.owned_by === 'openai'));
    assert.equal(openai.total_count, count((m) => m.provider === 'openai'));

    const viaAlias = await list('?provider=cloud1&limit=5');
    assert.equal(viaAlias.total_count, count((m) => m.provider === 'bedrock'));
    assert.ok(viaAlias.data.every((m) => m.provider === 'bedrock'));

    const completion = await list('?mode=completion&limit=100');
    assert.ok(completion.data.length > 0 && completion.data.every((m) => m.mode === 'completion'));
    assert.equal(completion.total_count, count((m) => m.mode === 'completion'));

    // Case-insensitive substring of the id.
    const search = await list('?search=GPT-4O&limit=100');
    assert.ok(search.data.length > 0 && search.data.every((m) => m.id.includes('gpt-4o')));
    assert.equal(search.total_count, count((m) => m.id.includes('gpt-4o')));

    const combined = await list('?provider=azure-openai&mode=embedding&search=3-');
    assert.deepEqual(
      combined.data.map((m) => m.id),
      ['azure-openai/text-embedding-3-small', 'azure-openai/text-embedding-3-large'],
    );
    assert.equal(combined.total_count, 2);
    assert.equal(combined.has_more, false);
  });

  it('a provider the gateway serves without catalog models, or a search that matches nothing: an empty list', async () => {
    for (const query of ['?provider=ollama', '?search=no-such-model-anywhere']) {
      const page = await list(query);
      assert.deepEqual(page, { object: 'list', data: [], total_count: 0, has_more: false, first_id: null, last_id: null }, query);
    }
  });

  it('after holds when the filters change between pages: it is a position in the catalog', async () => {
    const first = await list('?limit=3');
    const next = await list(`?provider=bedrock&limit=3&after=${encodeURIComponent(first.last_id!)}`);
    const bedrock = catalog.models.filter((m) => m.provider === 'bedrock');
    const position = catalog.position(first.last_id!);
    assert.deepEqual(
      next.data.map((m) => m.id),
      bedrock.filter((m) => catalog.position(m.id) > position).slice(0, 3).map((m) => m.id),
    );
  });

  it('invalid query values → 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=5&limit=6', 'limit'],
      ['mode=image', 'mode'],
      ['provider=no-such-provider', 'provider'],
      ['provider=', 'provider'],
      ['after=openai/no-such-model', 'after'],
      ['after=gpt-4o', 'after'],
    ];
    for (const [query, param] of cases) {
      const err = await assertEnvelope(await gw.call(`/models?${query}`), 400);
      assert.equal(err.param, param, query);
      assert.equal(err.type, 'invalid_request_error');
      assert.ok(err.message.includes(param), `${query}: ${err.message}`);
    }
  });

  it('without a key or with a wrong one → 401', async () => {
    const none = await fetch(`${gw.v1}/models`);
    assert.equal((await assertEnvelope(none, 401)).type, 'authentication_error');
    await assertEnvelope(await fetch(`${gw.v1}/models`, { headers: { 'x-gateway-api-key': 'not-a-key' } }), 401);
  });

  it('any valid key may list, whatever its scopes', async () => {
    const created = await gw.call('/api-keys/workspace/service', { body: { name: 'Catalog reader', scopes: ['logs.view'] } });
    assert.equal(created.status, 201);
    const secret = ((await created.json()) as { key: string }).key;
    const res = await fetch(`${gw.v1}/models?limit=1`, { headers: { 'x-gateway-api-key': secret } });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as ModelList).data.length, 1);
    // The same key is refused the model endpoints, which need completions.write.
    const chat = await fetch(`${gw.v1}/chat/completions`, { method: 'POST', headers: { 'x-gateway-api-key': secret, 'content-type': 'application/json' }, body: '{}' });
    await assertEnvelope(chat, 403);
  });

  it('is answered by the gateway, never proxied: a provider in the headers is not called', async () => {
    const mock: MockOpenAI = await startMockOpenAI({ apiKey: 'sk-upstream' });
    try {
      const res = await gw.call('/models?limit=2', {
        headers: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url, authorization: 'Bearer sk-upstream', 'x-gateway-trace-id': 'trace-models-1' },
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-gateway-trace-id'), 'trace-models-1');
      assert.equal(((await res.json()) as ModelList).total_count, catalog.models.length);
      assert.equal(mock.requests.length, 0);
    } finally {
      await mock.close();
    }
  });

  describe('through the OpenAI SDK', () => {
    let client: OpenAI;
    before(() => {
      client = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY } });
    });

    it('models.list() reads the first page as Model objects', async () => {
      const page = await client.models.list();
      assert.equal(page.data.length, 20);
      for (const m of page.data) {
        assert.equal(m.object, 'model');
        assert.equal(typeof m.id, 'string');
        assert.equal(typeof m.created, 'number');
        assert.equal(typeof m.owned_by, 'string');
      }
      assert.deepEqual(page.data.map((m) => m.id), catalog.models.slice(0, 20).map((m) => m.id));
      // The SDK's models page never asks for a next page (OpenAI's own list is unpaged): iteration stops after it.
      const iterated: string[] = [];
      for await (const m of client.models.list()) iterated.push(m.id);
      assert.deepEqual(iterated, page.data.map((m) => m.id));
    });

    it('models.list() with query options filters, and pages with the last id as the cursor', async () => {
      // The SDK keeps only `data` of this page type, so the cursor is the last id and a short page is the end.
      const ids: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await client.models.list({ query: { provider: 'anthropic', limit: 7, ...(after === undefined ? {} : { after }) } });
        ids.push(...page.data.map((m) => m.id));
        if (page.data.length < 7) break;
        after = page.data.at(-1)!.id;
      }
      assert.deepEqual(ids, catalog.models.filter((m) => m.provider === 'anthropic').map((m) => m.id));
    });

    it('an invalid query is a 400 BadRequestError', async () => {
      await assert.rejects(client.models.list({ query: { limit: 500 } }), (err: unknown) => err instanceof OpenAI.BadRequestError && err.status === 400);
    });
  });
});
