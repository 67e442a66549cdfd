// The checks that call out — default.webhook, default.log, default.jwt,
// default.inlineImageUrls — and the third-party openai.moderateContent, each
// against a mock server of its own: pass, fail, `not`, errors (timeouts, a
// denied address, oversized answers) and failOnError, and parameters refused
// at config validation with their path.
import crypto, { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../src/config/schema.js';
import { NO_REACH, type HookKind, type Reach } from '../src/guardrails/check.js';
import { runHooks, type HookRun } from '../src/guardrails/engine.js';
import type { CheckResult } from '../src/guardrails/results.js';
import { compileHooks } from '../src/guardrails/hooks.js';
import { pause, startMockServer, type MockServer } from './support/mock-server.js';

type Json = Record<string, any>;

interface Case {
  kind?: HookKind;
  text?: string;
  request?: Json;
  reach?: Partial<Reach>;
  /** The hook's own keys (deny, …) beside its checks. */
  hook?: Json;
}

function hooksOf(id: string, parameters: Json, kind: HookKind, hook: Json = {}) {
  const key = kind === 'before' ? 'before_request_hooks' : 'after_request_hooks';
  const h = compileHooks({ [key]: [{ id: 'h', ...hook, checks: [{ id, parameters }] }] }, { left: 500 });
  if (!h.ok) assert.fail(`${id}: ${h.problem.message}`);
  return h.value[kind];
}

async function run(id: string, parameters: Json, c: Case = {}): Promise<Omit<HookRun, 'json'> & { json: Json; check: CheckResult }> {
  const kind = c.kind ?? 'before';
  const text = c.text ?? 'hello world';
  const request = c.request ?? { model: 'gpt-4o', messages: [{ role: 'user', content: text }] };
  const answer = kind === 'after' ? { id: 'chatcmpl-1', choices: [{ index: 0, message: { role: 'assistant', content: text } }] } : null;
  const r = await runHooks(hooksOf(id, parameters, kind, c.hook), {
    kind,
    endpoint: 'chat',
    requestType: 'chatComplete',
    model: 'gpt-4o',
    metadata: { team: 'a' },
    request,
    answer,
    reach: { ...NO_REACH, ...c.reach },
  });
  const results = r.results;
  return { ...r, results, check: results[0]!.checks[0]! };
}

/** The 400 of a config with this check: its param. */
function refusedAt(id: string, parameters: Json, key = 'before_request_hooks'): string | null {
  const r = parseConfig({ [key]: [{ id: 'h', checks: [{ id, parameters }] }] });
  if (r.ok) assert.fail(`expected ${id} ${JSON.stringify(parameters)} to be refused`);
  assert.equal(r.error.status, 400);
  return r.error.param;
}

const at = (p: string): string => `before_request_hooks[0].checks[0].parameters.${p}`;

describe('default.webhook', () => {
  type Script = (event: Json) => { status?: number; json?: unknown; wait?: boolean };
  let hook: MockServer<Script>;
  before(async () => {
    hook = await startMockServer(async (rec, _req, res, signal) => {
      const script: Script = hook.next(rec.path.split('?')[0]!) ?? (() => ({ json: { verdict: true } }));
      const a = script(rec.json);
      if (a.wait === true) await pause(60_000, signal);
      if (signal.aborted) return;
      res.writeHead(a.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(a.json));
    });
  });
  after(() => hook.close());
  beforeEach(() => hook.reset());

  it('posts the event with the configured headers; its verdict is the check’s, `not` inverts it', async () => {
    hook.enqueue('/judge', () => ({ json: { verdict: true, data: { score: 0.1 } } }), () => ({ json: { verdict: false } }), () => ({ json: { verdict: false } }));
    const params = { webhookURL: `${hook.url}/judge`, headers: { Authorization: 'Bearer hook-secret' } };
    const pass = await run('default.webhook', params, { text: 'judge me' });
    assert.equal(pass.check.verdict, true);
    assert.deepEqual(pass.check.data, { webhook: hook.url, responseData: { score: 0.1 } });
    const sent = hook.requests[0]!;
    assert.equal(sent.headers.authorization, 'Bearer hook-secret');
    assert.equal(sent.json.eventType, 'beforeRequestHook');
    assert.equal(sent.json.request.text, 'judge me');
    assert.deepEqual(sent.json.request.json.messages, [{ role: 'user', content: 'judge me' }]);
    assert.deepEqual(sent.json.metadata, { team: 'a' });
    assert.equal(sent.json.response.json, null);
    assert.equal((await run('default.webhook', params)).check.verdict, false);
    assert.equal((await run('default.webhook', { ...params, not: true })).check.verdict, true);
    // The secret is in no result.
    assert.doesNotMatch(JSON.stringify(pass.results), /hook-secret/);
  });

  it('a transformed request replaces the body before the request; a transformed response the answer after', async () => {
    const replaced = { model: 'gpt-4o', messages: [{ role: 'user', content: '[redacted by webhook]' }] };
    hook.enqueue('/t', () => ({ json: { verdict: true, transformedData: { request: { json: replaced } } } }));
    const b = await run('default.webhook', { webhookURL: `${hook.url}/t` });
    assert.equal(b.check.transformed, true);
    assert.deepEqual(b.json, replaced);
    const answer = { id: 'x', choices: [{ index: 0, message: { role: 'assistant', content: 'rewritten' } }] };
    hook.enqueue('/t', (ev) => {
      assert.equal(ev.eventType, 'afterRequestHook');
      assert.equal(ev.response.text, 'the answer');
      return { json: { verdict: false, transformedData: { response: { json: answer } } } };
    });
    const a = await run('default.webhook', { webhookURL: `${hook.url}/t` }, { kind: 'after', text: 'the answer' });
    assert.equal(a.check.verdict, false);
    assert.deepEqual(a.json, answer);
  });

  it('a webhook that does not answer in time, answers an error or no verdict has errored: it fails only with failOnError', async () => {
    hook.enqueue('/slow', () => ({ wait: true }), () => ({ wait: true }));
    const lenient = await run('default.webhook', { webhookURL: `${hook.url}/slow`, timeout: 100 }, { hook: { deny: true } });
    assert.match(lenient.check.error!.message, /did not answer within 100 ms/);
    assert.equal(lenient.denied, false);
    assert.equal(lenient.json.messages[0].content, 'hello world');
    const strict = await run('default.webhook', { webhookURL: `${hook.url}/slow`, timeout: 100, failOnError: true }, { hook: { deny: true } });
    assert.equal(strict.denied, true);
    hook.enqueue('/bad', () => ({ status: 500, json: { error: 'boom' } }), () => ({ json: { ok: true } }));
    assert.match((await run('default.webhook', { webhookURL: `${hook.url}/bad` })).check.error!.message, /answered 500/);
    assert.match((await run('default.webhook', { webhookURL: `${hook.url}/bad` })).check.error!.message, /without a boolean verdict/);
  });

  it('a denied address is never called', async () => {
    const r = await run('default.webhook', { webhookURL: 'http://169.254.169.254/latest' });
    assert.match(r.check.error!.message, /upstream policy/);
  });

  it('refuses bad parameters at config validation, naming them', () => {
    assert.equal(refusedAt('default.webhook', {}), 'before_request_hooks[0].checks[0].parameters.webhookURL');
    assert.equal(refusedAt('default.webhook', { webhookURL: 'ftp://x' }), at('webhookURL'));
    assert.equal(refusedAt('default.webhook', { webhookURL: 'http://x', headers: { 'bad name': 'v' } }), at('headers.bad name'));
    assert.equal(refusedAt('default.webhook', { webhookURL: 'http://x', headers: { host: 'v' } }), at('headers.host'));
    assert.equal(refusedAt('default.webhook', { webhookURL: 'http://x', headers: { a: 'line\nbreak' } }), at('headers.a'));
    assert.equal(refusedAt('default.webhook', { webhookURL: 'http://x', headers: '{not json' }), at('headers'));
    assert.equal(refusedAt('default.webhook', { webhookURL: 'http://x', timeout: 0 }), at('timeout'));
    // Portkey's headers as JSON text are taken.
    assert.equal(parseConfig({ before_request_hooks: [{ id: 'h', checks: [{ id: 'default.webhook', parameters: { webhookURL: 'http://x', headers: '{"a":"b"}' } }] }] }).ok, true);
  });
});

describe('default.log', () => {
  let collector: MockServer<number>;
  before(async () => {
    collector = await startMockServer((rec, _req, res) => {
      res.writeHead(collector.next(rec.path) ?? 200).end('{}');
    });
  });
  after(() => collector.close());

  it('posts the event and passes; a failed post is an error, failing only with failOnError', async () => {
    const ok = await run('default.log', { logURL: `${collector.url}/events`, headers: '{"x-token":"t"}' }, { kind: 'after', text: 'done' });
    assert.equal(ok.check.verdict, true);
    assert.equal(collector.requests.at(-1)!.json.response.text, 'done');
    assert.equal(collector.requests.at(-1)!.headers['x-token'], 't');
    collector.enqueue('/events', 503, 503);
    const failed = await run('default.log', { logURL: `${collector.url}/events` });
    assert.match(failed.check.error!.message, /answered 503/);
    assert.equal(failed.failed, false);
    assert.equal((await run('default.log', { logURL: `${collector.url}/events`, failOnError: true })).failed, true);
    assert.equal((await run('default.log', { logURL: `${collector.url}/events`, not: true })).check.verdict, false);
    assert.equal(refusedAt('default.log', { logURL: 'nope' }), at('logURL'));
  });
});

describe('default.jwt', () => {
  let jwks: MockServer<never>;
  let keys: Json[] = [];
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = (k: KeyObject, kid: string, alg: string): Json => ({ ...k.export({ format: 'jwk' }), kid, alg, use: 'sig' });
  let n = 0;
  /** A JWKS URI of its own per test: the set is cached per URI. */
  const uri = (): string => `${jwks.url}/jwks-${++n}.json`;

  before(async () => {
    jwks = await startMockServer((_rec, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
    });
    keys = [jwk(ec.publicKey, 'ec-1', 'ES256'), jwk(rsa.publicKey, 'rsa-1', 'RS256')];
  });
  after(() => jwks.close());

  const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
  function token(claims: Json, o: { kid?: string; alg?: string; key?: KeyObject } = {}): string {
    const alg = o.alg ?? 'ES256';
    const data = `${b64({ alg, kid: o.kid ?? 'ec-1', typ: 'JWT' })}.${b64(claims)}`;
    const key = o.key ?? (alg === 'RS256' ? rsa.privateKey : ec.privateKey);
    const sig = sign('sha256', Buffer.from(data), alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key);
    return `${data}.${sig.toString('base64url')}`;
  }
  const now = (): number => Math.floor(Date.now() / 1000);
  const bearer = (t: string): Partial<Reach> => ({ headers: { authorization: `Bearer ${t}` } });

  it('passes a token signed by a key of the JWKS, fails a forged, expired, too old or missing one; `not` inverts', async () => {
    const p = { jwksUri: uri() };
    const good = token({ sub: 'u', iat: now(), exp: now() + 60 });
    assert.equal((await run('default.jwt', p, { reach: bearer(good) })).check.verdict, true);
    assert.equal((await run('default.jwt', { ...p, not: true }, { reach: bearer(good) })).check.verdict, false);
    assert.equal((await run('default.jwt', p, { reach: bearer(token({ iat: now() }, { alg: 'RS256', kid: 'rsa-1' })) })).check.verdict, true);
    const forged = token({ iat: now() }, { key: other.privateKey });
    assert.match((await run('default.jwt', p, { reach: bearer(forged) })).check.explanation, /signature does not verify/);
    assert.match((await run('default.jwt', p, { reach: bearer(token({ iat: now() - 120, exp: now() - 60 })) })).check.explanation, /expired/);
    assert.match((await run('default.jwt', { ...p, maxTokenAge: '1m' }, { reach: bearer(token({ iat: now() - 3600 })) })).check.explanation, /older than maxTokenAge/);
    // Within clockTolerance, a token a little past its exp still passes.
    assert.equal((await run('default.jwt', { ...p, clockTolerance: 30 }, { reach: bearer(token({ iat: now() - 20, exp: now() - 10 })) })).check.verdict, true);
    const missing = await run('default.jwt', p);
    assert.equal(missing.check.verdict, false);
    assert.equal(missing.check.error, null);
    // The JWKS was fetched once for all of these.
    assert.equal(jwks.requests.filter((r) => r.path === new URL(p.jwksUri).pathname).length, 1);
  });

  it('reads the header named by headerKey; refuses algorithms not allowed, alg none and a key of another type', async () => {
    const p = { jwksUri: uri(), headerKey: 'X-User-Token' };
    const t = token({ iat: now() });
    assert.equal((await run('default.jwt', p, { reach: { headers: { 'x-user-token': t } } })).check.verdict, true);
    assert.match((await run('default.jwt', { ...p, algorithms: ['RS256'] }, { reach: { headers: { 'x-user-token': t } } })).check.explanation, /algorithm ES256 is not allowed/);
    const none = `${b64({ alg: 'none', kid: 'ec-1' })}.${b64({ iat: now() })}.`;
    assert.equal((await run('default.jwt', p, { reach: { headers: { 'x-user-token': none } } })).check.verdict, false);
    // An RSA-signed token naming the EC key: not verified with it.
    const confused = token({ iat: now() }, { alg: 'RS256', kid: 'ec-1' });
    assert.match((await run('default.jwt', p, { reach: { headers: { 'x-user-token': confused } } })).check.explanation, /no key of the JWKS/);
  });

  it('imports each key of a fetched set once, not per request', async (t) => {
    const imports = t.mock.method(crypto, 'createPublicKey');
    const p = { jwksUri: uri() };
    for (let i = 0; i < 5; i++) assert.equal((await run('default.jwt', p, { reach: bearer(token({ iat: now() })) })).check.verdict, true);
    assert.equal(imports.mock.callCount(), 1);
    assert.equal((await run('default.jwt', p, { reach: bearer(token({ iat: now() }, { alg: 'RS256', kid: 'rsa-1' })) })).check.verdict, true);
    assert.equal((await run('default.jwt', p, { reach: bearer(token({ iat: now() }, { alg: 'RS256', kid: 'rsa-1' })) })).check.verdict, true);
    assert.equal(imports.mock.callCount(), 2, 'a second key, imported when first named');
  });

  it('a key id the cached set lacks does not fetch the set again soon after the last fetch', async () => {
    const p = { jwksUri: uri() };
    assert.equal((await run('default.jwt', p, { reach: bearer(token({ iat: now() })) })).check.verdict, true);
    const rotated = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    keys = [...keys, jwk(rotated.publicKey, 'ec-2', 'ES256')];
    // Within 10 s of the last fetch, an unknown kid is not fetched again: made-up key ids cannot make every request a fetch.
    const r = await run('default.jwt', p, { reach: bearer(token({ iat: now() }, { kid: 'ec-2', key: rotated.privateKey })) });
    assert.equal(r.check.verdict, false);
    assert.equal(jwks.requests.filter((q) => q.path === new URL(p.jwksUri).pathname).length, 1);
  });

  it('a JWKS that cannot be fetched is an error', async () => {
    const r = await run('default.jwt', { jwksUri: 'http://169.254.169.254/jwks.json' }, { reach: bearer(token({ iat: now() })) });
    assert.match(r.check.error!.message, /upstream policy/);
    assert.equal((await run('default.jwt', { jwksUri: 'http://169.254.169.254/jwks.json', failOnError: true }, { reach: bearer(token({ iat: now() })) })).failed, true);
  });

  it('refuses bad parameters, and runs only before the request', () => {
    assert.equal(refusedAt('default.jwt', {}), at('jwksUri'));
    assert.equal(refusedAt('default.jwt', { jwksUri: 'x' }), at('jwksUri'));
    assert.equal(refusedAt('default.jwt', { jwksUri: 'http://x', maxTokenAge: 'soon' }), at('maxTokenAge'));
    assert.equal(refusedAt('default.jwt', { jwksUri: 'http://x', algorithms: ['HS256'] }), `${at('algorithms')}[0]`);
    assert.equal(refusedAt('default.jwt', { jwksUri: 'http://x', clockTolerance: -1 }), at('clockTolerance'));
    assert.equal(refusedAt('default.jwt', { jwksUri: 'http://x' }, 'after_request_hooks'), 'after_request_hooks[0].checks[0].id');
  });
});

describe('default.inlineImageUrls', () => {
  let images: MockServer<never>;
  const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(1000, 7)]);
  before(async () => {
    images = await startMockServer(async (rec, _req, res, signal) => {
      if (rec.path === '/slow.png') await pause(60_000, signal);
      if (signal.aborted) return;
      if (rec.path === '/page.html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
      res.writeHead(200, { 'content-type': 'image/png' }).end(png);
    });
  });
  after(() => images.close());

  const withImages = (...urls: string[]): Json => ({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, ...urls.map((url) => ({ type: 'image_url', image_url: { url, detail: 'low' } }))] }],
  });
  const urlsOf = (json: Json): string[] => json.messages[0].content.slice(1).map((p: Json) => p.image_url.url);

  it('inlines every image URL as a base64 data URL, leaving data URLs alone', async () => {
    const data = 'data:image/gif;base64,R0lGOD';
    const r = await run('default.inlineImageUrls', {}, { request: withImages(`${images.url}/a.png`, data) });
    assert.equal(r.check.verdict, true);
    assert.equal(r.check.transformed, true);
    assert.deepEqual(urlsOf(r.json), [`data:image/png;base64,${png.toString('base64')}`, data]);
    assert.equal(r.json.messages[0].content[1].image_url.detail, 'low');
    assert.equal((await run('default.inlineImageUrls', { not: true }, { request: withImages(`${images.url}/a.png`) })).check.verdict, false);
  });

  it('only for the listed providers, when the provider is known', async () => {
    const request = withImages(`${images.url}/a.png`);
    const skipped = await run('default.inlineImageUrls', { providers: ['bedrock'] }, { request, reach: { provider: 'openai' } });
    assert.equal(skipped.check.transformed, false);
    assert.equal(urlsOf(skipped.json)[0], `${images.url}/a.png`);
    const done = await run('default.inlineImageUrls', { providers: ['bedrock'] }, { request, reach: { provider: 'bedrock' } });
    assert.match(urlsOf(done.json)[0]!, /^data:image\/png;base64,/);
  });

  it('an image over maxSizeBytes, too slow, not an image or at a denied address is an error: the request goes on unchanged', async () => {
    for (const [url, params, why] of [
      [`${images.url}/a.png`, { maxSizeBytes: 100 }, /over the 100 bytes|more than the 100 bytes/],
      [`${images.url}/slow.png`, { timeoutMs: 100 }, /did not answer within 100 ms/],
      [`${images.url}/page.html`, {}, /text\/html, not an image/],
      ['http://169.254.169.254/latest/meta-data/x.png', {}, /upstream policy/],
    ] as const) {
      const r = await run('default.inlineImageUrls', params, { request: withImages(url), hook: { deny: true } });
      assert.match(r.check.error?.message ?? '', why, url);
      assert.equal(r.denied, false);
      assert.deepEqual(urlsOf(r.json), [url]);
    }
    const strict = await run('default.inlineImageUrls', { maxSizeBytes: 100, failOnError: true }, { request: withImages(`${images.url}/a.png`), hook: { deny: true } });
    assert.equal(strict.denied, true);
  });

  it('refuses bad parameters, and runs only before the request', () => {
    assert.equal(refusedAt('default.inlineImageUrls', { maxSizeBytes: 0 }), at('maxSizeBytes'));
    assert.equal(refusedAt('default.inlineImageUrls', { timeoutMs: 'soon' }), at('timeoutMs'));
    assert.equal(refusedAt('default.inlineImageUrls', { providers: 'openai' }), at('providers'));
    assert.equal(refusedAt('default.inlineImageUrls', {}, 'after_request_hooks'), 'after_request_hooks[0].checks[0].id');
  });
});

