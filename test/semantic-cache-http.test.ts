// The semantic cache over HTTP, with the index in process memory and in
// Redis. The mock upstream's bag-of-words embedding model (WORDS_EMBEDDING_MODEL,
// see mock-openai.ts) makes "what is two plus two" and "What's two plus two?"
// the same vector and a different question a distant one. Covered: a
// paraphrase is a SEMANTIC HIT with no second chat call, a different question
// or different parameters a MISS, the threshold on both sides of a known
// cosine, streams and completions, force refresh indexing its answer,
// embedding failures (error, timeout, a provider without embeddings) as plain
// misses that still serve, counted and warned once, the default and an own
// embedding target (its key sealed in a saved config), the per-partition
// bound, max_age; two gateway processes sharing the index through Redis; Redis away.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { scratchEngine } from './support/engines.js';
import type { TestGateway } from './support/gateway.js';
import { startMockAnthropic, type MockAnthropic } from './support/mock-anthropic.js';
import { startMockOpenAI, WORDS_EMBEDDING_MODEL, wordVector, type MockOpenAI } from './support/mock-openai.js';
import { connect } from './support/redis.js';
import { useGateway, useGatewayPair } from './support/use-gateway.js';

const OPENAI_KEY = 'sk-mock-openai-0123456789';
const EMBED_KEY = 'sk-mock-embed-9876543210';
const ANTHROPIC_KEY = 'sk-ant-mock-0123456789';
const STATUS = 'x-gateway-cache-status';
const ENTRIES = 3;
const semantic = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  cache: { mode: 'semantic', max_age: 600, embedding: { model: WORDS_EMBEDDING_MODEL }, ...over },
});
const CONFIG = JSON.stringify(semantic());

type Backend = 'memory' | 'redis';

interface Ask {
  config?: string;
  namespace?: string;
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
  path?: string;
}

function askOf(gw: () => TestGateway, openai: () => MockOpenAI) {
  return (question: string, o: Ask = {}): Promise<Response> =>
    gw().call(o.path ?? '/chat/completions', {
      headers: {
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': openai().url,
        authorization: `Bearer ${OPENAI_KEY}`,
        'x-gateway-config': o.config ?? CONFIG,
        ...(o.namespace === undefined ? {} : { 'x-gateway-cache-namespace': o.namespace }),
        ...o.headers,
      },
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }], ...o.body },
    });
}

const calls = (mock: MockOpenAI, path: string): number => mock.requests.filter((r) => r.path.startsWith(`/v1${path}`)).length;
const chatCalls = (mock: MockOpenAI): number => calls(mock, '/chat/completions');
const embeddingCalls = (mock: MockOpenAI): number => calls(mock, '/embeddings');

/** Status and body of an answer, read whole. */
async function answer(res: Promise<Response>): Promise<{ status: number; cache: string | null; text: string; res: Response }> {
  const r = await res;
  return { status: r.status, cache: r.headers.get(STATUS), text: await r.text(), res: r };
}

function cosineOf(a: string, b: string): number {
  const x = wordVector(a);
  const y = wordVector(b);
  return x.reduce((sum, v, i) => sum + v * y[i]!, 0);
}

async function metric(gw: TestGateway, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  return Number(pattern.exec(text)?.[1] ?? 0);
}

function captureLogs(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: pino({ level: 'warn' }, sink) };
}

/** Polls GET /v1/logs?trace_id= until the request is logged (the queue writes every 100 ms). */
async function logsOf(gw: TestGateway, traceId: string): Promise<Record<string, unknown>[]> {
  for (let i = 0; ; i++) {
    const page = (await (await gw.call(`/logs?trace_id=${encodeURIComponent(traceId)}`)).json()) as { data: Record<string, unknown>[] };
    if (page.data.length > 0 || i === 100) return page.data;
    await new Promise((r) => setTimeout(r, 50));
  }
}

