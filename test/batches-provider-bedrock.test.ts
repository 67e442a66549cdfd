// Bedrock batches (docs/batches.md): a 24h batch over a gateway file through a
// bedrock virtual key runs as a model invocation job. Against a mock Bedrock
// control plane and the mock S3 (both check SigV4 with the key's secret): the
// lines become Converse records in the key's bucket, the job is created with
// the key's role, read back as a Batch object through its states, its output
// collected by the batch engine (finalizing until then) into gateway files the
// OpenAI SDK reads, once, however many processes are asked; a failed job, a cancel,
// bad settings and a provider file refused with 400s naming the field; the
// secret never in an answer, a row, or an object. Both engines.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { engines } from './support/engines.js';
import { ADMIN_KEY } from './support/gateway.js';
import { untilValue as until } from './support/http.js';
import { startMockBedrockJobs, type MockBedrockJobs } from './support/mock-bedrock-jobs.js';
import { startMockS3, S3_CREDENTIALS, type MockS3 } from './support/mock-s3.js';
import { expectJson } from './support/tenants.js';
import { useGateway, useGatewayPair } from './support/use-gateway.js';

const REGION = 'us-west-2';
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const ROLE = 'arn:aws:iam::123456789012:role/BedrockBatch';

const line = (id: string, content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content }], max_tokens: 50, ...extra } });

const converseAnswer = (text: string) => ({
  output: { message: { role: 'assistant', content: [{ text }] } },
  stopReason: 'end_turn',
  usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 },
  metrics: { latencyMs: 100 },
});

let s3: MockS3;
let control: MockBedrockJobs;
before(async () => {
  s3 = await startMockS3('batch-bucket', REGION);
  control = await startMockBedrockJobs(S3_CREDENTIALS, REGION);
});
after(async () => {
  await s3.close();
  await control.close();
});

/** A bedrock virtual key's settings: the mocks' credentials, the bucket under `prefix`, both mocks as endpoints. */
const bedrockKey = (prefix: string) => ({
  provider: 'bedrock',
  cloud1_access_key_id: S3_CREDENTIALS.accessKeyId,
  cloud1_secret_access_key: S3_CREDENTIALS.secretAccessKey,
  cloud1_region: REGION,
  cloud1_batch_s3_uri: `s3://${s3.bucket}/${prefix}`,
  cloud1_batch_role_arn: ROLE,
  cloud1_batch_control_url: control.url,
  cloud1_batch_s3_endpoint: s3.url,
});

