/**
 * OpenAI's fine-tuning requests (/fine_tuning/jobs…, on the generic proxy's
 * path) read as what to ask Vertex AI's tuning API
 * (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.tuningJobs):
 *
 *   POST /fine_tuning/jobs                   create  → POST {location}/tuningJobs, the body below
 *   GET  /fine_tuning/jobs?after&limit       list    → GET  {location}/tuningJobs?pageSize&pageToken (call.ts, prior.ts)
 *   GET  /fine_tuning/jobs/{id}              job     → GET  {location}/tuningJobs/{id}
 *   GET  /fine_tuning/jobs/{id}/events       job     → the same GET, its times as events (response.ts)
 *   GET  /fine_tuning/jobs/{id}/checkpoints  job     → the same GET, tunedModel.checkpoints
 *   POST /fine_tuning/jobs/{id}/cancel       cancel  → POST {location}/tuningJobs/{id}:cancel, then the GET
 *
 * A create's OpenAI body becomes
 *   {baseModel: model, supervisedTuningSpec: {trainingDatasetUri: training_file,
 *    validationDatasetUri: validation_file, hyperParameters: {epochCount: n_epochs,
 *    learningRateMultiplier: learning_rate_multiplier}}, tunedModelDisplayName: suffix,
 *    labels: metadata}
 * (hyperparameters from `method.supervised` or the older top-level field). Vertex reads
 * datasets from Cloud Storage only, so both files are gs:// URIs; what has no Vertex
 * counterpart (a batch size, a seed, integrations, another method) is a 400 naming it.
 */
import { err, invalid, ok, type GatewayError, type Result } from '../../../shared/errors.js';
import type { WholeAnswer } from '../../contract.js';
import { checkpointsAnswer, eventsAnswer, jobAnswer, type PageQuery } from './response.js';
import type { CreateTuningJob } from './wire.js';

export type TuningPlan =
  | { kind: 'create'; body: CreateTuningJob }
  | { kind: 'list'; query: PageQuery }
  /** A GET of one job, read as `answer` (the job, its events or its checkpoints). */
  | { kind: 'job'; id: string; answer: WholeAnswer }
  | { kind: 'cancel'; id: string };

/** Vertex's job ids are numbers; anything path-safe is let through for Vertex to judge. */
const JOB_ID = /^[A-Za-z0-9_-]{1,128}$/;
const MAX_LIMIT = 100;
/** OpenAI's defaults: 20 jobs or events, 10 checkpoints. */
const DEFAULT_LIMIT = { jobs: 20, events: 20, checkpoints: 10 } as const;
/** Vertex's cap on tunedModelDisplayName. */
const MAX_SUFFIX = 128;
/** Vertex's label rules: lower-case keys and values of letters, digits, `_` and `-`, keys starting with a letter. */
const LABEL_KEY = /^[a-z][a-z0-9_-]{0,62}$/;
const LABEL_VALUE = /^[a-z0-9_-]{0,63}$/;
const CREATE_FIELDS = new Set(['model', 'training_file', 'validation_file', 'hyperparameters', 'method', 'suffix', 'seed', 'integrations', 'metadata']);

/** Whether the generic proxy's `path` (after /v1) is one of OpenAI's fine-tuning paths. */
export function isFineTuningPath(path: string): boolean {
  return /^\/fine_tuning(?:[/?]|$)/.test(path);
}

