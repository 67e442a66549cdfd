// The semantic cache's logic without HTTP: unit vectors and cosine, what is
// embedded and what partitions (conversation.ts), the bounded index, and the
// report of failed embeddings once per config.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { semanticInput, MAX_TEXT_CHARS } from '../src/cache/conversation.js';
import type { Embedder } from '../src/cache/embedder.js';
import { cacheKey, canonicalJson, type KeyParts } from '../src/cache/key.js';
import { SemanticCache } from '../src/cache/semantic.js';
import { MemorySemanticIndex, type IndexEntry } from '../src/cache/semantic-index.js';
import { MemoryCacheStore } from '../src/cache/store.js';
import { cosine, unitVector, vectorBytes, vectorOf } from '../src/cache/vectors.js';
import type { Config } from '../src/config/types.js';
import { planFor } from '../src/routing/plan.js';
import { readSettings } from '../src/settings.js';
import { GatewayError, err, ok } from '../src/shared/errors.js';

const unit = (...v: number[]): Float32Array => unitVector(v)!;

describe('vectors', () => {
  it('scales to unit length and refuses vectors without a direction', () => {
    assert.deepEqual([...unit(3, 4)], [Math.fround(0.6), Math.fround(0.8)]);
    assert.equal(unitVector([0, 0]), null);
    assert.equal(unitVector([]), null);
    assert.equal(unitVector([1, Number.NaN]), null);
    assert.equal(unitVector([1, '2']), null);
  });

  it('cosine of unit vectors: 1 alike, 0 orthogonal, -1 opposite, never a match across dimensions', () => {
    assert.ok(Math.abs(cosine(unit(1, 2, 3), unit(2, 4, 6)) - 1) < 1e-6);
    assert.equal(cosine(unit(1, 0), unit(0, 5)), 0);
    assert.ok(Math.abs(cosine(unit(1, 1), unit(-1, -1)) + 1) < 1e-6);
    assert.ok(Math.abs(cosine(unit(1, 0), unit(1, 1)) - Math.SQRT1_2) < 1e-6);
    assert.equal(cosine(unit(1, 0), unit(1, 0, 0)), -Infinity);
    const a = Array.from({ length: 11 }, (_, i) => Math.sin(i + 1));
    const b = Array.from({ length: 11 }, (_, i) => Math.cos(3 * i));
    const naive = a.reduce((s, v, i) => s + v * b[i]!, 0) / (Math.hypot(...a) * Math.hypot(...b));
    assert.ok(Math.abs(cosine(unitVector(a)!, unitVector(b)!) - naive) < 1e-6, 'every dimension counts, past the unrolled blocks too');
  });

  it('round-trips through little-endian Float32 bytes', () => {
    const v = unit(0.1, -0.2, 0.3);
    const bytes = vectorBytes(v);
    assert.equal(bytes.length, 12);
    assert.equal(bytes.readFloatLE(4), v[1]);
    assert.deepEqual(vectorOf(bytes), v);
    assert.equal(vectorOf(Buffer.alloc(0)), null);
    assert.equal(vectorOf(Buffer.alloc(6)), null);
  });
});

