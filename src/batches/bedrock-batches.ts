/**
 * Batches Bedrock runs as model invocation jobs (docs/batches.md): a 24h
 * batch over a gateway file, through a bedrock virtual key.
 *
 *   create   the file's lines checked as a gateway batch checks them, each
 *            chat body translated to a Converse record (one model for all:
 *            a job has one), the records streamed to a scratch file and up to
 *            the key's S3 prefix, then CreateModelInvocationJob; the batch
 *            row keeps the job (store/batches.ts ProviderJob).
 *   read     GetModelInvocationJob mapped onto the row; a job that ended
 *            with output to read leaves the batch `finalizing`.
 *   collect  run by the batch engine (engine.ts) under the row's lease, so
 *            one process of the deployment does it, once: the output object
 *            read line by line into the gateway's output and error files
 *            (OpenAI's line format), whose ids the Batch object names, so
 *            /v1/files serves them; then the batch's end.
 *   cancel   StopModelInvocationJob; the batch is `cancelling` until Bedrock
 *            says Stopped.
 *
 * The job is reached with the credentials of the virtual key that made it,
 * resolved again at each call (a rotated key applies; a deleted one leaves
 * the batch as last read), and only at the hosts stored with them.
 */
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { batchState, BedrockJobs, inputRecord, jobId, jobSettings, outputLine, s3Object, s3Uri, unixSeconds, type InvocationJob, type JobSettings, type S3Location } from '../providers/bedrock/batch.js';
import type { BedrockSettings } from '../providers/bedrock/settings.js';
import { modelRefused, type CredentialSource, type StoredCredential } from '../routing/credentials.js';
import type { OnEvict } from '../shared/bounded.js';
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import { policedAgents } from '../upstream/client.js';
import { UpstreamAddressDenied } from '../upstream/policy.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import { newBatchRecord, type BatchLineError, type BatchRecord, type BatchRepo, type BatchUpdate, type ProviderJob, type ProviderState } from '../store/batches.js';
import type { StoredFile } from '../store/files.js';
import type { Files } from './files.js';
import { newBatchId, newRequestId, seconds } from './ids.js';
import { readLines } from './jsonl.js';
import { LineFile } from './line-file.js';
import { S3Clients } from './s3-clients.js';
import type { S3Storage } from './s3-storage.js';
import { scratchPath } from './storage.js';
import { checkLines } from './validate.js';

export interface BedrockBatchDeps {
  files: Files;
  batches: BatchRepo;
  credentials: CredentialSource;
  now: () => number;
  maxLineBytes: number;
  /** Told of each S3 client dropped to make room for another (counted in /metrics). */
  onS3ClientEvict?: OnEvict;
}

/** Bedrock's shortest job timeout, and OpenAI's 24h window. */
const JOB_HOURS = 24;
/** An ended job whose output object is not where the job was told to write it. */
const OUTPUT_MISSING = 'bedrock_output_missing';
/** A finalizing batch whose virtual key's batch settings are not valid: its output cannot be reached. */
const INVALID_SETTINGS = 'invalid_batch_settings';
/** Statuses after which Bedrock changes nothing. */
const ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);
/** S3 clients kept, one per region, endpoint and credential: past this, the least recently used is closed. */
const S3_CLIENTS = 32;

export class BedrockBatches {
  /** s3-storage.js, imported by the first bucket(): the AWS SDK is megabytes of heap that most processes never use. */
  private s3: typeof import('./s3-storage.js') | null = null;
  // The endpoint is the key writer's choice: the clients' connections pass the upstream policy, as a chat call's do.
  // Clients are made only inside bucket(), after it has loaded this.s3.
  private readonly clients: S3Clients;

  constructor(private readonly d: BedrockBatchDeps) {
    this.clients = new S3Clients(
      S3_CLIENTS,
      (k) => this.s3!.s3Client({ region: k.region, endpoint: k.endpoint, forcePathStyle: k.endpoint !== undefined }, k.credentials, policedAgents()),
      d.onS3ClientEvict,
    );
  }