for (const engine of engines()) {
  describe(`Bedrock batches as model invocation jobs (${engine.name})`, () => {
    const gw = useGateway(engine);
    let files: OpenAI;
    const keySettings = (extra: Record<string, unknown> = {}) => ({ ...bedrockKey(`sy/${engine.name}`), ...extra });
    const virtualKey = async (name: string, extra: Record<string, unknown> = {}) =>
      (await expectJson(await gw.call('/virtual-keys', { body: { name, ...keySettings(extra) } }), 201)).id as string;
    const client = (vk: string) => new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': vk }, maxRetries: 0 });
    const upload = async (text: string) => files.files.create({ file: await toFile(Buffer.from(text), 'input.jsonl'), purpose: 'batch' });
    let sdk: OpenAI;
    let vkId: string;
    before(async () => {
      files = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY }, maxRetries: 0 });
      vkId = await virtualKey('bedrock batches');
      sdk = client(vkId);
    });
    const lastJob = () => [...control.jobs.values()].at(-1)!;

    it('create → validating → in_progress → completed: Converse records in S3, a signed job with the role, the output read through /v1/files', async () => {
      const input = await upload([line('a', 'one'), line('b', 'two'), line('c', 'three', { temperature: 0.2 })].join('\n') + '\n');
      const calls = control.requests.length;
      const b = await sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { run: 'nightly' } });
      assert.match(b.id, /^batch_sy/);
      assert.equal(b.status, 'validating');
      assert.equal(b.input_file_id, input.id);
      assert.deepEqual(b.metadata, { run: 'nightly' });
      assert.equal(b.request_counts?.total, 3);

      // The job, as CreateModelInvocationJob received it, signed for bedrock in the key's region.
      const created = control.requests[calls]!;
      assert.equal(created.method, 'POST');
      assert.equal(created.path, '/model-invocation-job');
      assert.match(String(created.headers.authorization), new RegExp(`^AWS4-HMAC-SHA256 Credential=${S3_CREDENTIALS.accessKeyId}/\\d{8}/${REGION}/bedrock/aws4_request, SignedHeaders=`));
      const job = lastJob();
      assert.equal(job.body.modelId, MODEL);
      assert.equal(job.body.modelInvocationType, 'Converse');
      assert.equal(job.body.roleArn, ROLE);
      assert.equal(job.body.clientRequestToken, b.id);
      assert.equal(job.body.timeoutDurationInHours, 24);
      const inputUri = job.body.inputDataConfig.s3InputDataConfig.s3Uri as string;
      assert.equal(inputUri, `s3://${s3.bucket}/sy/${engine.name}/input/${b.id}.jsonl`);
      assert.equal(job.body.outputDataConfig.s3OutputDataConfig.s3Uri, `s3://${s3.bucket}/sy/${engine.name}/output/`);

      // The records: recordId = custom_id, modelInput = the Converse body the chat translator makes.
      const records = s3.objects.get(`sy/${engine.name}/input/${b.id}.jsonl`)!.toString().trim().split('\n').map((l) => JSON.parse(l));
      assert.deepEqual(records.map((r) => r.recordId), ['a', 'b', 'c']);
      assert.deepEqual(records[0].modelInput, { messages: [{ role: 'user', content: [{ text: 'one' }] }], system: [{ text: 'be brief' }], inferenceConfig: { maxTokens: 50 } });
      assert.equal(records[2].modelInput.inferenceConfig.temperature, 0.2);

      // Bedrock runs it: the gateway's engine does not lease it while the job runs.
      assert.equal((await gw.store.batches.claimable(Date.now(), 1000)).some((c) => c.id === b.id), false);

      // Bedrock's states as the Batch object's.
      assert.equal((await sdk.batches.retrieve(b.id)).status, 'validating');
      control.move(job.jobArn, 'Scheduled');
      assert.equal((await sdk.batches.retrieve(b.id)).status, 'validating');
      control.move(job.jobArn, 'InProgress');
      const running = await sdk.batches.retrieve(b.id);
      assert.equal(running.status, 'in_progress');
      assert.equal(typeof running.in_progress_at, 'number');
      assert.equal(running.output_file_id, null);

      control.finish(job.jobArn, s3, (r) => (r.recordId === 'b' ? { error: { errorCode: 400, errorMessage: 'Malformed input request' } } : { modelOutput: converseAnswer(`echo ${r.modelInput.messages[0].content[0].text}`) }), 'PartiallyCompleted');
      // The read only maps the job's status: the output is collected by the engine, not inside the request.
      const ended = await sdk.batches.retrieve(b.id);
      assert.deepEqual([ended.status, typeof ended.finalizing_at, ended.output_file_id], ['finalizing', 'number', null]);
      const done = await until('completed', () => sdk.batches.retrieve(b.id), (x) => x.status === 'completed');
      assert.equal(typeof done.completed_at, 'number');
      assert.deepEqual(done.request_counts, { total: 3, completed: 2, failed: 1 });
      assert.match(done.output_file_id!, /^file-sy/);
      assert.match(done.error_file_id!, /^file-sy/);

      const out = (await (await files.files.content(done.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
      assert.deepEqual(out.map((o) => o.custom_id), ['a', 'c']);
      assert.match(out[0].id, /^batch_req_/);
      assert.equal(out[0].response.status_code, 200);
      assert.equal(out[0].response.body.object, 'chat.completion');
      assert.equal(out[0].response.body.model, MODEL);
      assert.equal(out[0].response.body.choices[0].message.content, 'echo one');
      assert.equal(out[0].response.body.choices[0].finish_reason, 'stop');
      assert.deepEqual(out[0].response.body.usage, { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, prompt_tokens_details: { cached_tokens: 0 } });
      assert.equal(out[0].error, null);
      const errs = (await (await files.files.content(done.error_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
      assert.deepEqual(errs.map((e) => [e.custom_id, e.response.status_code, e.error.message]), [['b', 400, 'Malformed input request']]);
      const meta = await files.files.retrieve(done.output_file_id!);
      assert.equal(meta.purpose, 'batch_output');

      // Read again: the ended job's output is not collected twice, the ids stay.
      const s3Reads = s3.calls.filter((c) => c.action === 'GetObject').length;
      const again = await sdk.batches.retrieve(b.id);
      assert.equal(again.output_file_id, done.output_file_id);
      assert.equal(s3.calls.filter((c) => c.action === 'GetObject').length, s3Reads);
      // A slower read of an older state (another process's) cannot undo the end.
      const row = (await gw.store.batches.load(b.id))!;
      const stale = await gw.store.batches.providerState(row.workspaceId, b.id, {
        status: 'in_progress', total: 3, completed: 0, failed: 0, in_progress_at: 1, finalizing_at: null, completed_at: null, failed_at: null, expired_at: null,
        cancelling_at: null, cancelled_at: null, errors: null, output_file_id: null, error_file_id: null,
      });
      assert.deepEqual([stale?.status, stale?.outputFileId], ['completed', done.output_file_id]);
      // Listed among the workspace's batches, as last read.
      assert.equal((await sdk.batches.list()).data.find((x) => x.id === b.id)?.status, 'completed');
    });

    it('a failed job is a failed batch with Bedrock\'s message in errors; no files', async () => {
      const input = await upload(line('x', 'hi') + '\n');
      const b = await sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      control.move(lastJob().jobArn, 'Failed', 'Amazon Bedrock could not access the S3 location');
      const failed = await sdk.batches.retrieve(b.id);
      assert.equal(failed.status, 'failed');
      assert.equal(typeof failed.failed_at, 'number');
      assert.equal(failed.errors?.data?.[0]?.message, 'Amazon Bedrock could not access the S3 location');
      assert.equal(failed.output_file_id, null);
    });

    it('output lines that are not records are error lines (bad_provider_output) counted as failed; a completed job with no output object fails the batch', async () => {
      const input = await upload([line('a', 'one'), line('b', 'two')].join('\n') + '\n');
      const b = await sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const job = lastJob();
      control.finish(job.jobArn, s3, (r) => ({ modelOutput: converseAnswer(`echo ${r.recordId}`) }));
      const outKey = [...s3.objects.keys()].find((k) => k.endsWith(`${job.jobArn.slice(job.jobArn.lastIndexOf('/') + 1)}/${b.id}.jsonl.out`))!;
      s3.objects.set(outKey, Buffer.concat([s3.objects.get(outKey)!, Buffer.from('<html>not a record</html>\n{"recordId":"trunc')]));
      const done = await until('completed', () => sdk.batches.retrieve(b.id), (x) => x.status === 'completed');
      assert.deepEqual(done.request_counts, { total: 2, completed: 2, failed: 2 });
      const errs = (await (await files.files.content(done.error_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
      assert.deepEqual(errs.map((e) => [e.custom_id, e.response.status_code, e.error.code]), [[null, 502, 'bad_provider_output'], [null, 502, 'bad_provider_output']]);

      const lost = await sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      control.move(lastJob().jobArn, 'Completed');
      const failed = await until('failed', () => sdk.batches.retrieve(lost.id), (x) => x.status === 'failed');
      assert.deepEqual([failed.status, typeof failed.failed_at, failed.completed_at ?? null, failed.output_file_id], ['failed', 'number', null, null]);
      assert.equal(failed.errors?.data?.[0]?.code, 'bedrock_output_missing');
    });

    it('a create whose answer is lost is retried once with the same clientRequestToken: one job, the batch names it', async () => {
      const input = await upload(line('a', 'one') + '\n');
      const jobs = control.jobs.size;
      control.loseNextCreateAnswer();
      const b = await sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      assert.equal(control.jobs.size, jobs + 1);
      const creates = control.requests.slice(-2).map((r) => [r.path, r.json?.clientRequestToken]);
      assert.deepEqual(creates, [['/model-invocation-job', b.id], ['/model-invocation-job', b.id]]);
      const row = (await gw.store.batches.load(b.id))!;
      assert.equal(row.providerJob?.jobArn, lastJob().jobArn);
    });

    it('the row failing to be stored after the job was created stops the job and says so', async () => {
      const input = await upload(line('a', 'one') + '\n');
      const repo = gw.store.batches;
      const insert = repo.insert;
      repo.insert = async () => {
        repo.insert = insert;
        throw new Error('disk full');
      };
      try {
        await assert.rejects(
          sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
          (e: any) => e.status === 500 && e.code === 'batch_not_stored' && /it was stopped/.test(e.message),
        );
      } finally {
        repo.insert = insert;
      }
      const job = lastJob();
      assert.equal(job.status, 'Stopping');
      assert.deepEqual([control.requests.at(-1)!.method, control.requests.at(-1)!.path], ['POST', `/model-invocation-job/${encodeURIComponent(job.jobArn)}/stop`]);
    });

    it('cancel stops the job (StopModelInvocationJob): cancelling, then cancelled when Bedrock says Stopped; a second cancel is a 409', async () => {
      const input = await upload(line('x', 'hi') + '\n');
      const b = await sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const job = lastJob();
      const c = await sdk.batches.cancel(b.id);
      assert.equal(c.status, 'cancelling');
      assert.equal(typeof c.cancelling_at, 'number');
      const stop = control.requests.at(-1)!;
      assert.deepEqual([stop.method, stop.path], ['POST', `/model-invocation-job/${encodeURIComponent(job.jobArn)}/stop`]);
      assert.equal(job.status, 'Stopping');
      control.move(job.jobArn, 'Stopped');
      const stopped = await until('cancelled', () => sdk.batches.retrieve(b.id), (x) => x.status === 'cancelled');
      assert.equal(typeof stopped.cancelled_at, 'number');
      await assert.rejects(sdk.batches.cancel(b.id), (e: any) => e.status === 409 && e.code === 'invalid_batch_state');
    });

    it('bad lines fail the batch with errors.data, and nothing reaches Bedrock', async () => {
      const input = await upload([line('a', 'one'), line('a', 'dup'), JSON.stringify({ custom_id: 'm', method: 'POST', url: '/v1/chat/completions', body: { model: 'other.model-v1', messages: [{ role: 'user', content: 'x' }] } }), line('n', 'x', { n: 3 })].join('\n') + '\n');
      const calls = control.requests.length;
      const b = await sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      assert.equal(b.status, 'failed');
      assert.deepEqual(b.errors?.data?.map((e) => [e.line, e.code, e.param]), [
        [2, 'duplicate_custom_id', 'custom_id'],
        [3, 'invalid_value', 'body.model'],
        [4, 'unsupported_parameter', 'body.n'],
      ]);
      assert.equal(control.requests.length, calls);
      // As stored: read back the same.
      const again = await sdk.batches.retrieve(b.id);
      assert.deepEqual([again.status, again.errors?.data?.length, again.request_counts?.total, typeof again.failed_at], ['failed', 3, 4, 'number']);
    });

    it('bad or missing batch settings → 400 naming the key, before anything is sent', async () => {
      const input = await upload(line('a', 'one') + '\n');
      const calls = control.requests.length;
      for (const [extra, param] of [
        [{ cloud1_batch_role_arn: 'not-an-arn' }, 'cloud1_batch_role_arn'],
        [{ cloud1_batch_s3_uri: 'https://bucket/x' }, 'cloud1_batch_s3_uri'],
        [{ cloud1_batch_output_s3_uri: 's3://UPPER/x' }, 'cloud1_batch_output_s3_uri'],
        [{ cloud1_batch_control_url: 'ftp://x' }, 'cloud1_batch_control_url'],
      ] as const) {
        const vk = await virtualKey(`bad ${param}`, extra);
        await assert.rejects(
          client(vk).batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
          (e: any) => e.status === 400 && e.param === param,
          param,
        );
      }
      const noRole = (await expectJson(await gw.call('/virtual-keys', { body: { name: 'no role', ...keySettings(), cloud1_batch_role_arn: undefined } }), 201)).id as string;
      await assert.rejects(client(noRole).batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }), (e: any) => e.status === 400 && e.param === 'cloud1_batch_role_arn');
      await assert.rejects(sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/embeddings', completion_window: '24h' }), (e: any) => e.status === 400 && e.param === 'endpoint');
      assert.equal(control.requests.length, calls);
    });

    it("Bedrock refusing the job is the answer (its status and exception); the uploaded records are deleted, no batch is kept", async () => {
      const input = await upload(line('q', 'hi') + '\n');
      control.refuseNextCreate(400, 'ValidationException', 'The provided model does not support batch inference.');
      const before = (await sdk.batches.list({ limit: 100 })).data.length;
      await assert.rejects(
        sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
        (e: any) => e.status === 400 && e.code === 'ValidationException' && /does not support batch/.test(e.message),
      );
      const created = control.requests.at(-1)!.json;
      const key = String(created.inputDataConfig.s3InputDataConfig.s3Uri).replace(`s3://${s3.bucket}/`, '');
      assert.equal(s3.objects.has(key), false);
      assert.equal(s3.calls.at(-1)!.action, 'DeleteObject');
      assert.equal((await sdk.batches.list({ limit: 100 })).data.length, before);
    });

    it("an error body is relayed only up to a bound (the message cut to 512 characters)", async () => {
      const input = await upload(line('q', 'hi') + '\n');
      control.refuseNextCreate(400, 'ValidationException', 'x'.repeat(200_000));
      await assert.rejects(
        sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
        (e: any) => e.status === 400 && e.code === 'ValidationException' && e.message.length <= 520,
      );
    });

    it('a bucket S3 refuses → 502 naming S3\'s error, no job created', async () => {
      const input = await upload(line('q', 'hi') + '\n');
      const jobs = control.jobs.size;
      const vk = await virtualKey('other bucket', { cloud1_batch_s3_uri: 's3://not-the-bucket/x' });
      await assert.rejects(
        client(vk).batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
        (e: any) => e.status === 502 && e.code === 'provider_storage_failed' && /NoSuchBucket/.test(e.message),
      );
      assert.equal(control.jobs.size, jobs);
    });

    it("an integration's model rules apply as to a chat call: an unlisted or disabled model → 412 model_not_allowed, nothing sent; a listed one runs", async () => {
      const { provider: _, ...configurations } = keySettings();
      const integ = await expectJson(await gw.call('/integrations', { body: { name: 'aws', ai_provider_id: 'bedrock', slug: `aws-${engine.name}`, workspace_id: 'default', configurations } }), 201);
      const models = [{ slug: 'other.model-v1', enabled: true }, { slug: 'disabled.model-v1', enabled: false }];
      await expectJson(await gw.call(`/integrations/${integ.id}/integration-models`, { method: 'PUT', body: { models, allow_all_models: false } }), 200);
      const vk = (await expectJson(await gw.call('/virtual-keys', { body: { name: 'from integration', integration_id: integ.id, slug: `from-int-${engine.name}` } }), 201)).id as string;
      const chat = await gw.call('/chat/completions', { headers: { 'x-gateway-virtual-key': vk }, body: { model: MODEL, messages: [{ role: 'user', content: 'x' }] } });
      assert.equal(chat.status, 412);
      const [calls, s3Calls] = [control.requests.length, s3.calls.length];
      for (const model of [MODEL, 'disabled.model-v1']) {
        const input = await upload(line('a', 'one', { model }) + '\n');
        await assert.rejects(
          client(vk).batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
          (e: any) => e.status === 412 && e.code === 'model_not_allowed' && e.param === 'body.model',
          model,
        );
      }
      assert.deepEqual([control.requests.length, s3.calls.length], [calls, s3Calls]);
      const allowed = await upload(line('a', 'one', { model: 'other.model-v1' }) + '\n');
      const b = await client(vk).batches.create({ input_file_id: allowed.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      assert.equal(b.status, 'validating');
      assert.equal(lastJob().body.modelId, 'other.model-v1');
    });

    it("a control URL at a cloud metadata address → the same 403 upstream_address_denied a chat call gets; the records are deleted", async () => {
      const input = await upload(line('q', 'hi') + '\n');
      const jobs = control.jobs.size;
      const vk = await virtualKey('metadata control', { cloud1_batch_control_url: 'http://169.254.169.254/latest/meta-data/iam#' });
      await assert.rejects(
        client(vk).batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
        (e: any) => e.status === 403 && e.code === 'upstream_address_denied' && /169\.254\.169\.254/.test(e.message),
      );
      assert.equal(control.jobs.size, jobs);
      assert.equal(s3.calls.at(-1)!.action, 'DeleteObject');
    });

    it('a provider file id with a bedrock key → 400 naming input_file_id', async () => {
      await assert.rejects(
        sdk.batches.create({ input_file_id: 'file-abc123', endpoint: '/v1/chat/completions', completion_window: '24h' }),
        (e: any) => e.status === 400 && e.param === 'input_file_id',
      );
    });

    it('a process that stops while it collects gives the read up and the lease back at once; after the restart the output is collected', async () => {
      const input = await upload(line('a', 'one') + '\n');
      const b = await sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      control.finish(lastJob().jobArn, s3, () => ({ modelOutput: converseAnswer('hi') }));
      const reads = () => s3.calls.filter((c) => c.action === 'GetObject').length;
      const before = reads();
      s3.getDelayMs = 10_000;
      try {
        assert.equal((await sdk.batches.retrieve(b.id)).status, 'finalizing');
        await until('the read started', async () => reads(), (n) => n > before);
        const t0 = Date.now();
        await gw.restart();
        assert.ok(Date.now() - t0 < 5_000, `the stop waited ${Date.now() - t0} ms for the read`);
      } finally {
        s3.getDelayMs = 0;
      }
      files = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY }, maxRetries: 0 });
      sdk = client(vkId);
      const done = await until('completed', () => sdk.batches.retrieve(b.id), (x) => x.status === 'completed');
      assert.deepEqual([done.request_counts?.completed, reads()], [1, before + 2]);
      assert.equal((await (await files.files.content(done.output_file_id!)).text()).split('\n').filter(Boolean).length, 1);
    });

    it('the AWS secret is never in an answer, a control-plane request, or an S3 object', async () => {
      const secret = S3_CREDENTIALS.secretAccessKey;
      const list = JSON.stringify(await sdk.batches.list());
      assert.equal(list.includes(secret), false);
      for (const r of control.requests) assert.equal(JSON.stringify(r.headers).includes(secret) || r.body.toString().includes(secret), false);
      for (const v of s3.objects.values()) assert.equal(v.toString().includes(secret), false);
    });
  });
}

// The upstream policy (docs/security.md) applies to a Bedrock batch's calls as to a chat call's: the key's control URL
// and S3 endpoint are the key writer's choice. Loopback denied here, where both mocks listen.
describe('Bedrock batches under the upstream policy', () => {
  const engine = engines()[0]!;
  const gw = useGateway(engine, { env: { GATEWAY_UPSTREAM_DENY: '127.0.0.0/8' } });
  const settings = (host: string) => ({
    ...bedrockKey('denied'),
    cloud1_batch_control_url: control.url.replace('127.0.0.1', host),
    cloud1_batch_s3_endpoint: s3.url.replace('127.0.0.1', host),
  });

  for (const host of ['127.0.0.1', 'localhost']) {
    it(`endpoints on a denied address (${host}) → the batch create is refused 403 upstream_address_denied, as a chat call is; nothing reaches the mocks`, async () => {
      const vk = (await expectJson(await gw.call('/virtual-keys', { body: { name: `denied ${host}`, ...settings(host) } }), 201)).id as string;
      const chat = await gw.call('/chat/completions', {
        headers: { 'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: 'k', custom_host: control.url }) },
        body: { model: 'm', messages: [{ role: 'user', content: 'x' }] },
      });
      assert.equal(chat.status, 403);
      assert.equal((await chat.json()).error.code, 'upstream_address_denied');
      const files = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY }, maxRetries: 0 });
      const sdk = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': vk }, maxRetries: 0 });
      const input = await files.files.create({ file: await toFile(Buffer.from(line('a', 'x') + '\n'), 'in.jsonl'), purpose: 'batch' });
      const [controlCalls, s3Calls] = [control.requests.length, s3.calls.length];
      await assert.rejects(
        sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
        (e: any) => e.status === 403 && e.code === 'upstream_address_denied' && /GATEWAY_UPSTREAM_DENY/.test(e.message),
      );
      assert.deepEqual([control.requests.length, s3.calls.length], [controlCalls, s3Calls]);
    });
  }
});

