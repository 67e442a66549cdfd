// A provider's own batch through an Azure OpenAI or OpenAI virtual key (docs/batches.md):
// a 24h batch over an Azure file id is created at Azure
// ({host}/openai/batches?api-version=…, the api-key header), and its
// retrieve, cancel and output file's content, ids Azure gave, go through
// the proxy to Azure too; the gateway keeps none of it.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { engines } from './support/engines.js';
import { ADMIN_KEY } from './support/gateway.js';
import { useMockOpenAI } from './support/mock-openai.js';
import { expectJson } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const AZURE_BATCH = {
  id: 'batch_6e1c9a0f',
  object: 'batch',
  endpoint: '/chat/completions',
  errors: null,
  input_file_id: 'file-9f3ea1b2',
  completion_window: '24h',
  status: 'validating',
  output_file_id: null,
  error_file_id: null,
  created_at: 1760000000,
  expires_at: 1760086400,
  request_counts: { total: 0, completed: 0, failed: 0 },
  metadata: null,
};

for (const engine of engines()) {
  describe(`provider batches through Azure OpenAI (${engine.name})`, () => {
    const gw = useGateway(engine);
    const mock = useMockOpenAI();
    let client: OpenAI;
    before(async () => {
      const host = mock().url.replace(/\/v1$/, '');
      const vk = (await expectJson(await gw.call('/virtual-keys', { body: { name: 'azure batches', provider: 'azure-openai', key: 'az-batch-key', resource_name: 'res', custom_host: host, api_version: '2024-10-21' } }), 201)).id;
      client = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': vk }, maxRetries: 0 });
    });

    it('create, retrieve, cancel and the output file reach Azure with its URL form and key; Azure\'s ids and answers come back', async () => {
      mock().enqueue('/openai/batches', { body: AZURE_BATCH });
      const b = await client.batches.create({ input_file_id: AZURE_BATCH.input_file_id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      assert.equal(b.id, AZURE_BATCH.id);
      const created = mock().requests.at(-1)!;
      assert.equal(created.method, 'POST');
      assert.equal(created.path, '/openai/batches?api-version=2024-10-21');
      assert.equal(created.headers['api-key'], 'az-batch-key');
      assert.equal(created.headers.authorization, undefined);
      assert.deepEqual(created.json, { input_file_id: AZURE_BATCH.input_file_id, endpoint: '/v1/chat/completions', completion_window: '24h' });

      const done = { ...AZURE_BATCH, status: 'completed', output_file_id: 'file-out77', request_counts: { total: 2, completed: 2, failed: 0 } };
      mock().enqueue(`/openai/batches/${AZURE_BATCH.id}`, { body: done });
      assert.deepEqual((await client.batches.retrieve(AZURE_BATCH.id)).request_counts, done.request_counts);
      mock().enqueue(`/openai/batches/${AZURE_BATCH.id}/cancel`, { body: { ...AZURE_BATCH, status: 'cancelling' } });
      assert.equal((await client.batches.cancel(AZURE_BATCH.id)).status, 'cancelling');
      const output = '{"custom_id":"a","response":{"status_code":200}}\n';
      mock().enqueue('/openai/files/file-out77/content', { headers: { 'content-type': 'application/octet-stream' }, body: output });
      assert.equal(await (await client.files.content('file-out77')).text(), output);
      assert.deepEqual(
        mock().requests.slice(-3).map((r) => [r.method, r.path, r.headers['api-key']]),
        [
          ['GET', `/openai/batches/${AZURE_BATCH.id}?api-version=2024-10-21`, 'az-batch-key'],
          ['POST', `/openai/batches/${AZURE_BATCH.id}/cancel?api-version=2024-10-21`, 'az-batch-key'],
          ['GET', '/openai/files/file-out77/content?api-version=2024-10-21', 'az-batch-key'],
        ],
      );
      // Not a gateway batch: the gateway's own list does not show it.
      assert.equal((await client.batches.list()).data.some((x) => x.id === AZURE_BATCH.id), false);
    });
  });
}

// The same through an OpenAI virtual key: the ids OpenAI gives (the batch, its input
// and output files) are served by /v1/batches and /v1/files through the proxy with the
// same key, so a client reads what the Batch object names.
for (const engine of engines()) {
  describe(`provider batches through OpenAI (${engine.name})`, () => {
    const gw = useGateway(engine);
    const mock = useMockOpenAI();
    let client: OpenAI;
    before(async () => {
      const vk = (await expectJson(await gw.call('/virtual-keys', { body: { name: 'openai batches', provider: 'openai', key: 'sk-batch-key', custom_host: mock().url } }), 201)).id;
      client = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': vk }, maxRetries: 0 });
    });

    it("the Batch object's file ids are read through /v1/files with the same key, at OpenAI", async () => {
      mock().enqueue('/v1/batches', { body: AZURE_BATCH });
      const b = await client.batches.create({ input_file_id: AZURE_BATCH.input_file_id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const done = { ...AZURE_BATCH, status: 'completed', output_file_id: 'file-out88' };
      mock().enqueue(`/v1/batches/${b.id}`, { body: done });
      const got = await client.batches.retrieve(b.id);
      const file = { id: got.input_file_id, object: 'file', bytes: 120, created_at: 1760000000, filename: 'in.jsonl', purpose: 'batch', status: 'processed' };
      mock().enqueue(`/v1/files/${got.input_file_id}`, { body: file });
      assert.equal((await client.files.retrieve(got.input_file_id)).filename, 'in.jsonl');
      const output = '{"custom_id":"a","response":{"status_code":200}}\n';
      mock().enqueue(`/v1/files/${got.output_file_id}/content`, { headers: { 'content-type': 'application/octet-stream' }, body: output });
      assert.equal(await (await client.files.content(got.output_file_id!)).text(), output);
      assert.deepEqual(
        mock().requests.slice(-4).map((r) => [r.method, r.path, r.headers.authorization]),
        [
          ['POST', '/v1/batches', 'Bearer sk-batch-key'],
          ['GET', `/v1/batches/${b.id}`, 'Bearer sk-batch-key'],
          ['GET', `/v1/files/${AZURE_BATCH.input_file_id}`, 'Bearer sk-batch-key'],
          ['GET', '/v1/files/file-out88/content', 'Bearer sk-batch-key'],
        ],
      );
    });
  });
}