  /** Closes the S3 clients kept (the process stops). */
  close(): void {
    this.clients.close();
  }

  async create(key: ApiKeyRecord, vk: StoredCredential, file: StoredFile, req: { endpoint: string; metadata: Record<string, string> | null }): Promise<Result<BatchRecord>> {
    if (req.endpoint !== '/v1/chat/completions') return bad(`endpoint: a Bedrock batch runs chat completions (Converse); '${req.endpoint}' is run by the gateway with completion_window 'immediate'`, 'endpoint');
    const settings = jobSettings(vk.fields as BedrockSettings);
    if (!settings.ok) return settings;
    const id = newBatchId();
    const at = seconds(this.d.now());
    const row = newBatchRecord({
      id,
      workspaceId: key.workspaceId,
      apiKeyId: key.id,
      endpoint: req.endpoint,
      inputFileId: file.id,
      completionWindow: '24h',
      headers: { 'x-gateway-virtual-key': vk.id },
      metadata: req.metadata,
      createdAt: at,
      expiresAt: at + JOB_HOURS * 3600,
    });
    const records = new LineFile(scratchPath(this.d.files.storage, id));
    try {
      const made = await this.records(file, records);
      if (!made.ok) return made;
      if ('errors' in made.value) {
        // As a gateway batch whose file is bad: a failed batch listing the lines, nothing sent.
        const failed: BatchRecord = { ...row, status: 'failed', failedAt: at, errors: made.value.errors, total: made.value.total };
        await this.d.batches.insert(failed);
        return { ok: true, value: failed };
      }
      // The key's model rules, as a chat call through it meets them (routing/credentials.ts): before anything is sent.
      const refused = modelRefused(vk, vk.slug, made.value.model, 'body.model');
      if (refused !== null) return { ok: false, error: refused };
      await records.end();
      const inputKey = `${id}.jsonl`;
      const arn = await this.startJob(settings.value, id, inputKey, made.value.model, records.path);
      if (!arn.ok) return arn;
      const job: ProviderJob = {
        provider: 'bedrock',
        virtualKeyId: vk.id,
        jobArn: arn.value,
        modelId: made.value.model,
        inputUri: s3Uri(settings.value.input, inputKey),
        outputUri: s3Uri(settings.value.output, `${jobId(arn.value)}/${inputKey}.out`),
      };
      const created: BatchRecord = { ...row, total: made.value.total, providerJob: job };
      try {
        await this.d.batches.insert(created);
      } catch (e) {
        // No row names the job: nobody could read, cancel or collect it. Stopped (best effort), and the answer says which.
        const stopped = await new BedrockJobs(settings.value).stop(arn.value).catch(() => null);
        const outcome = stopped?.ok === true ? 'it was stopped' : `stopping it failed too: stop ${arn.value} by hand`;
        return { ok: false, error: new GatewayError(500, `the batch could not be stored after Bedrock created job ${arn.value}; ${outcome} (${(e as Error).name})`, { code: 'batch_not_stored' }) };
      }
      return { ok: true, value: created };
    } finally {
      await records.discard();
    }
  }

  /** The records up to S3, then the job over them; the job's ARN. */
  private startJob(s: JobSettings, id: string, inputKey: string, modelId: string, path: string): Promise<Result<string>> {
    return this.bucket(s, s.input, async (bucket) => {
      try {
        await bucket.put(inputKey, path, (await stat(path)).size);
      } catch (e) {
        return { ok: false, error: s3Failure('the batch\'s records could not be put in S3', e) };
      }
      const arn = await new BedrockJobs(s).create({ name: `switchyard-${id.slice(-32)}`, token: id, modelId, inputKey, timeoutHours: JOB_HOURS });
      // No job reads them: the records do not stay in the bucket (best effort; Bedrock's refusal is the answer).
      if (!arn.ok) await bucket.delete(inputKey).catch(() => {});
      return arn;
    });
  }

