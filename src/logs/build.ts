/**
 * A LogEntry (what the request thread knew) made into the LogRecord the
 * store keeps, on the log writer thread: the answer's usage read (or
 * counted), the cost priced, bodies, headers, metadata and errors redacted.
 */
import { forLog } from '../guardrails/log-form.js';
import { unflatten } from '../guardrails/results.js';
import { priceOf, usdOf } from '../catalog/price.js';
import { newId } from '../store/ids.js';
import { LOG_FORMAT, type LogRecord } from '../store/log-record.js';
import type { LogEntry } from './entry.js';
import { LOG_BODY_MAX_CHARS, logBody, redactHeaders, redactMetadata, redactValue } from './redact.js';
import { countUsage } from './token-count.js';
import { readUsage, type TokenUsage } from './usage.js';

/** The record of an entry; a promise only when the answer had no usage and the tokenizer counts it. */
export function buildRecord(e: LogEntry): LogRecord | Promise<LogRecord> {
  const ok = e.status >= 200 && e.status < 300;
  const text = e.answerText ?? (e.answerHead === null ? null : utf8(e.answerHead));
  if (!ok || text === null) return record(e, text, null);
  const usage = readUsage(e.answerTail === null ? text : utf8(e.answerTail));
  if (usage !== null) return record(e, text, usage);
  return countUsage(e.endpoint, requestJson(e), text).then(
    (u) => record(e, text, u),
    () => record(e, text, null),
  );
}

function record(e: LogEntry, answerText: string | null, usage: TokenUsage | null): LogRecord {
  const ok = e.status >= 200 && e.status < 300;
  return {
    id: newId(e.createdAtMs),
    createdAtMs: e.createdAtMs,
    traceId: e.traceId,
    spanId: e.spanId,
    parentSpanId: e.parentSpanId,
    spanName: e.spanName,
    workspaceId: e.workspaceId,
    apiKeyId: e.apiKeyId,
    userId: e.userId,
    configId: e.configId,
    virtualKeyId: e.virtualKeyId,
    integrationId: e.integrationId,
    promptId: e.promptId,
    promptVersion: e.promptVersion,
    provider: e.provider,
    model: e.model,
    endpoint: e.endpoint,
    method: e.method,
    path: e.path,
    status: e.status,
    latencyMs: Math.round(e.latencyMs),
    upstreamTtfbMs: e.upstreamTtfbMs === null ? null : Math.round(e.upstreamTtfbMs),
    promptTokens: usage?.promptTokens ?? null,
    completionTokens: usage?.completionTokens ?? null,
    totalTokens: usage?.totalTokens ?? null,
    tokensEstimated: usage?.estimated ?? false,
    // A cache hit called no provider: it cost nothing.
    costUsd: usage === null ? null : e.cacheStatus === 'HIT' || e.cacheStatus === 'SEMANTIC HIT' ? 0 : costOf(e, usage),
    cacheStatus: e.cacheStatus,
    retryCount: e.retryCount,
    lastUsedOptionIndex: e.lastUsedOptionIndex,
    metadata: redactMetadata(e.metadata),
    error: errorOf(e, answerText, ok),
    hooks: e.hooks === null ? null : forLog(unflatten(e.hooks)),
    requestHeaders: redactHeaders(e.headers),
    requestBody: e.bodies && e.requestBody !== null ? textBody(e) : null,
    responseBody: e.bodies && answerText !== null ? logBody(answerText) : null,
    logFormat: LOG_FORMAT,
  };
}

function costOf(e: LogEntry, u: TokenUsage): number | null {
  if (e.provider === null || e.model === null) return null;
  const price = priceOf(e.provider, e.model, e.customPricing, e.pricingMultiplier);
  return price === null ? null : usdOf(price, { prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens });
}

function errorOf(e: LogEntry, answerText: string | null, ok: boolean): unknown {
  if (e.gatewayError !== null) return e.gatewayError;
  if (e.cut) return { error: { message: 'the client closed the connection before the answer ended', type: 'client_error', code: 'client_closed' } };
  if (ok || answerText === null) return null;
  // The provider's own error body, as the client got it; a longer one than a body may be is cut, as bodies are.
  if (answerText.length > LOG_BODY_MAX_CHARS) return logBody(answerText);
  try {
    return redactValue(JSON.parse(answerText) as unknown);
  } catch {
    return logBody(answerText);
  }
}

/** Text bodies as text; a binary upload (audio, images, files) as a note of its size. */
function textBody(e: LogEntry): string | null {
  if (e.requestBytes === 0) return null;
  if (e.contentType !== null && !TEXT_TYPE.test(e.contentType)) return `[${e.requestBytes} bytes of ${e.contentType.split(';')[0]}]`;
  const text = logBody(e.requestBody);
  // The request thread sends at most LOG_BODY_MAX_CHARS bytes of a body.
  const more = e.requestBytes - e.requestBody!.length;
  return more > 0 && text !== null ? `${text}…[cut: ${more} more bytes]` : text;
}

const TEXT_TYPE = /^\s*(?:application\/(?:[\w.+-]*\+)?json|text\/|application\/x-www-form-urlencoded)/i;

/** The request's JSON for counting its tokens; null when it was not JSON or was cut. */
function requestJson(e: LogEntry): Record<string, unknown> | null {
  if (e.requestBody === null || e.requestBody.length < e.requestBytes) return null;
  try {
    const v = JSON.parse(utf8(e.requestBody)) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function utf8(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString('utf8');
}