describe('what is embedded and what partitions', () => {
  const chat = (messages: unknown[], over: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', temperature: 0, messages, ...over });
  const user = (content: unknown) => ({ role: 'user', content });
  const system = { role: 'system', content: 'You are terse.' };

  it('embeds the turns, and compares the rest of the body exactly', () => {
    const a = semanticInput(chat([system, user('what is two plus two'), { role: 'assistant', content: 'four' }, user('and times three?')]))!;
    assert.equal(a.text, 'what is two plus two\nfour\nand times three?');
    const b = semanticInput(chat([system, user("what's 2+2"), { role: 'assistant', content: '4' }, user('times 3?')]))!;
    assert.equal(canonicalJson(a.exact), canonicalJson(b.exact), 'a paraphrase shares the partition');
    const text = semanticInput(chat([user([{ type: 'text', text: 'hello' }, { type: 'text', text: 'there' }])]))!;
    assert.equal(text.text, 'hello\nthere');
  });

  it('partitions by every other body field, the system prompt and the order of roles', () => {
    const base = canonicalJson(semanticInput(chat([system, user('q')]))!.exact);
    const others = [
      chat([system, user('q')], { temperature: 1 }),
      chat([system, user('q')], { model: 'gpt-4o' }),
      chat([system, user('q')], { stream: true }),
      chat([system, user('q')], { tools: [{ type: 'function', function: { name: 'f' } }] }),
      chat([{ role: 'system', content: 'You are verbose.' }, user('q')]),
      chat([{ role: 'developer', content: 'You are terse.' }, user('q')]),
      chat([user('q')]),
      chat([system, { role: 'assistant', content: 'q' }]),
      chat([system, user('q'), user('r')]),
    ];
    for (const body of others) assert.notEqual(canonicalJson(semanticInput(body)!.exact), base, JSON.stringify(body));
    assert.equal(canonicalJson(semanticInput(chat([system, user('another question')]))!.exact), base);
  });

  it('leaves conversations that are not plain text to exact matching', () => {
    for (const messages of [
      [user([{ type: 'image_url', image_url: { url: 'https://x/y.png' } }])],
      [user([{ type: 'text', text: 'look', extra: 1 }])],
      [user('q'), { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] }],
      [user('q'), { role: 'tool', tool_call_id: 't', content: '42' }],
      [{ role: 'user', content: 'q', name: 'ann' }],
      [user('   ')],
      [system],
      [user('x'.repeat(MAX_TEXT_CHARS + 1))],
      ['not a message'],
    ]) {
      assert.equal(semanticInput(chat(messages)), null, JSON.stringify(messages).slice(0, 200));
    }
  });

  it('embeds a completion prompt (one string), never an embeddings input', () => {
    const p = semanticInput({ model: 'gpt-3.5-turbo-instruct', prompt: 'say hi', max_tokens: 5 })!;
    assert.equal(p.text, 'say hi');
    assert.equal(canonicalJson(semanticInput({ model: 'gpt-3.5-turbo-instruct', prompt: ['greet me'], max_tokens: 5 })!.exact), canonicalJson(p.exact));
    assert.notEqual(canonicalJson(semanticInput({ model: 'gpt-3.5-turbo-instruct', prompt: 'say hi', max_tokens: 6 })!.exact), canonicalJson(p.exact));
    assert.equal(semanticInput({ model: 'm', prompt: ['a', 'b'] }), null);
    assert.equal(semanticInput({ model: 'm', prompt: [1, 2, 3] }), null);
    assert.equal(semanticInput({ model: 'text-embedding-3-small', input: 'hi' }), null);
  });
});