  /**
   * The batch as Bedrock has it now; as last read when that cannot be asked. Only the job's status: a job that
   * ended with output to read leaves the batch finalizing, for the engine to collect (collect); the engine is told.
   */
  async read(b: BatchRecord): Promise<Result<BatchRecord>> {
    // Ended, or finalizing (the job ended, the engine collects its output): nothing is left to ask Bedrock.
    if (b.providerJob === null || ENDED.has(b.status) || b.status === 'finalizing') return { ok: true, value: b };
    const settings = await this.settingsOf(b.workspaceId, b.providerJob);
    if (!settings.ok) return { ok: true, value: b };
    const got = await new BedrockJobs(settings.value).get(b.providerJob.jobArn);
    if (!got.ok) return got;
    const state = this.mapped(b, got.value);
    if (ENDED.has(state.status) && state.status !== 'failed') {
      // Its end stamp (completed_at, cancelled_at or expired_at) is Bedrock's already, and says which end collect gives it.
      state.status = 'finalizing';
      state.finalizing_at = seconds(this.d.now());
    }
    return found(await this.d.batches.providerState(b.workspaceId, b.id, state), b.id);
  }

  /**
   * A finalizing batch's output collected, then its end written: by the batch engine, which holds the row's lease
   * (`holder`), so one process of the deployment reads the output, once. Returns quietly when `signal` aborts it
   * (the process stops, the lease was lost); throws what a later poll may retry (the store, S3); fails the batch
   * once on what no retry mends (the key gone, its batch settings not valid, no output where the job wrote it).
   */
  async collect(b: BatchRecord, holder: string, signal: AbortSignal): Promise<void> {
    const job = b.providerJob!;
    // read() set the stamp of the end the job had.
    const end = b.completedAt !== null ? 'completed' : b.cancelledAt !== null ? 'cancelled' : 'expired';
    const cred = await this.d.credentials.resolve(b.workspaceId, 'virtual_key', job.virtualKeyId);
    if (!cred.ok) throw cred.error;
    let u: BatchUpdate;
    if (cred.value === null) {
      // Never readable again: a failed batch saying why, rather than a batch retried at every poll.
      u = this.failure(b, 'virtual_key_gone', `the virtual key that created this batch is gone: the job's output ${job.outputUri} was not read`);
    } else {
      const settings = jobSettings(cred.value.fields as BedrockSettings);
      // Settings the key holds that are not valid stay so until someone edits the key: failed once, naming the field,
      // rather than a collection that throws at every poll. The output stays in S3, where the message says.
      if (!settings.ok) {
        const why = `the virtual key's batch settings are not valid, so the job's output ${job.outputUri} was not read: ${settings.error.message}`;
        u = this.failure(b, INVALID_SETTINGS, why, settings.error.param);
      } else {
        const out = await this.output(b, settings.value, job, signal);
        if (out.ok) u = { status: end, ...out.value };
        // Given up (the process stops, or the lease was lost): the next holder reads it.
        else if (signal.aborted) return;
        else if (out.error.code !== OUTPUT_MISSING) throw out.error;
        // Bedrock says done but wrote nothing where it was told: a failed batch saying so, not a completed one with no files.
        else if (end === 'completed') u = this.failure(b, OUTPUT_MISSING, out.error.message);
        // A job stopped or expired before it wrote anything: no files, as its status says.
        else u = { status: end };
      }
    }
    // Not written when the lease was lost: the next holder collects again, into files of the same ids.
    await this.d.batches.finish(b.id, holder, 'finalizing', u);
  }

  private failure(b: BatchRecord, code: string, message: string, param: string | null = null): BatchUpdate {
    return { status: 'failed', completed_at: null, failed_at: b.completedAt ?? seconds(this.d.now()), errors: [{ code, message, param, line: null }] };
  }

