// SigV4 signing, against AWS's published example (checked by the mock's own verifier).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { signRequest } from './sigv4.js';
import { verifySigV4 } from '../../../test/support/mock-bedrock.js';

describe('SigV4', () => {
  const EXAMPLE = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };

  it("the mock's verifier accepts AWS's published get-vanilla example and nothing else", () => {
    const req = {
      method: 'GET',
      path: '/',
      headers: {
        host: 'example.amazonaws.com',
        'x-amz-date': '20150830T123600Z',
        authorization:
          'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
      },
      body: Buffer.alloc(0),
    };
    const at = Date.UTC(2015, 7, 30, 12, 36, 0);
    assert.equal(verifySigV4(req, EXAMPLE, 'us-east-1', 'service', at), null);
    assert.equal(verifySigV4({ ...req, method: 'POST' }, EXAMPLE, 'us-east-1', 'service', at)?.type, 'InvalidSignatureException');
    assert.equal(verifySigV4(req, { ...EXAMPLE, secretAccessKey: 'other' }, 'us-east-1', 'service', at)?.type, 'InvalidSignatureException');
    assert.match(verifySigV4(req, EXAMPLE, 'us-east-1', 'service', at + 10 * 60_000)?.message ?? '', /Signature expired/);
  });

  it('signs an ARN path as sent (each segment encoded again for the canonical URI) and the query', async () => {
    const url = new URL(`http://127.0.0.1:9/model/${encodeURIComponent('arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.x.y-v1:0')}/converse?b=2&a=x%20y`);
    const body = '{"messages":[]}';
    const headers = await signRequest({ method: 'POST', url, headers: { 'content-type': 'application/json' }, body, credentials: EXAMPLE, region: 'us-west-2' });
    const req = { method: 'POST', path: url.pathname + url.search, headers, body: Buffer.from(body) };
    assert.equal(verifySigV4(req, EXAMPLE, 'us-west-2'), null);
    // The same signature does not cover the ARN sent unencoded, nor another body.
    assert.equal(verifySigV4({ ...req, path: decodeURIComponent(url.pathname) }, EXAMPLE, 'us-west-2')?.type, 'InvalidSignatureException');
    assert.equal(verifySigV4({ ...req, body: Buffer.from('{}') }, EXAMPLE, 'us-west-2')?.type, 'InvalidSignatureException');
  });
});
