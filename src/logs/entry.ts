/**
 * What the request thread knows of a finished request, as it crosses to the
 * log writer thread (writer.ts → writer-thread.ts), which makes the record.
 *
 * Entries cross in batches packed for speed: every field of every entry in
 * one flat array of primitives (structured-cloned as a run of tagged
 * values, no per-object key table), and their byte fields copied into one
 * ArrayBuffer that is transferred, not copied. Holding a request's facts as
 * objects until a batch is written cost the request thread more in garbage
 * collection than anything else the log does (they outlive young-generation
 * collections); a batch waits at most a few milliseconds (writer.ts).
 */
import type { Pricing } from '../catalog/catalog.js';
import type { CacheStatus } from '../shared/cache-status.js';
import type { Endpoint } from '../shared/endpoint.js';
import type { FlatHooks } from '../guardrails/results.js';
import type { LogRecord } from '../store/log-record.js';

/** The record's fields the request thread knows as the record keeps them. */
type Known = Pick<
  LogRecord,
  | 'createdAtMs'
  | 'traceId'
  | 'spanId'
  | 'parentSpanId'
  | 'spanName'
  | 'workspaceId'
  | 'apiKeyId'
  | 'userId'
  | 'configId'
  | 'virtualKeyId'
  | 'integrationId'
  | 'promptId'
  | 'promptVersion'
  | 'provider'
  | 'model'
  | 'endpoint'
  | 'method'
  | 'path'
  | 'status'
  | 'cacheStatus'
  | 'retryCount'
  | 'lastUsedOptionIndex'
>;

export interface LogEntry extends Known {
  /** Unrounded (the record rounds them). */
  latencyMs: number;
  upstreamTtfbMs: number | null;
  /** The integration's pricing_adjustments.multiplier (1 without stored credentials). */
  pricingMultiplier: number;
  /** The integration's own price for the model sent (its pricing_config); null: the catalog's. */
  customPricing: Pricing | null;
  metadata: Readonly<Record<string, string>> | null;
  /** The gateway's own error envelope, or null (a provider's error body is in the answer). */
  gatewayError: unknown;
  /** The client left before the answer ended. */
  cut: boolean;
  /** The request's hook results, in the engine's flat form (guardrails/results.ts); null without hooks. */
  hooks: FlatHooks | null;
  /** The allow-listed request headers, not yet redacted (redact.ts pickHeaders). */
  headers: Record<string, string> | null;
  contentType: string | null;
  /** Whether the workspace logs bodies; the request body crosses anyway when kept, for counting tokens. */
  bodies: boolean;
  /** The request as read (at most LOG_BODY_MAX_CHARS bytes); null when streamed through unread. */
  requestBody: Uint8Array | null;
  /** The request body's full length (more than requestBody's when that was cut). */
  requestBytes: number;
  /** An answer the gateway held whole (translated, cached), as text. */
  answerText: string | null;
  /** A streamed answer's first bytes (the logged body) and, when longer than those, its last bytes (its usage). */
  answerHead: Uint8Array | null;
  answerTail: Uint8Array | null;
}

/** Values per entry in a batch: its scalar fields, then [offset, length] (-1 when null) of each bytes field in the buffer. */
const WIDTH = 41;
/** A batch as it crosses: `values` cloned, `bytes` transferred. */
export interface PackedBatch {
  values: unknown[];
  bytes: ArrayBuffer;
  count: number;
  /** Its bodies' size: bytes, and characters of held answers (what the writer's back-log is bounded by). */
  size: number;
}

/** Entries being gathered on the request thread. */
export class EntryBatch {
  private values: unknown[] = [];
  private chunks: Uint8Array[] = [];
  private byteLength = 0;
  count = 0;
  /** PackedBatch.size of the entries so far. */
  size = 0;

