/**
 * Bedrock batch inference (model invocation jobs) on the wire: the control
 * plane's calls, a job's records, and the job mapped to OpenAI's Batch terms.
 * Source: Amazon Bedrock API reference (service model bedrock 2023-04-20,
 * rest-json, signing name `bedrock`, host `bedrock.{region}.amazonaws.com`)
 * and the user guide's batch inference pages (record and output formats).
 *
 *   CreateModelInvocationJob  POST /model-invocation-job
 *   GetModelInvocationJob     GET  /model-invocation-job/{jobArn, encoded}
 *   StopModelInvocationJob    POST /model-invocation-job/{jobArn, encoded}/stop
 *
 * Jobs are created with modelInvocationType `Converse`: each record's
 * modelInput is a Converse body, which the chat translator already makes for
 * every model Bedrock serves, and each modelOutput a Converse answer, which
 * its reader turns back into a chat.completion. Input record:
 * `{"recordId", "modelInput"}`; output record: the same plus `modelOutput`,
 * or `error: {errorCode, errorMessage}` instead.
 */
import { err, GatewayError, invalid, ok, type Result } from '../../shared/errors.js';
import type { ChatRequest } from '../shared/openai-request.js';
import { credentialsOf } from './adapter.js';
import { toConverse } from './chat/request.js';
import { fromConverse } from './chat/response.js';
import { Cancel } from '../../upstream/cancel.js';
import { isRedirect, REDIRECT_CODE, send } from '../../upstream/client.js';
import { UpstreamAddressDenied } from '../../upstream/policy.js';
import { bedrockError } from './errors.js';
import type { BedrockSettings } from './settings.js';
import { signRequest, type AwsCredentials } from './sigv4.js';

/** Every control-plane call ends within this. */
const CALL_TIMEOUT_MS = 30_000;

/** Bedrock's status values (ModelInvocationJobStatus). */
export type JobStatus = 'Submitted' | 'Validating' | 'Scheduled' | 'InProgress' | 'Completed' | 'PartiallyCompleted' | 'Failed' | 'Stopping' | 'Stopped' | 'Expired';

/** The fields of GetModelInvocationJob's answer the gateway reads. */
export interface InvocationJob {
  jobArn: string;
  status?: JobStatus | string;
  message?: string;
  submitTime?: string | number;
  lastModifiedTime?: string | number;
  endTime?: string | number;
  jobExpirationTime?: string | number;
  totalRecordCount?: number;
  processedRecordCount?: number;
  successRecordCount?: number;
  errorRecordCount?: number;
}

export type BatchState = 'validating' | 'in_progress' | 'completed' | 'failed' | 'cancelling' | 'cancelled' | 'expired';

const STATES: Readonly<Record<JobStatus, BatchState>> = {
  Submitted: 'validating',
  Validating: 'validating',
  Scheduled: 'validating',
  InProgress: 'in_progress',
  Completed: 'completed',
  // Some records failed: they are in the error file.
  PartiallyCompleted: 'completed',
  Failed: 'failed',
  Stopping: 'cancelling',
  Stopped: 'cancelled',
  Expired: 'expired',
};

/** A job's status as a Batch status; an unknown one (a status added later) reads as still running. */
export function batchState(status: string | undefined): BatchState {
  return STATES[status as JobStatus] ?? 'in_progress';
}

/** Bedrock's timestamps (ISO 8601 in JSON; epoch seconds accepted too) as Unix seconds. */
export function unixSeconds(t: string | number | undefined): number | null {
  if (t === undefined) return null;
  const ms = typeof t === 'number' ? t * 1000 : Date.parse(t);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}

/** What a job needs from the target's keys, checked before anything is sent; a bad key is a 400 naming it. */
export interface JobSettings {
  credentials: AwsCredentials;
  region: string;
  controlUrl: string;
  roleArn: string;
  input: S3Location;
  output: S3Location;
  /** An S3-compatible endpoint (path style) instead of AWS's. */
  s3Endpoint?: string;
}

