// Fine-tuning jobs forwarded to the provider through the generic proxy, as
// the official OpenAI SDK calls them (client.fineTuning.jobs.*): create,
// list with `after` and `limit`, retrieve, cancel (and a cancel the provider
// refuses, its error unchanged), events, checkpoints. Routed by a virtual key
// (OpenAI, Azure OpenAI: its URL form and api-key), or by the request's own
// provider header and credential.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { engines } from './support/engines.js';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockFineTuning, type MockFineTuning } from './support/mock-fine-tuning.js';
import { expectJson } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

for (const engine of engines()) {
  describe(`fine-tuning through the gateway (${engine.name})`, () => {
    const gw = useGateway(engine);
    let mock: MockFineTuning;
    const clients: Record<'openai' | 'azure' | 'header', OpenAI> = {} as never;
    before(async () => {
      mock = await startMockFineTuning();
      const vk = async (body: Record<string, unknown>) => (await expectJson(await gw.call('/virtual-keys', { body }), 201)).id as string;
      const openaiVk = await vk({ name: 'ft openai', provider: 'openai', key: 'sk-openai-ft', custom_host: `${mock.url}/v1` });
      const azureVk = await vk({ name: 'ft azure', provider: 'azure-openai', key: 'az-ft-key', resource_name: 'res', custom_host: mock.url, deployments: [{ deployment_id: 'gpt4o', alias: 'gpt-4o', api_version: '2024-10-21', is_default: true }] });
      const client = (headers: Record<string, string>, apiKey = 'unused') => new OpenAI({ apiKey, baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, ...headers }, maxRetries: 0 });
      clients.openai = client({ 'x-gateway-virtual-key': openaiVk });
      clients.azure = client({ 'x-gateway-virtual-key': azureVk });
      clients.header = client({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${mock.url}/v1` }, 'sk-callers-own');
    });
    after(() => mock.close());

    it('create, retrieve, list (after, limit), events, checkpoints, cancel, through a virtual key to OpenAI', async () => {
      const c = clients.openai;
      const made = await Promise.all([1, 2, 3].map((n) => c.fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: `file-train${n}`, hyperparameters: { n_epochs: n } })));
      const [first, , third] = made as [OpenAI.FineTuning.FineTuningJob, OpenAI.FineTuning.FineTuningJob, OpenAI.FineTuning.FineTuningJob];
      assert.equal(first.object, 'fine_tuning.job');
      assert.equal(first.status, 'validating_files');
      assert.equal((await c.fineTuning.jobs.retrieve(first.id)).training_file, first.training_file);

      const page1 = await c.fineTuning.jobs.list({ limit: 2 });
      assert.equal(page1.data.length, 2);
      assert.equal(page1.has_more, true);
      const page2 = await c.fineTuning.jobs.list({ limit: 2, after: page1.data[1]!.id });
      assert.deepEqual([...page1.data, ...page2.data].map((j) => j.id).sort(), made.map((j) => j.id).sort());
      assert.equal(page2.has_more, false);

      mock.finish(third.id, 3);
      const ckpts = await c.fineTuning.jobs.checkpoints.list(third.id, { limit: 2 });
      assert.deepEqual(ckpts.data.map((x) => x.step_number), [3, 2]);
      assert.equal(ckpts.has_more, true);
      assert.equal(ckpts.data[0]!.fine_tuning_job_id, third.id);
      assert.equal(typeof ckpts.data[0]!.metrics.train_loss, 'number');
      const rest = await c.fineTuning.jobs.checkpoints.list(third.id, { after: ckpts.data[1]!.id });
      assert.deepEqual(rest.data.map((x) => x.step_number), [1]);

      const cancelled = await c.fineTuning.jobs.cancel(first.id);
      assert.equal(cancelled.status, 'cancelled');
      const events = await c.fineTuning.jobs.listEvents(first.id, { limit: 10 });
      assert.deepEqual(events.data.map((e) => e.message), ['Fine-tuning job cancelled', `Created fine-tuning job: ${first.id}`]);
      // A finished job cannot be cancelled: the provider's 400 comes back as it said it.
      await assert.rejects(c.fineTuning.jobs.cancel(third.id), (e: any) => e.status === 400 && e.code === 'invalid_job_state');
      await assert.rejects(c.fineTuning.jobs.retrieve('ftjob-nope'), (e: any) => e.status === 404 && e.code === 'fine_tune_job_not_found');

      const openaiCalls = mock.calls.filter((x) => x.flavour === 'openai');
      assert.ok(openaiCalls.length >= 10);
      assert.ok(openaiCalls.every((x) => x.credential === 'sk-openai-ft'), 'every call carries the virtual key\'s credential');
      const listCall = openaiCalls.find((x) => x.path === '/fine_tuning/jobs' && x.query.get('after') !== null)!;
      assert.deepEqual([listCall.query.get('limit'), listCall.query.get('after')], ['2', page1.data[1]!.id]);
    });

    it('through an Azure OpenAI virtual key: /openai/fine_tuning/jobs with the api-version, the api-key header', async () => {
      const before = mock.calls.length;
      const job = await clients.azure.fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: 'file-azure' });
      assert.equal((await clients.azure.fineTuning.jobs.retrieve(job.id)).id, job.id);
      assert.ok((await clients.azure.fineTuning.jobs.list({ limit: 1 })).data.length === 1);
      assert.equal((await clients.azure.fineTuning.jobs.cancel(job.id)).status, 'cancelled');
      const azureCalls = mock.calls.slice(before);
      assert.equal(azureCalls.length, 4);
      for (const call of azureCalls) {
        assert.equal(call.flavour, 'azure');
        assert.equal(call.credential, 'az-ft-key');
        assert.match(call.query.get('api-version') ?? '', /^\d{4}-\d{2}-\d{2}/);
      }
      assert.equal(azureCalls.find((x) => x.path === '/fine_tuning/jobs' && x.method === 'GET')!.query.get('limit'), '1');
    });

    it("by the request's own provider header and credential, with no virtual key", async () => {
      const before = mock.calls.length;
      const job = await clients.header.fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: 'file-own' });
      assert.equal((await clients.header.fineTuning.jobs.retrieve(job.id)).training_file, 'file-own');
      assert.deepEqual(mock.calls.slice(before).map((x) => x.credential), ['sk-callers-own', 'sk-callers-own']);
    });
  });
}
