// Property-based tests against a running gateway (issue 14 item 12): random and mutated
// bodies (truncated JSON, NUL bytes, deep nesting, huge numbers, wrong types, unicode),
// headers (gateway headers with junk values, sent twice) and configs (bad custom hosts,
// bad header values, hop-by-hop forward_headers) on the model endpoints, the generic
// proxy and management routes. Whatever arrives, the gateway answers within a deadline,
// never with a 5xx (the mock upstream always answers correctly, and every other host
// is denied by the upstream policy, so a 5xx is the gateway's own), its own errors in
// the contract's envelope, and a request it refuses reaches no provider.
//
// Seeded: each test prints FC_SEED=<seed> as a diagnostic; FC_SEED=<seed> reproduces a
// run (CI=true runs a fixed seed, other runs a fresh one) (fast-check's failure message adds the path of the failing case). FUZZ_RUNS=<n>
// runs n cases per property instead of the defaults below (about 3,000 in all).
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fc from 'fast-check';
import { fakeDns } from './support/dns.js';
import { ADMIN_KEY } from './support/gateway.js';
import { envelopeOf } from './support/http.js';
import { useMockOpenAI } from './support/mock-openai.js';
import { useGateway } from './support/use-gateway.js';

/** CI judges a change on the same cases every time; elsewhere each run explores new ones. */
const CI_SEED = 20_261_126;
const SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : process.env.CI ? CI_SEED : Math.floor(Math.random() * 2 ** 31);
const runs = (n: number): number => (process.env.FUZZ_RUNS === undefined ? n : Number(process.env.FUZZ_RUNS));
/** A request that has no answer by then is a hang. */
const DEADLINE_MS = 10_000;

/** The providers' own hosts resolve to an address the policy denies: a target that lost its custom_host gets a 403, never a real provider. */
const ELSEWHERE = '192.0.2.1';
const dns = fakeDns({ 'api.openai.com': ELSEWHERE, 'api.groq.com': ELSEWHERE, 'api.together.xyz': ELSEWHERE });
/** OpenAI's wire format, so the mock answers each (ollama's default host is loopback, which the policy allows: left out). */
const PROVIDERS = ['openai', 'groq', 'together-ai'] as const;

// ---------------------------------------------------------------------------
// Values

/** Strings that stress parsers, validators and headers. */
const nasty = fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ud800', '\udfff', '\u{1f600}', '\u00e9', '\u0100', '\r\n', '\t', '__proto__', 'constructor', '-0', '1e400', '%00', '../..', '{{x}}', 'x'.repeat(5000));
const text = fc.oneof(nasty, fc.string({ unit: 'binary', maxLength: 30 }), fc.string({ maxLength: 12 }));
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(1e308, -1e308, 2 ** 53 + 2, 5e-324, 0.5, -0, 1e21));
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small' },
    text,
    number,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(text, tie('json'), { maxKeys: 4 }),
  ),
}));

/** One change to a JSON value: at the path the indices pick (each taken modulo the keys there), set, delete, or wrap in an array. */
interface Edit {
  at: number[];
  op: 'set' | 'delete' | 'wrap';
  value: unknown;
}
const edit: fc.Arbitrary<Edit> = fc.record({ at: fc.array(fc.nat(), { maxLength: 4 }), op: fc.constantFrom('set', 'delete', 'wrap'), value: json });

function applyEdits(base: unknown, edits: readonly Edit[]): unknown {
  const root = { v: structuredClone(base) };
  for (const { at, op, value } of edits) {
    let parent: Record<string, unknown> = root;
    let key = 'v';
    for (const n of at) {
      const here = parent[key];
      if (typeof here !== 'object' || here === null) break;
      const keys = Object.keys(here);
      if (keys.length === 0) break;
      parent = here as Record<string, unknown>;
      key = keys[n % keys.length]!;
    }
    if (op === 'delete' && parent !== root) delete parent[key];
    else parent[key] = op === 'wrap' ? [parent[key]] : value;
  }
  return root.v;
}

/** `base` as sent, or with a few edits. */
const mutated = (base: unknown): fc.Arbitrary<unknown> =>
  fc.oneof(fc.constant(base), fc.array(edit, { minLength: 1, maxLength: 3 }).map((edits) => applyEdits(base, edits)));

/** What can happen to the text of a JSON body on its way. */
type Damage =
  | { kind: 'none' }
  | { kind: 'truncate' | 'nul'; at: number }
  | { kind: 'huge-number' | 'duplicate-key' | 'bom' | 'invalid-utf8' }
  | { kind: 'deep'; depth: number };
