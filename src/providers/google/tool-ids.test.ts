// Tool-call ids that carry Gemini's thought signatures; Google's error bodies.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { signatureOf, toolCallId } from './tool-ids.js';
import { googleError } from './errors.js';

describe('tool-call ids and errors', () => {
  it('a thought signature survives the round trip through an id made of [A-Za-z0-9_-]', () => {
    const sig = Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256)).toString('base64');
    const id = toolCallId(sig);
    assert.match(id, /^call_[0-9a-f]{24}_ts_[A-Za-z0-9_-]+$/);
    assert.equal(signatureOf(id), sig);
    assert.equal(signatureOf(toolCallId(undefined)), undefined);
    assert.equal(signatureOf('call_from_elsewhere'), undefined);
  });

  it('Google error bodies, bare or in an array; anything else quoted', () => {
    const e = googleError(404, Buffer.from(JSON.stringify([{ error: { code: 404, message: 'models/x is not found', status: 'NOT_FOUND' } }])));
    assert.deepEqual(e.toJSON(), { error: { message: 'models/x is not found', type: 'not_found_error', code: 'not_found', param: null } });
    const html = googleError(502, Buffer.from('<html>Bad Gateway</html>'));
    assert.equal(html.status, 502);
    assert.match(html.message, /Bad Gateway/);
  });
});
