/**
 * Amazon Bedrock (alias cloud1): Bedrock Runtime at
 * `https://bedrock-runtime.{region}.amazonaws.com` (custom_host replaces it),
 * every request signed with AWS Signature Version 4 (sigv4.ts).
 * Source: Bedrock Runtime API reference (service model bedrock-runtime
 * 2023-09-30: rest-json, signing name `bedrock`).
 *
 *   POST /chat/completions   → POST /model/{modelId}/converse          (chat/request.ts, chat/response.ts)
 *            stream: true    → POST /model/{modelId}/converse-stream   (chat/stream.ts, eventstream.ts)
 *   POST /embeddings         → POST /model/{modelId}/invoke            (embeddings.ts: Titan, Cohere)
 *   POST /completions        → 400: Bedrock has no text-completion operation common to its models;
 *                              InvokeModel bodies differ per model family, and Converse serves them all as chat.
 *   anything else (proxy)    → {base}{path}, the client's method and body, signed; the answer as sent.
 *
 * {modelId} is a model id (`anthropic.claude-3-5-sonnet-20240620-v1:0`), an
 * inference profile id (`us.…`) or a full ARN (`arn:aws:bedrock:…:inference-profile/…`),
 * URL-encoded as one path segment (`:` → %3A, `/` → %2F), as the AWS SDKs send it.
 *
 * Credentials (config keys): cloud1_access_key_id, cloud1_secret_access_key,
 * cloud1_session_token (temporary credentials: sent as x-amz-security-token),
 * cloud1_region (default us-east-1, the region the AWS docs' examples use).
 */
import type { Readable } from 'node:stream';
import { err, GatewayError, invalid, ok, type Result } from '../../shared/errors.js';
import type { ProviderAdapter, Provider } from '../contract.js';
import { modelOf } from '../shared/openai-request.js';
import { passthroughRefused, trimSlash } from '../shared/target.js';
import { converseChat } from './chat/request.js';
import { invokeEmbeddings } from './embeddings.js';
import type { BedrockSettings } from './settings.js';
import { signRequest, type AwsCredentials } from './sigv4.js';

export const DEFAULT_REGION = 'us-east-1';

/** InvokeModel's Body limit in the service model: proxied bodies are read (to be signed) up to this. */
const MAX_PROXY_BODY = 25_000_000;

const adapter: ProviderAdapter<BedrockSettings> = {
  name: 'bedrock',
  lacks: {
    completions: 'Bedrock has no text-completion operation common to its models; use /chat/completions',
  },
  async prepare({ target, endpoint, path, body, method, raw }) {
    const creds = credentialsOf(target.settings);
    if (!creds.ok) return creds;
    const { credentials, region } = creds.value;
    const base = trimSlash(target.customHost ?? `https://bedrock-runtime.${region}.amazonaws.com`);

    if (endpoint === 'proxy') {
      const bytes = await proxyBody(raw ?? null);
      if (!bytes.ok) return bytes;
      const url = parseUrl(base + path);
      if (!url.ok) return url;
      const headers = await signRequest({ method: method ?? 'POST', url: url.value, headers: {}, body: bytes.value ?? '', credentials, region });
      return ok(bytes.value === null ? { kind: 'relayed', url: url.value.href, headers, addedUsage: false } : { kind: 'relayed', url: url.value.href, headers, body: bytes.value, addedUsage: false });
    }
    if (body === null) return err(passthroughRefused('bedrock', 'every body is translated and signed'));

    const model = modelOf(body, 'bedrock');
    if (!model.ok) return model;
    const request = endpoint === 'chat' ? converseChat.request(body) : invokeEmbeddings.request(body);
    if (!request.ok) return request;
    const operation = endpoint === 'chat' ? (body.stream === true ? 'converse-stream' : 'converse') : 'invoke';
    const url = parseUrl(`${base}/model/${modelSegment(model.value)}/${operation}`);
    if (!url.ok) return url;
    const headers = await signRequest({
      method: 'POST',
      url: url.value,
      headers: { ...request.value.headers, 'content-type': 'application/json' },
      body: request.value.body,
      credentials,
      region,
    });
    return ok({ kind: 'translated', url: url.value.href, headers, body: request.value.body, answer: request.value.answer });
  },
};

export const bedrock: Provider<BedrockSettings> = {
  adapter,
  translators: { converse: { chat: converseChat }, 'invoke-model': { embeddings: invokeEmbeddings } },
};

/** Read from the target's config keys; a missing or malformed one is a 400 naming it, before any call. */
export function credentialsOf(settings: BedrockSettings): Result<{ credentials: AwsCredentials; region: string }> {
  const id = settings.cloud1_access_key_id;
  const secret = settings.cloud1_secret_access_key;
  const token = settings.cloud1_session_token;
  const region = settings.cloud1_region ?? DEFAULT_REGION;
  if (id === undefined || id === '') return err(missing('cloud1_access_key_id', 'the AWS access key id'));
  // IAM's AccessKeyId: 16 to 128 word characters (AKIA… / ASIA…).
  if (!/^\w{16,128}$/.test(id)) return err(malformed('cloud1_access_key_id', 'an AWS access key id is 16 to 128 letters and digits'));
  if (secret === undefined || secret === '') return err(missing('cloud1_secret_access_key', 'the AWS secret access key'));
  if (/\s/.test(secret)) return err(malformed('cloud1_secret_access_key', 'it contains whitespace'));
  if (token !== undefined && (token === '' || /\s/.test(token))) return err(malformed('cloud1_session_token', 'it is empty or contains whitespace'));
  if (!/^[a-z]{2}(-[a-z]+)+-\d{1,2}$/.test(region)) return err(malformed('cloud1_region', `'${region}' is not an AWS region such as us-east-1`));
  const credentials: AwsCredentials = { accessKeyId: id, secretAccessKey: secret };
  if (token !== undefined) credentials.sessionToken = token;
  return ok({ credentials, region });
}

function missing(key: string, what: string): GatewayError {
  return invalid(`provider 'bedrock' needs ${key} (${what})`, key, 'missing_credential');
}

function malformed(key: string, why: string): GatewayError {
  return invalid(`${key} is malformed: ${why}`, key, 'invalid_credential');
}

/**
 * The model as one path segment. An id or ARN arrives raw from clients (and
 * already encoded from some): decoded first so it is encoded exactly once.
 */
export function modelSegment(model: string): string {
  let decoded = model;
  if (model.includes('%')) {
    try {
      decoded = decodeURIComponent(model);
    } catch {
      // a literal '%': encoded as it is
    }
  }
  return encodeURIComponent(decoded);
}

/** The proxied body must be whole before it is signed (SigV4 hashes it; only S3 takes unsigned payloads). */
async function proxyBody(raw: Buffer | Readable | null): Promise<Result<Buffer | null>> {
  if (raw === null || Buffer.isBuffer(raw)) return ok(raw);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of raw) {
    size += (chunk as Buffer).length;
    if (size > MAX_PROXY_BODY) {
      raw.destroy();
      return err(new GatewayError(413, `request body over ${MAX_PROXY_BODY} bytes, bedrock's limit`, { code: 'payload_too_large' }));
    }
    chunks.push(chunk as Buffer);
  }
  return ok(Buffer.concat(chunks));
}

/** The custom host comes from a header too, unchecked until here. */
function parseUrl(href: string): Result<URL> {
  try {
    return ok(new URL(href));
  } catch {
    return err(invalid(`custom_host: '${href}' is not a URL`, 'custom_host'));
  }
}