describe('the bounded index', () => {
  const entry = (key: string, vector: Float32Array, expiresAt = 1_000): IndexEntry => ({ key, vector, expiresAt });
  const ENTRY_BYTES = 8 + 256; // two float32 dimensions plus the allowance

  it('finds the most similar live entry at or above the threshold, in its partition only', async () => {
    const index = new MemorySemanticIndex(1 << 20, 10);
    await index.add('p', entry('far', unit(0, 1)));
    await index.add('p', entry('near', unit(1, 0.1)));
    await index.add('p', entry('nearer', unit(1, 0.05)));
    await index.add('other', entry('exact', unit(1, 0)));
    assert.equal((await index.nearest('p', unit(1, 0), 0.9, 0))?.key, 'nearer');
    const score = cosine(unit(1, 0.05), unit(1, 0));
    assert.equal((await index.nearest('p', unit(1, 0), score, 0))?.key, 'nearer', 'a score equal to the threshold matches');
    assert.equal(await index.nearest('p', unit(1, 0), score + 1e-6, 0), null);
    assert.equal(await index.nearest('none', unit(1, 0), 0, 0), null);
    assert.equal((await index.nearest('p', unit(1, 0), 0.9, 999))?.key, 'nearer');
    assert.equal(await index.nearest('p', unit(1, 0), 0.9, 1_000), null, 'expired entries never match');
    index.forget('other', 'exact');
    assert.equal(await index.nearest('other', unit(1, 0), 0.5, 0), null);
  });

  it('keeps the newest or most recently matched entries of a partition', async () => {
    const index = new MemorySemanticIndex(1 << 20, 2);
    await index.add('p', entry('a', unit(1, 0)));
    await index.add('p', entry('b', unit(0, 1)));
    assert.equal((await index.nearest('p', unit(1, 0), 0.99, 0))?.key, 'a', 'a match makes a the most recent');
    await index.add('p', entry('c', unit(-1, 0)));
    assert.equal(await index.nearest('p', unit(0, 1), 0.99, 0), null, 'b was the least recently used');
    assert.equal((await index.nearest('p', unit(1, 0), 0.99, 0))?.key, 'a');
    assert.equal((await index.nearest('p', unit(-1, 0), 0.99, 0))?.key, 'c');
    await index.add('p', entry('c', unit(0, -1)));
    assert.equal((await index.nearest('p', unit(0, -1), 0.99, 0))?.key, 'c', 'a key added again replaces its vector');
    assert.equal((await index.nearest('p', unit(1, 0), 0.99, 0))?.key, 'a', 'and takes no second place');
  });

  it('bounds its bytes over all partitions, the least recently used partition first', async () => {
    const PARTITION_BYTES = 256 + 1; // the allowance plus a one-letter name
    // One byte short of three entries in three partitions.
    const index = new MemorySemanticIndex(3 * (ENTRY_BYTES + PARTITION_BYTES) - 1, 10);
    await index.add('p', entry('p1', unit(1, 0)));
    await index.add('q', entry('q1', unit(1, 0)));
    assert.ok(await index.nearest('p', unit(1, 0), 0.99, 0), 'a lookup makes p the most recent partition');
    await index.add('r', entry('r1', unit(1, 0)));
    assert.equal(await index.nearest('q', unit(1, 0), 0.99, 0), null, "q's entry went first");
    assert.ok(await index.nearest('p', unit(1, 0), 0.99, 0));
    assert.ok(await index.nearest('r', unit(1, 0), 0.99, 0));
    // q, empty now, is the least recently used: its partition goes, not p's entry.
    await index.add('r', entry('r2', unit(0, 1)));
    assert.ok(await index.nearest('p', unit(1, 0), 0.99, 0));
    assert.ok(await index.nearest('r', unit(1, 0), 0.99, 0));
    assert.ok(await index.nearest('r', unit(0, 1), 0.99, 0));
    const tiny = new MemorySemanticIndex(100, 10);
    await tiny.add('p', entry('big', unit(1, 0)));
    assert.equal(await tiny.nearest('p', unit(1, 0), 0, 0), null, 'an entry larger than the bound is not kept');
  });

  it('remembers a cursor per partition, dropped with the partition', () => {
    const index = new MemorySemanticIndex(2 * (256 + 1) + ENTRY_BYTES - 1, 10);
    assert.equal(index.cursorOf('p'), null);
    index.setCursor('p', '1-0');
    index.insert('p', entry('p1', unit(1, 0)));
    assert.equal(index.cursorOf('p'), '1-0');
    index.setCursor('q', '2-0');
    index.insert('q', entry('q1', unit(1, 0)));
    assert.equal(index.cursorOf('p'), null, 'p was evicted whole: its next read starts over');
    assert.equal(index.cursorOf('q'), '2-0');
  });
});

