// A mock Bedrock Runtime on loopback for the bedrock adapter's tests. It speaks Bedrock's
// wire format: rest-json paths (/model/{modelId}/converse, /converse-stream, /invoke),
// SigV4 verified from scratch with the known secret (not with the library the gateway
// signs with), errors as `x-amzn-ErrorType` + `{"message"}`, and ConverseStream bodies
// in the binary eventstream framing with real CRCs.
import type http from 'node:http';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { countWords, pause, startMockServer, type RecordedRequest } from './mock-server.js';

export interface MockCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** `path` is as received: the model segment still encoded. */
export interface BedrockRequest extends RecordedRequest {
  /** Decoded model id or ARN, for /model/{modelId}/… paths. */
  modelId?: string;
  operation?: 'converse' | 'converse-stream' | 'invoke';
}

/** One eventstream message to send: an event, an exception, or raw bytes (e.g. a corrupt frame). */
export type StreamItem =
  | { event: string; payload: Record<string, unknown> }
  | { exception: string; message: string }
  | { raw: Buffer };

export type Scripted =
  | { status: number; errorType: string; message: string }
  | { json: unknown; headers?: Record<string, string> }
  | { stream: StreamItem[]; chunkDelayMs?: number };

export interface MockBedrock {
  /** http://127.0.0.1:<port> — the custom_host of the tests. */
  readonly url: string;
  readonly requests: BedrockRequest[];
  /** Queues answers for an operation (or 'other' for any other path), used in order before the default. */
  enqueue(operation: 'converse' | 'converse-stream' | 'invoke' | 'other', ...replies: Scripted[]): void;
  reset(): void;
  close(): Promise<void>;
}

export const MOCK_REGION = 'us-west-2';

export async function startMockBedrock(creds: MockCredentials, region = MOCK_REGION): Promise<MockBedrock> {
  // Bodies with a JSON content type are parsed (left undefined if they do not parse: the operation answers its own error).
  const server = await startMockServer<Scripted>(async (rec, _req, res, signal) => {
    try {
      await handle(rec, res, signal);
    } catch (e: unknown) {
      if (!res.headersSent) sendError(res, 500, 'InternalServerException', `mock failure: ${String(e)}`);
      else res.destroy();
    }
  });

  async function handle(rec: BedrockRequest, res: http.ServerResponse, signal: AbortSignal): Promise<void> {
    // Set before any await, so the recorded request carries them from the start.
    const m = /^\/model\/([^/?]+)\/(converse|converse-stream|invoke)$/.exec(rec.path);
    if (m !== null) {
      rec.modelId = decodeURIComponent(m[1]!);
      rec.operation = m[2] as BedrockRequest['operation'];
    }

    const denied = verifySigV4(rec, creds, region);
    if (denied !== null) return sendError(res, 403, denied.type, denied.message, 'com.amazon.coral.service');

    const scripted = server.next(rec.operation ?? 'other');
    if (scripted !== undefined) return sendScripted(res, scripted, signal);
    if (rec.operation === undefined) {
      // Not a runtime operation: an echo, so proxy tests can see what arrived.
      return sendJson(res, 200, { method: rec.method, path: rec.path, body: rec.body.toString('utf8') });
    }
    if (rec.method !== 'POST') return sendError(res, 404, 'UnknownOperationException', 'Unknown operation');
    if (rec.json === undefined || typeof rec.json !== 'object' || rec.json === null) {
      return sendError(res, 400, 'SerializationException', 'Unexpected end of JSON input');
    }
    if (!MODEL_ID.test(rec.modelId!)) {
      return sendError(res, 400, 'ValidationException', `1 validation error detected: Value '${rec.modelId}' at 'modelId' failed to satisfy constraint: Member must satisfy regular expression pattern`);
    }
    if (rec.operation === 'invoke') return invoke(res, rec.modelId!, rec.json);
    const problem = checkConverse(rec.modelId!, rec.json);
    if (problem !== null) return sendError(res, 400, 'ValidationException', problem);
    const answer = echoAnswer(rec.json);
    if (rec.operation === 'converse') return sendJson(res, 200, answer.response);
    return sendStream(res, { stream: answer.events }, signal);
  }

  return {
    url: server.url,
    requests: server.requests,
    // Queues are keyed by operation ('other' for any other path) rather than by path.
    enqueue: (operation, ...replies) => server.enqueue(operation, ...replies),
    reset: server.reset,
    close: server.close,
  };
}

