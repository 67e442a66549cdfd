// Fine-tuning on Vertex AI, as the official OpenAI SDK calls it (client.fineTuning.jobs.*), through
// a virtual key holding a service account: the gateway exchanges its signed JWT for a token at the
// mock's OAuth endpoint and turns each OpenAI request into Vertex AI's tuningJobs API (mock-vertex-tuning.ts):
// create, list with `after` and `limit` (over Vertex's page tokens, across pages), retrieve, cancel
// (and a cancel Vertex refuses), events and checkpoints made from the job; bad input → 400 naming
// the field, before anything reaches Vertex.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import OpenAI from 'openai';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockGemini, type MockGemini } from './support/mock-gemini.js';
import { expectJson } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const PROJECT = 'tune-proj';
const REGION = 'europe-west4';
const LOCATION = `projects/${PROJECT}/locations/${REGION}`;

describe('fine-tuning on vertex-ai through the gateway', () => {
  const gw = useGateway();
  let mock: MockGemini;
  let client: OpenAI;
  const upstream = () => mock.requests.filter((r) => r.path.includes('/tuningJobs'));

  before(async () => {
    mock = await startMockGemini({ project: PROJECT, location: REGION });
    const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const email = `tuner@${PROJECT}.iam.gserviceaccount.com`;
    mock.addAccount(email, keys.publicKey);
    const account = {
      type: 'service_account', project_id: PROJECT, private_key_id: 'kid-tune', client_email: email, token_uri: mock.tokenUri,
      private_key: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    };
    const vk = await expectJson(
      await gw.call('/virtual-keys', { body: { name: 'tuning', provider: 'vertex-ai', cloud2_region: REGION, cloud2_service_account_json: account, custom_host: mock.vertexBase } }),
      201,
    );
    client = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': vk.id as string } });
  });
  after(() => mock.close());

  it('create: the OpenAI body as a Vertex tuning job, with the service account’s token; the answer a fine_tuning.job', async () => {
    mock.reset();
    const job = await client.fineTuning.jobs.create({
      model: 'gemini-2.5-flash',
      training_file: 'gs://tune-bucket/train.jsonl',
      validation_file: 'gs://tune-bucket/valid.jsonl',
      hyperparameters: { n_epochs: 3, learning_rate_multiplier: 0.5, batch_size: 'auto' },
      suffix: 'support-bot',
      metadata: { team: 'support' },
    });
    assert.equal(job.object, 'fine_tuning.job');
    assert.match(job.id, /^\d+$/);
    assert.equal(job.status, 'validating_files');
    assert.equal(job.model, 'gemini-2.5-flash');
    assert.equal(job.training_file, 'gs://tune-bucket/train.jsonl');
    assert.equal(job.validation_file, 'gs://tune-bucket/valid.jsonl');
    assert.deepEqual(job.hyperparameters, { n_epochs: 3, learning_rate_multiplier: 0.5, batch_size: 'auto' });
    assert.equal(job.organization_id, PROJECT);
    assert.equal((job as unknown as { user_provided_suffix: string }).user_provided_suffix, 'support-bot', 'as OpenAI answers it (the SDK does not type it)');
    assert.deepEqual(job.metadata, { team: 'support' });
    assert.equal(job.fine_tuned_model, null);
    assert.equal(job.finished_at, null);
    assert.equal(job.trained_tokens, null);
    assert.equal(typeof job.created_at, 'number');

    assert.equal(mock.exchanges.length, 1);
    const [call] = upstream();
    assert.equal(call!.method, 'POST');
    assert.equal(call!.path, `/v1/${LOCATION}/tuningJobs`);
    assert.equal(call!.headers.authorization, `Bearer ${mock.exchanges[0]!.issued}`);
    assert.equal(call!.headers['x-stainless-lang'], undefined, "none of the client's own headers go to Vertex");
    assert.deepEqual(call!.json, {
      baseModel: 'gemini-2.5-flash',
      supervisedTuningSpec: {
        trainingDatasetUri: 'gs://tune-bucket/train.jsonl',
        validationDatasetUri: 'gs://tune-bucket/valid.jsonl',
        hyperParameters: { epochCount: 3, learningRateMultiplier: 0.5 },
      },
      tunedModelDisplayName: 'support-bot',
      labels: { team: 'support' },
    });
  });

  it('retrieve, list (after, limit), events, checkpoints, cancel, and the states Vertex moves a job through', async () => {
    mock.reset();
    const made: OpenAI.FineTuning.FineTuningJob[] = [];
    for (const n of [1, 2, 3]) made.push(await client.fineTuning.jobs.create({ model: 'gemini-2.5-flash', training_file: `gs://b/train${n}.jsonl` }));
    const [first, second, third] = made as [OpenAI.FineTuning.FineTuningJob, OpenAI.FineTuning.FineTuningJob, OpenAI.FineTuning.FineTuningJob];
    assert.deepEqual(first.hyperparameters, { n_epochs: 'auto', learning_rate_multiplier: 'auto', batch_size: 'auto' });

    mock.tuning.run(first.id);
    assert.equal((await client.fineTuning.jobs.retrieve(first.id)).status, 'running');

    const page1 = await client.fineTuning.jobs.list({ limit: 2 });
    assert.deepEqual(page1.data.map((j) => j.id), [third.id, second.id], 'newest first, as Vertex lists them');
    assert.equal(page1.has_more, true);
    const page2 = await client.fineTuning.jobs.list({ limit: 2, after: second.id });
    assert.deepEqual(page2.data.map((j) => j.id), [first.id]);
    assert.equal(page2.has_more, false);
    const listed = upstream().filter((r) => r.method === 'GET' && r.path.startsWith(`/v1/${LOCATION}/tuningJobs?`));
    assert.equal(new URL(listed[0]!.path, 'http://x').searchParams.get('pageSize'), '2');

    mock.tuning.run(third.id);
    mock.tuning.succeed(third.id, 3);
    const done = await client.fineTuning.jobs.retrieve(third.id);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.fine_tuned_model, `${LOCATION}/endpoints/${third.id.slice(-4)}`);
    assert.equal(done.trained_tokens, 123456);
    assert.equal(typeof done.finished_at, 'number');

    const ckpts = await client.fineTuning.jobs.checkpoints.list(third.id, { limit: 2 });
    assert.deepEqual(ckpts.data.map((c) => c.step_number), [30, 20]);
    assert.equal(ckpts.has_more, true);
    assert.equal(ckpts.data[0]!.object, 'fine_tuning.job.checkpoint');
    assert.equal(ckpts.data[0]!.fine_tuning_job_id, third.id);
    assert.equal(ckpts.data[0]!.fine_tuned_model_checkpoint, `${LOCATION}/endpoints/502`);
    assert.equal(ckpts.data[0]!.metrics.step, 30);
    const rest = await client.fineTuning.jobs.checkpoints.list(third.id, { after: ckpts.data[1]!.id });
    assert.deepEqual(rest.data.map((c) => c.step_number), [10]);
    assert.equal(rest.has_more, false);

    const events = await client.fineTuning.jobs.listEvents(third.id);
    assert.deepEqual(events.data.map((e) => e.id), [`${third.id}-ended`, `${third.id}-started`, `${third.id}-created`]);
    assert.match(events.data[0]!.message, /^Tuning job succeeded/);
    assert.ok(events.data.every((e) => e.object === 'fine_tuning.job.event' && typeof e.created_at === 'number'));
    assert.deepEqual((await client.fineTuning.jobs.listEvents(third.id, { limit: 1, after: `${third.id}-ended` })).data.map((e) => e.id), [`${third.id}-started`]);

    const before = upstream().length;
    const cancelled = await client.fineTuning.jobs.cancel(first.id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.error, null);
    assert.equal(typeof cancelled.finished_at, 'number');
    assert.deepEqual(upstream().slice(before).map((r) => `${r.method} ${r.path}`), [
      `POST /v1/${LOCATION}/tuningJobs/${first.id}:cancel`,
      `GET /v1/${LOCATION}/tuningJobs/${first.id}`,
    ]);
    // An ended job cannot be cancelled: Vertex's refusal, its status kept.
    await assert.rejects(client.fineTuning.jobs.cancel(third.id), (e: any) => e.status === 400 && e.code === 'failed_precondition');
    await assert.rejects(client.fineTuning.jobs.retrieve('4242'), (e: any) => e.status === 404 && e.code === 'not_found');

    mock.tuning.fail(second.id, 'Dataset row 7 has no model turn.');
    const failed = await client.fineTuning.jobs.retrieve(second.id);
    assert.equal(failed.status, 'failed');
    assert.deepEqual(failed.error, { code: 'invalid_argument', message: 'Dataset row 7 has no model turn.', param: null });
    assert.match((await client.fineTuning.jobs.listEvents(second.id)).data[0]!.message, /^Tuning job failed: Dataset row 7/);
  });

  it('the SDK pages through more jobs than one Vertex page by `after`: every job once, in order', async () => {
    mock.reset();
    // Created at the mock directly: 130 jobs is more than one page of Vertex's list (prior.ts reads 100 a page).
    for (let n = 0; n < 130; n++) mock.tuning.handle(LOCATION, 'POST', '/tuningJobs', new URLSearchParams(), { baseModel: 'gemini-2.5-flash', supervisedTuningSpec: { trainingDatasetUri: `gs://b/${n}.jsonl` } });
    const seen: string[] = [];
    for await (const job of client.fineTuning.jobs.list({ limit: 40 })) seen.push(job.training_file);
    assert.deepEqual(seen, Array.from({ length: 130 }, (_, i) => `gs://b/${129 - i}.jsonl`));
    // Pages of 40, 40, 20 (the rest of Vertex's first page of 100) and 30: each after its first read
    // Vertex's pages up to the one holding `after` (prior.ts), then that page (or the next) again.
    const pages = upstream().map((r) => new URL(r.path, 'http://x').searchParams);
    assert.deepEqual(pages.map((q) => [q.get('pageSize'), q.get('pageToken') === null ? 'first' : 'next']), [
      ['40', 'first'],
      ['100', 'first'], ['100', 'first'],
      ['100', 'first'], ['100', 'first'],
      ['100', 'first'], ['100', 'next'],
    ]);
  });

  it('an access token in an inline config instead of a service account: sent as it is, no exchange', async () => {
    mock.reset();
    mock.addStaticToken('ya29.given-token');
    const config = { provider: 'vertex-ai', api_key: 'ya29.given-token', cloud2_region: REGION, cloud2_project_id: PROJECT, custom_host: mock.vertexBase };
    const own = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-config': JSON.stringify(config) } });
    const job = await own.fineTuning.jobs.create({ model: 'gemini-2.5-flash', training_file: 'gs://b/t.jsonl' });
    assert.equal((await own.fineTuning.jobs.list()).data[0]!.id, job.id);
    assert.equal(mock.exchanges.length, 0);
    assert.ok(upstream().every((r) => r.headers.authorization === 'Bearer ya29.given-token'));
  });

  it('bad input is a 400 naming the field, and nothing reaches Vertex', async () => {
    mock.reset();
    const create = (body: Record<string, unknown>) => client.fineTuning.jobs.create({ model: 'gemini-2.5-flash', training_file: 'gs://b/t.jsonl', ...body } as never);
    const refused = async (call: Promise<unknown>, param: string, message?: RegExp) =>
      assert.rejects(call, (e: any) => e.status === 400 && e.param === param && (message === undefined || message.test(e.message)));
    await refused(create({ training_file: 'file-abc123' }), 'training_file', /gs:\/\//);
    await refused(create({ validation_file: 'https://example.com/v.jsonl' }), 'validation_file');
    await refused(create({ model: '' }), 'model');
    await refused(create({ hyperparameters: { n_epochs: 0 } }), 'hyperparameters.n_epochs');
    await refused(create({ hyperparameters: { batch_size: 8 } }), 'hyperparameters.batch_size');
    await refused(create({ method: { type: 'dpo' } }), 'method.type');
    await refused(create({ method: { type: 'supervised', supervised: { hyperparameters: { learning_rate_multiplier: -1 } } } }), 'method.supervised.hyperparameters.learning_rate_multiplier');
    await refused(create({ seed: 7 }), 'seed');
    await refused(create({ metadata: { Team: 'x' } }), 'metadata.Team');
    await refused(create({ suffix: 'x'.repeat(129) }), 'suffix');
    await refused(create({ temperature: 1 }), 'temperature');
    await refused(client.fineTuning.jobs.list({ limit: 0 }), 'limit');
    await refused(client.fineTuning.jobs.list({ limit: 101 }), 'limit');
    await refused(client.fineTuning.jobs.retrieve('bad.id'), 'fine_tuning_job_id');
    await refused(client.fineTuning.jobs.pause('123'), 'provider');
    assert.equal(upstream().length, 0);
    // An `after` that is no job of the project: found nowhere in Vertex's pages.
    await refused(client.fineTuning.jobs.list({ after: '999' }), 'after');
  });
});
