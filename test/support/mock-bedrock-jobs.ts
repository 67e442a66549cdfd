// A mock Bedrock control plane on loopback for batch tests: the model invocation job
// operations at their rest-json paths (POST /model-invocation-job, GET
// /model-invocation-job/{jobArn encoded}, POST …/stop), every request's SigV4 checked
// from scratch (verifySigV4 of mock-bedrock.ts, service `bedrock`), Bedrock's error
// form (x-amzn-ErrorType + {"message"}), a create body checked against the service
// model's required members and patterns. A test moves a job on by hand; finish()
// reads the job's input records from the mock S3 and writes its `.out` object where
// Bedrock writes it ({output s3Uri}/{job id}/{input file name}.out).
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { MockS3 } from './mock-s3.js';
import { verifySigV4, type MockCredentials } from './mock-bedrock.js';
import { startMockServer, type RecordedRequest } from './mock-server.js';

export interface MockJob {
  jobArn: string;
  body: any;
  status: string;
  message?: string;
  submitTime: string;
  lastModifiedTime: string;
  endTime?: string;
  counts?: { totalRecordCount: number; successRecordCount: number; errorRecordCount: number; processedRecordCount: number };
}

export interface MockBedrockJobs {
  readonly url: string;
  readonly requests: RecordedRequest[];
  readonly jobs: Map<string, MockJob>;
  /** Refuses the next CreateModelInvocationJob with this error (a quota, a model without batch support). */
  refuseNextCreate(status: number, type: string, message: string): void;
  /** Creates the next job but answers 503, as when the answer is lost on the way. */
  loseNextCreateAnswer(): void;
  /** Sets a job's status (and message), as Bedrock moves it. */
  move(jobArn: string, status: string, message?: string): void;
  /**
   * Runs the job on its records: `answer` gives each record's modelOutput (a Converse
   * answer) or an error; the output object goes to the S3 mock, the job ends `status`.
   */
  finish(jobArn: string, s3: MockS3, answer: (record: any) => { modelOutput: unknown } | { error: { errorCode: number; errorMessage: string } }, status?: string): void;
  close(): Promise<void>;
}

const ISO = (): string => new Date().toISOString();
const JOB_NAME = /^[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9+\-.]){0,63}$/;
const ROLE_ARN = /^arn:aws(-[^:]+)?:iam::([0-9]{12})?:role\/.+$/;
const S3_URI = /^s3:\/\/[a-z0-9][.\-a-z0-9]{1,61}[a-z0-9](\/.*)?$/;

