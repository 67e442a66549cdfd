/**
 * /v1/files and /v1/batches when the gateway keeps the files and runs the
 * batches (docs/batches.md). Owned here:
 *   - POST and GET /files without a provider named (no x-gateway-provider,
 *     x-gateway-virtual-key or x-gateway-config): the gateway's files;
 *   - /files/{id}, /files/{id}/content of a gateway file (`file-sy…`);
 *   - POST /batches, GET /batches, and /batches/{id}, /batches/{id}/cancel of
 *     a gateway batch (`batch_sy…`).
 * Everything else on those paths names a provider's own files and batches
 * and goes on through the generic proxy. A POST /batches for a provider
 * with a batch API, over a provider's file and a 24h window, is handed to
 * the pipeline as the proxy request it is. A 24h batch over a gateway file
 * through a bedrock virtual key is a Bedrock model invocation job
 * (bedrock-batches.ts): its row is read and cancelled here like the others,
 * the job asked each time until it ended; its output is collected by the
 * engine.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { parseJson, readBody } from '../http/body.js';
import { pageRequest } from '../http/page-query.js';
import { sendError, sendJson } from '../http/respond.js';
import type { ModelApi } from '../http/server.js';
import { parseGatewayHeaders } from '../http/headers.js';
import { mapSecrets } from '../config/secrets.js';
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import { newBatchRecord, type BatchRecord, type BatchRepo } from '../store/batches.js';
import type { VirtualKeyRepo } from '../store/virtual-keys.js';
import type { CredentialSource } from '../routing/credentials.js';
import type { BedrockBatches } from './bedrock-batches.js';
import type { BatchEngine } from './engine.js';
import { fileObject, type Files } from './files.js';
import { isGatewayBatchId, isGatewayFileId, newBatchId, newFileId, seconds } from './ids.js';
import { relayInProcess } from './in-process.js';
import { BATCH_ENDPOINTS } from './runner.js';
import { scratchPath } from './storage.js';
import { receiveUpload } from './upload.js';

export interface JobsDeps {
  files: Files;
  /** Shared with the engine, which collects the output of the jobs it makes. */
  bedrock: BedrockBatches;
  batches: BatchRepo;
  engine: BatchEngine;
  virtualKeys: VirtualKeyRepo;
  models: ModelApi;
  /** Stored credentials: a provider-run batch reaches its provider with its virtual key's. */
  credentials: CredentialSource;
  now: () => number;
  maxFileBytes: number;
  maxLineBytes: number;
}

