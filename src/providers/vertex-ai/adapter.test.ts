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

  describe('the generic proxy', () => {
    async function proxy(settings: ConfigNode, method: string, path: string, raw: Buffer | null = null, customHost?: string) {
      return vertexAI.adapter.prepare({ target: { provider: 'vertex-ai', settings, clientAuthorization: undefined, customHost }, endpoint: 'proxy', path, body: null, method, raw });
    }

    it('OpenAI’s fine-tuning paths become tuning-job calls under the project’s location, other paths are relayed', async () => {
      const settings = { api_key: 'tok', cloud2_project_id: 'p', cloud2_region: 'us-central1' };
      const create = await proxy(settings, 'POST', '/fine_tuning/jobs', Buffer.from(JSON.stringify({ model: 'gemini-2.5-flash', training_file: 'gs://b/t.jsonl' })));
      assert.ok(create.ok && create.value.kind === 'translated');
      assert.equal(create.value.url, 'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/tuningJobs');
      assert.deepEqual([create.value.method, create.value.headers.authorization], ['POST', 'Bearer tok']);
      const events = await proxy(settings, 'GET', '/fine_tuning/jobs/12/events?limit=3');
      assert.ok(events.ok && events.value.kind === 'translated');
      assert.deepEqual([events.value.method, events.value.url, events.value.body], ['GET', 'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/tuningJobs/12', null]);
      const other = await proxy(settings, 'GET', '/fine_tuningjobs');
      assert.ok(other.ok && other.value.kind === 'relayed');
    });

    it('tuning jobs need the region and project even behind a custom host', async () => {
      const noRegion = await proxy({ api_key: 'tok', cloud2_project_id: 'p' }, 'GET', '/fine_tuning/jobs', null, 'http://127.0.0.1:9/v1');
      assert.ok(!noRegion.ok && noRegion.error.param === 'cloud2_region');
      const noProject = await proxy({ api_key: 'tok', cloud2_region: 'us-central1' }, 'GET', '/fine_tuning/jobs/1');
      assert.ok(!noProject.ok && noProject.error.param === 'cloud2_project_id');
    });
  });
});
