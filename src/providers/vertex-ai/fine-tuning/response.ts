/**
 * Vertex AI tuning jobs read back as OpenAI's fine-tuning objects (spec:
 * "Fine-tuning job object", "Fine-tuning checkpoint"; docs/batches.md says
 * what each field comes from).
 *
 * Vertex keeps no event log and no per-checkpoint metrics for a tuning job:
 * events are made from the job's own times (created, started, ended, with the
 * error of a failed job), and checkpoints from `tunedModel.checkpoints` (only
 * jobs that keep intermediate checkpoints have them), newest first, each
 * list paged by `after` and `limit` here.
 */
import { err, invalid, ok, type Result } from '../../../shared/errors.js';
import type { WholeAnswer } from '../../contract.js';
import { googleError } from '../../google/errors.js';
import { badResponse, parseAnswer, wholeAnswer } from '../../shared/openai-answer.js';
import type { ListTuningJobsResponse, TuningJob } from './wire.js';

const PROVIDER = 'vertex-ai';

export type FineTuningStatus = 'validating_files' | 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/**
 * JOB_STATE_* → the spec's states. PENDING is the job made but not yet queued,
 * while Vertex checks its dataset; CANCELLING is reported as cancelled (the
 * spec has no cancelling state) with no finished_at until Vertex ends it. A
 * state this table does not know (UNSPECIFIED, a new one) reads as queued.
 */
const STATUS: Readonly<Record<string, FineTuningStatus>> = {
  JOB_STATE_PENDING: 'validating_files',
  JOB_STATE_QUEUED: 'queued',
  JOB_STATE_PAUSED: 'queued',
  JOB_STATE_RUNNING: 'running',
  JOB_STATE_UPDATING: 'running',
  JOB_STATE_SUCCEEDED: 'succeeded',
  JOB_STATE_PARTIALLY_SUCCEEDED: 'succeeded',
  JOB_STATE_FAILED: 'failed',
  JOB_STATE_EXPIRED: 'failed',
  JOB_STATE_CANCELLING: 'cancelled',
  JOB_STATE_CANCELLED: 'cancelled',
};

/** google.rpc.Code names by number: a failed job's `error.code`, as OpenAI's codes are words. */
const RPC_CODES = [
  'ok', 'cancelled', 'unknown', 'invalid_argument', 'deadline_exceeded', 'not_found', 'already_exists', 'permission_denied',
  'resource_exhausted', 'failed_precondition', 'aborted', 'out_of_range', 'unimplemented', 'internal', 'unavailable', 'data_loss', 'unauthenticated',
];

export interface FineTuningJob {
  object: 'fine_tuning.job';
  id: string;
  model: string | null;
  created_at: number;
  finished_at: number | null;
  fine_tuned_model: string | null;
  organization_id: string | null;
  status: FineTuningStatus;
  error: { code: string; message: string; param: null } | null;
  hyperparameters: { n_epochs: number | 'auto'; learning_rate_multiplier: number | 'auto'; batch_size: 'auto' };
  training_file: string | null;
  validation_file: string | null;
  result_files: string[];
  trained_tokens: number | null;
  seed: null;
  estimated_finish: null;
  integrations: [];
  user_provided_suffix: string | null;
  metadata: Record<string, string> | null;
}

/** Where a list starts and how long it is: `after` the id of the last item of the previous page. */
export interface PageQuery {
  after: string | undefined;
  limit: number;
}

type Listed = Record<string, unknown> & { id: string };

/** The job id: the last segment of its resource name (projects/{p}/locations/{l}/tuningJobs/{id}). */
export function jobId(job: TuningJob): string | undefined {
  return /\/tuningJobs\/([^/]+)$/.exec(job.name ?? '')?.[1];
}

/** One tuning job as `fine_tuning.job`; a 502 when it has no resource name to take the id from. */
export function fineTuningJob(job: TuningJob): Result<FineTuningJob> {
  const id = jobId(job);
  if (id === undefined) return err(badResponse(PROVIDER, 'sent a tuning job without a resource name'));
  const status = STATUS[job.state ?? ''] ?? 'queued';
  const spec = job.supervisedTuningSpec ?? {};
  const hp = spec.hyperParameters ?? {};
  const tokens = job.tuningDataStats?.supervisedTuningDataStats?.totalBillableTokenCount;
  return ok({
    object: 'fine_tuning.job',
    id,
    model: job.baseModel ?? null,
    created_at: seconds(job.createTime) ?? 0,
    finished_at: status === 'cancelled' || status === 'succeeded' || status === 'failed' ? seconds(job.endTime) : null,
    // The endpoint serves the tuned model (generateContent on it); the model resource is the registry's entry.
    fine_tuned_model: job.tunedModel?.endpoint ?? job.tunedModel?.model ?? null,
    organization_id: /^projects\/([^/]+)\//.exec(job.name ?? '')?.[1] ?? null,
    status,
    error: status === 'failed' ? failure(job) : null,
    hyperparameters: { n_epochs: int(hp.epochCount) ?? 'auto', learning_rate_multiplier: hp.learningRateMultiplier ?? 'auto', batch_size: 'auto' },
    training_file: spec.trainingDatasetUri ?? null,
    validation_file: spec.validationDatasetUri ?? null,
    result_files: [],
    // Billable tokens are known once Vertex has read the dataset; the spec keeps them null while the job runs.
    trained_tokens: status === 'succeeded' ? int(tokens) : null,
    seed: null,
    estimated_finish: null,
    integrations: [],
    user_provided_suffix: job.tunedModelDisplayName ?? null,
    metadata: job.labels ?? null,
  });
}

