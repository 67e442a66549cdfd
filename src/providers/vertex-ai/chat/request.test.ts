// Claude on Vertex AI: the body reshaping, and the error reader.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { claudeOnVertex } from './request.js';
import { vertexClaudeError } from '../errors.js';
import { ANTHROPIC } from '../publishers.js';

const MODEL = 'claude-sonnet-4-5@20250929';

describe('vertex-ai: claudeOnVertex and vertexClaudeError', () => {
  it('the body is the Messages body with anthropic_version first and no model; the method follows stream', () => {
    const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }], stop: 'END', top_k: 5 };
    const whole = claudeOnVertex.request(body);
    assert.ok(whole.ok);
    assert.equal(ANTHROPIC.chatMethod(body), 'rawPredict');
    assert.equal(
      whole.value.body,
      JSON.stringify({ anthropic_version: 'vertex-2023-10-16', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], max_tokens: 4096, stop_sequences: ['END'], top_k: 5 }),
    );
    const streamedBody = { model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true };
    const streamed = claudeOnVertex.request(streamedBody);
    assert.ok(streamed.ok);
    assert.equal(ANTHROPIC.chatMethod(streamedBody), 'streamRawPredict');
    assert.equal(JSON.parse(streamed.value.body).stream, true);
  });

  it('errors: Anthropic’s body by its type, Google’s by its status, anything else quoted; the status kept', () => {
    const claude = vertexClaudeError(400, Buffer.from(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'bad' } })), {});
    assert.deepEqual([claude.status, claude.code, claude.message], [400, 'invalid_request_error', 'bad']);
    const google = vertexClaudeError(404, Buffer.from(JSON.stringify([{ error: { code: 404, message: 'Publisher Model not found.', status: 'NOT_FOUND' } }])), {});
    assert.deepEqual([google.status, google.code, google.message], [404, 'not_found', 'Publisher Model not found.']);
    const html = vertexClaudeError(502, Buffer.from('<html>Bad Gateway</html>'), {});
    assert.equal(html.status, 502);
    assert.match(html.message, /Bad Gateway/);
  });
});