describe('SemanticCache', () => {
  const plan = planFor({ cache: { mode: 'semantic' } } as unknown as Config);
  const parts: KeyParts = { workspaceId: 'ws', config: plan.identity, namespace: undefined, method: 'POST', path: '/chat/completions', target: [], body: null };
  const body = (q: string, temperature = 0) => ({ model: 'm', temperature, messages: [{ role: 'user', content: q }] });

  it('partitions as the exact key does, with the non-conversation part of the body', async () => {
    const vectors: Record<string, Float32Array> = { a: unit(1, 0), b: unit(0, 1) };
    const embedder: Embedder = { embed: async (_plan, r) => ok(vectors[r.text]!) };
    const cache = new SemanticCache(embedder, new MemorySemanticIndex(1 << 20, 10), new MemoryCacheStore(1 << 20), () => {});
    const req = { workspaceId: 'ws', headers: {} };
    const a = (await cache.query(plan, parts, body('a'), req))!;
    const b = (await cache.query(plan, parts, body('b'), req))!;
    assert.equal(a.partition, b.partition);
    assert.deepEqual(a.vector, vectors.a);
    assert.equal(a.partition, cacheKey({ ...parts, body: semanticInput(body('a'))!.exact }));
    assert.notEqual((await cache.query(plan, parts, body('a', 1), req))!.partition, a.partition);
    assert.notEqual((await cache.query(plan, { ...parts, namespace: 'n' }, body('a'), req))!.partition, a.partition);
    assert.notEqual((await cache.query(plan, { ...parts, workspaceId: 'other' }, body('a'), req))!.partition, a.partition);
    assert.equal(await cache.query(plan, parts, { model: 'm', input: 'a' }, req), null);
  });

  it('finds the answer of a similar entry, and drops an entry whose answer is gone', async () => {
    const store = new MemoryCacheStore(1 << 20);
    const index = new MemorySemanticIndex(1 << 20, 10);
    const cache = new SemanticCache({ embed: async () => ok(unit(1, 0)) }, index, store, () => {});
    const q = (await cache.query(plan, parts, body('a'), { workspaceId: 'ws', headers: {} }))!;
    const answer = { status: 200, headers: {}, body: Buffer.from('{}'), provider: 'openai', path: 'config', expiresAt: 1_000 };
    await store.set('k', answer);
    await cache.add(q, 'k', 1_000, 0);
    assert.equal(await cache.find(q, 0.9, 0), answer);
    assert.equal(await cache.find({ ...q, partition: 'other' }, 0.9, 0), null);
    await index.add(q.partition, { key: 'k', vector: unit(1, 0.1), expiresAt: 1_000 });
    await index.add(q.partition, { key: 'gone', vector: unit(1, 0), expiresAt: 1_000 });
    assert.equal(await cache.find(q, 0.9, 0), null, 'the best entry names no stored answer: a miss');
    assert.equal(await cache.find(q, 0.9, 0), answer, 'and it is gone from the index');
  });

  it('reports each failed embedding, first once per config until one succeeds', async () => {
    let fail = true;
    const embedder: Embedder = { embed: async () => (fail ? err(new GatewayError(502, 'down')) : ok(unit(1, 0))) };
    const reports: [string, string, boolean][] = [];
    const cache = new SemanticCache(embedder, new MemorySemanticIndex(1 << 20, 10), new MemoryCacheStore(1 << 20), (config, e, first) =>
      reports.push([config, e.message, first]),
    );
    const other = planFor({ cache: { mode: 'semantic', max_age: 60 } } as unknown as Config);
    const req = { workspaceId: 'ws', headers: {} };
    assert.equal(await cache.query(plan, parts, body('a'), req), null);
    assert.equal(await cache.query(plan, parts, body('a'), req), null);
    assert.equal(await cache.query(other, parts, body('a'), req), null);
    fail = false;
    assert.ok(await cache.query(plan, parts, body('a'), req));
    fail = true;
    assert.equal(await cache.query(plan, parts, body('a'), req), null);
    assert.deepEqual(reports, [
      [plan.identity, 'down', true],
      [plan.identity, 'down', false],
      [other.identity, 'down', true],
      [plan.identity, 'down', true],
    ]);
  });
});

describe('GATEWAY_SEMANTIC_CACHE_ENTRIES', () => {
  it('sets the vectors per partition: 1000 by default, 1 to 100000', () => {
    assert.equal(readSettings({}).semanticCacheEntries, 1000);
    assert.equal(readSettings({ GATEWAY_SEMANTIC_CACHE_ENTRIES: '50' }).semanticCacheEntries, 50);
    assert.throws(() => readSettings({ GATEWAY_SEMANTIC_CACHE_ENTRIES: '0' }), /GATEWAY_SEMANTIC_CACHE_ENTRIES/);
    assert.throws(() => readSettings({ GATEWAY_SEMANTIC_CACHE_ENTRIES: 'many' }), /GATEWAY_SEMANTIC_CACHE_ENTRIES/);
  });
});