  async cancel(b: BatchRecord): Promise<Result<BatchRecord>> {
    const job = b.providerJob!;
    if (b.status !== 'validating' && b.status !== 'in_progress') {
      return { ok: false, error: new GatewayError(409, `batch '${b.id}' is ${b.status}: only a validating or in_progress batch can be cancelled`, { code: 'invalid_batch_state', type: 'invalid_request_error' }) };
    }
    const settings = await this.settingsOf(b.workspaceId, job);
    if (!settings.ok) return settings;
    const stopped = await new BedrockJobs(settings.value).stop(job.jobArn);
    if (!stopped.ok) return stopped;
    const state = { ...stateOf(b), status: 'cancelling' as const, cancelling_at: seconds(this.d.now()) };
    return found(await this.d.batches.providerState(b.workspaceId, b.id, state), b.id);
  }

  /** The job's status, times and counts on the row. */
  private mapped(b: BatchRecord, j: InvocationJob): ProviderState {
    const state = stateOf(b);
    const status = batchState(j.status);
    const now = seconds(this.d.now());
    const end = unixSeconds(j.endTime) ?? unixSeconds(j.lastModifiedTime) ?? now;
    state.status = status;
    if (status !== 'validating') state.in_progress_at ??= unixSeconds(j.lastModifiedTime) ?? now;
    if (status === 'completed') state.completed_at ??= end;
    if (status === 'failed') {
      state.failed_at ??= end;
      state.errors = [{ code: 'bedrock_job_failed', message: j.message ?? 'the Bedrock job failed', param: null, line: null }];
    }
    if (status === 'expired') state.expired_at ??= end;
    if (status === 'cancelling' || status === 'cancelled') state.cancelling_at ??= now;
    if (status === 'cancelled') state.cancelled_at ??= end;
    if (typeof j.totalRecordCount === 'number') state.total = j.totalRecordCount;
    if (typeof j.successRecordCount === 'number') state.completed = j.successRecordCount;
    if (typeof j.errorRecordCount === 'number') state.failed = j.errorRecordCount;
    return state;
  }

  /** The job's output object → the batch's output and error files, and their counts; no files when Bedrock wrote none. */
  private output(b: BatchRecord, s: JobSettings, job: ProviderJob, signal: AbortSignal): Promise<Result<Pick<BatchUpdate, 'output_file_id' | 'error_file_id' | 'completed' | 'failed'>>> {
    // Where the job was told to write, whatever the key's settings say now.
    const { bucket, key } = s3Object(job.outputUri);
    return this.bucket(s, { bucket, prefix: '' }, (storage) => this.outputFrom(b, storage, key, job, signal));
  }

  private async outputFrom(b: BatchRecord, storage: S3Storage, key: string, job: ProviderJob, signal: AbortSignal): Promise<Result<Pick<BatchUpdate, 'output_file_id' | 'error_file_id' | 'completed' | 'failed'>>> {
    let body: Readable;
    try {
      body = await storage.read(key, 0, signal);
    } catch (e) {
      if ((e as { name?: string }).name === 'NoSuchKey') return { ok: false, error: new GatewayError(502, `the Bedrock job's output ${job.outputUri} is not in S3`, { code: OUTPUT_MISSING }) };
      return { ok: false, error: s3Failure("the Bedrock job's output could not be read from S3", e) };
    }
    const files = { ok: new LineFile(scratchPath(this.d.files.storage, `${b.id}o`)), error: new LineFile(scratchPath(this.d.files.storage, `${b.id}e`)) };
    try {
      // An output line carries its input too: the line limit is twice a request's.
      for await (const l of readLines(body, 0, 0, 2 * this.d.maxLineBytes)) {
        if (l.text !== null && l.text.trim() === '') continue;
        const line = outputLine(l.text, job.modelId, newRequestId());
        await (line.ok ? files.ok : files.error).write(line.line);
      }
      return {
        ok: true,
        value: {
          output_file_id: await this.d.files.createBatchFile(b, 'output', files.ok, seconds(this.d.now())),
          error_file_id: await this.d.files.createBatchFile(b, 'error', files.error, seconds(this.d.now())),
          completed: files.ok.lines,
          failed: files.error.lines,
        },
      };
    } catch (e) {
      return { ok: false, error: s3Failure("the Bedrock job's output could not be collected", e) };
    } finally {
      body.destroy();
      await Promise.all([files.ok.discard(), files.error.discard()]);
    }
  }

