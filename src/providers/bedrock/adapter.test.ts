// Where the Bedrock adapter sends calls, and how it signs them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { bedrock, modelSegment } from './adapter.js';
import type { ProviderCall } from '../contract.js';
import type { BedrockSettings } from './settings.js';
import type { GatewayError, Result } from '../../shared/errors.js';
import { value, refusal } from '../../../test/support/results.js';

describe('prepare', () => {
  const settings: BedrockSettings = { cloud1_access_key_id: 'AKIAIOSFODNN7EXAMPLE', cloud1_secret_access_key: 'secret' };
  const prepare = async (over: Partial<Parameters<typeof bedrock.adapter.prepare>[0]>): Promise<Result<ProviderCall, GatewayError>> =>
    bedrock.adapter.prepare({
      target: { provider: 'bedrock', settings, clientAuthorization: undefined, customHost: undefined },
      endpoint: 'chat',
      path: '/chat/completions',
      body: { model: 'amazon.nova-lite-v1:0', messages: [{ role: 'user', content: 'hi' }] },
      ...over,
    });

  it('without custom_host: bedrock-runtime in the region, us-east-1 by default', async () => {
    const call = value(await prepare({}));
    assert.equal(call.url, 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse');
    assert.equal(call.headers.host, 'bedrock-runtime.us-east-1.amazonaws.com');
    assert.match(call.headers.authorization!, /\/us-east-1\/bedrock\/aws4_request/);
    const eu = value(await prepare({ target: { provider: 'bedrock', settings: { ...settings, cloud1_region: 'eu-central-1' }, clientAuthorization: undefined, customHost: undefined } }));
    assert.match(eu.url, /^https:\/\/bedrock-runtime\.eu-central-1\.amazonaws\.com\//);
  });

  it('the proxy reads a streamed body whole, to sign it, and sends those bytes', async () => {
    const call = value(await prepare({ endpoint: 'proxy', path: '/x', body: null, method: 'PUT', raw: Readable.from([Buffer.from('ab'), Buffer.from('c')]) }));
    assert.equal(call.body?.toString(), 'abc');
    assert.equal(call.kind, 'relayed', 'the answer is relayed as Bedrock sent it');
    assert.equal(call.headers['x-amz-content-sha256'], 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it("a proxied body over InvokeModel's 25 MB limit → 413, not read on", async () => {
    const e = refusal(await prepare({ endpoint: 'proxy', path: '/x', body: null, method: 'POST', raw: Readable.from([Buffer.alloc(20_000_000), Buffer.alloc(5_000_001)]) }));
    assert.equal(e.status, 413);
  });

  it('a custom host that is not a URL → 400 naming custom_host', async () => {
    const e = refusal(await prepare({ target: { provider: 'bedrock', settings, clientAuthorization: undefined, customHost: 'not a url' } }));
    assert.equal(e.param, 'custom_host');
  });

  it('passthrough (no parsed body) cannot be translated: 400', async () => {
    assert.equal(refusal(await prepare({ body: null })).param, 'passthrough');
  });

  it('an ARN, raw or already encoded, is encoded exactly once', () => {
    const arn = 'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0';
    assert.equal(modelSegment(arn), 'arn%3Aaws%3Abedrock%3Aus-east-1%3A%3Afoundation-model%2Fanthropic.claude-3-haiku-20240307-v1%3A0');
    assert.equal(modelSegment(encodeURIComponent(arn)), modelSegment(arn));
  });
});