export interface S3Location {
  bucket: string;
  /** Empty or ending in '/'. */
  prefix: string;
}

export function jobSettings(s: BedrockSettings): Result<JobSettings> {
  const creds = credentialsOf(s);
  if (!creds.ok) return creds;
  const input = s3Location(s.cloud1_batch_s3_uri, 'cloud1_batch_s3_uri', true);
  if (!input.ok) return input;
  const output = s.cloud1_batch_output_s3_uri === undefined ? ok({ bucket: input.value.bucket, prefix: `${input.value.prefix}output/` }) : s3Location(s.cloud1_batch_output_s3_uri, 'cloud1_batch_output_s3_uri', false);
  if (!output.ok) return output;
  const role = s.cloud1_batch_role_arn;
  // IAM's role ARN form (CreateModelInvocationJob's roleArn pattern).
  if (role === undefined || !/^arn:aws(-[^:]+)?:iam::\d{12}:role\/.+$/.test(role)) {
    return err(invalid(`cloud1_batch_role_arn: ${role === undefined ? 'is required for a Bedrock batch' : `'${role}' is not an IAM role ARN`} (arn:aws:iam::<account>:role/<name>, the service role Bedrock assumes to read and write the batch's S3 objects)`, 'cloud1_batch_role_arn'));
  }
  const { region } = creds.value;
  const control = httpUrl(s.cloud1_batch_control_url ?? `https://bedrock.${region}.amazonaws.com`, 'cloud1_batch_control_url');
  if (!control.ok) return control;
  const settings: JobSettings = { ...creds.value, controlUrl: control.value, roleArn: role, input: { bucket: input.value.bucket, prefix: `${input.value.prefix}input/` }, output: output.value };
  if (s.cloud1_batch_s3_endpoint !== undefined) {
    const endpoint = httpUrl(s.cloud1_batch_s3_endpoint, 'cloud1_batch_s3_endpoint');
    if (!endpoint.ok) return endpoint;
    settings.s3Endpoint = endpoint.value;
  }
  return ok(settings);
}