export async function startMockBedrockJobs(creds: MockCredentials, region: string): Promise<MockBedrockJobs> {
  const jobs = new Map<string, MockJob>();
  let refusal: { status: number; type: string; message: string } | null = null;
  let loseAnswer = false;
  const server = await startMockServer<never>((rec, _req, res) => {
    const denied = verifySigV4(rec, creds, region, 'bedrock');
    if (denied !== null) return sendError(res, 403, denied.type, denied.message);
    if (rec.method === 'POST' && rec.path === '/model-invocation-job') return create(rec, res);
    const m = /^\/model-invocation-job\/([^/?]+)(\/stop)?$/.exec(rec.path);
    if (m === null) return sendError(res, 404, 'UnknownOperationException', 'Unknown operation');
    const job = jobs.get(decodeURIComponent(m[1]!));
    if (job === undefined) return sendError(res, 404, 'ResourceNotFoundException', 'The specified job was not found.');
    if (m[2] !== undefined && rec.method === 'POST') {
      if (!['Submitted', 'Validating', 'Scheduled', 'InProgress'].includes(job.status)) return sendError(res, 400, 'ValidationException', `Job in ${job.status} state cannot be stopped.`);
      job.status = 'Stopping';
      job.lastModifiedTime = ISO();
      return sendJson(res, 200, {});
    }
    if (m[2] === undefined && rec.method === 'GET') {
      const { body } = job;
      return sendJson(res, 200, {
        jobArn: job.jobArn,
        jobName: body.jobName,
        modelId: body.modelId,
        clientRequestToken: body.clientRequestToken,
        roleArn: body.roleArn,
        status: job.status,
        ...(job.message === undefined ? {} : { message: job.message }),
        submitTime: job.submitTime,
        lastModifiedTime: job.lastModifiedTime,
        ...(job.endTime === undefined ? {} : { endTime: job.endTime }),
        inputDataConfig: body.inputDataConfig,
        outputDataConfig: body.outputDataConfig,
        timeoutDurationInHours: body.timeoutDurationInHours,
        jobExpirationTime: new Date(Date.parse(job.submitTime) + body.timeoutDurationInHours * 3600_000).toISOString(),
        ...job.counts,
      });
    }
    return sendError(res, 405, 'UnknownOperationException', 'Unknown operation');
  });

  function create(rec: RecordedRequest, res: http.ServerResponse): void {
    const b = rec.json;
    if (refusal !== null) {
      const r = refusal;
      refusal = null;
      return sendError(res, r.status, r.type, r.message);
    }
    if (b === undefined) return sendError(res, 400, 'SerializationException', 'body is not JSON');
    const problems: string[] = [];
    if (typeof b.jobName !== 'string' || !JOB_NAME.test(b.jobName)) problems.push('jobName');
    if (typeof b.roleArn !== 'string' || !ROLE_ARN.test(b.roleArn)) problems.push('roleArn');
    if (typeof b.modelId !== 'string' || b.modelId === '') problems.push('modelId');
    if (!S3_URI.test(b.inputDataConfig?.s3InputDataConfig?.s3Uri ?? '')) problems.push('inputDataConfig.s3InputDataConfig.s3Uri');
    if (!S3_URI.test(b.outputDataConfig?.s3OutputDataConfig?.s3Uri ?? '')) problems.push('outputDataConfig.s3OutputDataConfig.s3Uri');
    if (b.modelInvocationType !== undefined && !['InvokeModel', 'Converse'].includes(b.modelInvocationType)) problems.push('modelInvocationType');
    if (b.timeoutDurationInHours !== undefined && !(b.timeoutDurationInHours >= 24 && b.timeoutDurationInHours <= 168)) problems.push('timeoutDurationInHours');
    if (problems.length > 0) return sendError(res, 400, 'ValidationException', `${problems.length} validation error(s) detected: ${problems.join(', ')}`);
    // clientRequestToken: a create repeating an earlier one's token answers that job, as Bedrock does.
    const same = b.clientRequestToken === undefined ? undefined : [...jobs.values()].find((j) => j.body.clientRequestToken === b.clientRequestToken);
    if (same !== undefined) return sendJson(res, 200, { jobArn: same.jobArn });
    const jobArn = `arn:aws:bedrock:${region}:123456789012:model-invocation-job/${randomBytes(6).toString('hex')}`;
    jobs.set(jobArn, { jobArn, body: b, status: 'Submitted', submitTime: ISO(), lastModifiedTime: ISO() });
    if (loseAnswer) {
      loseAnswer = false;
      return sendError(res, 503, 'ServiceUnavailableException', 'the answer was lost');
    }
    sendJson(res, 200, { jobArn });
  }

  const s3Key = (uri: string): string => uri.replace(/^s3:\/\/[^/]+\//, '');
  const move = (jobArn: string, status: string, message?: string): void => {
    const job = jobs.get(jobArn)!;
    job.status = status;
    job.message = message;
    job.lastModifiedTime = ISO();
    if (['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired'].includes(status)) job.endTime = ISO();
  };
  return {
    url: server.url,
    requests: server.requests,
    jobs,
    refuseNextCreate: (status, type, message) => void (refusal = { status, type, message }),
    loseNextCreateAnswer: () => void (loseAnswer = true),
    move,
    finish(jobArn, s3, answer, status = 'Completed') {
      const job = jobs.get(jobArn)!;
      const inputKey = s3Key(job.body.inputDataConfig.s3InputDataConfig.s3Uri);
      const records = s3.objects.get(inputKey)!.toString('utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
      const lines = records.map((r) => JSON.stringify({ recordId: r.recordId, modelInput: r.modelInput, ...answer(r) }));
      const outPrefix = s3Key(job.body.outputDataConfig.s3OutputDataConfig.s3Uri).replace(/\/?$/, '/');
      const name = inputKey.slice(inputKey.lastIndexOf('/') + 1);
      const id = jobArn.slice(jobArn.lastIndexOf('/') + 1);
      s3.objects.set(`${outPrefix}${id}/${name}.out`, Buffer.from(lines.join('\n') + '\n'));
      const errors = lines.filter((l) => l.includes('"error":')).length;
      s3.objects.set(`${outPrefix}${id}/manifest.json.out`, Buffer.from(JSON.stringify({ totalRecordCount: lines.length, processedRecordCount: lines.length, successRecordCount: lines.length - errors, errorRecordCount: errors })));
      move(jobArn, status);
    },
    close: () => server.close(),
  };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': randomBytes(8).toString('hex'), 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
}

function sendError(res: http.ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { message }, { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
}
