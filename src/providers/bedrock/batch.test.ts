import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { batchState, inputRecord, jobId, jobSettings, outputLine, s3Object, unixSeconds } from './batch.js';

const KEYS = { cloud1_access_key_id: 'AKIAIOSFODNN7EXAMPLE', cloud1_secret_access_key: 'secret', cloud1_region: 'eu-west-1' };

describe('bedrock batch wire', () => {
  it('maps every job status to a Batch status; one Bedrock adds later reads as running', () => {
    const states = (...statuses: string[]) => [...new Set(statuses.map(batchState))];
    assert.deepEqual(states('Submitted', 'Validating', 'Scheduled'), ['validating']);
    assert.deepEqual(states('Completed', 'PartiallyCompleted'), ['completed']);
    assert.deepEqual(states('InProgress', 'SomethingNew'), ['in_progress']);
    assert.deepEqual(states('Failed', 'Stopping', 'Stopped', 'Expired'), ['failed', 'cancelling', 'cancelled', 'expired']);
  });

  it('reads ISO 8601 and epoch-second timestamps; the job id is the ARN\'s last segment; an S3 URI splits into bucket and key', () => {
    assert.equal(unixSeconds('2026-01-02T03:04:05.678Z'), Date.UTC(2026, 0, 2, 3, 4, 5) / 1000);
    assert.equal(unixSeconds(1767323045.5), 1767323045);
    assert.equal(unixSeconds('garbage'), null);
    assert.equal(jobId('arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abc123def456'), 'abc123def456');
    assert.deepEqual(s3Object('s3://b/x/y/z.jsonl.out'), { bucket: 'b', key: 'x/y/z.jsonl.out' });
  });

  it('settings: defaults for output, control URL; each bad key named', () => {
    const ok = jobSettings({ ...KEYS, cloud1_batch_s3_uri: 's3://my-bucket/jobs', cloud1_batch_role_arn: 'arn:aws:iam::123456789012:role/r' });
    assert.ok(ok.ok);
    assert.deepEqual([ok.value.input, ok.value.output, ok.value.controlUrl], [
      { bucket: 'my-bucket', prefix: 'jobs/input/' },
      { bucket: 'my-bucket', prefix: 'jobs/output/' },
      'https://bedrock.eu-west-1.amazonaws.com',
    ]);
    const param = (extra: Record<string, string | undefined>) => {
      const r = jobSettings({ ...KEYS, cloud1_batch_s3_uri: 's3://my-bucket', cloud1_batch_role_arn: 'arn:aws:iam::123456789012:role/r', ...extra });
      return r.ok ? null : r.error.param;
    };
    assert.equal(param({}), null);
    assert.equal(param({ cloud1_batch_s3_uri: undefined }), 'cloud1_batch_s3_uri');
    assert.equal(param({ cloud1_batch_s3_uri: 's3://a' }), 'cloud1_batch_s3_uri');
    assert.equal(param({ cloud1_batch_role_arn: 'arn:aws:iam::1:user/u' }), 'cloud1_batch_role_arn');
    assert.equal(param({ cloud1_batch_s3_endpoint: 'nope' }), 'cloud1_batch_s3_endpoint');
    assert.equal(param({ cloud1_access_key_id: undefined }), 'cloud1_access_key_id');
  });

  it('a record is the Converse body under the custom_id; a refused parameter names itself', () => {
    const r = inputRecord('id-1', { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
    assert.ok(r.ok);
    assert.deepEqual(JSON.parse(r.value), { recordId: 'id-1', modelInput: { messages: [{ role: 'user', content: [{ text: 'hi' }] }], inferenceConfig: { maxTokens: 5 } } });
    const bad = inputRecord('id-2', { model: 'm', messages: [{ role: 'user', content: 'hi' }], logprobs: true });
    assert.equal(bad.ok ? null : bad.error.param, 'logprobs');
  });

  it('an output record: modelOutput → a chat.completion line; error → an error line with its status; an answer without usage → 502 line; not JSON or too long → a bad_provider_output error line', () => {
    const good = outputLine(JSON.stringify({ recordId: 'a', modelInput: {}, modelOutput: { output: { message: { role: 'assistant', content: [{ text: 'yo' }] } }, stopReason: 'max_tokens', usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } } }), 'm', 'batch_req_1');
    assert.equal(good?.ok, true);
    const g = JSON.parse(good!.line);
    assert.deepEqual([g.id, g.custom_id, g.response.status_code, g.response.body.choices[0].message.content, g.response.body.choices[0].finish_reason, g.error], ['batch_req_1', 'a', 200, 'yo', 'length', null]);
    const failed = JSON.parse(outputLine(JSON.stringify({ recordId: 'b', error: { errorCode: 429, errorMessage: 'throttled' } }), 'm', 'r')!.line);
    assert.deepEqual([failed.custom_id, failed.response.status_code, failed.error], ['b', 429, { code: 'bedrock_429', message: 'throttled' }]);
    const odd = outputLine(JSON.stringify({ recordId: 'c', modelOutput: { output: {} } }), 'm', 'r')!;
    assert.deepEqual([odd.ok, JSON.parse(odd.line).response.status_code], [false, 502]);
    for (const text of ['{"recordId":', '7', null]) {
      const bad = outputLine(text, 'm', 'r');
      const l = JSON.parse(bad.line);
      assert.deepEqual([bad.ok, l.custom_id, l.response.status_code, l.error.code], [false, null, 502, 'bad_provider_output'], String(text));
    }
  });
});