/** What to ask Vertex for one fine-tuning request; `raw` is the body the proxy read (a JSON body is read whole). */
export function tuningPlan(method: string, path: string, raw: unknown): Result<TuningPlan> {
  const url = new URL(path, 'http://gateway');
  const parts = url.pathname.split('/'); // ['', 'fine_tuning', 'jobs', id?, action?]
  const [, , jobs, id, action, extra] = parts;
  const served = jobs === 'jobs' && extra === undefined;
  if (served && id === undefined) {
    if (method === 'POST') return createPlan(raw);
    if (method === 'GET') return pageQuery(url.searchParams, DEFAULT_LIMIT.jobs, (query) => ({ kind: 'list', query }));
  }
  if (served && id !== undefined) {
    if (!JOB_ID.test(id)) return err(invalid(`fine_tuning_job_id: '${id}' is not a Vertex AI tuning job id`, 'fine_tuning_job_id'));
    if (method === 'GET' && action === undefined) return ok({ kind: 'job', id, answer: jobAnswer });
    if (method === 'POST' && action === 'cancel') return ok({ kind: 'cancel', id });
    if (method === 'GET' && action === 'events') return pageQuery(url.searchParams, DEFAULT_LIMIT.events, (q) => ({ kind: 'job', id, answer: eventsAnswer(q) }));
    if (method === 'GET' && action === 'checkpoints') {
      return pageQuery(url.searchParams, DEFAULT_LIMIT.checkpoints, (q) => ({ kind: 'job', id, answer: checkpointsAnswer(q) }));
    }
  }
  return err(invalid(`provider 'vertex-ai' does not serve ${method} ${url.pathname}: its tuning jobs take create, list, retrieve, cancel, events and checkpoints`, 'provider'));
}

function pageQuery(q: URLSearchParams, defaultLimit: number, plan: (query: PageQuery) => TuningPlan): Result<TuningPlan> {
  const limitText = q.get('limit');
  const limit = limitText === null ? defaultLimit : /^\d{1,3}$/.test(limitText) ? Number(limitText) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) return err(invalid(`limit: must be an integer from 1 to ${MAX_LIMIT}`, 'limit'));
  const after = q.get('after');
  if (after === '') return err(invalid('after: must be the id of the last item of the previous page', 'after'));
  return ok(plan({ after: after ?? undefined, limit }));
}

function createPlan(raw: unknown): Result<TuningPlan> {
  if (!Buffer.isBuffer(raw)) return err(invalid('body: a fine-tuning job is created from a JSON body (content-type: application/json)', 'body'));
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return err(invalid('body: is not valid JSON', 'body'));
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return err(invalid('body: must be a JSON object', 'body'));
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).find((k) => !CREATE_FIELDS.has(k));
  if (unknown !== undefined) return err(invalid(`${unknown}: is not a fine-tuning parameter`, unknown));
  if (typeof b.model !== 'string' || b.model === '') return err(invalid('model: required, the base model to tune (a Vertex AI model id such as gemini-2.5-flash)', 'model'));
  const training = datasetUri(b.training_file, 'training_file');
  if (!training.ok) return training;
  if (training.value === undefined) return err(invalid('training_file: required, the gs:// URI of the JSONL training dataset', 'training_file'));
  const validation = datasetUri(b.validation_file, 'validation_file');
  if (!validation.ok) return validation;
  const refused = refusedField(b);
  if (refused !== null) return err(refused);
  const hyper = hyperParameters(b);
  if (!hyper.ok) return hyper;
  const create: CreateTuningJob = { baseModel: b.model, supervisedTuningSpec: { trainingDatasetUri: training.value } };
  if (validation.value !== undefined) create.supervisedTuningSpec.validationDatasetUri = validation.value;
  if (hyper.value !== undefined) create.supervisedTuningSpec.hyperParameters = hyper.value;
  if (b.suffix !== undefined && b.suffix !== null) {
    if (typeof b.suffix !== 'string' || b.suffix === '' || b.suffix.length > MAX_SUFFIX) {
      return err(invalid(`suffix: must be a string of 1 to ${MAX_SUFFIX} characters (the tuned model's display name on Vertex AI)`, 'suffix'));
    }
    create.tunedModelDisplayName = b.suffix;
  }
  const labels = labelsOf(b.metadata);
  if (!labels.ok) return labels;
  if (labels.value !== undefined) create.labels = labels.value;
  return ok({ kind: 'create', body: create });
}

/**
 * A dataset as Vertex reads it: a gs:// URI. A file id (the gateway's or
 * OpenAI's) names bytes Vertex cannot reach, and the gateway has no Cloud
 * Storage bucket of its own to copy them to.
 */
