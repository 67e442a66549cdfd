// Bedrock's error answers in the contract's envelope.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bedrockError } from './errors.js';

describe('errors', () => {
  it('message from message or Message, code from x-amzn-ErrorType, status kept', () => {
    const e = bedrockError(424, Buffer.from('{"Message":"model failed"}'), { 'x-amzn-errortype': 'ModelErrorException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
    assert.deepEqual([e.status, e.code, e.message], [424, 'ModelErrorException', 'model failed']);
    const html = bedrockError(502, Buffer.from('<html>Bad Gateway</html>'));
    assert.deepEqual([html.status, html.code, html.message, html.type], [502, 'bad_gateway', '<html>Bad Gateway</html>', 'upstream_error']);
  });
});
