// Vertex AI's supervised tuning API, stateful, for mock-gemini.ts (which checks the Bearer token
// and the project and location first, as for every Vertex path):
//   POST {location}/tuningJobs               create: baseModel, supervisedTuningSpec, tunedModelDisplayName, labels
//   GET  {location}/tuningJobs?pageSize&pageToken   newest first, opaque page tokens, nextPageToken while more
//   GET  {location}/tuningJobs/{id}
//   POST {location}/tuningJobs/{id}:cancel   answers {} (google.protobuf.Empty); an ended job is a FAILED_PRECONDITION
// Shapes as Google's REST reference writes them (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.tuningJobs):
// int64 values as strings, RFC 3339 times, google.rpc.Status errors; unknown fields are refused.

export interface VertexTuning {
  /** Answers one tuning-job request of `location` (projects/{p}/locations/{l}); `rest` is the path after it. */
  handle(location: string, method: string, rest: string, query: URLSearchParams, body: unknown): { status: number; body: unknown };
  /** The job moves to RUNNING. */
  run(id: string): void;
  /** The job succeeds: a tuned model and endpoint, `checkpoints` intermediate checkpoints (steps 10, 20, …), its data stats. */
  succeed(id: string, checkpoints: number): void;
  fail(id: string, message: string): void;
  reset(): void;
}

type Job = Record<string, any> & { name: string };

const CREATE_FIELDS = new Set(['baseModel', 'supervisedTuningSpec', 'tunedModelDisplayName', 'description', 'labels']);
const SPEC_FIELDS = new Set(['trainingDatasetUri', 'validationDatasetUri', 'hyperParameters', 'exportLastCheckpointOnly']);
const HYPER_FIELDS = new Set(['epochCount', 'learningRateMultiplier', 'adapterSize']);
const ENDED = new Set(['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_CANCELLED', 'JOB_STATE_EXPIRED']);