// Several gateway processes are asked for one ended job at once: the output is collected under the engine's lease,
// so one process reads it, once (one GetObject, one pair of files), and every process answers the same batch.
for (const engine of engines()) {
  describe(`Bedrock batches: one collection across processes (${engine.name})`, () => {
    const filesDir = mkdtempSync(join(tmpdir(), 'switchyard-files-'));
    after(() => rmSync(filesDir, { recursive: true, force: true }));
    // Polling often: each process's engine tries for the lease while the other's slow read is under way.
    const [gw, gw2] = useGatewayPair(engine, { settings: { batches: { concurrency: 4, maxRunning: 4, pollMs: 20, leaseMs: 2_000, maxFileBytes: 1024 * 1024, filesDir } } });

    it('two processes asked at once: one S3 read of the output, one output and one error file, the same ids from both', async () => {
      const vk = (await expectJson(await gw.call('/virtual-keys', { body: { name: 'pair', ...bedrockKey(`pair/${engine.name}`) } }), 201)).id as string;
      const client = (base: string) => new OpenAI({ apiKey: 'unused', baseURL: base, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': vk }, maxRetries: 0 });
      const [one, two] = [client(gw.v1), client(gw2.v1)];
      const files = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY }, maxRetries: 0 });
      const input = await files.files.create({ file: await toFile(Buffer.from([line('a', 'one'), line('b', 'two')].join('\n') + '\n'), 'in.jsonl'), purpose: 'batch' });
      const b = await one.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const job = [...control.jobs.values()].at(-1)!;
      control.finish(job.jobArn, s3, (r) => (r.recordId === 'b' ? { error: { errorCode: 400, errorMessage: 'bad' } } : { modelOutput: converseAnswer('hi') }));
      const outKey = `pair/${engine.name}/output/${job.jobArn.slice(job.jobArn.lastIndexOf('/') + 1)}/${b.id}.jsonl.out`;
      const reads = () => s3.calls.filter((c) => c.action === 'GetObject' && c.key === outKey).length;
      s3.getDelayMs = 300;
      try {
        const asked = await Promise.all([one.batches.retrieve(b.id), two.batches.retrieve(b.id), one.batches.retrieve(b.id), two.batches.retrieve(b.id)]);
        for (const x of asked) assert.equal(x.status, 'finalizing');
        const done = await Promise.all([one, two].map((c) => until('completed', () => c.batches.retrieve(b.id), (x) => x.status === 'completed')));
        // Both engines polled through the slow read: neither read again, before or after the end.
        await new Promise((r) => setTimeout(r, 200));
        assert.equal(reads(), 1);
        assert.deepEqual(done[1]!.output_file_id, done[0]!.output_file_id);
        assert.deepEqual(done[1]!.error_file_id, done[0]!.error_file_id);
        assert.deepEqual(done[0]!.request_counts, { total: 2, completed: 1, failed: 1 });
        const made = (await files.files.list({ purpose: 'batch_output' as any, limit: 100 })).data.map((f) => f.id).sort();
        assert.deepEqual(made, [done[0]!.output_file_id!, done[0]!.error_file_id!].sort());
        const out = (await (await files.files.content(done[0]!.output_file_id!)).text()).trim().split('\n');
        assert.equal(out.length, 1);
      } finally {
        s3.getDelayMs = 0;
      }
    });
  });
}

