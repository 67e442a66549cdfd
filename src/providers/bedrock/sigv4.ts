/**
 * AWS Signature Version 4 for Bedrock calls, with @smithy/signature-v4 (the
 * signer of the AWS SDK for JavaScript v3) and @smithy/hash-node's SHA-256
 * (the SDK's choice on Node: node:crypto underneath).
 *
 * The signing name of bedrock-runtime is `bedrock` (service model
 * metadata.signingName). The path is signed as it goes on the wire: a model
 * ARN is URL-encoded once in the path, and the signer encodes each segment
 * again for the canonical URI, as SigV4 requires of every service but S3.
 */
import { lazy } from '../../shared/memo.js';

/**
 * The signer's libraries, imported on the first Bedrock call: a gateway that
 * never calls Bedrock does not carry them (about 1.7 MiB of heap at idle).
 */
const smithy = lazy(async () => {
  const [{ Hash }, { SignatureV4 }] = await Promise.all([import('@smithy/hash-node'), import('@smithy/signature-v4')]);
  return { SignatureV4, sha256: Hash.bind(null, 'sha256') };
});

export const SIGNING_NAME = 'bedrock';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignInput {
  method: string;
  url: URL;
  /** Headers to sign besides host and x-amz-*; lower-case names. */
  headers: Record<string, string>;
  body: string | Buffer;
  credentials: AwsCredentials;
  region: string;
}

/** The headers to send: the given ones plus host, x-amz-date, x-amz-content-sha256, x-amz-security-token and authorization. */
export async function signRequest(input: SignInput): Promise<Record<string, string>> {
  const { SignatureV4, sha256 } = await smithy();
  const signer = new SignatureV4({ service: SIGNING_NAME, region: input.region, credentials: input.credentials, sha256 });
  const { url } = input;
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const signed = await signer.sign({
    method: input.method,
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port === '' ? {} : { port: Number(url.port) }),
    path: url.pathname,
    query,
    headers: { ...input.headers, host: url.host },
    body: input.body,
  });
  return signed.headers;
}