for (const backend of ['memory', 'redis'] as const satisfies readonly Backend[]) {
  describe(`semantic cache (${backend})`, { timeout: 60_000 }, () => {
    const logs = captureLogs();
    const gw = useGateway({ redis: backend === 'redis', settings: { semanticCacheEntries: ENTRIES }, logger: logs.logger });
    let openai: MockOpenAI;
    let embedder: MockOpenAI;
    let anthropic: MockAnthropic;
    const ask = askOf(() => gw, () => openai);

    before(async () => {
      openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
      embedder = await startMockOpenAI({ apiKey: EMBED_KEY, name: 'embedder' });
      anthropic = await startMockAnthropic({ apiKey: ANTHROPIC_KEY });
    });
    after(async () => {
      await Promise.all([openai.close(), embedder.close(), anthropic.close()]);
    });
    beforeEach(() => {
      openai.reset();
      embedder.reset();
      anthropic.reset();
      logs.lines.length = 0;
    });

    it('answers a paraphrase from the cache: SEMANTIC HIT, one chat call; an exact repeat is a HIT without embedding', async () => {
      const namespace = 'paraphrase';
      const first = await answer(ask('what is two plus two', { namespace }));
      assert.equal(first.status, 200);
      assert.equal(first.cache, 'MISS');
      const second = await answer(ask("What's two plus two?", { namespace }));
      assert.equal(second.status, 200);
      assert.equal(second.cache, 'SEMANTIC HIT');
      assert.equal(second.text, first.text, 'the stored answer, as the client received it');
      assert.equal(second.res.headers.get('x-gateway-provider'), 'openai');
      assert.equal(second.res.headers.get('x-gateway-last-used-option-index'), 'config');
      assert.match(second.res.headers.get('content-type') ?? '', /application\/json/);
      assert.equal(chatCalls(openai), 1);
      assert.equal(embeddingCalls(openai), 2, 'each exact miss was embedded');
      const embedding = openai.requests.find((r) => r.path === '/v1/embeddings')!;
      assert.deepEqual(embedding.json, { model: WORDS_EMBEDDING_MODEL, input: 'what is two plus two' });
      assert.equal(embedding.headers.authorization, `Bearer ${OPENAI_KEY}`, "by default the request's own target embeds");
      assert.equal(embedding.headers['x-gateway-cache-namespace'], undefined, "none of the client's headers go on");

      const repeat = await answer(ask('what is two plus two', { namespace }));
      assert.equal(repeat.cache, 'HIT');
      assert.equal(repeat.text, first.text);
      assert.equal(embeddingCalls(openai), 2, 'an exact hit needs no embedding');
      assert.equal(chatCalls(openai), 1);
      assert.ok((await metric(gw, /switchyard_cache_requests_total\{status="SEMANTIC HIT"\} (\d+)/)) >= 1);

      const [hitLog] = await logsOf(gw, second.res.headers.get('x-gateway-trace-id')!);
      assert.equal(hitLog!.cache_status, 'SEMANTIC HIT');
      assert.equal(hitLog!.cost, 0, 'a semantic hit called no provider');
      const [missLog] = await logsOf(gw, first.res.headers.get('x-gateway-trace-id')!);
      assert.equal(hitLog!.total_tokens, missLog!.total_tokens);
      const all = (await (await gw.call('/logs?limit=100')).json()) as { data: { path: string }[] };
      assert.ok(!all.data.some((l) => l.path.includes('embeddings')), 'the embedding call is not a logged request');
    });

    it('misses on a different question', async () => {
      const namespace = 'different';
      assert.equal((await answer(ask('what is two plus two', { namespace }))).cache, 'MISS');
      const other = await answer(ask('what is the capital of France', { namespace }));
      assert.equal(other.status, 200);
      assert.equal(other.cache, 'MISS');
      assert.match(other.text, /capital of France/);
      assert.equal(chatCalls(openai), 2);
    });

    it('compares only requests with the same model, parameters and system prompt', async () => {
      const namespace = 'partition';
      const system = { role: 'system', content: 'Answer in one word.' };
      const asked = (q: string, body: Record<string, unknown>) => ({ namespace, body: { temperature: 0, messages: [system, { role: 'user', content: q }], ...body } });
      assert.equal((await answer(ask('', asked('what is two plus two', {})))).cache, 'MISS');
      const variants = [
        { temperature: 1 },
        { model: 'gpt-4o' },
        { max_tokens: 5 },
        { messages: [{ role: 'system', content: 'Answer at length.' }, { role: 'user', content: "What's two plus two?" }] },
      ];
      for (const body of variants) {
        const res = await answer(ask('', asked("What's two plus two?", body)));
        assert.equal(res.status, 200);
        assert.equal(res.cache, 'MISS', JSON.stringify(body));
      }
      assert.equal((await answer(ask('', asked("What's two plus two?", {})))).cache, 'SEMANTIC HIT');
      assert.equal((await answer(ask('', { ...asked("What's two plus two?", {}), namespace: 'elsewhere' }))).cache, 'MISS', 'namespaces partition');
      assert.equal(chatCalls(openai), 1 + variants.length + 1);
    });

    it('respects the similarity threshold on both sides of a known cosine', async () => {
      const stored = 'zebra stripes pattern';
      const asked = 'zebra stripes pattern origin';
      const c = cosineOf(stored, asked);
      assert.ok(c > 0.8 && c < 0.95, `the pair's cosine ${c} is between the bounds the test needs`);
      // A config per threshold: each is a partition of its own.
      for (const [threshold, expected] of [
        [c + 0.002, 'MISS'],
        [c - 0.002, 'SEMANTIC HIT'],
        [undefined, 'MISS'], // the default, 0.95
      ] as const) {
        const config = JSON.stringify(semantic(threshold === undefined ? {} : { similarity_threshold: threshold }));
        assert.equal((await answer(ask(stored, { config, namespace: 'threshold' }))).cache, 'MISS');
        assert.equal((await answer(ask(asked, { config, namespace: 'threshold' }))).cache, expected, `threshold ${threshold}`);
      }
    });

    it('replays a streamed answer to a streamed paraphrase', async () => {
      const namespace = 'stream';
      const first = await answer(ask('what is two plus two', { namespace, body: { stream: true } }));
      assert.equal(first.cache, 'MISS');
      assert.match(first.text, /^data: [\s\S]*data: \[DONE\]/);
      const hit = await answer(ask("What's two plus two?", { namespace, body: { stream: true } }));
      assert.equal(hit.cache, 'SEMANTIC HIT');
      assert.match(hit.res.headers.get('content-type') ?? '', /text\/event-stream/);
      assert.equal(hit.text, first.text);
      assert.equal((await answer(ask("What's two plus two?", { namespace }))).cache, 'MISS', 'a stream and a whole answer do not mix');
      assert.equal(chatCalls(openai), 2);
    });

    it('matches completions by their prompt', async () => {
      const complete = (prompt: string) =>
        answer(gw.call('/completions', {
          headers: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url, authorization: `Bearer ${OPENAI_KEY}`, 'x-gateway-config': CONFIG },
          body: { model: 'gpt-3.5-turbo-instruct', prompt, max_tokens: 20 },
        }));
      const first = await complete('Tell me two plus two');
      assert.equal(first.cache, 'MISS');
      const hit = await complete('two plus two, please');
      assert.equal(hit.cache, 'SEMANTIC HIT');
      assert.equal(hit.text, first.text);
      assert.equal(calls(openai, '/completions'), 1);
    });

    it('force refresh stores the fresh answer and its vector', async () => {
      const namespace = 'refresh';
      const refreshed = await answer(ask('what is two plus two', { namespace, headers: { 'x-gateway-cache-force-refresh': 'true' } }));
      assert.equal(refreshed.cache, 'REFRESH');
      assert.equal(embeddingCalls(openai), 1, 'a refresh is embedded, to be indexed');
      const hit = await answer(ask("What's two plus two?", { namespace }));
      assert.equal(hit.cache, 'SEMANTIC HIT');
      assert.equal(hit.text, refreshed.text);
      assert.equal(chatCalls(openai), 1);
    });

    it('a failed embedding is a plain MISS that still serves, counted, warned once per config', async () => {
      const namespace = 'failure';
      const failures = () => metric(gw, /switchyard_cache_embedding_failures_total (\d+)/);
      const before = await failures();
      const config = JSON.stringify(semantic({ max_age: 601 }));
      openai.enqueue('/v1/embeddings', { status: 500, body: { error: { message: 'embeddings down', type: 'server_error', param: null, code: null } } }, { status: 503, body: 'busy' });
      const first = await answer(ask('what is two plus two', { namespace, config }));
      assert.equal(first.status, 200);
      assert.equal(first.cache, 'MISS');
      assert.match(first.text, /two plus two/);
      const second = await answer(ask("What's two plus two?", { namespace, config }));
      assert.equal(second.status, 200);
      assert.equal(second.cache, 'MISS');
      assert.equal(chatCalls(openai), 2);
      assert.equal(await failures(), before + 2);
      const warned = logs.lines.filter((l) => l.includes('semantic cache: embedding failed'));
      assert.equal(warned.length, 1, warned.join(''));
      assert.match(warned[0]!, /embeddings down/);
      assert.ok(!warned[0]!.includes(OPENAI_KEY));
      const repeat = await answer(ask('what is two plus two', { namespace, config }));
      assert.equal(repeat.cache, 'HIT', 'the answer was stored for exact repeats all the same');
    });

    it('an embedding that takes longer than its request_timeout is a MISS that still serves', async () => {
      const config = JSON.stringify(semantic({ embedding: { model: WORDS_EMBEDDING_MODEL, request_timeout: 100 } }));
      const namespace = 'timeout';
      assert.equal((await answer(ask('what is two plus two', { config, namespace }))).cache, 'MISS');
      // A late but right vector: waiting for it would make a SEMANTIC HIT.
      const late = { object: 'list', data: [{ object: 'embedding', index: 0, embedding: wordVector("What's two plus two?") }], model: WORDS_EMBEDDING_MODEL };
      openai.enqueue('/v1/embeddings', { delayMs: 1_500, body: late });
      const res = await answer(ask("What's two plus two?", { config, namespace }));
      assert.equal(res.status, 200);
      assert.equal(res.cache, 'MISS');
      assert.equal(chatCalls(openai), 2);
    });

    it('a target without embeddings (Anthropic) misses by meaning and still hits exact repeats', async () => {
      const headers = { 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': anthropic.url, authorization: `Bearer ${ANTHROPIC_KEY}` };
      const body = { model: 'claude-3-5-haiku-latest', max_tokens: 50 };
      const config = JSON.stringify({ cache: { mode: 'semantic' } });
      const first = await answer(ask('what is two plus two', { headers, body, config }));
      assert.equal(first.status, 200, first.text);
      assert.equal(first.cache, 'MISS');
      assert.equal((await answer(ask("What's two plus two?", { headers, body, config }))).cache, 'MISS');
      assert.equal((await answer(ask('what is two plus two', { headers, body, config }))).cache, 'HIT');
      assert.equal(anthropic.requests.length, 2, 'no embedding call reached Anthropic');
    });

    it("embeds with text-embedding-3-small on the request's own target by default", async () => {
      const config = JSON.stringify({ cache: { mode: 'semantic' } });
      assert.equal((await answer(ask('what is two plus two', { config, namespace: 'default' }))).cache, 'MISS');
      const embedding = openai.requests.find((r) => r.path === '/v1/embeddings')!;
      assert.deepEqual(embedding.json, { model: 'text-embedding-3-small', input: 'what is two plus two' });
      assert.equal(embedding.headers.authorization, `Bearer ${OPENAI_KEY}`);
    });

    it('embeds on a target of its own, its key sealed in a saved config', async () => {
      const config = { cache: { mode: 'semantic', embedding: { provider: 'openai', custom_host: embedder.url, api_key: EMBED_KEY, model: WORDS_EMBEDDING_MODEL } } };
      const made = await gw.call('/configs', { body: { name: `semantic ${backend}`, config } });
      assert.equal(made.status, 201, await made.clone().text());
      const { id } = (await made.json()) as { id: string };
      const shown = await (await gw.call(`/configs/${id}`)).text();
      assert.ok(!shown.includes(EMBED_KEY));
      assert.equal((JSON.parse(shown) as { config: typeof config }).config.cache.embedding.api_key, '********');
      assert.ok(!JSON.stringify(await gw.store.db.all('SELECT * FROM config_versions')).includes(EMBED_KEY), 'sealed at rest');

      assert.equal((await answer(ask('what is two plus two', { config: id }))).cache, 'MISS');
      assert.equal((await answer(ask("What's two plus two?", { config: id }))).cache, 'SEMANTIC HIT');
      assert.equal(embeddingCalls(embedder), 2);
      assert.equal(embedder.requests[0]!.headers.authorization, `Bearer ${EMBED_KEY}`);
      assert.equal(embeddingCalls(openai), 0);
      assert.equal(chatCalls(openai), 1);
    });

    it('matches a conversation holding an image exactly only, without embedding it', async () => {
      const body = { messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: 'https://example.test/cat.png' } }] }] };
      assert.equal((await answer(ask('', { body, namespace: 'image' }))).cache, 'MISS');
      assert.equal((await answer(ask('', { body, namespace: 'image' }))).cache, 'HIT');
      assert.equal(embeddingCalls(openai), 0);
    });

    it(`keeps the newest ${ENTRIES} vectors of a partition`, async () => {
      const namespace = 'bound';
      for (const q of ['alpha apples', 'bravo bananas', 'charlie cherries', 'delta dates']) {
        assert.equal((await answer(ask(q, { namespace }))).cache, 'MISS');
      }
      assert.equal((await answer(ask('tell me alpha apples', { namespace }))).cache, 'MISS', 'the oldest vector was evicted');
      assert.equal((await answer(ask('alpha apples', { namespace }))).cache, 'HIT', 'its answer is still there for exact repeats');
      assert.equal((await answer(ask('tell me delta dates', { namespace }))).cache, 'SEMANTIC HIT');
      if (backend === 'redis') {
        const prefix = gw.redisPrefix;
        const redis = connect();
        try {
          const keys = await redis.keys(`${prefix}semantic:*`);
          assert.ok(keys.length > 0);
          const lengths = await Promise.all(keys.map((k) => redis.xlen(k)));
          assert.ok(lengths.every((n) => n <= ENTRIES), `stream lengths ${lengths.join(', ')}`);
          assert.ok(lengths.includes(ENTRIES));
        } finally {
          redis.disconnect();
        }
      }
    });

    it('expires semantic entries after max_age', async () => {
      const config = JSON.stringify(semantic({ max_age: 60 }));
      assert.equal((await answer(ask('what is two plus two', { config, namespace: 'expiry' }))).cache, 'MISS');
      gw.clock.advance(59_000);
      assert.equal((await answer(ask("What's two plus two?", { config, namespace: 'expiry' }))).cache, 'SEMANTIC HIT');
      gw.clock.advance(1_000);
      assert.equal((await answer(ask("What's two plus two?", { config, namespace: 'expiry' }))).cache, 'MISS');
    });
  });
}