// A finalizing batch whose virtual key's batch settings were made invalid after the job was created: the engine's
// collection fails it once, naming the field, rather than throwing at every poll (the batch finalizing forever).
for (const engine of engines()) {
  describe(`Bedrock batches: a key whose batch settings are no longer valid (${engine.name})`, () => {
    const filesDir = mkdtempSync(join(tmpdir(), 'switchyard-files-'));
    after(() => rmSync(filesDir, { recursive: true, force: true }));
    // A change of where the secret goes is made with the secret given again.
    const S3_CREDENTIALS_FIELDS = { cloud1_access_key_id: S3_CREDENTIALS.accessKeyId, cloud1_secret_access_key: S3_CREDENTIALS.secretAccessKey };
    // Polling often: a collection retried at each poll would be seen within the test.
    const gw = useGateway(engine, { settings: { batches: { concurrency: 4, maxRunning: 4, pollMs: 20, leaseMs: 2_000, maxFileBytes: 1024 * 1024, filesDir } } });

    it('the collection fails the batch once with invalid_batch_settings naming the field; it is not leased again', async () => {
      const vk = (await expectJson(await gw.call('/virtual-keys', { body: { name: 'broken later', ...bedrockKey(`broken/${engine.name}`) } }), 201)).id as string;
      const sdk = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': vk }, maxRetries: 0 });
      const files = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY }, maxRetries: 0 });
      const input = await files.files.create({ file: await toFile(Buffer.from(line('a', 'one') + '\n'), 'in.jsonl'), purpose: 'batch' });
      const b = await sdk.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const job = [...control.jobs.values()].at(-1)!;
      control.finish(job.jobArn, s3, () => ({ modelOutput: converseAnswer('hi') }));
      await expectJson(await gw.call(`/virtual-keys/${vk}`, { method: 'PUT', body: { ...S3_CREDENTIALS_FIELDS, cloud1_batch_role_arn: 'not-an-arn' } }), 200);
      // The job ended (as a read would have found it before the key was edited): the engine leases it to collect.
      const row = (await gw.store.batches.load(b.id))!;
      const at = row.createdAt + 1;
      await gw.store.batches.providerState(row.workspaceId, b.id, { status: 'finalizing', total: 1, completed: 1, failed: 0, in_progress_at: at, finalizing_at: at, completed_at: at, failed_at: null, expired_at: null, cancelling_at: null, cancelled_at: null, errors: null, output_file_id: null, error_file_id: null });
      const failed = await until('failed', () => sdk.batches.retrieve(b.id), (x) => x.status !== 'finalizing');
      assert.equal(failed.status, 'failed');
      assert.deepEqual([failed.output_file_id, failed.error_file_id, typeof failed.failed_at], [null, null, 'number']);
      const e = failed.errors?.data?.[0];
      assert.deepEqual([e?.code, e?.param], ['invalid_batch_settings', 'cloud1_batch_role_arn']);
      assert.match(e!.message!, /cloud1_batch_role_arn: 'not-an-arn' is not an IAM role ARN/);
      assert.ok(e!.message!.includes(row.providerJob!.outputUri), e!.message);
      // Ended: no poll leases it again, and it stays as it was failed.
      assert.equal((await gw.store.batches.claimable(Date.now(), 1000)).some((c) => c.id === b.id), false);
      await new Promise((r) => setTimeout(r, 100));
      const after = (await gw.store.batches.load(b.id))!;
      assert.deepEqual([after.status, after.errors?.length], ['failed', 1]);
    });
  });
}