function datasetUri(value: unknown, param: string): Result<string | undefined> {
  if (value === undefined || value === null) return ok(undefined);
  if (typeof value === 'string' && /^gs:\/\/[^/]+\/.+/.test(value)) return ok(value);
  const what = typeof value === 'string' && value.startsWith('file-') ? `'${value}' is a file id, which Vertex AI cannot read` : 'is not a gs:// URI';
  return err(invalid(`${param}: ${what}; give the gs://bucket/path of a JSONL dataset in Cloud Storage that the project's Vertex AI service agent can read`, param));
}

/** Fields of OpenAI's create that Vertex's supervised tuning has nothing for. */
function refusedField(b: Record<string, unknown>): GatewayError | null {
  if (b.seed !== undefined && b.seed !== null) return invalid('seed: Vertex AI tuning takes no seed', 'seed');
  if (b.integrations !== undefined && b.integrations !== null && !(Array.isArray(b.integrations) && b.integrations.length === 0)) {
    return invalid('integrations: Vertex AI tuning reports to its own experiments, not to trackers', 'integrations');
  }
  if (b.method !== undefined && b.method !== null) {
    const m = b.method as { type?: unknown };
    if (typeof m !== 'object' || Array.isArray(m)) return invalid('method: must be an object', 'method');
    if (m.type !== 'supervised') return invalid(`method.type: Vertex AI tuning is supervised here; '${String(m.type)}' is not served`, 'method.type');
  }
  return null;
}

/** `method.supervised.hyperparameters`, else the top-level `hyperparameters`: `auto` leaves a value to Vertex. */
function hyperParameters(b: Record<string, unknown>): Result<CreateTuningJob['supervisedTuningSpec']['hyperParameters']> {
  const supervised = (b.method as { supervised?: { hyperparameters?: unknown } } | null | undefined)?.supervised?.hyperparameters;
  const [hp, at] = supervised !== undefined ? [supervised, 'method.supervised.hyperparameters'] : [b.hyperparameters, 'hyperparameters'];
  if (hp === undefined || hp === null) return ok(undefined);
  if (typeof hp !== 'object' || Array.isArray(hp)) return err(invalid(`${at}: must be an object`, at));
  const { n_epochs: epochs, learning_rate_multiplier: rate, batch_size: batch, ...rest } = hp as Record<string, unknown>;
  const other = Object.keys(rest)[0];
  if (other !== undefined) return err(invalid(`${at}.${other}: Vertex AI takes n_epochs and learning_rate_multiplier`, `${at}.${other}`));
  if (batch !== undefined && batch !== 'auto') return err(invalid(`${at}.batch_size: Vertex AI chooses the batch size; send 'auto' or leave it out`, `${at}.batch_size`));
  const out: NonNullable<CreateTuningJob['supervisedTuningSpec']['hyperParameters']> = {};
  if (epochs !== undefined && epochs !== 'auto') {
    if (!Number.isSafeInteger(epochs) || (epochs as number) < 1) return err(invalid(`${at}.n_epochs: must be a positive integer or 'auto'`, `${at}.n_epochs`));
    out.epochCount = epochs as number;
  }
  if (rate !== undefined && rate !== 'auto') {
    if (typeof rate !== 'number' || !(rate > 0) || !Number.isFinite(rate)) {
      return err(invalid(`${at}.learning_rate_multiplier: must be a positive number or 'auto'`, `${at}.learning_rate_multiplier`));
    }
    out.learningRateMultiplier = rate;
  }
  return ok(Object.keys(out).length === 0 ? undefined : out);
}

/** `metadata` as the job's labels, which Vertex holds to its label rules. */
function labelsOf(metadata: unknown): Result<Record<string, string> | undefined> {
  if (metadata === undefined || metadata === null) return ok(undefined);
  if (typeof metadata !== 'object' || Array.isArray(metadata)) return err(invalid('metadata: must be an object of strings', 'metadata'));
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (!LABEL_KEY.test(key) || typeof value !== 'string' || !LABEL_VALUE.test(value)) {
      return err(invalid(`metadata.${key}: Vertex AI keeps metadata as labels: keys and values of lower-case letters, digits, '_' and '-' (keys from a letter), at most 63 characters`, `metadata.${key}`));
    }
    labels[key] = value;
  }
  return ok(labels);
}
