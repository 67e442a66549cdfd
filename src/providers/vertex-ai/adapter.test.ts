// The URLs the Vertex AI adapter builds for Google's own hosts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { vertexAI } from './adapter.js';
import type { TargetSettings as ConfigNode } from '../settings.js';
import type { ProviderCall } from '../contract.js';

describe('Vertex URLs on Google’s hosts', () => {
  function prepare(settings: ConfigNode, model: string, stream = false): ProviderCall {
    const r = vertexAI.adapter.prepare({
      target: { provider: 'vertex-ai', settings, clientAuthorization: undefined, customHost: undefined },
      endpoint: 'chat',
      path: '/chat/completions',
      body: { model, messages: [{ role: 'user', content: 'x' }], stream },
    });
    assert.ok(!(r instanceof Promise), 'a given token needs no exchange');
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    return r.value;
  }

  it('regional and global endpoints', () => {
    const regional = prepare({ api_key: 'tok', cloud2_project_id: 'my-proj', cloud2_region: 'europe-west4' }, 'gemini-2.5-flash', true);
    assert.equal(
      regional.url,
      'https://europe-west4-aiplatform.googleapis.com/v1/projects/my-proj/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    assert.equal(regional.headers.authorization, 'Bearer tok');
    const global = prepare({ api_key: 'tok', cloud2_project_id: 'my-proj', cloud2_region: 'global' }, 'gemini-2.5-flash');
    assert.equal(global.url, 'https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/google/models/gemini-2.5-flash:generateContent');
  });

  describe('model ids that name their publisher', () => {
    const settings = { api_key: 'tok', cloud2_project_id: 'p', cloud2_region: 'us-east5' };
    const at = 'https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5';
    const cases: [string, boolean, string][] = [
      ['anthropic.claude-3-5-haiku@20241022', false, '/publishers/anthropic/models/claude-3-5-haiku@20241022:rawPredict'],
      ['anthropic.claude-3-5-haiku@20241022', true, '/publishers/anthropic/models/claude-3-5-haiku@20241022:streamRawPredict'],
      ['claude-3-5-haiku@20241022', false, '/publishers/anthropic/models/claude-3-5-haiku@20241022:rawPredict'],
      ['google.gemini-2.5-flash', false, '/publishers/google/models/gemini-2.5-flash:generateContent'],
      ['google.gemini-2.5-flash', true, '/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse'],
      // A dot in a bare id is Google's own version number, not a publisher.
      ['gemini-1.5-pro', false, '/publishers/google/models/gemini-1.5-pro:generateContent'],
      ['meta.llama-3.3-70b-instruct-maas', false, '/endpoints/openapi/chat/completions'],
      ['deepseek-ai.deepseek-r1-0528-maas', true, '/endpoints/openapi/chat/completions'],
    ];
    for (const [model, stream, path] of cases) {
      it(`${model}${stream ? ', streamed' : ''} → …${path}`, () => assert.equal(prepare(settings, model, stream).url, at + path));
    }

    it('an open model gets the client’s OpenAI body, relayed, its model as {publisher}/{model}', () => {
      const call = prepare(settings, 'meta.llama-3.3-70b-instruct-maas', true);
      assert.equal(call.kind, 'relayed');
      assert.deepEqual(JSON.parse(String(call.body)), { model: 'meta/llama-3.3-70b-instruct-maas', messages: [{ role: 'user', content: 'x' }], stream: true });
    });
  });
});