export function vertexTuning(): VertexTuning {
  let jobs: Job[] = []; // newest first
  let seq = 0;
  let clock = Date.parse('2026-11-01T10:00:00Z');
  const now = (): string => new Date((clock += 1000)).toISOString();
  const find = (id: string): Job | undefined => jobs.find((j) => j.name.endsWith(`/tuningJobs/${id}`));
  const must = (id: string): Job => find(id) ?? assertNever(`no tuning job ${id}`);

  function handle(location: string, method: string, rest: string, query: URLSearchParams, body: unknown): { status: number; body: unknown } {
    if (rest === '/tuningJobs' && method === 'POST') return create(location, body);
    if (rest === '/tuningJobs' && method === 'GET') return list(location, query);
    const one = /^\/tuningJobs\/([^/:]+)(:cancel)?$/.exec(rest);
    if (one === null) return status(404, `Method not found: ${rest}`, 'NOT_FOUND');
    const job = jobs.find((j) => j.name === `${location}/tuningJobs/${one[1]}`);
    if (job === undefined) return status(404, `The TuningJob does not exist: ${location}/tuningJobs/${one[1]}`, 'NOT_FOUND');
    if (one[2] === undefined && method === 'GET') return { status: 200, body: job };
    if (one[2] !== undefined && method === 'POST') {
      if (ENDED.has(job.state)) return status(400, `Cannot cancel tuning job ${job.name} in state ${job.state}.`, 'FAILED_PRECONDITION');
      Object.assign(job, { state: 'JOB_STATE_CANCELLED', endTime: now(), updateTime: now(), error: { code: 1, message: 'CANCELED' } });
      return { status: 200, body: {} };
    }
    return status(404, `Method not found: ${method} ${rest}`, 'NOT_FOUND');
  }

  function create(location: string, body: any): { status: number; body: unknown } {
    if (typeof body !== 'object' || body === null) return status(400, 'Invalid JSON payload received.', 'INVALID_ARGUMENT');
    const unknown = Object.keys(body).find((k) => !CREATE_FIELDS.has(k))
      ?? Object.keys(body.supervisedTuningSpec ?? {}).find((k) => !SPEC_FIELDS.has(k))
      ?? Object.keys(body.supervisedTuningSpec?.hyperParameters ?? {}).find((k) => !HYPER_FIELDS.has(k));
    if (unknown !== undefined) return status(400, `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`, 'INVALID_ARGUMENT');
    if (typeof body.baseModel !== 'string') return status(400, 'base_model is required.', 'INVALID_ARGUMENT');
    const spec = body.supervisedTuningSpec;
    if (!/^gs:\/\//.test(spec?.trainingDatasetUri ?? '')) return status(400, 'Training dataset uri must be a Cloud Storage uri (gs://).', 'INVALID_ARGUMENT');
    const hp = spec.hyperParameters ?? {};
    if (hp.epochCount !== undefined && !Number.isInteger(Number(hp.epochCount))) return status(400, 'Invalid value at epoch_count (TYPE_INT64).', 'INVALID_ARGUMENT');
    const created = now();
    const job: Job = {
      name: `${location}/tuningJobs/${String(1_000_000_000_000 + ++seq)}`,
      ...(body.tunedModelDisplayName !== undefined ? { tunedModelDisplayName: body.tunedModelDisplayName } : {}),
      baseModel: body.baseModel,
      supervisedTuningSpec: {
        trainingDatasetUri: spec.trainingDatasetUri,
        ...(spec.validationDatasetUri !== undefined ? { validationDatasetUri: spec.validationDatasetUri } : {}),
        hyperParameters: {
          ...(hp.epochCount !== undefined ? { epochCount: String(hp.epochCount) } : {}),
          ...(hp.learningRateMultiplier !== undefined ? { learningRateMultiplier: hp.learningRateMultiplier } : {}),
          adapterSize: hp.adapterSize ?? 'ADAPTER_SIZE_FOUR',
        },
      },
      state: 'JOB_STATE_PENDING',
      createTime: created,
      updateTime: created,
      ...(body.labels !== undefined ? { labels: body.labels } : {}),
    };
    jobs.unshift(job);
    return { status: 200, body: job };
  }

  function list(location: string, query: URLSearchParams): { status: number; body: unknown } {
    const size = Number(query.get('pageSize') ?? 10);
    const token = query.get('pageToken');
    const from = token === null ? 0 : Number(Buffer.from(token, 'base64url').toString('utf8').replace(/^offset:/, ''));
    if (!Number.isInteger(from)) return status(400, 'Invalid page token.', 'INVALID_ARGUMENT');
    const mine = jobs.filter((j) => j.name.startsWith(`${location}/`));
    const page = mine.slice(from, from + size);
    const more = from + size < mine.length;
    return { status: 200, body: { tuningJobs: page, ...(more ? { nextPageToken: Buffer.from(`offset:${from + size}`).toString('base64url') } : {}) } };
  }

  return {
    handle,
    run(id) {
      Object.assign(must(id), { state: 'JOB_STATE_RUNNING', startTime: now(), updateTime: now() });
    },
    succeed(id, checkpoints) {
      const job = must(id);
      const location = job.name.replace(/\/tuningJobs\/.*$/, '');
      const steps = Array.from({ length: checkpoints }, (_, i) => ({
        checkpointId: String(i + 1),
        epoch: String(i + 1),
        step: String((i + 1) * 10),
        endpoint: `${location}/endpoints/${String(500 + i)}`,
      }));
      Object.assign(job, {
        state: 'JOB_STATE_SUCCEEDED',
        endTime: now(),
        updateTime: now(),
        tunedModel: { model: `${location}/models/${id.slice(-4)}@1`, endpoint: `${location}/endpoints/${id.slice(-4)}`, ...(steps.length > 0 ? { checkpoints: steps } : {}) },
        tuningDataStats: { supervisedTuningDataStats: { tuningDatasetExampleCount: '100', totalBillableTokenCount: '123456', tuningStepCount: String(checkpoints * 10) } },
      });
    },
    fail(id, message) {
      Object.assign(must(id), { state: 'JOB_STATE_FAILED', endTime: now(), updateTime: now(), error: { code: 3, message } });
    },
    reset() {
      jobs = [];
    },
  };
}

function status(code: number, message: string, name: string): { status: number; body: unknown } {
  return { status: code, body: { error: { code, message, status: name } } };
}

function assertNever(message: string): never {
  throw new Error(message);
}
