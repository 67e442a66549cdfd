// Unit tests of the model catalog: the shipped data file, its check at load, lookups and cost.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalog, CATALOG_FILE, cost, findModel, loadCatalog, parseCatalog } from '../src/catalog/catalog.js';

/** A valid catalog of one provider and model; tests break one field at a time. */
function sample(): { _meta: Record<string, unknown>; providers: Record<string, Record<string, Record<string, unknown>>> } {
  return {
    _meta: { as_of: '2026-01-01' },
    providers: {
      openai: {
        'test-model': { mode: 'chat', context_window: 1000, max_output_tokens: 100, pricing: { input: 2, output: 8, cached_input: 0.5 } },
        'no-cache': { mode: 'chat', context_window: null, max_output_tokens: null, pricing: { input: 3, output: 6, cached_input: null } },
        'embed-model': { mode: 'embedding', context_window: 8191, max_output_tokens: null, pricing: { input: 0.1, output: 0, cached_input: null } },
      },
    },
  };
}

describe('the shipped catalog', () => {
  it('loads, and has every provider the gateway serves with a catalog, with unique ids', () => {
    const providers = new Set(catalog.models.map((m) => m.provider));
    for (const p of ['openai', 'azure-openai', 'anthropic', 'google', 'vertex-ai', 'bedrock', 'mistral-ai', 'groq', 'together-ai', 'fireworks-ai', 'deepseek', 'cohere', 'x-ai', 'perplexity-ai']) {
      assert.ok(providers.has(p), p);
    }
    const ids = catalog.models.map((m) => m.id);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(catalog.models.length > 100);
  });

  it('records its sources and their dates', () => {
    const meta = (JSON.parse(readFileSync(CATALOG_FILE, 'utf8')) as { _meta: { as_of: string; sources: { url: string; date: string }[] } })._meta;
    assert.equal(meta.as_of, catalog.asOf);
    assert.ok(meta.sources.length > 0);
    for (const s of meta.sources) {
      assert.match(s.url, /^https:\/\//);
      assert.match(s.date, /^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it('has the models the gateway is asked for most, with their modes', () => {
    const expect: [string, string, string][] = [
      ['openai', 'gpt-4o', 'chat'],
      ['openai', 'gpt-4.1-mini', 'chat'],
      ['openai', 'o3-mini', 'chat'],
      ['openai', 'gpt-3.5-turbo-instruct', 'completion'],
      ['openai', 'text-embedding-3-small', 'embedding'],
      ['azure-openai', 'gpt-4o', 'chat'],
      ['anthropic', 'claude-3-5-sonnet-20241022', 'chat'],
      ['anthropic', 'claude-sonnet-4-20250514', 'chat'],
      ['google', 'gemini-2.5-pro', 'chat'],
      ['vertex-ai', 'gemini-2.0-flash', 'chat'],
      ['vertex-ai', 'text-embedding-004', 'embedding'],
      ['bedrock', 'anthropic.claude-3-5-sonnet-20241022-v2:0', 'chat'],
      ['bedrock', 'amazon.titan-embed-text-v2:0', 'embedding'],
      ['bedrock', 'cohere.embed-english-v3', 'embedding'],
      ['cohere', 'command-r-plus', 'chat'],
      ['cohere', 'embed-english-v3.0', 'embedding'],
      ['deepseek', 'deepseek-chat', 'chat'],
    ];
    for (const [provider, model, mode] of expect) assert.equal(findModel(provider, model)?.mode, mode, `${provider}/${model}`);
  });
});

describe('findModel', () => {
  it('finds an exact id at a provider, and nothing for another provider or a near miss', () => {
    const m = findModel('openai', 'gpt-4o');
    assert.equal(m?.id, 'openai/gpt-4o');
    assert.equal(m?.model, 'gpt-4o');
    assert.equal(findModel('anthropic', 'gpt-4o'), null);
    assert.equal(findModel('openai', 'GPT-4o'), null);
    assert.equal(findModel('openai', 'gpt-4o '), null);
    assert.equal(findModel('no-such-provider', 'gpt-4o'), null);
  });

  it('takes the cloud aliases', () => {
    assert.equal(findModel('cloud1', 'amazon.titan-embed-text-v2:0')?.provider, 'bedrock');
    assert.equal(findModel('cloud2', 'gemini-2.5-pro')?.provider, 'vertex-ai');
    assert.equal(findModel('cloud3', 'gpt-4o')?.provider, 'azure-openai');
  });

  it('takes Bedrock foundation-model and inference-profile ARNs that end in a known id', () => {
    const base = 'anthropic.claude-3-5-sonnet-20241022-v2:0';
    assert.equal(findModel('bedrock', `arn:aws:bedrock:us-east-1::foundation-model/${base}`)?.model, base);
    const profile = `us.${base}`;
    assert.equal(findModel('cloud1', `arn:aws:bedrock:us-east-1:123456789012:inference-profile/${profile}`)?.model, profile);
    assert.equal(findModel('bedrock', 'arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc123'), null);
    // Only Bedrock model ids are ARNs.
    assert.equal(findModel('openai', 'arn:aws:bedrock:us-east-1::foundation-model/gpt-4o'), null);
  });
});

describe('cost', () => {
  const small = parseCatalog(sample(), 'sample');

  it('prices cached prompt tokens at the cached price, the rest at the input price, completion at the output price', () => {
    // 700 uncached × $2 + 300 cached × $0.5 + 250 completion × $8, per million.
    const usage = { prompt_tokens: 1000, completion_tokens: 250, prompt_tokens_details: { cached_tokens: 300 } };
    assert.equal(small.cost('openai', 'test-model', usage), (700 * 2 + 300 * 0.5 + 250 * 8) / 1e6);
    assert.equal(small.cost('openai', 'test-model', { prompt_tokens: 1000, completion_tokens: 250 }), (1000 * 2 + 250 * 8) / 1e6);
  });

  it('without a cached price, cached tokens cost the input price', () => {
    const usage = { prompt_tokens: 1000, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 400 } };
    assert.equal(small.cost('openai', 'no-cache', usage), (1000 * 3 + 10 * 6) / 1e6);
  });

  it('embeddings: prompt tokens only', () => {
    assert.equal(small.cost('openai', 'embed-model', { prompt_tokens: 5000 }), (5000 * 0.1) / 1e6);
  });

  it('never counts more cached tokens than prompt tokens', () => {
    const usage = { prompt_tokens: 100, completion_tokens: 0, prompt_tokens_details: { cached_tokens: 500 } };
    assert.equal(small.cost('openai', 'test-model', usage), (100 * 0.5) / 1e6);
  });

  it('null for a model the catalog does not have', () => {
    assert.equal(small.cost('openai', 'unknown', { prompt_tokens: 1 }), null);
    assert.equal(cost('openai', 'unknown', { prompt_tokens: 1 }), null);
  });

  it('the shipped prices: gpt-4o and a Bedrock ARN through the cloud alias', () => {
    const p = findModel('openai', 'gpt-4o')!.pricing;
    assert.ok(p.cachedInput !== null && p.cachedInput < p.input);
    const usage = { prompt_tokens: 12_000, completion_tokens: 800, prompt_tokens_details: { cached_tokens: 2_000 } };
    assert.equal(cost('openai', 'gpt-4o', usage), (10_000 * p.input + 2_000 * p.cachedInput + 800 * p.output) / 1e6);

    const base = 'anthropic.claude-3-haiku-20240307-v1:0';
    const b = findModel('bedrock', base)!.pricing;
    const arn = `arn:aws:bedrock:us-west-2::foundation-model/${base}`;
    assert.equal(cost('cloud1', arn, { prompt_tokens: 3_000, completion_tokens: 1_000 }), (3_000 * b.input + 1_000 * b.output) / 1e6);
  });
});

describe('the check at load', () => {
  const broken = (edit: (c: ReturnType<typeof sample>) => void): unknown => {
    const c = sample();
    edit(c);
    return c;
  };
  const entry = (c: ReturnType<typeof sample>): Record<string, unknown> => c.providers.openai!['test-model']!;
  const pricing = (c: ReturnType<typeof sample>): Record<string, unknown> => entry(c).pricing as Record<string, unknown>;

  it('accepts the sample', () => {
    const c = parseCatalog(sample(), 'sample');
    assert.equal(c.models.length, 3);
    assert.deepEqual(c.find('openai', 'no-cache')?.pricing, { input: 3, output: 6, cachedInput: null });
  });

  const cases: [string, (c: ReturnType<typeof sample>) => void, RegExp][] = [
    ['negative input price', (c) => (pricing(c).input = -1), /providers\["openai"\]\["test-model"\]\.pricing\.input must be a number/],
    ['price as a string', (c) => (pricing(c).output = '8'), /\["test-model"\]\.pricing\.output must be/],
    ['missing cached_input', (c) => delete pricing(c).cached_input, /\["test-model"\]\.pricing\.cached_input must be a number ≥ 0 or null/],
    ['a misspelt price', (c) => (pricing(c).cache_input = 1), /\["test-model"\]\.pricing\.cache_input is not a known field/],
    ['no pricing', (c) => delete entry(c).pricing, /\["test-model"\]\.pricing must be an object/],
    ['unknown mode', (c) => (entry(c).mode = 'image'), /\["test-model"\]\.mode must be one of chat, completion, embedding/],
    ['zero context window', (c) => (entry(c).context_window = 0), /\["test-model"\]\.context_window must be a positive integer or null/],
    ['fractional max output', (c) => (entry(c).max_output_tokens = 10.5), /\["test-model"\]\.max_output_tokens must be/],
    ['a misspelt field', (c) => (entry(c).context_windw = 5), /\["test-model"\]\.context_windw is not a known field/],
    ['a bad deprecation date', (c) => (entry(c).deprecation_date = 'soon'), /\["test-model"\]\.deprecation_date must be a date/],
    ['an entry that is not an object', (c) => (c.providers.openai!['test-model'] = 5 as never), /providers\["openai"\]\["test-model"\] must be an object/],
    ['an alias as provider', (c) => (c.providers.cloud1 = {}), /providers\["cloud1"\] is an alias: use bedrock/],
    ['no as_of', (c) => delete c._meta.as_of, /_meta\.as_of must be a date/],
  ];
  for (const [name, edit, message] of cases) {
    it(`refuses ${name}, naming the entry`, () => {
      assert.throws(() => parseCatalog(broken(edit), 'sample'), (err: Error) => {
        assert.match(err.message, /^model catalog sample: /);
        assert.match(err.message, message);
        return true;
      });
    });
  }

  describe('from a file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-catalog-'));
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('a malformed entry fails the load with the file and the entry named', () => {
      const file = join(dir, 'bad-entry.json');
      writeFileSync(file, JSON.stringify(broken((c) => (pricing(c).input = null))));
      assert.throws(() => loadCatalog(file), (err: Error) => err.message.includes(file) && err.message.includes('providers["openai"]["test-model"].pricing.input'));
    });

    it('a file that is not JSON fails the load with the file named', () => {
      const file = join(dir, 'not-json.json');
      writeFileSync(file, '{"_meta": ');
      assert.throws(() => loadCatalog(file), (err: Error) => err.message.startsWith(`model catalog ${file}: `));
    });
  });
});
