// Where the Cohere adapter sends calls, and with which credential.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CallInput, ProviderCall } from '../contract.js';
import { cohere } from './adapter.js';

describe('cohere: where prepare() sends calls', () => {
  const settings = { api_key: 'co-k' };
  const prepare = (input: Partial<CallInput>): ProviderCall => {
    const r = cohere.adapter.prepare({
      target: { provider: 'cohere', settings, clientAuthorization: undefined, customHost: undefined },
      endpoint: 'proxy',
      path: '/',
      body: null,
      ...input,
    });
    assert.ok(!(r instanceof Promise) && r.ok);
    return r.value;
  };

  it('Cohere\'s own host by default; a custom host replaces it (a trailing slash is fine)', () => {
    assert.equal(prepare({ endpoint: 'chat', path: '/chat/completions' }).url, 'https://api.cohere.com/v2/chat');
    assert.equal(prepare({ endpoint: 'embeddings', path: '/embeddings' }).url, 'https://api.cohere.com/v2/embed');
    const target = { provider: 'cohere', settings, clientAuthorization: undefined, customHost: 'http://h:1/base/' };
    assert.equal(prepare({ target, endpoint: 'chat' }).url, 'http://h:1/base/v2/chat');
  });

  it('proxy paths: a leading version segment is Cohere\'s, otherwise /v1', () => {
    const url = (path: string) => prepare({ path }).url;
    assert.equal(url('/v2/rerank'), 'https://api.cohere.com/v2/rerank');
    assert.equal(url('/v1/embed-jobs/abc'), 'https://api.cohere.com/v1/embed-jobs/abc');
    assert.equal(url('/v2?x=1'), 'https://api.cohere.com/v2?x=1');
    assert.equal(url('/rerank'), 'https://api.cohere.com/v1/rerank');
    assert.equal(url('/v2rerank'), 'https://api.cohere.com/v1/v2rerank');
    assert.equal(url('/finetuning/finetuned-models?page_size=1'), 'https://api.cohere.com/v1/finetuning/finetuned-models?page_size=1');
  });

  it("the client's Bearer credential is used when the target has none", () => {
    const target = { provider: 'cohere', settings: {}, clientAuthorization: 'bearer  co-client', customHost: undefined };
    assert.equal(prepare({ target }).headers.authorization, 'Bearer co-client');
  });
});