const damage: fc.Arbitrary<Damage> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'none' as const }) },
  fc.record({ kind: fc.constantFrom('truncate' as const, 'nul' as const), at: fc.nat() }),
  fc.record({ kind: fc.constantFrom('huge-number' as const, 'duplicate-key' as const, 'bom' as const, 'invalid-utf8' as const) }),
  fc.record({ kind: fc.constant('deep' as const), depth: fc.integer({ min: 100, max: 20_000 }) }),
);

function damaged(value: unknown, d: Damage): Buffer {
  const t = JSON.stringify(value) ?? 'null';
  switch (d.kind) {
    case 'none': return Buffer.from(t);
    case 'truncate': return Buffer.from(t.slice(0, d.at % (t.length + 1)));
    case 'nul': { const i = d.at % (t.length + 1); return Buffer.from(`${t.slice(0, i)}\u0000${t.slice(i)}`); }
    case 'huge-number': return Buffer.from(/\d/.test(t) ? t.replace(/\d+/, '9'.repeat(400)) : `${t.slice(0, -1)},"n":${'9'.repeat(400)}}`);
    case 'duplicate-key': return Buffer.from(t.startsWith('{') ? `{"model":[1],"messages":7,${t.slice(1)}` : t);
    case 'bom': return Buffer.from(`\ufeff${t}`);
    case 'invalid-utf8': return Buffer.concat([Buffer.from(t.slice(0, -1)), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(t.slice(-1))]);
    case 'deep': {
      const deep = '['.repeat(d.depth) + ']'.repeat(d.depth);
      return Buffer.from(t.startsWith('{') && t !== '{}' ? `{"deep":${deep},${t.slice(1)}` : deep);
    }
  }
}

const body = (base: unknown): fc.Arbitrary<Buffer> => fc.tuple(mutated(base), damage).map(([v, d]) => damaged(v, d));

/** Characters Node's client may send in a header value. */
const headerSafe = (s: string): string => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, '');
/** JSON a header can carry: everything past ASCII escaped. */
const asciiJson = (v: unknown): string => (JSON.stringify(v) ?? 'null').replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

// ---------------------------------------------------------------------------
// Requests

interface Case {
  method: string;
  path: string;
  /** Raw header pairs: a name may repeat. */
  headers: [string, string][];
  body?: Buffer;
  /** A config with several targets: a later target's own refusal may follow an earlier target's call. */
  fanOut?: boolean;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** Sends a case as node:http sends raw headers (repeats kept, bytes as given); rejects when no answer comes within DEADLINE_MS. */
function send(base: string, c: Case): Promise<Answer> {
  const u = new URL(base);
  const raw = ['host', u.host, ...c.headers.flat()];
  if (c.body !== undefined) raw.push('content-length', String(c.body.length));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: c.path, method: c.method, headers: raw, agent: false, signal: AbortSignal.timeout(DEADLINE_MS) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (b: Buffer) => chunks.push(b));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', (e) => reject(new Error(`${c.method} ${c.path}: no answer (${e.message})`)));
    req.end(c.body);
  });
}