function failure(job: TuningJob): FineTuningJob['error'] {
  const code = job.error?.code;
  return {
    code: (code !== undefined ? RPC_CODES[code] : undefined) ?? (job.state === 'JOB_STATE_EXPIRED' ? 'expired' : 'failed'),
    message: job.error?.message ?? `the tuning job ended in ${job.state ?? 'an unknown state'}`,
    param: null,
  };
}

/** The answer to a create, a retrieve or a cancel: the job. */
export const jobAnswer: WholeAnswer = wholeAnswer((raw) => {
  const job = readJson<TuningJob>(raw);
  if (!job.ok) return job;
  const mapped = fineTuningJob(job.value);
  return mapped.ok ? ok(JSON.stringify(mapped.value)) : mapped;
}, googleError);

/**
 * The answer to a list of jobs: Vertex's page, from just after the job `through`
 * when the page was found by an `after` (after.ts), `limit` long at most. More
 * follow when Vertex has another page or this one had more.
 */
export function jobListAnswer(through: string | undefined, limit: number): WholeAnswer {
  return wholeAnswer((raw) => {
    const list = readJson<ListTuningJobsResponse>(raw);
    if (!list.ok) return list;
    const jobs: FineTuningJob[] = [];
    for (const job of list.value.tuningJobs ?? []) {
      const mapped = fineTuningJob(job);
      if (!mapped.ok) return mapped;
      jobs.push(mapped.value);
    }
    return listText(jobs, { after: through, limit }, list.value.nextPageToken !== undefined && list.value.nextPageToken !== '');
  }, googleError);
}

/** The answer to /events: the job's state changes, newest first. */
export function eventsAnswer(query: PageQuery): WholeAnswer {
  return fromJob(query, (job, id) => {
    const status = STATUS[job.state ?? ''] ?? 'queued';
    const events: Listed[] = [];
    const event = (suffix: string, at: string | undefined, level: 'info' | 'error', message: string): void => {
      const created = seconds(at);
      if (created !== null) events.unshift({ object: 'fine_tuning.job.event', id: `${id}-${suffix}`, created_at: created, level, message, data: {}, type: 'message' });
    };
    event('created', job.createTime, 'info', `Created tuning job ${id} of ${job.baseModel ?? 'a base model'}`);
    event('started', job.startTime, 'info', 'Tuning job started');
    if (status === 'succeeded') event('ended', job.endTime, 'info', `Tuning job succeeded: ${job.tunedModel?.endpoint ?? job.tunedModel?.model ?? 'tuned model ready'}`);
    if (status === 'failed') event('ended', job.endTime, 'error', `Tuning job failed: ${failure(job)!.message}`);
    if (status === 'cancelled') event('ended', job.endTime ?? job.updateTime, 'info', job.state === 'JOB_STATE_CANCELLING' ? 'Tuning job is being cancelled' : 'Tuning job cancelled');
    return events;
  });
}

/** The answer to /checkpoints: `tunedModel.checkpoints`, highest step first. */
export function checkpointsAnswer(query: PageQuery): WholeAnswer {
  return fromJob(query, (job, id) => {
    // Vertex dates no checkpoint: each carries the time the job was last updated (they are all written by then).
    const created = seconds(job.updateTime ?? job.endTime ?? job.createTime) ?? 0;
    return (job.tunedModel?.checkpoints ?? [])
      .map((c) => ({ c, step: int(c.step) ?? 0 }))
      .sort((a, b) => b.step - a.step)
      .map(({ c, step }) => ({
        object: 'fine_tuning.job.checkpoint',
        id: `${id}-checkpoint-${c.checkpointId ?? step}`,
        created_at: created,
        fine_tuned_model_checkpoint: c.endpoint ?? null,
        step_number: step,
        // Vertex reports losses to the job's experiment, not with the checkpoint.
        metrics: { step },
        fine_tuning_job_id: id,
      }));
  });
}

/** A list made from one job (GET of the job), paged here. */
function fromJob(query: PageQuery, items: (job: TuningJob, id: string) => Listed[]): WholeAnswer {
  return wholeAnswer((raw) => {
    const job = readJson<TuningJob>(raw);
    if (!job.ok) return job;
    const id = jobId(job.value);
    if (id === undefined) return err(badResponse(PROVIDER, 'sent a tuning job without a resource name'));
    return listText(items(job.value, id), query, false);
  }, googleError);
}

/** `{object:"list", data, has_more, first_id, last_id}` of the items after `query.after`; a 400 naming `after` when it is not among them. */
function listText(items: readonly { id: string }[], query: PageQuery, moreBeyond: boolean): Result<string> {
  let from = 0;
  if (query.after !== undefined) {
    from = items.findIndex((x) => x.id === query.after) + 1;
    if (from === 0) return err(invalid(`after: '${query.after}' is not in the list (it may have gone since the last page): list from the start`, 'after'));
  }
  const data = items.slice(from, from + query.limit);
  return ok(
    JSON.stringify({
      object: 'list',
      data,
      has_more: moreBeyond || from + query.limit < items.length,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
    }),
  );
}

function readJson<T>(raw: Buffer): Result<T> {
  const parsed = parseAnswer(raw, PROVIDER);
  if (!parsed.ok) return parsed;
  const value = parsed.value;
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? ok(value as T) : err(badResponse(PROVIDER, 'sent an answer that is not a JSON object'));
}

/** RFC 3339 → Unix seconds; null when absent or unreadable. */
function seconds(time: string | undefined): number | null {
  const ms = time === undefined ? NaN : Date.parse(time);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}

/** Google's int64 (a string in JSON, or a number) → a number; null when absent or not an integer. */
function int(value: string | number | undefined): number | null {
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) ? n : null;
}
