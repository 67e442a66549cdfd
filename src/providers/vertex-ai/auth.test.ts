// Vertex AI's credentials: the token cache on a manual clock, and the signed assertion.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createVerify, generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endlessAnswer } from '../../../test/support/http.js';
import { GatewayError, ok } from '../../shared/errors.js';
import { exchangeAtTokenUri, MAX_CACHED, REFRESH_MARGIN_MS, serviceAccount, signedAssertion, TokenCache, type Exchange, type ServiceAccount } from './auth.js';

const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

function account(email = 'sa@p.iam.gserviceaccount.com'): ServiceAccount {
  const sa = serviceAccount({ type: 'service_account', client_email: email, private_key: PEM, private_key_id: 'k1', token_uri: 'https://oauth2.googleapis.com/token', project_id: 'p' });
  assert.ok(sa.ok);
  return sa.value;
}

describe('token cache', () => {
  it('reuses a token until five minutes before it expires, then exchanges again', async () => {
    let now = 1_000_000;
    let exchanges = 0;
    const exchange: Exchange = async () => ok({ accessToken: `t${++exchanges}`, expiresInS: 3600 });
    const cache = new TokenCache(exchange, () => now);
    const sa = account();

    const first = await cache.get(sa);
    assert.deepEqual(first, ok('t1'));
    now += 3600_000 - REFRESH_MARGIN_MS - 1;
    const cached = cache.get(sa);
    assert.ok(!(cached instanceof Promise), 'a cached token answers synchronously');
    assert.deepEqual(cached, ok('t1'));
    now += 1;
    assert.deepEqual(await cache.get(sa), ok('t2'));
    assert.equal(exchanges, 2);
  });

  it('shares one exchange between concurrent callers, and does not cache a failure', async () => {
    let calls = 0;
    let fail = true;
    const exchange: Exchange = async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 20));
      return fail ? { ok: false, error: new GatewayError(400, 'refused', { code: 'invalid_grant' }) } : ok({ accessToken: 'good', expiresInS: 3600 });
    };
    const cache = new TokenCache(exchange);
    const sa = account('other@p.iam.gserviceaccount.com');
    const results = await Promise.all([cache.get(sa), cache.get(sa), cache.get(sa)]);
    assert.equal(calls, 1);
    assert.ok(results.every((r) => !r.ok && r.error.code === 'invalid_grant'));
    fail = false;
    assert.deepEqual(await cache.get(sa), ok('good'));
    assert.equal(calls, 2);
  });

  it(`keeps at most ${MAX_CACHED} accounts' tokens, dropping the least recently used`, async () => {
    let exchanges = 0;
    const cache = new TokenCache(async () => ok({ accessToken: `t${++exchanges}`, expiresInS: 3600 }));
    // Only the cache key matters to the cache; parsing a thousand key files would test nothing more.
    const sa = (i: number) => ({ ...account(), cacheKey: `account-${i}` });
    for (let i = 0; i < MAX_CACHED; i++) await cache.get(sa(i));
    assert.deepEqual(await cache.get(sa(0)), ok('t1'), 'used again: the most recently used now');
    await cache.get(sa(MAX_CACHED));
    assert.deepEqual(await cache.get(sa(0)), ok('t1'));
    assert.equal(exchanges, MAX_CACHED + 1);
    assert.deepEqual(await cache.get(sa(1)), ok(`t${MAX_CACHED + 2}`), 'the least recently used was dropped');
  });

  it('an exchange that throws becomes a 502 and frees the slot', async () => {
    let calls = 0;
    const cache = new TokenCache(async () => {
      calls++;
      throw new Error('boom');
    });
    const sa = account('thrower@p.iam.gserviceaccount.com');
    const r = await cache.get(sa);
    assert.ok(!r.ok && r.error.status === 502);
    await cache.get(sa);
    assert.equal(calls, 2);
  });
});

describe('signed assertion', () => {
  it('is an RS256 JWT over the documented claims, verifiable with the public key', () => {
    const jwt = signedAssertion(account(), 1_700_000_000);
    const [h, c, s] = jwt.split('.');
    assert.ok(createVerify('RSA-SHA256').update(`${h}.${c}`).verify(keys.publicKey, Buffer.from(s!, 'base64url')));
    assert.deepEqual(JSON.parse(Buffer.from(h!, 'base64url').toString()), { alg: 'RS256', typ: 'JWT', kid: 'k1' });
    assert.deepEqual(JSON.parse(Buffer.from(c!, 'base64url').toString()), {
      iss: 'sa@p.iam.gserviceaccount.com',
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      aud: 'https://oauth2.googleapis.com/token',
      iat: 1_700_000_000,
      exp: 1_700_003_600,
    });
  });

  it('the key file is parsed once per config object', () => {
    const json = { client_email: 'x@y', private_key: PEM, token_uri: 'https://t' };
    assert.equal(serviceAccount(json), serviceAccount(json));
  });

  it('refuses a non-RSA key', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const r = serviceAccount({ client_email: 'x@y', private_key: ec, token_uri: 'https://t' });
    assert.ok(!r.ok);
    assert.equal(r.error.param, 'cloud2_service_account_json.private_key');
  });

  it('refuses a token_uri undici could not call (CR/LF, no scheme): a 400 naming it, not a failed exchange', () => {
    for (const uri of ['https://t/token\r\nx: 1', 'oauth2.googleapis.com/token', 'https://t\u00e9/token']) {
      const r = serviceAccount({ client_email: 'x@y', private_key: PEM, token_uri: uri });
      assert.ok(!r.ok, uri);
      assert.equal(r.error.param, 'cloud2_service_account_json.token_uri');
    }
  });
});

describe('token exchange', () => {
  it('an answer past the token answer bound is refused (502 naming the bound), not read to its end', { timeout: 10_000 }, async () => {
    // A token_uri that never ends its answer: read whole, it would fill the gateway's memory.
    let written = (): number => 0;
    const server = createServer((req, res) => {
      req.resume();
      written = endlessAnswer(res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
      const sa = serviceAccount({ client_email: 'endless@p.iam.gserviceaccount.com', private_key: PEM, token_uri: uri });
      assert.ok(sa.ok);
      const r = await exchangeAtTokenUri(sa.value);
      assert.ok(!r.ok);
      assert.deepEqual([r.error.status, r.error.code], [502, 'token_exchange_failed']);
      assert.match(r.error.message, /answered more than the 1048576 bytes a token answer may have/);
      assert.ok(written() < 16 * 1024 * 1024, `token_uri wrote ${written()} bytes`);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