describe('openai.moderateContent (third-party guardrail)', () => {
  let moderation: MockServer<boolean>;
  const KEY = 'sk-moderation-stored';
  before(async () => {
    // OpenAI's /v1/moderations wire format: {input, model} → {id, model, results: [{flagged, categories, category_scores}]}.
    moderation = await startMockServer(async (rec, _req, res, signal) => {
      if (rec.json?.model === 'slow-moderation') await pause(60_000, signal);
      if (signal.aborted) return;
      if (rec.path !== '/v1/moderations' || rec.headers.authorization !== `Bearer ${KEY}`) {
        return void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } }));
      }
      const inputs: string[] = Array.isArray(rec.json.input) ? rec.json.input : [rec.json.input];
      const results = inputs.map((text) => {
        const violent = /\bkill\b/i.test(text);
        return {
          flagged: violent,
          categories: { harassment: false, hate: false, violence: violent, 'self-harm': false, sexual: false },
          category_scores: { harassment: 0.001, hate: 0.0002, violence: violent ? 0.93 : 0.004, 'self-harm': 0.0001, sexual: 0.0003 },
        };
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `modr-${createHash('md5').update(rec.body).digest('hex').slice(0, 8)}`, model: rec.json.model, results }));
    });
  });
  after(() => moderation.close());

  /** A workspace holding one stored OpenAI credential, `mod-key`, for the mock's host. */
  const stored = (fields: Json = {}, provider = 'openai'): Partial<Reach> => ({
    credential: async (kind, ref) => ({ ok: true, value: kind === 'virtual_key' && ref === 'mod-key' ? { provider, fields: { api_key: KEY, custom_host: `${moderation.url}/v1`, ...fields } } : null }),
  });
  const params = (over: Json = {}): Json => ({ apiDomain: moderation.url, credential: 'mod-key', ...over });

  it('passes what is not flagged, fails what is, with the stored key; a guardrail with it denies by default', async () => {
    const clean = await run('openai.moderateContent', params(), { text: 'a kind word', reach: stored() });
    assert.equal(clean.check.verdict, true);
    assert.deepEqual(moderation.requests.at(-1)!.json, { input: ['a kind word'], model: 'omni-moderation-latest' });
    const flagged = await run('openai.moderateContent', params({ model: 'text-moderation-latest' }), { kind: 'after', text: 'I will kill it', reach: stored() });
    assert.equal(flagged.check.verdict, false);
    assert.deepEqual(flagged.check.data, { model: 'text-moderation-latest', flagged: true, categories: ['violence'] });
    assert.equal((await run('openai.moderateContent', params({ not: true }), { text: 'I will kill it', reach: stored() })).check.verdict, true);
    const compiled = compileHooks({ input_guardrails: [{ 'openai.moderateContent': params() }, { 'openai.moderateContent': params(), deny: false }] }, { left: 500 });
    assert.ok(compiled.ok);
    assert.deepEqual(
      compiled.value.before.map((h) => h.deny),
      [true, false],
    );
  });

  it('sends the stored key only to its stored host, and only an OpenAI credential', async () => {
    const before = moderation.requests.length;
    const elsewhere = await run('openai.moderateContent', params({ apiDomain: 'https://attacker.example' }), { reach: stored() });
    assert.match(elsewhere.check.error!.message, /is sent only to http:\/\/127\.0\.0\.1:\d+, where it is stored/);
    const unstoredHost = await run('openai.moderateContent', params(), { reach: stored({ custom_host: undefined }) });
    assert.match(unstoredHost.check.error!.message, /sent only to https:\/\/api\.openai\.com/);
    assert.match((await run('openai.moderateContent', params(), { reach: stored({}, 'anthropic') })).check.error!.message, /is for anthropic, not openai/);
    assert.match((await run('openai.moderateContent', params({ credential: 'nope' }), { reach: stored() })).check.error!.message, /not one of this workspace/);
    assert.equal(moderation.requests.length, before);
  });

  it('an API error or a timeout is an error, the keys in no result; failOnError fails the hook', async () => {
    const wrongKey: Partial<Reach> = { credential: async () => ({ ok: true, value: { provider: 'openai', fields: { api_key: 'sk-wrong', custom_host: moderation.url } } }) };
    const r = await run('openai.moderateContent', params(), { reach: wrongKey });
    assert.match(r.check.error!.message, /answered 401/);
    assert.doesNotMatch(JSON.stringify(r.results), /sk-wrong|sk-moderation/);
    assert.equal((await run('openai.moderateContent', params({ failOnError: true }), { reach: wrongKey })).failed, true);
    const slow = await run('openai.moderateContent', params({ model: 'slow-moderation', timeout: 100 }), { reach: stored() });
    assert.match(slow.check.error!.message, /did not answer within 100 ms/);
  });

  it('refuses bad parameters: apiDomain and credential are required', () => {
    assert.equal(refusedAt('openai.moderateContent', { credential: 'k' }), at('apiDomain'));
    assert.equal(refusedAt('openai.moderateContent', { apiDomain: 'api.openai.com' }), at('credential'));
    assert.equal(refusedAt('openai.moderateContent', { apiDomain: 'bad host', credential: 'k' }), at('apiDomain'));
    assert.equal(refusedAt('openai.moderateContent', { apiDomain: 'api.openai.com', credential: 'k', timeout: 0 }), at('timeout'));
    assert.equal(refusedAt('openai.moderateContent', { apiDomain: 'api.openai.com', credential: 'k', policyId: 'p' }), at('policyId'));
  });
});