  /** Field by field in one push: the order is unpack()'s. */
  add(e: LogEntry): void {
    this.values.push(
      e.createdAtMs, e.latencyMs, e.traceId, e.spanId, e.parentSpanId, e.spanName, e.workspaceId, e.apiKeyId, e.userId, e.configId,
      e.virtualKeyId, e.integrationId, e.pricingMultiplier, e.provider, e.model, e.endpoint, e.method, e.path, e.status, e.upstreamTtfbMs,
      e.cacheStatus, e.retryCount, e.lastUsedOptionIndex, e.metadata, e.gatewayError, e.cut, e.headers, e.contentType, e.bodies, e.requestBytes,
      e.answerText, e.customPricing, e.hooks, e.promptId, e.promptVersion,
    );
    this.bytes(e.requestBody);
    this.bytes(e.answerHead);
    this.bytes(e.answerTail);
    this.count++;
    this.size += e.answerText?.length ?? 0;
  }

  private bytes(b: Uint8Array | null): void {
    if (b === null) return void this.values.push(-1, 0);
    this.values.push(this.byteLength, b.length);
    this.chunks.push(b);
    this.byteLength += b.length;
    this.size += b.length;
  }

  /** The batch packed, and this one emptied. */
  take(): PackedBatch {
    // Not Buffer.concat: a small result would be a slice of Node's shared pool, which cannot be transferred.
    const bytes = new Uint8Array(new ArrayBuffer(this.byteLength));
    let at = 0;
    for (const c of this.chunks) {
      bytes.set(c, at);
      at += c.length;
    }
    const out = { values: this.values, bytes: bytes.buffer, count: this.count, size: this.size };
    this.values = [];
    this.chunks = [];
    this.byteLength = 0;
    this.count = 0;
    this.size = 0;
    return out;
  }
}

/** The entries of a batch, as the writer thread reads them. */
export function unpack(batch: PackedBatch): LogEntry[] {
  const v = batch.values;
  const buffer = Buffer.from(batch.bytes);
  const bytes = (at: number): Buffer | null => {
    const offset = v[at] as number;
    return offset < 0 ? null : buffer.subarray(offset, offset + (v[at + 1] as number));
  };
  const out: LogEntry[] = [];
  for (let i = 0; i + WIDTH <= v.length; i += WIDTH) {
    out.push({
      createdAtMs: v[i] as number,
      latencyMs: v[i + 1] as number,
      traceId: v[i + 2] as string,
      spanId: v[i + 3] as string | null,
      parentSpanId: v[i + 4] as string | null,
      spanName: v[i + 5] as string | null,
      workspaceId: v[i + 6] as string,
      apiKeyId: v[i + 7] as string,
      userId: v[i + 8] as string | null,
      configId: v[i + 9] as string | null,
      virtualKeyId: v[i + 10] as string | null,
      integrationId: v[i + 11] as string | null,
      pricingMultiplier: v[i + 12] as number,
      provider: v[i + 13] as string | null,
      model: v[i + 14] as string | null,
      endpoint: v[i + 15] as Endpoint,
      method: v[i + 16] as string,
      path: v[i + 17] as string,
      status: v[i + 18] as number,
      upstreamTtfbMs: v[i + 19] as number | null,
      cacheStatus: v[i + 20] as CacheStatus | null,
      retryCount: v[i + 21] as number,
      lastUsedOptionIndex: v[i + 22] as string | null,
      metadata: v[i + 23] as Record<string, string> | null,
      gatewayError: v[i + 24],
      cut: v[i + 25] as boolean,
      headers: v[i + 26] as Record<string, string> | null,
      contentType: v[i + 27] as string | null,
      bodies: v[i + 28] as boolean,
      requestBytes: v[i + 29] as number,
      answerText: v[i + 30] as string | null,
      customPricing: v[i + 31] as Pricing | null,
      hooks: v[i + 32] as FlatHooks | null,
      promptId: v[i + 33] as string | null,
      promptVersion: v[i + 34] as number | null,
      requestBody: bytes(i + 35),
      answerHead: bytes(i + 37),
      answerTail: bytes(i + 39),
    });
  }
  return out;
}

/** Whether `b` has the shape EntryBatch.take() gives (a cluster's primary takes batches from its workers: cluster/log-intake.ts). */
export function isPackedBatch(b: unknown): b is PackedBatch {
  if (typeof b !== 'object' || b === null) return false;
  const { values, bytes, count, size } = b as Partial<PackedBatch>;
  return (
    typeof count === 'number' && Number.isSafeInteger(count) && count >= 0 && Array.isArray(values) && values.length === count * WIDTH &&
    bytes instanceof ArrayBuffer && typeof size === 'number' && size >= 0
  );
}
