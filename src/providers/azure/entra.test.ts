// The Entra ID authority host from the environment, the token cache's bound, and the token answer's.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endlessAnswer } from '../../../test/support/http.js';
import { authorityHost, DEFAULT_AUTHORITY, entraToken, MAX_CACHED } from './entra.js';

describe('authorityHost', () => {
  it('defaults to login.microsoftonline.com and normalises as the SDKs do', () => {
    assert.deepEqual(authorityHost({}), { ok: true, value: DEFAULT_AUTHORITY });
    assert.deepEqual(authorityHost({ AZURE_AUTHORITY_HOST: 'login.microsoftonline.us/' }), { ok: true, value: 'https://login.microsoftonline.us' });
    assert.deepEqual(authorityHost({ AZURE_AUTHORITY_HOST: 'http://127.0.0.1:9/' }), { ok: true, value: 'http://127.0.0.1:9' });
    const bad = authorityHost({ AZURE_AUTHORITY_HOST: 'http://exa mple' });
    assert.ok(!bad.ok && bad.error.status === 500);
  });
});

describe('entraToken cache', () => {
  let server: Server;
  let exchanges = 0;
  const previous = process.env.AZURE_AUTHORITY_HOST;
  before(async () => {
    // An identity platform that issues a fresh hour-long token per exchange.
    server = createServer((req, res) => {
      let form = '';
      req.on('data', (c: Buffer) => (form += c.toString()));
      req.on('end', () => {
        exchanges++;
        // A token endpoint that never ends its answer: read whole, it would fill the gateway's memory.
        if (form.includes('client_id=endless')) {
          return void endlessAnswer(res);
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token_type: 'Bearer', expires_in: 3600, access_token: `token-${exchanges}` }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    process.env.AZURE_AUTHORITY_HOST = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    if (previous === undefined) delete process.env.AZURE_AUTHORITY_HOST;
    else process.env.AZURE_AUTHORITY_HOST = previous;
    await new Promise((r) => server.close(r));
  });

  it(`keeps at most ${MAX_CACHED} credentials' tokens, dropping the least recently used`, async () => {
    const cred = (i: number) => ({ tenantId: 'tenant', clientId: `app-${i}`, clientSecret: 'secret', scope: 'https://cognitiveservices.azure.com/.default' });
    const token = async (i: number) => {
      const r = await entraToken(cred(i));
      assert.ok(r.ok);
      return r.value;
    };
    const kept = await token(0);
    for (let i = 1; i < MAX_CACHED; i++) await token(i);
    assert.equal(await token(0), kept, 'used again: the most recently used now');
    const before = exchanges;
    await token(MAX_CACHED);
    // Full: the new one pushed out the least recently used (1), not the first one made (0).
    assert.equal(await token(0), kept);
    assert.equal(exchanges, before + 1);
    await token(1);
    assert.equal(exchanges, before + 2, "the dropped credential's token is asked for again");
  });

  it('an answer past the token answer bound is refused (502 naming the bound), not read to its end', { timeout: 10_000 }, async () => {
    const r = await entraToken({ tenantId: 'tenant', clientId: 'endless', clientSecret: 'secret', scope: 'https://cognitiveservices.azure.com/.default' });
    assert.ok(!r.ok);
    assert.deepEqual([r.error.status, r.error.code], [502, 'upstream_answer_too_large']);
    assert.match(r.error.message, /more than the 1048576 bytes a token answer may have/);
  });
});