/** The first secret an inline x-gateway-config holds (its path), or null: a batch keeps its lines' headers as they came, and secrets are only stored sealed. */
function inlineSecret(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string' || !header.trimStart().startsWith('{')) return null;
  let found: string | null = null;
  try {
    mapSecrets(JSON.parse(header), (v, path) => {
      if (found === null && v !== undefined && v !== null && v !== '') found = path;
      return v;
    });
  } catch {
    return null; // not JSON: each line's request refuses it as the gateway refuses any such header
  }
  return found;
}

/** Providers whose own batch API takes a 24h batch over their own file. */
const PROVIDER_BATCH_APIS = new Set(['openai', 'azure-openai']);
/** The x-gateway-* headers a batch keeps for its lines (no secret among them: credentials are the virtual key's). */
const LINE_HEADERS = [
  'x-gateway-virtual-key',
  'x-gateway-config',
  'x-gateway-metadata',
  'x-gateway-cache-namespace',
  'x-gateway-cache-force-refresh',
  'x-gateway-request-timeout',
  'x-gateway-strict-compat-compliance',
];
const PROVIDER_HEADERS = ['x-gateway-provider', 'x-gateway-virtual-key', 'x-gateway-config'];
const WINDOWS: Readonly<Record<string, number>> = { immediate: 24 * 3600, '24h': 24 * 3600 };
const MAX_CREATE_BODY = 64 * 1024;

export class Jobs {
  constructor(private readonly d: JobsDeps) {}

  owns(method: string, sub: string, headers: IncomingHttpHeaders): boolean {
    // Asked of every request under /v1: the model endpoints pass without an array made.
    if (!sub.startsWith('/files') && !sub.startsWith('/batches')) return false;
    const parts = sub.split('/'); // ['', 'files' | 'batches', id?, 'content' | 'cancel'?]
    if (parts[1] === 'files') {
      if (parts.length === 2) return (method === 'POST' || method === 'GET') && !PROVIDER_HEADERS.some((h) => headers[h] !== undefined);
      if (!isGatewayFileId(parts[2])) return false;
      return parts.length === 3 ? method === 'GET' || method === 'DELETE' : parts.length === 4 && parts[3] === 'content' && method === 'GET';
    }
    if (parts[1] !== 'batches') return false;
    if (parts.length === 2) return method === 'POST' || method === 'GET';
    if (!isGatewayBatchId(parts[2])) return false;
    return parts.length === 3 ? method === 'GET' : parts.length === 4 && parts[3] === 'cancel' && method === 'POST';
  }

  async handle(key: ApiKeyRecord, req: IncomingMessage, res: ServerResponse, sub: string, query: string): Promise<void> {
    const [, kind, id, action] = sub.split('/') as [string, string, string | undefined, string | undefined];
    const out = kind === 'files' ? await this.files(key, req, res, id, action, query) : await this.batches(key, req, res, id, query);
    if (out === null) return; // answered already (file content, or a request handed to the provider)
    if (out.ok) sendJson(res, 200, out.value);
    else sendError(res, out.error);
  }

  private async files(key: ApiKeyRecord, req: IncomingMessage, res: ServerResponse, id: string | undefined, action: string | undefined, query: string): Promise<Result<unknown> | null> {
    const ws = key.workspaceId;
    if (id === undefined) {
      if (req.method === 'POST') return this.upload(ws, req);
      const q = new URLSearchParams(query);
      const page = pageRequest(q);
      if (!page.ok) return page;
      const list = await this.d.files.repo.list(ws, q.get('purpose') ?? undefined, page.value);
      return { ok: true, value: listOf(list.data.map(fileObject), list.hasMore) };
    }
    if (req.method === 'DELETE') return (await this.d.files.delete(ws, id)) ? { ok: true, value: { id, object: 'file', deleted: true } } : noFile(id);
    const f = await this.d.files.repo.get(ws, id);
    if (f === null) return noFile(id);
    if (action === undefined) return { ok: true, value: fileObject(f) };
    const body = await this.d.files.open(ws, id);
    if (body === null) return noFile(id);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': f.bytes });
    body.on('error', () => res.destroy());
    body.pipe(res);
    return null;
  }

  private async upload(workspaceId: string, req: IncomingMessage): Promise<Result<unknown>> {
    const id = newFileId();
    const up = await receiveUpload(req, scratchPath(this.d.files.storage, id), this.d.maxFileBytes);
    if (!up.ok) return up;
    const f = await this.d.files.create({ id, workspaceId, purpose: up.value.purpose, filename: up.value.filename, createdAt: seconds(this.d.now()) }, up.value.path);
    return { ok: true, value: fileObject(f) };
  }

  private async batches(key: ApiKeyRecord, req: IncomingMessage, res: ServerResponse, id: string | undefined, query: string): Promise<Result<unknown> | null> {
    // Spec, Authentication rule 1: batch endpoints need the virtual key.
    const vkRef = req.headers['x-gateway-virtual-key'];
    if (typeof vkRef !== 'string' || vkRef === '') return { ok: false, error: invalid('x-gateway-virtual-key: batch endpoints require a virtual key', 'x-gateway-virtual-key', 'missing_required_parameter') };
    const ws = key.workspaceId;
    if (id !== undefined) {
      const stored = await this.d.batches.get(ws, id);
      if (stored !== null && stored.providerJob !== null) {
        const b = req.method === 'POST' ? await this.d.bedrock.cancel(stored) : await this.d.bedrock.read(stored);
        // The job ended just now: this process's engine collects its output at once, not at its next poll.
        if (b.ok && b.value.status === 'finalizing' && stored.status !== 'finalizing') this.d.engine.wake();
        return b.ok ? { ok: true, value: batchObject(b.value) } : b;
      }
      const b = req.method === 'POST' ? await this.cancel(ws, id) : stored;
      return b === null ? noBatch(id) : b instanceof GatewayError ? { ok: false, error: b } : { ok: true, value: batchObject(b) };
    }
    if (req.method === 'GET') {
      const page = pageRequest(new URLSearchParams(query));
      if (!page.ok) return page;
      const list = await this.d.batches.list(ws, page.value);
      return { ok: true, value: listOf(list.data.map(batchObject), list.hasMore) };
    }
    return this.create(key, req, res, vkRef);
  }

  private async cancel(ws: string, id: string): Promise<BatchRecord | GatewayError | null> {
    const b = await this.d.batches.requestCancel(ws, id, seconds(this.d.now()));
    if (b === null || b.status === 'cancelling') {
      if (b !== null) this.d.engine.cancelled(id);
      return b;
    }
    return new GatewayError(409, `batch '${id}' is ${b.status}: only a validating or in_progress batch can be cancelled`, { code: 'invalid_batch_state', type: 'invalid_request_error' });
  }

  private async create(key: ApiKeyRecord, req: IncomingMessage, res: ServerResponse, vkRef: string): Promise<Result<unknown> | null> {
    const raw = await readBody(req, MAX_CREATE_BODY);
    if (!raw.ok) return raw;
    const parsed = parseJson(raw.value);
    if (!parsed.ok) return parsed;
    const body = checkCreate(parsed.value);
    if (!body.ok) return body;
    const { input_file_id: fileId, completion_window: window, endpoint, metadata } = body.value;
    const vk = await this.d.virtualKeys.find(key.workspaceId, vkRef);
    if (vk === null) return { ok: false, error: invalid(`x-gateway-virtual-key: no virtual key '${vkRef}' in this workspace`, 'x-gateway-virtual-key') };
    if (!isGatewayFileId(fileId)) {
      if (window === '24h' && PROVIDER_BATCH_APIS.has(vk.provider)) {
        // The provider's own batch over its own file: the request goes on as the proxy sends it.
        await relayInProcess(this.d.models, { key, endpoint: 'proxy', method: 'POST', path: '/batches', headers: req.headers, body: raw.value }, res);
        return null;
      }
      return {
        ok: false,
        error: invalid(
          `input_file_id: a batch the gateway runs (completion_window 'immediate', or a provider without a batch API: ${vk.provider}) reads a file uploaded to the gateway (POST /v1/files without a provider header)`,
          'input_file_id',
        ),
      };
    }
    const file = await this.d.files.repo.get(key.workspaceId, fileId);
    if (file === null) return { ok: false, error: invalid(`input_file_id: no file '${fileId}'`, 'input_file_id') };
    if (file.purpose !== 'batch') return { ok: false, error: invalid(`input_file_id: file '${fileId}' has purpose '${file.purpose}', not 'batch'`, 'input_file_id') };
    if (window === '24h' && vk.provider === 'bedrock') {
      // Bedrock's own batch API: the file's lines become a model invocation job.
      const cred = await this.d.credentials.resolve(key.workspaceId, 'virtual_key', vk.id);
      if (!cred.ok) return cred;
      if (cred.value === null) return { ok: false, error: invalid(`x-gateway-virtual-key: no virtual key '${vkRef}' in this workspace`, 'x-gateway-virtual-key') };
      const b = await this.d.bedrock.create(key, cred.value, file, { endpoint, metadata: metadata ?? null });
      return b.ok ? { ok: true, value: batchObject(b.value) } : b;
    }
    // The headers the lines will carry are checked now: a bad one is this request's 400, not every line's.
    const gh = parseGatewayHeaders(req.headers, req.rawHeaders);
    if (!gh.ok) return gh;
    const secret = inlineSecret(req.headers['x-gateway-config']);
    if (secret !== null) {
      return { ok: false, error: invalid(`x-gateway-config: an inline config holding a secret (${secret}) is not kept for a batch's lines; save it (/v1/configs, where secrets are sealed) and name it, or use virtual keys`, 'x-gateway-config') };
    }
    const headers: Record<string, string> = {};
    for (const h of LINE_HEADERS) {
      const v = req.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
    headers['x-gateway-virtual-key'] = vk.id;
    const at = seconds(this.d.now());
    const b = newBatchRecord({
      id: newBatchId(),
      workspaceId: key.workspaceId,
      apiKeyId: key.id,
      endpoint,
      inputFileId: fileId,
      completionWindow: window,
      headers,
      metadata: metadata ?? null,
      createdAt: at,
      expiresAt: at + WINDOWS[window]!,
    });
    await this.d.batches.insert(b);
    this.d.engine.wake();
    return { ok: true, value: batchObject(b) };
  }
}

interface CreateBody {
  input_file_id: string;
  completion_window: string;
  endpoint: string;
  metadata?: Record<string, string>;
}

function checkCreate(v: unknown): Result<CreateBody> {
  const bad = (message: string, param: string): Result<never> => ({ ok: false, error: invalid(message, param) });
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return bad('request body must be a JSON object', 'body');
  const b = v as Record<string, unknown>;
  if (typeof b.input_file_id !== 'string' || b.input_file_id === '') return bad('input_file_id: required, a file id', 'input_file_id');
  if (typeof b.completion_window !== 'string' || !(b.completion_window in WINDOWS)) return bad("completion_window: must be 'immediate' or '24h'", 'completion_window');
  if (typeof b.endpoint !== 'string' || !(b.endpoint in BATCH_ENDPOINTS)) return bad(`endpoint: must be one of ${Object.keys(BATCH_ENDPOINTS).join(', ')}`, 'endpoint');
  for (const k of Object.keys(b)) if (!['input_file_id', 'completion_window', 'endpoint', 'metadata'].includes(k)) return bad(`${k}: unknown field`, k);
  if (b.metadata !== undefined && b.metadata !== null) {
    if (typeof b.metadata !== 'object' || Array.isArray(b.metadata)) return bad('metadata: must be an object of strings', 'metadata');
    const entries = Object.entries(b.metadata as Record<string, unknown>);
    if (entries.length > 16) return bad('metadata: at most 16 pairs', 'metadata');
    for (const [k, val] of entries) {
      if (k.length > 64) return bad(`metadata.${k.slice(0, 64)}…: keys are at most 64 characters`, 'metadata');
      if (typeof val !== 'string' || val.length > 512) return bad(`metadata.${k}: values are strings of at most 512 characters`, `metadata.${k}`);
    }
  }
  return { ok: true, value: b as unknown as CreateBody };
}

/** The spec's Batch object. */
export function batchObject(b: BatchRecord): Record<string, unknown> {
  return {
    id: b.id,
    object: 'batch',
    endpoint: b.endpoint,
    errors: b.errors === null ? null : { object: 'list', data: b.errors },
    input_file_id: b.inputFileId,
    completion_window: b.completionWindow,
    status: b.status,
    output_file_id: b.outputFileId,
    error_file_id: b.errorFileId,
    created_at: b.createdAt,
    in_progress_at: b.inProgressAt,
    expires_at: b.expiresAt,
    finalizing_at: b.finalizingAt,
    completed_at: b.completedAt,
    failed_at: b.failedAt,
    expired_at: b.expiredAt,
    cancelling_at: b.cancellingAt,
    cancelled_at: b.cancelledAt,
    request_counts: { total: b.total, completed: b.completed, failed: b.failed },
    metadata: b.metadata,
  };
}

function listOf<T extends { id?: unknown }>(data: T[], hasMore: boolean): Record<string, unknown> {
  return { object: 'list', data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

const noFile = (id: string): Result<never> => ({ ok: false, error: new GatewayError(404, `no file '${id}'`, { code: 'file_not_found' }) });
const noBatch = (id: string): Result<never> => ({ ok: false, error: new GatewayError(404, `no batch '${id}'`, { code: 'batch_not_found' }) });