// ---------------------------------------------------------------------------------------
// SigV4, from the documented algorithm ("Create a signed AWS API request", AWS IAM user guide)

const ALGORITHM = 'AWS4-HMAC-SHA256';
const MAX_SKEW_MS = 5 * 60 * 1000;
const MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ as %XX (upper case). */
function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function hmac(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

const sha256Hex = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

/** null when the request is signed right; else Bedrock's 403 (exception type and message). */
export function verifySigV4(
  req: Pick<BedrockRequest, 'method' | 'path' | 'headers' | 'body'>,
  creds: MockCredentials,
  region: string,
  service = 'bedrock',
  now = Date.now(),
): { type: string; message: string } | null {
  const auth = req.headers.authorization;
  if (auth === undefined) return { type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const m = /^AWS4-HMAC-SHA256 Credential=([^,]+),\s*SignedHeaders=([^,]+),\s*Signature=([0-9a-f]{64})$/.exec(auth);
  if (m === null) return { type: 'IncompleteSignatureException', message: `Authorization header is not a valid ${ALGORITHM} signature` };
  const [keyId, day, scopeRegion, scopeService, terminator] = m[1]!.split('/');
  if (keyId !== creds.accessKeyId) return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (terminator !== 'aws4_request') return { type: 'IncompleteSignatureException', message: 'Credential should be scoped with a valid terminator: \'aws4_request\'' };
  if (scopeService !== service) return { type: 'InvalidSignatureException', message: `Credential should be scoped to correct service: '${service}'.` };
  if (scopeRegion !== region) return { type: 'InvalidSignatureException', message: `Credential should be scoped to a valid region.` };
  if (creds.sessionToken !== undefined && req.headers['x-amz-security-token'] !== creds.sessionToken) {
    return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  }
  const amzDate = req.headers['x-amz-date'];
  const dm = typeof amzDate === 'string' ? /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate) : null;
  if (dm === null) return { type: 'IncompleteSignatureException', message: 'Authorization header requires existence of either a \'X-Amz-Date\' or a \'Date\' header.' };
  const signedAt = Date.UTC(+dm[1]!, +dm[2]! - 1, +dm[3]!, +dm[4]!, +dm[5]!, +dm[6]!);
  if (Math.abs(now - signedAt) > MAX_SKEW_MS) return { type: 'InvalidSignatureException', message: `Signature expired: ${amzDate} is now earlier than allowed.` };
  if (day !== amzDate!.slice(0, 8)) return { type: 'InvalidSignatureException', message: 'Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.' };
  const signedHeaders = m[2]!.split(';');
  if (!signedHeaders.includes('host')) return { type: 'InvalidSignatureException', message: "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization." };

  const q = req.path.indexOf('?');
  const rawPath = q === -1 ? req.path : req.path.slice(0, q);
  const rawQuery = q === -1 ? '' : req.path.slice(q + 1);
  // Every service but S3 encodes each segment of the path once more.
  const canonicalUri = rawPath.split('/').map(uriEncode).join('/') || '/';
  const canonicalQuery = rawQuery
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const eq = p.indexOf('=');
      const k = decodeURIComponent((eq === -1 ? p : p.slice(0, eq)).replace(/\+/g, ' '));
      const v = eq === -1 ? '' : decodeURIComponent(p.slice(eq + 1).replace(/\+/g, ' '));
      return [uriEncode(k), uriEncode(v)] as const;
    })
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const canonicalHeaders = signedHeaders
    .map((h) => {
      const v = req.headers[h];
      const value = (Array.isArray(v) ? v.join(',') : (v ?? '')).trim().replace(/\s+/g, ' ');
      return `${h}:${value}\n`;
    })
    .join('');
  const canonicalRequest = [req.method, canonicalUri, canonicalQuery, canonicalHeaders, signedHeaders.join(';'), sha256Hex(req.body)].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = [ALGORITHM, amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  let key: Buffer = hmac(`AWS4${creds.secretAccessKey}`, day!);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  const expected = hmac(key, stringToSign).toString('hex');
  return expected === m[3] ? null : { type: 'InvalidSignatureException', message: MISMATCH };
}