describe('semantic cache shared by two gateway processes through Redis', { timeout: 60_000 }, () => {
  // One database: the processes share the default workspace, which is part of every partition.
  const gws = useGatewayPair(scratchEngine());
  let openai: MockOpenAI;

  before(async () => {
    openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
  });
  after(async () => {
    await openai.close();
  });

  it("one process's answer is the other's SEMANTIC HIT, both ways", async () => {
    const [a, b] = [askOf(() => gws[0]!, () => openai), askOf(() => gws[1]!, () => openai)];
    const first = await answer(a('what is two plus two'));
    assert.equal(first.cache, 'MISS');
    const hit = await answer(b("What's two plus two?"));
    assert.equal(hit.cache, 'SEMANTIC HIT');
    assert.equal(hit.text, first.text);
    // Both processes have now read the partition: what follows comes from reading only what is new.
    const second = await answer(a('what is the capital of France'));
    assert.equal(second.cache, 'MISS');
    const back = await answer(b("What's the capital of France?"));
    assert.equal(back.cache, 'SEMANTIC HIT');
    assert.equal(back.text, second.text);
    const third = await answer(b('how many legs has a spider'));
    assert.equal(third.cache, 'MISS');
    const fourth = await answer(a('a spider has how many legs?'));
    assert.equal(fourth.cache, 'SEMANTIC HIT');
    assert.equal(fourth.text, third.text);
    assert.equal(chatCalls(openai), 3);
  });
});

describe('semantic cache while Redis is unreachable', { timeout: 60_000 }, () => {
  const gw = useGateway({ redis: 'unreachable' });
  let openai: MockOpenAI;

  before(async () => {
    openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
  });
  after(async () => {
    await openai.close();
  });

  it('misses and still serves every request', async () => {
    const ask = askOf(() => gw, () => openai);
    for (const q of ['what is two plus two', "What's two plus two?"]) {
      const res = await answer(ask(q));
      assert.equal(res.status, 200);
      assert.equal(res.cache, 'MISS');
    }
    assert.equal(chatCalls(openai), 2);
  });
});