  /** The file's lines as Converse records, or what is wrong with them (as a gateway batch lists it). */
  private async records(file: StoredFile, out: LineFile): Promise<Result<{ model: string; total: number } | { errors: BatchLineError[]; total: number }>> {
    const input = await this.d.files.open(file.workspaceId, file.id);
    if (input === null) return bad(`input_file_id: no file '${file.id}'`, 'input_file_id');
    let model = null as string | null; // set in the callback: not narrowed here
    try {
      const { errors, total } = await checkLines(readLines(input, 0, 0, this.d.maxLineBytes), '/v1/chat/completions', this.d.maxLineBytes, async (c, at) => {
        if (typeof c.body.model !== 'string' || (model !== null && c.body.model !== model)) {
          return { code: 'invalid_value', message: `body.model: a Bedrock batch runs one model${model === null ? '' : ` ('${model}', the first line's)`}`, param: 'body.model', line: at + 1 };
        }
        model = c.body.model;
        const record = inputRecord(c.customId, c.body);
        if (!record.ok) return { code: record.error.code, message: record.error.message, param: record.error.param === null ? null : `body.${record.error.param}`, line: at + 1 };
        // Written while the file is good; a bad file's records are discarded with the scratch file.
        await out.write(record.value);
        return null;
      });
      return { ok: true, value: errors.length > 0 || model === null ? { errors, total } : { model, total } };
    } finally {
      input.destroy();
    }
  }

  private async settingsOf(workspaceId: string, job: ProviderJob): Promise<Result<JobSettings>> {
    const cred = await this.d.credentials.resolve(workspaceId, 'virtual_key', job.virtualKeyId);
    if (!cred.ok) return cred;
    if (cred.value === null) return bad(`x-gateway-virtual-key: the virtual key that created this batch is gone`, 'x-gateway-virtual-key');
    return jobSettings(cred.value.fields as BedrockSettings);
  }

  /** Runs `fn` with a bucket of the batch's, signed with the key's credentials, at the key's S3 endpoint (its client kept for the next call). */
  private async bucket<T>(s: JobSettings, at: S3Location, fn: (bucket: S3Storage) => Promise<T>): Promise<T> {
    this.s3 ??= await import('./s3-storage.js');
    const { S3Storage } = this.s3;
    return this.clients.use({ region: s.region, endpoint: s.s3Endpoint, credentials: s.credentials }, (client) =>
      fn(new S3Storage({ bucket: at.bucket, region: s.region, endpoint: s.s3Endpoint, prefix: at.prefix, forcePathStyle: s.s3Endpoint !== undefined }, this.d.files.storage.scratch, client)),
    );
  }
}

/** The row's fields a provider's state replaces, as they are now. */
function stateOf(b: BatchRecord): ProviderState {
  return {
    status: b.status,
    total: b.total,
    completed: b.completed,
    failed: b.failed,
    in_progress_at: b.inProgressAt,
    finalizing_at: b.finalizingAt,
    completed_at: b.completedAt,
    failed_at: b.failedAt,
    expired_at: b.expiredAt,
    cancelling_at: b.cancellingAt,
    cancelled_at: b.cancelledAt,
    errors: b.errors,
    output_file_id: b.outputFileId,
    error_file_id: b.errorFileId,
  };
}

/** An S3 call that failed: a 502 naming S3's error code only (its message may quote the request). */
function s3Failure(what: string, e: unknown): GatewayError {
  // Refused by the upstream policy: the same 403 a chat call to that address gets.
  if (e instanceof UpstreamAddressDenied) return e;
  return new GatewayError(502, `${what}: ${(e as { name?: string }).name ?? 'error'}`, { code: 'provider_storage_failed' });
}

const bad = (message: string, param: string): Result<never> => ({ ok: false, error: invalid(message, param) });
const found = (b: BatchRecord | null, id: string): Result<BatchRecord> =>
  b === null ? { ok: false, error: new GatewayError(404, `no batch '${id}'`, { code: 'batch_not_found' }) } : { ok: true, value: b };
