// Vertex tuning jobs read as OpenAI's fine-tuning objects: every JOB_STATE_*, Google's int64
// strings, and the pages of lists made from one job.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { WholeAnswer } from '../../contract.js';
import { checkpointsAnswer, eventsAnswer, fineTuningJob, jobListAnswer } from './response.js';
import type { TuningJob } from './wire.js';

const NAME = 'projects/p1/locations/us-central1/tuningJobs/777';

function read(answer: WholeAnswer, body: unknown): any {
  const text = answer.response(Buffer.from(JSON.stringify(body)), {});
  assert.ok(text.ok, text.ok ? '' : text.error.message);
  return JSON.parse(text.value);
}

function mapped(job: TuningJob) {
  const r = fineTuningJob({ name: NAME, ...job });
  assert.ok(r.ok);
  return r.value;
}

describe('tuning job → fine_tuning.job', () => {
  it('maps every Vertex state to one of the spec’s; finished_at only once the job ended', () => {
    const end = { createTime: '2026-11-01T10:00:00Z', endTime: '2026-11-01T11:00:00.5Z' };
    const cases: [string, string, number | null][] = [
      ['JOB_STATE_PENDING', 'validating_files', null],
      ['JOB_STATE_QUEUED', 'queued', null],
      ['JOB_STATE_RUNNING', 'running', null],
      ['JOB_STATE_SUCCEEDED', 'succeeded', 1_793_530_800],
      ['JOB_STATE_FAILED', 'failed', 1_793_530_800],
      ['JOB_STATE_EXPIRED', 'failed', 1_793_530_800],
      ['JOB_STATE_CANCELLING', 'cancelled', 1_793_530_800],
      ['JOB_STATE_CANCELLED', 'cancelled', 1_793_530_800],
      ['JOB_STATE_UNSPECIFIED', 'queued', null],
      ['JOB_STATE_SOMETHING_NEW', 'queued', null],
    ];
    for (const [state, status, finished] of cases) {
      const job = mapped({ state, ...end });
      assert.deepEqual([state, job.status, job.finished_at], [state, status, finished]);
      assert.equal(job.created_at, 1_793_527_200);
    }
    // A cancel still under way has no end yet.
    assert.equal(mapped({ state: 'JOB_STATE_CANCELLING', createTime: end.createTime }).finished_at, null);
  });

  it('error only for a failed job, its google.rpc code as a word', () => {
    assert.deepEqual(mapped({ state: 'JOB_STATE_FAILED', error: { code: 9, message: 'quota' } }).error, { code: 'failed_precondition', message: 'quota', param: null });
    assert.deepEqual(mapped({ state: 'JOB_STATE_EXPIRED' }).error, { code: 'expired', message: 'the tuning job ended in JOB_STATE_EXPIRED', param: null });
    assert.equal(mapped({ state: 'JOB_STATE_CANCELLED', error: { code: 1, message: 'CANCELED' } }).error, null);
  });

  it('int64 strings, the tuned model’s endpoint, billable tokens once succeeded', () => {
    const job: TuningJob = {
      state: 'JOB_STATE_SUCCEEDED',
      baseModel: 'gemini-2.5-flash',
      supervisedTuningSpec: { trainingDatasetUri: 'gs://b/t.jsonl', hyperParameters: { epochCount: '4', learningRateMultiplier: 1.5 } },
      tunedModel: { model: 'projects/p1/locations/us-central1/models/9@1', endpoint: 'projects/p1/locations/us-central1/endpoints/5' },
      tuningDataStats: { supervisedTuningDataStats: { totalBillableTokenCount: '9007199254740993' } },
    };
    const m = mapped(job);
    assert.deepEqual(m.hyperparameters, { n_epochs: 4, learning_rate_multiplier: 1.5, batch_size: 'auto' });
    assert.equal(m.fine_tuned_model, 'projects/p1/locations/us-central1/endpoints/5');
    assert.equal(m.organization_id, 'p1');
    assert.equal(m.trained_tokens, null, 'past 2^53 a count is not given rather than given wrong');
    assert.equal(mapped({ ...job, tuningDataStats: { supervisedTuningDataStats: { totalBillableTokenCount: '5000' } } }).trained_tokens, 5000);
    assert.equal(mapped({ ...job, state: 'JOB_STATE_RUNNING', tuningDataStats: { supervisedTuningDataStats: { totalBillableTokenCount: '5000' } } }).trained_tokens, null);
    assert.equal(mapped({ ...job, tunedModel: { model: 'projects/p1/locations/us-central1/models/9@1' } }).fine_tuned_model, 'projects/p1/locations/us-central1/models/9@1');
  });

  it('a job without a resource name is a 502', () => {
    const r = fineTuningJob({ state: 'JOB_STATE_RUNNING' });
    assert.ok(!r.ok);
    assert.deepEqual([r.error.status, r.error.code], [502, 'bad_upstream_response']);
  });
});

describe('lists', () => {
  const jobs = (...ids: number[]) => ({ tuningJobs: ids.map((id) => ({ name: `projects/p/locations/l/tuningJobs/${id}`, state: 'JOB_STATE_RUNNING' })) });

  it('jobs: the page from after `through`, `limit` long; more while Vertex has a next page or the page had more', () => {
    assert.deepEqual(read(jobListAnswer(undefined, 5), jobs(3, 2, 1)).data.map((j: any) => j.id), ['3', '2', '1']);
    const mid = read(jobListAnswer('3', 1), jobs(3, 2, 1));
    assert.deepEqual([mid.data.map((j: any) => j.id), mid.has_more, mid.first_id, mid.last_id], [['2'], true, '2', '2']);
    assert.equal(read(jobListAnswer(undefined, 5), { ...jobs(3), nextPageToken: 't' }).has_more, true);
    assert.deepEqual(read(jobListAnswer(undefined, 5), {}), { object: 'list', data: [], has_more: false, first_id: null, last_id: null });
  });

  it('events and checkpoints: made from one job, newest first; an unknown `after` is a 400 naming it', () => {
    const job = {
      name: NAME,
      state: 'JOB_STATE_CANCELLED',
      createTime: '2026-11-01T10:00:00Z',
      startTime: '2026-11-01T10:05:00Z',
      endTime: '2026-11-01T10:09:00Z',
      tunedModel: { checkpoints: [{ checkpointId: '1', step: '5' }, { checkpointId: '2', step: '10', endpoint: 'projects/p1/locations/us-central1/endpoints/8' }] },
    };
    const events = read(eventsAnswer({ after: undefined, limit: 10 }), job);
    assert.deepEqual(events.data.map((e: any) => [e.id, e.message]), [['777-ended', 'Tuning job cancelled'], ['777-started', 'Tuning job started'], ['777-created', 'Created tuning job 777 of a base model']]);
    const ckpts = read(checkpointsAnswer({ after: undefined, limit: 10 }), job);
    assert.deepEqual(ckpts.data.map((c: any) => [c.id, c.step_number, c.fine_tuned_model_checkpoint]), [['777-checkpoint-2', 10, 'projects/p1/locations/us-central1/endpoints/8'], ['777-checkpoint-1', 5, null]]);
    const r = checkpointsAnswer({ after: 'nope', limit: 10 }).response(Buffer.from(JSON.stringify(job)), {});
    assert.ok(!r.ok);
    assert.deepEqual([r.error.status, r.error.param], [400, 'after']);
  });
});
