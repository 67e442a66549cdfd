// Redaction of what a request log keeps: secret-named fields lose their
// values at any depth, credential-shaped strings are cut out anywhere, text
// bodies (SSE) lose both, ordinary fields (max_tokens, logprobs' token) stay,
// long bodies are cut, and only allow-listed headers are kept.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isSecretName, logBody, redactMetadata, redactText, redactValue, REDACTED, safeHeaders } from '../src/logs/redact.js';

const OPENAI_KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz012345';
const AWS_ID = 'AKIAIOSFODNN7EXAMPLE';
const GOOGLE_KEY = `AIza${'B'.repeat(35)}`;
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
const PEM = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----';

describe('isSecretName', () => {
  it('knows secret field names in any spelling', () => {
    for (const n of ['api_key', 'apiKey', 'X-Api-Key', 'openai_api_key', 'client_secret', 'password', 'Authorization', 'access_token', 'refreshToken', 'cloud1_secret_access_key', 'cloud1_access_key_id', 'cloud2_service_account_json', 'private_key', 'credentials', 'cookie']) {
      assert.ok(isSecretName(n), n);
    }
  });

  it('leaves ordinary fields alone', () => {
    for (const n of ['model', 'max_tokens', 'max_completion_tokens', 'prompt_tokens', 'total_tokens', 'token', 'messages', 'content', 'key_name', 'temperature']) {
      assert.ok(!isSecretName(n), n);
    }
  });
});

describe('redactText', () => {
  it('cuts credential shapes out of free text', () => {
    const s = `key ${OPENAI_KEY}, aws ${AWS_ID}, google ${GOOGLE_KEY}, header Bearer abc.def-ghi, jwt ${JWT}, pem ${PEM}.`;
    const out = redactText(s);
    for (const secret of [OPENAI_KEY, AWS_ID, GOOGLE_KEY, 'abc.def-ghi', JWT, 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC']) assert.ok(!out.includes(secret), secret);
    assert.ok(out.startsWith(`key ${REDACTED}, aws ${REDACTED}`), out);
  });

  it('keeps ordinary text as it is', () => {
    const s = 'Tell me about sk-learn and the sky. Tokens: 42.';
    assert.equal(redactText(s), s);
  });
});

describe('logBody', () => {
  it('serialises a parsed body with secret fields replaced at any depth', () => {
    const body = {
      model: 'gpt-4o',
      max_tokens: 10,
      api_key: 'plain-secret',
      messages: [{ role: 'user', content: `my key is ${OPENAI_KEY}` }],
      nested: { deeper: [{ client_secret: { any: 'shape' }, keep: 'me' }] },
    };
    const out = JSON.parse(logBody(body)!);
    assert.equal(out.api_key, REDACTED);
    assert.equal(out.max_tokens, 10);
    assert.equal(out.messages[0].content, `my key is ${REDACTED}`);
    assert.deepEqual(out.nested.deeper[0], { client_secret: REDACTED, keep: 'me' });
    assert.equal(body.api_key, 'plain-secret', 'the caller’s object is not changed');
  });

  it('parses JSON bytes and text, and keeps logprobs tokens', () => {
    const raw = Buffer.from(JSON.stringify({ choices: [{ logprobs: { content: [{ token: 'Hello', logprob: -0.1 }] } }], password: 'hunter2' }));
    const out = JSON.parse(logBody(raw)!);
    assert.equal(out.choices[0].logprobs.content[0].token, 'Hello');
    assert.equal(out.password, REDACTED);
  });

  it('keeps text bodies as text, with secret fields and shapes removed', () => {
    const sse = `data: {"id":"1","choices":[{"delta":{"content":"Hi"}}],"api_key":"abc123"}\n\ndata: {"note":"Bearer zzz.yyy"}\n\ndata: [DONE]\n\n`;
    const out = logBody(sse)!;
    assert.ok(out.includes('"content":"Hi"'));
    assert.ok(out.includes(`"api_key":"${REDACTED}"`), out);
    assert.ok(!out.includes('abc123') && !out.includes('zzz.yyy'), out);
    assert.ok(out.endsWith('data: [DONE]\n\n'));
  });

  it('is null without a body, and cuts long ones', () => {
    assert.equal(logBody(undefined), null);
    assert.equal(logBody(null), null);
    assert.equal(logBody(''), null);
    const out = logBody('x'.repeat(100), 10)!;
    assert.equal(out, `${'x'.repeat(10)}…[cut: 90 more characters]`);
  });
});

describe('redactValue and redactMetadata', () => {
  it('copies errors and metadata without secrets', () => {
    const error = { error: { message: `Incorrect API key provided: ${OPENAI_KEY}`, type: 'invalid_request_error' } };
    assert.deepEqual(redactValue(error), { error: { message: `Incorrect API key provided: ${REDACTED}`, type: 'invalid_request_error' } });
    assert.equal(redactValue(null), null);
    assert.deepEqual(redactMetadata({ env: 'prod', user_api_key: 'x', note: `see ${AWS_ID}` }), { env: 'prod', user_api_key: REDACTED, note: `see ${REDACTED}` });
    assert.equal(redactMetadata(undefined), null);
  });
});

describe('safeHeaders', () => {
  it('keeps only the allow-list', () => {
    const kept = safeHeaders({
      'content-type': 'application/json',
      'user-agent': 'test/1',
      'x-gateway-trace-id': 't-1',
      'x-gateway-provider': '@prod-openai',
      authorization: `Bearer ${OPENAI_KEY}`,
      'x-gateway-api-key': 'gw-secret',
      'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: OPENAI_KEY }),
      'x-gateway-custom-host': 'https://user:pass@example.com',
      cookie: 'session=1',
    });
    assert.deepEqual(kept, { 'content-type': 'application/json', 'user-agent': 'test/1', 'x-gateway-provider': '@prod-openai', 'x-gateway-trace-id': 't-1' });
    assert.equal(safeHeaders({ authorization: 'Bearer x' }), null);
  });
});
