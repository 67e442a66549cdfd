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
});
