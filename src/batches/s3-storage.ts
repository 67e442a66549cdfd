/**
 * The gateway's files in an S3-compatible bucket (GATEWAY_FILES_S3_*), for
 * deployments whose processes share no volume. A file is still complete on
 * local disk first (the scratch folder), then streamed up: the SDK's Upload
 * sends it in one PUT when small and in parts otherwise, holding a few parts
 * at most, never the whole file. Reads stream the object's body, from a
 * byte offset with a Range request.
 */
import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { join } from 'node:path';
import { addAbortSignal, Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Settings } from '../settings.js';
import type { FileStorage } from './storage.js';

/** Parts of 8 MiB, two in flight: at most 16 MiB of one upload in memory. */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

/** A client for S3-compatible storage with the gateway's checksum and timeout choices. */
export function s3Client(
  s: Pick<S3Settings, 'region' | 'endpoint' | 'forcePathStyle'>,
  /** Credentials other than the SDK's default chain (env, profile, instance role): a test's, or a virtual key's for a provider's bucket. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string },
  /** Node agents whose connections pass the upstream policy (upstream/client.ts policedAgents): for an endpoint a key writer chose. */
  agents?: { httpAgent: HttpAgent; httpsAgent: HttpsAgent },
): S3Client {
  return new S3Client({
    region: s.region,
    endpoint: s.endpoint,
    forcePathStyle: s.forcePathStyle,
    credentials,
    // Checksums only where S3 requires them: many S3-compatible services refuse the SDK's default trailing checksums.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Every wait ends: a connection within 10 s; a socket idle for 60 s is given up (a read's stream then errors).
    requestHandler: { connectionTimeout: 10_000, requestTimeout: 60_000, ...agents },
  });
}

export class S3Storage implements FileStorage {
  readonly scratch: string;

  constructor(
    private readonly s: S3Settings,
    scratchParent: string,
    /** Its own client by default; a shared one (s3-clients.ts) for a provider's bucket: not closed here. */
    private readonly client: S3Client = s3Client(s),
  ) {
    this.scratch = join(scratchParent, 'incoming');
  }

  async init(): Promise<void> {
    await mkdir(this.scratch, { recursive: true, mode: 0o700 });
  }

  async put(id: string, path: string, bytes: number): Promise<void> {
    try {
      const upload = new Upload({
        client: this.client,
        params: { Bucket: this.s.bucket, Key: this.key(id), Body: createReadStream(path), ContentLength: bytes, ContentType: 'application/octet-stream' },
        partSize: PART_BYTES,
        queueSize: PARTS_IN_FLIGHT,
        leavePartsOnError: false,
      });
      await upload.done();
    } finally {
      await rm(path, { force: true });
    }
  }

  /** `signal` aborts the request, and the body's stream after it. */
  async read(id: string, start = 0, signal?: AbortSignal): Promise<Readable> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.s.bucket, Key: this.key(id), Range: start > 0 ? `bytes=${start}-` : undefined }), { abortSignal: signal });
      const body = out.Body as Readable;
      return signal === undefined ? body : addAbortSignal(signal, body);
    } catch (e) {
      // A resume at the very end of the file: nothing left to read, as a local file's stream would say.
      if (start > 0 && e instanceof S3ServiceException && e.$metadata.httpStatusCode === 416) return Readable.from([]);
      throw e;
    }
  }

  async delete(id: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.s.bucket, Key: this.key(id) }));
  }

  private key(id: string): string {
    return `${this.s.prefix}${id}`;
  }
}
