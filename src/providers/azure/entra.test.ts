// The Entra ID authority host from the environment.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { authorityHost, DEFAULT_AUTHORITY } from './entra.js';

describe('authorityHost', () => {
  it('defaults to login.microsoftonline.com and normalises as the SDKs do', () => {
    assert.deepEqual(authorityHost({}), { ok: true, value: DEFAULT_AUTHORITY });
    assert.deepEqual(authorityHost({ AZURE_AUTHORITY_HOST: 'login.microsoftonline.us/' }), { ok: true, value: 'https://login.microsoftonline.us' });
    assert.deepEqual(authorityHost({ AZURE_AUTHORITY_HOST: 'http://127.0.0.1:9/' }), { ok: true, value: 'http://127.0.0.1:9' });
    const bad = authorityHost({ AZURE_AUTHORITY_HOST: 'http://exa mple' });
    assert.ok(!bad.ok && bad.error.status === 500);
  });
});