describe('property: whatever a caller sends, the gateway answers it properly', { timeout: 300_000 }, () => {
  const gw = useGateway({ lookup: dns.lookup, env: { GATEWAY_UPSTREAM_DENY: ELSEWHERE } });
  const upstream = useMockOpenAI();

  /** Sends `c` and checks the answer against the properties; every case goes through here. */
  async function answersProperly(c: Case): Promise<void> {
    const before = upstream().requests.length;
    const a = await send(gw.url, c);
    const calls = upstream().requests.length - before;
    const what = `${c.method} ${c.path} → ${a.status} ${a.text.slice(0, 300)}`;
    assert.ok(a.status < 500, `a 5xx: ${what}`);
    // The mock's own answers carry its request id; anything else is the gateway's.
    const relayed = String(a.headers['x-request-id']).startsWith('req_');
    if (a.status >= 400 && !relayed) {
      // A HEAD answer has no body to hold the envelope.
      if (c.method !== 'HEAD') assert.doesNotThrow(() => envelopeOf(a.text), `not the error envelope: ${what}`);
      if (c.fanOut !== true) assert.equal(calls, 0, `refused after calling the provider: ${what}`);
    }
  }

  async function check<T>(t: TestContext, arb: fc.Arbitrary<T>, toCase: (v: T) => Case, numRuns: number): Promise<void> {
    t.diagnostic(`FC_SEED=${SEED}`);
    await fc.assert(fc.asyncProperty(arb, (v) => answersProperly(toCase(v))), { seed: SEED, numRuns: runs(numRuns) });
    const health = await send(gw.url, { method: 'GET', path: '/health', headers: [] });
    assert.equal(health.status, 200, 'the gateway stopped answering');
  }

  // Arbitraries that need the mock's URL, made once it runs.
  const BAD_HOSTS = ['http://exa mple.com/v1', 'http://127.0.0.1:9/\tv1', 'http://127.0.0.1:9/v1\r\nx: 1', '127.0.0.1:9/v1', 'javascript:alert(1)', 'ftp://127.0.0.1/v1', 'http://ex\u00e9mple.com/v1', 'http://[::1'];
  const host = (): fc.Arbitrary<string> => fc.oneof({ weight: 5, arbitrary: fc.constant(upstream().url) }, fc.constantFrom(...BAD_HOSTS));
  const FORWARDED = ['x-trace', 'X-Trace', 'expect', 'connection', 'transfer-encoding', 'host', 'content-length', 'proxy-x', 'not a name', 'authorization', 'x-gateway-api-key'];

  function leaf(): fc.Arbitrary<Record<string, unknown>> {
    return fc.record(
      {
        provider: fc.constantFrom(...PROVIDERS),
        api_key: fc.oneof({ weight: 5, arbitrary: fc.constant('sk-test') }, text),
        custom_host: host(),
        name: fc.constantFrom('a', 'b'),
        retry: fc.record({ attempts: fc.integer({ min: 0, max: 2 }) }),
        override_params: fc.dictionary(fc.constantFrom('temperature', 'model', 'max_tokens', 'x'), json, { maxKeys: 2 }),
        forward_headers: fc.subarray(FORWARDED, { maxLength: 2 }),
        cache: fc.constant({ mode: 'simple' }),
        request_timeout: fc.constant(60_000),
      },
      { requiredKeys: ['provider', 'api_key', 'custom_host'] },
    );
  }

  function config(): fc.Arbitrary<unknown> {
    const query = fc.dictionary(fc.constantFrom('metadata.x', 'params.model', 'params.messages[0].role', 'url.pathname', '$or', '$and'), json, { maxKeys: 2 });
    const tree = fc.oneof(
      leaf(),
      fc.record({ strategy: fc.record({ mode: fc.constantFrom('fallback', 'loadbalance', 'single') }), targets: fc.array(leaf(), { minLength: 1, maxLength: 3 }) }),
      fc.record({
        strategy: fc.record({ mode: fc.constant('conditional'), conditions: fc.array(fc.record({ query, then: fc.constant('a') }), { minLength: 1, maxLength: 2 }), default: fc.constant('b') }),
        targets: fc.tuple(leaf(), leaf()).map(([a, b]) => [{ ...a, name: 'a' }, { ...b, name: 'b' }]),
      }),
    );
    return tree.chain(mutated);
  }

  interface Routing {
    headers: [string, string][];
    fanOut: boolean;
  }

  /** The routing headers of a model request: by headers, an inline config, or junk in their place. */
  function routing(): fc.Arbitrary<Routing> {
    const byHeaders = fc.tuple(fc.constantFrom(...PROVIDERS, 'nope', '@nope', ''), host(), fc.oneof(fc.constant('Bearer sk-test'), text.map(headerSafe))).map(
      ([provider, h, auth]): Routing => ({ headers: [['x-gateway-provider', provider], ['x-gateway-custom-host', headerSafe(h)], ['authorization', auth]], fanOut: false }),
    );
    const byConfig = config().map((c): Routing => {
      const targets = (c as { targets?: unknown } | null)?.targets;
      return { headers: [['x-gateway-config', asciiJson(c)]], fanOut: Array.isArray(targets) && targets.length > 1 };
    });
    const junk = text.map((s): Routing => ({ headers: [['x-gateway-config', headerSafe(s)]], fanOut: false }));
    return fc.oneof({ weight: 2, arbitrary: byHeaders }, { weight: 3, arbitrary: byConfig }, junk);
  }

  /** Other gateway headers, some with junk, any of them possibly twice. */
  function extras(): fc.Arbitrary<[string, string][]> {
    const values: Record<string, fc.Arbitrary<string>> = {
      'x-gateway-metadata': fc.oneof(fc.dictionary(fc.constantFrom('x', '_user', 'a'), fc.constantFrom('a', 'b', ''), { maxKeys: 2 }).map(asciiJson), json.map(asciiJson)),
      'x-gateway-request-timeout': fc.constantFrom('abc', '0', '-1', '1.5', '', '60000', '9'.repeat(30)),
      'x-gateway-forward-headers': fc.subarray(FORWARDED).map((names) => names.join(', ')),
      'x-gateway-trace-id': fc.oneof(fc.constantFrom('abc', 'x'.repeat(300), ''), text.map(headerSafe)),
      'x-gateway-span-id': text.map(headerSafe),
      'x-gateway-cache-namespace': text.map(headerSafe),
      'x-gateway-cache-force-refresh': fc.constantFrom('true', 'false', 'yes'),
      'x-gateway-strict-compat-compliance': fc.constantFrom('true', 'false', 'maybe'),
      'x-gateway-virtual-key': fc.constantFrom('nope', '@nope', ''),
      traceparent: fc.constantFrom('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'garbage', ''),
      'x-trace': fc.constant('abc'),
    };
    const one = fc.constantFrom(...Object.keys(values)).chain((name) => values[name]!.map((v): [string, string] => [name, v]));
    return fc.tuple(fc.array(one, { maxLength: 4 }), fc.boolean()).map(([hs, twice]) => (twice && hs.length > 0 ? [...hs, hs[0]!] : hs));
  }

  const modelCase = (path: string) => ([routed, more, b]: [Routing, [string, string][], Buffer]): Case => ({
    method: 'POST',
    path,
    headers: [['x-gateway-api-key', ADMIN_KEY], ['content-type', 'application/json'], ...routed.headers, ...more],
    body: b,
    fanOut: routed.fanOut,
  });

  it('chat completions', async (t) => {
    const base = (stream: boolean) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) });
    await check(t, fc.tuple(routing(), extras(), fc.boolean().chain((s) => body(base(s)))), modelCase('/v1/chat/completions'), 1200);
  });

  it('embeddings', async (t) => {
    await check(t, fc.tuple(routing(), extras(), body({ model: 'text-embedding-3-small', input: ['a', 'b'] })), modelCase('/v1/embeddings'), 500);
  });

  it('the generic proxy', async (t) => {
    const paths = ['/v1/echo', '/v1/files', '/v1/models/x', '/v1/x/%2e%2e/y', '/v1/a?b=%zz', '//v1/echo', '/v1/', '/v1/rerank?x=' + 'a'.repeat(100)];
    const arb = fc.tuple(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'), fc.constantFrom(...paths), routing(), extras(), fc.option(body({ query: 'q', documents: ['a'] }), { nil: undefined }));
    const toCase = ([method, path, routed, more, b]: [string, string, Routing, [string, string][], Buffer | undefined]): Case => ({
      method,
      path,
      headers: [['x-gateway-api-key', ADMIN_KEY], ['content-type', 'application/json'], ...routed.headers, ...more],
      body: b,
      fanOut: routed.fanOut,
    });
    await check(t, arb, toCase, 500);
  });

  it('management routes with the admin key: bad bodies and queries are 4xx in the envelope', async (t) => {
    const target = { provider: 'openai', api_key: 'sk-test', custom_host: 'http://127.0.0.1:9/v1' };
    const routes: [string, string, unknown][] = [
      ['POST', '/v1/configs', { name: 'c', config: target }],
      ['POST', '/v1/virtual-keys', { name: 'v', provider: 'openai', key: 'sk-1', custom_host: 'http://127.0.0.1:9/v1' }],
      ['POST', '/v1/integrations', { name: 'i', ai_provider_id: 'openai', key: 'sk-1' }],
      ['POST', '/v1/workspaces', { name: 'w', description: 'd' }],
      ['POST', '/v1/api-keys/organisation/service', { name: 'k', scopes: ['completions.write'] }],
      ['POST', '/v1/prompts', { name: 'p', string: 'hi {{x}}', parameters: { x: 'y' }, model: 'gpt-4o-mini' }],
      ['POST', '/v1/guardrails', { name: 'g', checks: [{ id: 'default.wordCount', parameters: { minWords: 1 } }], actions: { deny: true } }],
      ['POST', '/v1/policies/rate-limits', { name: 'r', conditions: [], group_by: [], type: 'requests', unit: 'rpm', value: 1 }],
      ['PUT', '/v1/configs/nope', { config: target }],
      ['POST', '/v1/api-keys/nope/rotate', { key_transition_period_ms: 1 }],
    ];
    const queries = ['', '?limit=0', '?limit=x', '?after=%00', '?workspace_id=nope', '?current_page=-1&page_size=1e9', '?metadata=%7B', '?%zz=1'];
    const reads = ['/v1/logs', '/v1/configs', '/v1/guardrails', '/v1/workspaces', '/v1/virtual-keys', '/v1/logs/groups/model', '/v1/analytics/groups/nope', '/v1/models'];
    const write = fc.constantFrom(...routes).chain(([method, path, b]) => body(b).map((bytes): Case => ({ method, path, headers: [['x-gateway-api-key', ADMIN_KEY], ['content-type', 'application/json']], body: bytes })));
    const read = fc.tuple(fc.constantFrom(...reads), fc.constantFrom(...queries)).map(([path, q]): Case => ({ method: 'GET', path: path + q, headers: [['x-gateway-api-key', ADMIN_KEY]] }));
    await check(t, fc.oneof({ weight: 3, arbitrary: write }, read), (c) => c, 800);
  });
});
