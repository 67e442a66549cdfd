/**
 * OpenAI's fine-tuning API on loopback, stateful, for the tests of
 * fine-tuning through the gateway: create (validating_files), list with
 * `after` and `limit` (newest first), retrieve, cancel (a finished job is a
 * 400, as OpenAI answers), events and checkpoints (paged the same way).
 * Served at /v1/fine_tuning/jobs (OpenAI, `Authorization: Bearer`) and at
 * /openai/fine_tuning/jobs?api-version=… (Azure OpenAI, `api-key`); every
 * request is recorded with the credential it carried.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FineTuningCall {
  method: string;
  /** Path without the provider's prefix (/v1 or /openai), query apart. */
  path: string;
  query: URLSearchParams;
  /** The bearer token (OpenAI) or the api-key header (Azure). */
  credential: string | null;
  flavour: 'openai' | 'azure';
}

export interface MockFineTuning {
  url: string;
  calls: FineTuningCall[];
  /** Marks a job finished (succeeded), with a checkpoint per step. */
  finish(id: string, steps: number): void;
  close(): Promise<void>;
}

type Item = Record<string, unknown> & { id: string };

const send = (res: http.ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${Math.random().toString(36).slice(2)}` }).end(JSON.stringify(body));
};
const error = (res: http.ServerResponse, status: number, message: string, param: string | null, code: string | null): void =>
  send(res, status, { error: { message, type: 'invalid_request_error', param, code } });

/** One page of `items` (newest first) after the id `after`, as OpenAI pages its lists. */
function page<T extends { id: string }>(items: T[], q: URLSearchParams): { object: 'list'; data: T[]; has_more: boolean; first_id: string | null; last_id: string | null } {
  const limit = Number(q.get('limit') ?? 20);
  const after = q.get('after');
  const from = after === null ? 0 : items.findIndex((x) => x.id === after) + 1;
  const data = items.slice(from, from + limit);
  return { object: 'list', data, has_more: from + limit < items.length, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

export async function startMockFineTuning(): Promise<MockFineTuning> {
  const jobs: Item[] = [];
  const events = new Map<string, Item[]>();
  const checkpoints = new Map<string, Item[]>();
  const calls: FineTuningCall[] = [];
  let seq = 0;
  let clock = 1_760_000_000;
  const event = (jobId: string, message: string): void => {
    events.get(jobId)!.unshift({ object: 'fine_tuning.job.event', id: `ftevent-${++seq}`, created_at: ++clock, level: 'info', message, data: {}, type: 'message' });
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (s: string) => (raw += s));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://mock');
      const azure = url.pathname.startsWith('/openai/');
      if (azure && url.searchParams.get('api-version') === null) return error(res, 404, 'Resource not found', null, '404');
      const path = url.pathname.replace(/^\/(v1|openai)/, '');
      const auth = req.headers.authorization;
      const credential = azure ? ((req.headers['api-key'] as string | undefined) ?? null) : auth?.startsWith('Bearer ') ? auth.slice(7) : null;
      calls.push({ method: req.method!, path, query: url.searchParams, credential, flavour: azure ? 'azure' : 'openai' });
      if (credential === null) return error(res, 401, 'no credential', null, 'invalid_api_key');
      const parts = path.split('/'); // ['', 'fine_tuning', 'jobs', id?, action?]
      if (parts[1] !== 'fine_tuning' || parts[2] !== 'jobs') return error(res, 404, `unknown path ${path}`, null, null);
      const id = parts[3];
      if (id === undefined) {
        if (req.method === 'GET') return send(res, 200, page(jobs, url.searchParams));
        const body = JSON.parse(raw || '{}') as Record<string, unknown>;
        if (typeof body.model !== 'string') return error(res, 400, 'Missing required parameter: model', 'model', 'missing_required_parameter');
        if (typeof body.training_file !== 'string') return error(res, 400, 'Missing required parameter: training_file', 'training_file', 'missing_required_parameter');
        const hp = (body.hyperparameters as Record<string, unknown> | undefined) ?? {};
        const job: Item = {
          object: 'fine_tuning.job',
          id: `ftjob-${String(++seq).padStart(4, '0')}`,
          model: body.model,
          created_at: ++clock,
          finished_at: null,
          fine_tuned_model: null,
          organization_id: 'org-mock',
          result_files: [],
          status: 'validating_files',
          validation_file: body.validation_file ?? null,
          training_file: body.training_file,
          hyperparameters: { n_epochs: hp.n_epochs ?? 'auto', batch_size: hp.batch_size ?? 'auto', learning_rate_multiplier: hp.learning_rate_multiplier ?? 'auto' },
          trained_tokens: null,
          error: null,
          seed: typeof body.seed === 'number' ? body.seed : 42,
          estimated_finish: null,
          integrations: [],
          metadata: body.metadata ?? null,
        };
        jobs.unshift(job);
        events.set(job.id as string, []);
        checkpoints.set(job.id as string, []);
        event(job.id as string, `Created fine-tuning job: ${String(job.id)}`);
        return send(res, 200, job);
      }
      const job = jobs.find((j) => j.id === id);
      if (job === undefined) return error(res, 404, `Could not find fine tune job: ${id}`, 'fine_tuning_job_id', 'fine_tune_job_not_found');
      const action = parts[4];
      if (action === undefined && req.method === 'GET') return send(res, 200, job);
      if (action === 'cancel' && req.method === 'POST') {
        if (!['validating_files', 'queued', 'running'].includes(job.status as string)) return error(res, 400, `Job has already ${String(job.status)}`, null, 'invalid_job_state');
        job.status = 'cancelled';
        job.finished_at = ++clock;
        event(id, 'Fine-tuning job cancelled');
        return send(res, 200, job);
      }
      if (action === 'events' && req.method === 'GET') return send(res, 200, page(events.get(id)!, url.searchParams));
      if (action === 'checkpoints' && req.method === 'GET') return send(res, 200, page(checkpoints.get(id)!, url.searchParams));
      return error(res, 404, `unknown path ${path}`, null, null);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    finish(id, steps) {
      const job = jobs.find((j) => j.id === id)!;
      Object.assign(job, { status: 'succeeded', finished_at: ++clock, fine_tuned_model: `ft:${String(job.model)}:org-mock::${id.slice(-4)}`, trained_tokens: 1234 * steps });
      for (let step = 1; step <= steps; step++) {
        checkpoints.get(id)!.unshift({
          object: 'fine_tuning.job.checkpoint',
          id: `ftckpt-${id}-${step}`,
          created_at: ++clock,
          fine_tuned_model_checkpoint: `ft:${String(job.model)}:org-mock::${id.slice(-4)}:ckpt-step-${step}`,
          step_number: step,
          metrics: { step, train_loss: 1 / step, train_mean_token_accuracy: 0.5 + step / 100, valid_loss: 1.1 / step, valid_mean_token_accuracy: 0.5, full_valid_loss: 1.2 / step, full_valid_mean_token_accuracy: 0.5 },
          fine_tuning_job_id: id,
        });
      }
      event(id, 'The job has successfully completed');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