/** `s3://bucket/prefix` → its parts; the bucket by S3's naming rules. */
function s3Location(uri: string | undefined, param: string, required: boolean): Result<S3Location> {
  const m = uri === undefined ? null : /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(uri);
  if (m === null) {
    const why = uri === undefined && required ? 'is required for a Bedrock batch' : `'${uri}' is not an S3 URI`;
    return err(invalid(`${param}: ${why} (s3://<bucket>/<prefix>, where the batch's records are put and Bedrock writes its output)`, param));
  }
  const prefix = m[2] ?? '';
  return ok({ bucket: m[1]!, prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/` });
}

function httpUrl(v: string, param: string): Result<string> {
  try {
    const u = new URL(v);
    if (u.protocol === 'https:' || u.protocol === 'http:') return ok(v.replace(/\/+$/, ''));
  } catch {
    // refused below
  }
  return err(invalid(`${param}: '${v}' is not an http(s) URL`, param));
}

export const s3Uri = (l: S3Location, key = ''): string => `s3://${l.bucket}/${l.prefix}${key}`;

/** `s3://bucket/key` → its bucket and key (an URI this module made). */
export function s3Object(uri: string): { bucket: string; key: string } {
  const rest = uri.slice('s3://'.length);
  const slash = rest.indexOf('/');
  return { bucket: rest.slice(0, slash), key: rest.slice(slash + 1) };
}

/** The job id (the ARN's last segment): Bedrock writes a job's output under `{output}/{jobId}/`. */
export function jobId(jobArn: string): string {
  return jobArn.slice(jobArn.lastIndexOf('/') + 1);
}

/** One line of the job's input: the chat body as a Converse body, or a 400 naming the parameter. */
export function inputRecord(recordId: string, body: Record<string, unknown>): Result<string> {
  const converse = toConverse(body as ChatRequest);
  if (!converse.ok) return converse;
  return ok(JSON.stringify({ recordId, modelInput: converse.value }));
}

/** One line of the job's output, as a line of OpenAI's batch output (ok) or error file; `null` text: a line longer than the gateway reads. */
export function outputLine(text: string | null, model: string, requestId: string): { ok: boolean; line: string } {
  const failed = (customId: string | null, status: number, code: string, message: string): { ok: boolean; line: string } => ({
    ok: false,
    line: JSON.stringify({
      id: requestId,
      custom_id: customId,
      response: { status_code: status, request_id: null, body: { error: { message, type: 'invalid_request_error', param: null, code } } },
      error: { code, message },
    }),
  });
  type OutputRecord = { recordId?: unknown; modelOutput?: unknown; error?: { errorCode?: unknown; errorMessage?: unknown } };
  let rec: OutputRecord | null;
  try {
    rec = text === null ? null : (JSON.parse(text) as OutputRecord | null);
  } catch {
    rec = null;
  }
  // Not a record (too long, truncated, not JSON): an error line with no custom_id, so the count still adds up.
  if (rec === null || typeof rec !== 'object') {
    return failed(null, 502, BAD_OUTPUT_CODE, text === null ? 'a line of the Bedrock job\'s output is longer than the gateway reads' : 'a line of the Bedrock job\'s output is not a JSON record');
  }
  const customId = typeof rec.recordId === 'string' ? rec.recordId : null;
  if (rec.modelOutput === undefined) {
    const status = typeof rec.error?.errorCode === 'number' ? rec.error.errorCode : 500;
    return failed(customId, status, `bedrock_${status}`, typeof rec.error?.errorMessage === 'string' ? rec.error.errorMessage : 'the record failed at Bedrock');
  }
  const answer = fromConverse(Buffer.from(JSON.stringify(rec.modelOutput)), model, false);
  if (!answer.ok) return failed(customId, 502, 'invalid_provider_response', answer.error.message);
  return { ok: true, line: `{"id":${JSON.stringify(requestId)},"custom_id":${JSON.stringify(customId)},"response":{"status_code":200,"request_id":null,"body":${answer.value}},"error":null}` };
}

/** The error line's code for an output line that is not a record. */
export const BAD_OUTPUT_CODE = 'bad_provider_output';

/** The control plane's calls, signed with the target's credentials and sent only to its control URL. */
export class BedrockJobs {
  constructor(private readonly s: JobSettings) {}

  async create(job: { name: string; token: string; modelId: string; inputKey: string; timeoutHours: number }): Promise<Result<string>> {
    const body = {
      jobName: job.name,
      clientRequestToken: job.token,
      modelId: job.modelId,
      modelInvocationType: 'Converse',
      roleArn: this.s.roleArn,
      inputDataConfig: { s3InputDataConfig: { s3Uri: s3Uri(this.s.input, job.inputKey), s3InputFormat: 'JSONL' } },
      outputDataConfig: { s3OutputDataConfig: { s3Uri: s3Uri(this.s.output) } },
      timeoutDurationInHours: job.timeoutHours,
    };
    // The token makes the create idempotent at Bedrock: when the first try's outcome is unknown (no answer, a 5xx),
    // the one retry with the same token returns the job the first one made rather than a second.
    let answer = await this.call('POST', '/model-invocation-job', JSON.stringify(body));
    if (!answer.ok && unknownOutcome(answer.error)) answer = await this.call('POST', '/model-invocation-job', JSON.stringify(body));
    if (!answer.ok) return answer;
    const arn = (answer.value as { jobArn?: unknown }).jobArn;
    return typeof arn === 'string' ? ok(arn) : err(new GatewayError(502, 'bedrock answered CreateModelInvocationJob without a jobArn', { code: 'invalid_provider_response' }));
  }

  async get(jobArn: string): Promise<Result<InvocationJob>> {
    return (await this.call('GET', `/model-invocation-job/${encodeURIComponent(jobArn)}`, '')) as Result<InvocationJob>;
  }

  async stop(jobArn: string): Promise<Result<unknown>> {
    return this.call('POST', `/model-invocation-job/${encodeURIComponent(jobArn)}/stop`, '');
  }

  private async call(method: string, path: string, body: string): Promise<Result<unknown>> {
    const url = new URL(this.s.controlUrl + path);
    const headers = await signRequest({ method, url, headers: body === '' ? {} : { 'content-type': 'application/json' }, body, credentials: this.s.credentials, region: this.s.region });
    // Through the gateway's pool: the upstream policy applies (a key's control URL is the key writer's choice), no redirect is followed.
    const timer = new Cancel().withTimeout(CALL_TIMEOUT_MS);
    let status: number;
    let raw: Buffer;
    let errorType: string | undefined;
    try {
      const res = await send({ url: url.href, method, headers, body: body === '' ? null : body }, timer.cancel);
      status = res.statusCode;
      errorType = firstHeader(res.headers['x-amzn-errortype']);
      const ok2xx = status >= 200 && status < 300;
      raw = await readCapped(res.body, ok2xx ? MAX_ANSWER_BYTES : MAX_ERROR_BYTES, ok2xx);
    } catch (e) {
      if (e instanceof UpstreamAddressDenied) return err(e);
      if (e instanceof TooLarge) return err(new GatewayError(502, `bedrock answered with more than ${MAX_ANSWER_BYTES} bytes`, { code: 'invalid_provider_response' }));
      if (timer.timedOut()) return err(new GatewayError(504, `bedrock did not answer within ${CALL_TIMEOUT_MS} ms`, { code: 'gateway_timeout' }));
      return err(new GatewayError(502, `bedrock could not be reached: ${(e as { code?: string }).code ?? (e as Error).name}`, { code: 'provider_unreachable' }));
    } finally {
      timer.release();
    }
    if (isRedirect(status)) return err(new GatewayError(502, `bedrock answered ${status}, a redirect, which the gateway does not follow`, { code: REDIRECT_CODE }));
    if (status < 200 || status >= 300) {
      const e = bedrockError(status, raw, { 'x-amzn-errortype': errorType });
      // Relayed only up to a bound: whatever the far end said, the caller sees a short message.
      if (e.message.length > MAX_ERROR_MESSAGE) e.message = `${e.message.slice(0, MAX_ERROR_MESSAGE)}…`;
      return err(e);
    }
    try {
      return ok(raw.length === 0 ? {} : (JSON.parse(raw.toString('utf8')) as unknown));
    } catch {
      return err(new GatewayError(502, 'bedrock answered with a body that is not JSON', { code: 'invalid_provider_response' }));
    }
  }
}

/** A control-plane answer is a small JSON object; an error body is read this far and its message cut shorter still. */
const MAX_ANSWER_BYTES = 1024 * 1024;
const MAX_ERROR_BYTES = 16 * 1024;
const MAX_ERROR_MESSAGE = 512;

class TooLarge extends Error {}

/** A create that may or may not have made the job: no answer, or a 5xx. */
const unknownOutcome = (e: GatewayError): boolean => e.status >= 500 && e.code !== REDIRECT_CODE && e.code !== 'invalid_provider_response';

/** The body up to `limit` bytes: past it, a TooLarge (`strict`) or what was read so far (an error body, relayed cut). */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number, strict: boolean): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    const take = Math.min(chunk.length, limit - bytes);
    if (take > 0) chunks.push(take === chunk.length ? chunk : chunk.subarray(0, take));
    bytes += chunk.length;
    if (bytes > limit) {
      body.destroy();
      if (strict) throw new TooLarge();
      break;
    }
  }
  return Buffer.concat(chunks);
}

const firstHeader = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