// ---------------------------------------------------------------------------------------
// Eventstream encoding (prelude, prelude CRC, headers, payload, message CRC)

/** One message with string headers (value type 7), both CRCs computed. */
export function encodeMessage(headers: Record<string, string>, payload: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name, 'utf8');
    const v = Buffer.from(value, 'utf8');
    const h = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
    h.writeUInt8(n.length, 0);
    n.copy(h, 1);
    h.writeUInt8(7, 1 + n.length);
    h.writeUInt16BE(v.length, 2 + n.length);
    v.copy(h, 4 + n.length);
    parts.push(h);
  }
  const headerBytes = Buffer.concat(parts);
  const total = 12 + headerBytes.length + payload.length + 4;
  const msg = Buffer.alloc(total);
  msg.writeUInt32BE(total, 0);
  msg.writeUInt32BE(headerBytes.length, 4);
  msg.writeUInt32BE(crc32(msg.subarray(0, 8)), 8);
  headerBytes.copy(msg, 12);
  payload.copy(msg, 12 + headerBytes.length);
  msg.writeUInt32BE(crc32(msg.subarray(0, total - 4)), total - 4);
  return msg;
}

/** Bedrock pads event payloads with a `p` member so sizes do not reveal content. */
export function encodeEvent(event: string, payload: Record<string, unknown>): Buffer {
  const padded = { ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEF'.slice(0, 1 + (event.length % 16)) };
  return encodeMessage({ ':event-type': event, ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(JSON.stringify(padded)));
}

export function encodeException(exception: string, message: string): Buffer {
  return encodeMessage(
    { ':exception-type': exception, ':content-type': 'application/json', ':message-type': 'exception' },
    Buffer.from(JSON.stringify({ message })),
  );
}

// ---------------------------------------------------------------------------------------
// Answers

function requestId(): string {
  return randomUUID();
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': requestId(), 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
}

function sendError(res: http.ServerResponse, status: number, type: string, message: string, namespace = 'com.amazon.bedrock'): void {
  sendJson(res, status, { message }, { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/${namespace}/` });
}

async function sendStream(res: http.ServerResponse, s: { stream: StreamItem[]; chunkDelayMs?: number }, signal: AbortSignal): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': requestId() });
  for (const [i, item] of s.stream.entries()) {
    if (i > 0 && s.chunkDelayMs && !(await pause(s.chunkDelayMs, signal))) return;
    if (res.destroyed) return;
    const bytes = 'raw' in item ? item.raw : 'exception' in item ? encodeException(item.exception, item.message) : encodeEvent(item.event, item.payload);
    // Split each frame in two writes: the gateway must reassemble frames across chunks.
    const half = bytes.length >> 1;
    res.write(bytes.subarray(0, half));
    res.write(bytes.subarray(half));
  }
  res.end();
}

function sendScripted(res: http.ServerResponse, s: Scripted, signal: AbortSignal): Promise<void> | void {
  if ('errorType' in s) return sendError(res, s.status, s.errorType, s.message);
  if ('json' in s) return sendJson(res, 200, s.json, s.headers);
  return sendStream(res, s, signal);
}

// ---------------------------------------------------------------------------------------
// Converse: the checks Bedrock makes, and an echo

/** ConversationalModelId's pattern in the service model (ids, inference profiles, ARNs; prompt and SageMaker ARNs left out). */
const MODEL_ID =
  /^(?:(arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:(([0-9]{12}:custom-model\/[a-z0-9-]{1,63}[.]{1}[a-z0-9-]{1,63}\/[a-z0-9]{12})|(:foundation-model\/[a-z0-9-]{1,63}[.]{1}[a-z0-9-]{1,63}([.:]?[a-z0-9-]{1,63}))|([0-9]{12}:imported-model\/[a-z0-9]{12})|([0-9]{12}:provisioned-model\/[a-z0-9]{12})|([0-9]{12}:(inference-profile|application-inference-profile)\/[a-zA-Z0-9-:.]+)))|([a-z0-9-]{1,63}[.]{1}[a-z0-9-]{1,63}([.:]?[a-z0-9-]{1,63}))|(([0-9a-zA-Z][_-]?)+)|([a-zA-Z0-9-:.]+))$/;

const CONVERSE_FIELDS = new Set([
  'messages', 'system', 'inferenceConfig', 'toolConfig', 'guardrailConfig', 'additionalModelRequestFields', 'promptVariables',
  'additionalModelResponseFieldPaths', 'requestMetadata', 'performanceConfig', 'serviceTier', 'outputConfig',
]);
const CONTENT_KINDS = new Set(['text', 'image', 'document', 'video', 'audio', 'toolUse', 'toolResult', 'guardContent', 'cachePoint', 'reasoningContent']);
/** Parameters Anthropic's models take through additionalModelRequestFields. */
const ANTHROPIC_FIELDS = new Set(['top_k', 'thinking', 'anthropic_beta', 'stop_sequences']);

function checkConverse(modelId: string, body: any): string | null {
  for (const key of Object.keys(body)) {
    if (!CONVERSE_FIELDS.has(key)) return `1 validation error detected: unknown field '${key}'`;
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0 || messages[0]?.role !== 'user') {
    return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  }
  let usesTools = false;
  for (const [i, msg] of messages.entries()) {
    if (i > 0 && messages[i - 1].role === msg.role) {
      return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
    }
    if (!Array.isArray(msg.content) || msg.content.length === 0) return `The content field in the Message object at messages.${i} is empty. Add a ContentBlock object to the content field and try again.`;
    for (const [j, block] of msg.content.entries()) {
      const kinds = Object.keys(block);
      if (kinds.length !== 1 || !CONTENT_KINDS.has(kinds[0]!)) return `messages.${i}.content.${j}: a ContentBlock has exactly one member`;
      if (typeof block.text === 'string' && block.text.trim() === '') {
        return `The text field in the ContentBlock object at messages.${i}.content.${j} is blank. Add text to the text field, and try again.`;
      }
      if (block.image !== undefined) {
        const img = block.image;
        if (!['png', 'jpeg', 'gif', 'webp'].includes(img.format)) return `messages.${i}.content.${j}.image.format is invalid`;
        if (typeof img.source?.bytes === 'string' && !/^[A-Za-z0-9+/]+={0,2}$/.test(img.source.bytes)) return 'Invalid base64 in image bytes';
      }
      if (block.toolUse !== undefined || block.toolResult !== undefined) usesTools = true;
    }
  }
  if (usesTools && body.toolConfig === undefined) return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
  const ic = body.inferenceConfig;
  if (ic !== undefined) {
    if (ic.maxTokens !== undefined && (!Number.isInteger(ic.maxTokens) || ic.maxTokens < 1)) return 'inferenceConfig.maxTokens must be at least 1';
    if (ic.stopSequences !== undefined && !(Array.isArray(ic.stopSequences) && ic.stopSequences.every((s: unknown) => typeof s === 'string'))) {
      return 'inferenceConfig.stopSequences must be a list of strings';
    }
  }
  const extra = body.additionalModelRequestFields;
  if (extra !== undefined && modelId.includes('anthropic.')) {
    const bad = Object.keys(extra).find((k) => !ANTHROPIC_FIELDS.has(k));
    if (bad !== undefined) return `The model returned the following errors: ${bad}: Extra inputs are not permitted`;
  }
  return null;
}

const words = (s: string): string[] => s.split(/(?=\s)/).filter((w) => w.length > 0);

/** The echo: the last user text back, as a Converse answer and as the events of its stream. */
function echoAnswer(body: any): { response: unknown; events: StreamItem[] } {
  const lastUser = [...body.messages].reverse().find((m: any) => m.role === 'user');
  const said = lastUser.content.filter((b: any) => typeof b.text === 'string').map((b: any) => b.text).join(' ');
  const text = body.outputConfig !== undefined ? JSON.stringify({ echo: said }) : `[bedrock] echo: ${said}`;
  const pieces = words(text);
  const inputTokens = body.messages.reduce((n: number, m: any) => n + m.content.filter((b: any) => b.text).reduce((k: number, b: any) => k + countWords(b.text), 0), 0);
  const usage = { inputTokens, outputTokens: pieces.length, totalTokens: inputTokens + pieces.length };
  return {
    response: {
      output: { message: { role: 'assistant', content: [{ text }] } },
      stopReason: 'end_turn',
      usage,
      metrics: { latencyMs: 12 },
    },
    events: [
      { event: 'messageStart', payload: { role: 'assistant' } },
      ...pieces.map((p) => ({ event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: p } } })),
      { event: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
      { event: 'messageStop', payload: { stopReason: 'end_turn' } },
      { event: 'metadata', payload: { usage, metrics: { latencyMs: 12 } } },
    ],
  };
}

// ---------------------------------------------------------------------------------------
// InvokeModel: Titan and Cohere embedding bodies

function extraneous(body: Record<string, unknown>, allowed: string[]): string | undefined {
  return Object.keys(body).find((k) => !allowed.includes(k));
}

function malformed(res: http.ServerResponse, detail: string): void {
  sendError(res, 400, 'ValidationException', `Malformed input request: ${detail}, please reformat your input and try again.`);
}

/** A deterministic unit vector for a text. */
function vector(text: string, dims: number): number[] {
  const out: number[] = [];
  for (let block = 0; out.length < dims; block++) {
    const h = createHash('sha256').update(`${block}:${text}`).digest();
    for (let i = 0; i < h.length && out.length < dims; i += 4) out.push(Math.fround((h.readUInt32LE(i) / 0xffffffff) * 2 - 1));
  }
  const norm = Math.hypot(...out) || 1;
  return out.map((v) => Math.fround(v / norm));
}

const tokenCount = (texts: string[]): number => texts.reduce((n, t) => n + countWords(t), 0);

function invoke(res: http.ServerResponse, modelId: string, body: any): void {
  const name = modelId.slice(modelId.lastIndexOf('/') + 1);
  if (name.includes('amazon.titan-embed-text-v2')) {
    const bad = extraneous(body, ['inputText', 'dimensions', 'normalize', 'embeddingTypes']);
    if (bad !== undefined) return malformed(res, `extraneous key [${bad}] is not permitted`);
    if (typeof body.inputText !== 'string') return malformed(res, 'required key [inputText] not found');
    const dims = body.dimensions ?? 1024;
    if (![256, 512, 1024].includes(dims)) return malformed(res, `#/dimensions: ${dims} is not a valid enum value`);
    const count = tokenCount([body.inputText]);
    return sendJson(res, 200, { embedding: vector(body.inputText, dims), inputTextTokenCount: count }, { 'x-amzn-bedrock-input-token-count': String(count) });
  }
  if (name.includes('amazon.titan-embed-text-v1')) {
    const bad = extraneous(body, ['inputText']);
    if (bad !== undefined) return malformed(res, `extraneous key [${bad}] is not permitted`);
    const count = tokenCount([body.inputText]);
    return sendJson(res, 200, { embedding: vector(body.inputText, 1536), inputTextTokenCount: count }, { 'x-amzn-bedrock-input-token-count': String(count) });
  }
  if (name.includes('cohere.embed-')) {
    const v4 = name.includes('cohere.embed-v4');
    const bad = extraneous(body, ['texts', 'images', 'input_type', 'truncate', 'embedding_types', ...(v4 ? ['output_dimension', 'max_tokens'] : [])]);
    if (bad !== undefined) return malformed(res, `extraneous key [${bad}] is not permitted`);
    if (!Array.isArray(body.texts) || body.texts.length === 0 || body.texts.length > 96) return malformed(res, 'texts: expected 1 to 96 items');
    if (!['search_document', 'search_query', 'classification', 'clustering'].includes(body.input_type)) {
      return malformed(res, 'required key [input_type] not found');
    }
    const dims = body.output_dimension ?? (v4 ? 1536 : 1024);
    const vectors = body.texts.map((t: string) => vector(`${body.input_type}:${t}`, dims));
    const byType = Array.isArray(body.embedding_types);
    return sendJson(
      res,
      200,
      { id: requestId(), texts: body.texts, embeddings: byType ? { float: vectors } : vectors, response_type: byType ? 'embeddings_by_type' : 'embeddings_floats' },
      // Cohere's body has no usage: InvokeModel's headers carry the count.
      { 'x-amzn-bedrock-input-token-count': String(tokenCount(body.texts)), 'x-amzn-bedrock-output-token-count': '0', 'x-amzn-bedrock-invocation-latency': '20' },
    );
  }
  return sendError(res, 400, 'ValidationException', 'The provided model identifier is invalid.');
}
