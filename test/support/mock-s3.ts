/**
 * An S3-compatible server on loopback for the file storage's tests: one
 * bucket, path-style, objects in memory; PutObject, GetObject (with a
 * `bytes=N-` Range), DeleteObject and the multipart upload calls the SDK's
 * Upload makes. Every request's SigV4 Authorization header is checked by
 * signing the request again with @smithy/signature-v4 and the known secret
 * (a payload hash in x-amz-content-sha256 is checked against the body too);
 * a request that does not match gets S3's 403 SignatureDoesNotMatch.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';

export const S3_CREDENTIALS = { accessKeyId: 'AKIAMOCKS3TEST000001', secretAccessKey: 'mock-s3-secret-0123456789abcdefghijklmn' };

export interface S3Call {
  method: string;
  key: string;
  /** The S3 action, as the mock read it. */
  action: 'PutObject' | 'GetObject' | 'DeleteObject' | 'CreateMultipartUpload' | 'UploadPart' | 'CompleteMultipartUpload' | 'AbortMultipartUpload';
  range?: string;
}

export interface MockS3 {
  url: string;
  bucket: string;
  region: string;
  objects: Map<string, Buffer>;
  calls: S3Call[];
  /** Each GetObject answers this much later (a slow read, for tests of concurrent readers). */
  getDelayMs: number;
  close(): Promise<void>;
}

const xml = (res: http.ServerResponse, status: number, body: string): void => {
  res.writeHead(status, { 'content-type': 'application/xml' }).end(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`);
};
const s3Error = (res: http.ServerResponse, status: number, code: string, message: string): void => xml(res, status, `<Error><Code>${code}</Code><Message>${message}</Message></Error>`);

/** Why the request's signature is wrong, or null when it is right. */
async function checkSignature(req: http.IncomingMessage, url: URL, body: Buffer, region: string): Promise<string | null> {
  const auth = req.headers.authorization ?? '';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (m === null) return `not a SigV4 Authorization header: ${auth}`;
  if (m[1] !== S3_CREDENTIALS.accessKeyId) return `unknown access key ${m[1]}`;
  if (m[3] !== region) return `signed for region ${m[3]}`;
  const payload = String(req.headers['x-amz-content-sha256'] ?? '');
  if (/^[0-9a-f]{64}$/.test(payload)) {
    if (createHash('sha256').update(body).digest('hex') !== payload) return 'x-amz-content-sha256 is not the hash of the body';
  } else if (payload !== 'UNSIGNED-PAYLOAD') return `payload signing not understood by the mock: ${payload}`;
  const headers: Record<string, string> = {};
  for (const name of m[4]!.split(';')) headers[name] = String(req.headers[name] ?? '');
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const date = String(req.headers['x-amz-date'] ?? '');
  const signingDate = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`);
  const signer = new SignatureV4({ credentials: S3_CREDENTIALS, region, service: 's3', sha256: Hash.bind(null, 'sha256'), uriEscapePath: false });
  const signed = await signer.sign(
    { method: req.method!, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query, headers, body },
    { signingDate },
  );
  return signed.headers.authorization === auth ? null : 'signature does not match';
}

export async function startMockS3(bucket = 'switchyard-test', region = 'eu-west-3'): Promise<MockS3> {
  const objects = new Map<string, Buffer>();
  const uploads = new Map<string, Map<number, Buffer>>();
  const calls: S3Call[] = [];
  let uploadSeq = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const url = new URL(req.url!, `http://${req.headers.host}`);
        const problem = await checkSignature(req, url, body, region);
        if (problem !== null) return s3Error(res, 403, 'SignatureDoesNotMatch', problem);
        const [, b, ...rest] = url.pathname.split('/');
        const key = decodeURIComponent(rest.join('/'));
        if (b !== bucket || key === '') return s3Error(res, 404, 'NoSuchBucket', `no bucket ${b}`);
        const q = url.searchParams;
        const uploadId = q.get('uploadId');
        if (req.method === 'POST' && q.has('uploads')) {
          const id = `up-${++uploadSeq}`;
          uploads.set(id, new Map());
          calls.push({ method: 'POST', key, action: 'CreateMultipartUpload' });
          return xml(res, 200, `<InitiateMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${key}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`);
        }
        if (uploadId !== null) {
          const parts = uploads.get(uploadId);
          if (parts === undefined) return s3Error(res, 404, 'NoSuchUpload', uploadId);
          if (req.method === 'PUT') {
            parts.set(Number(q.get('partNumber')), body);
            calls.push({ method: 'PUT', key, action: 'UploadPart' });
            res.writeHead(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` }).end();
            return;
          }
          uploads.delete(uploadId);
          if (req.method === 'DELETE') {
            calls.push({ method: 'DELETE', key, action: 'AbortMultipartUpload' });
            return void res.writeHead(204).end();
          }
          const numbers = [...body.toString('utf8').matchAll(/<PartNumber>(\d+)<\/PartNumber>/g)].map((x) => Number(x[1]));
          objects.set(key, Buffer.concat(numbers.map((n) => parts.get(n)!)));
          calls.push({ method: 'POST', key, action: 'CompleteMultipartUpload' });
          return xml(res, 200, `<CompleteMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${key}</Key><ETag>"done"</ETag></CompleteMultipartUploadResult>`);
        }
        if (req.method === 'PUT') {
          objects.set(key, body);
          calls.push({ method: 'PUT', key, action: 'PutObject' });
          return void res.writeHead(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` }).end();
        }
        if (req.method === 'DELETE') {
          objects.delete(key);
          calls.push({ method: 'DELETE', key, action: 'DeleteObject' });
          return void res.writeHead(204).end();
        }
        const obj = objects.get(key);
        const range = req.headers.range;
        calls.push({ method: 'GET', key, action: 'GetObject', range });
        if (mock.getDelayMs > 0) await new Promise((r) => setTimeout(r, mock.getDelayMs));
        if (obj === undefined) return s3Error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
        const from = range === undefined ? 0 : Number(/^bytes=(\d+)-$/.exec(range)?.[1] ?? NaN);
        if (!(from >= 0)) return s3Error(res, 400, 'InvalidArgument', `range ${range}`);
        if (range !== undefined && from >= obj.length) return s3Error(res, 416, 'InvalidRange', 'The requested range is not satisfiable');
        const part = obj.subarray(from);
        const head: http.OutgoingHttpHeaders = { 'content-type': 'application/octet-stream', 'content-length': part.length };
        if (range !== undefined) head['content-range'] = `bytes ${from}-${obj.length - 1}/${obj.length}`;
        res.writeHead(range === undefined ? 200 : 206, head).end(part);
      })().catch((e: Error) => s3Error(res, 500, 'InternalError', e.message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const mock: MockS3 = {
    url: `http://127.0.0.1:${port}`,
    bucket,
    region,
    objects,
    calls,
    getDelayMs: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return mock;
}
