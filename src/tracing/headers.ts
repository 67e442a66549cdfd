/**
 * The trace a request belongs to, from its headers: the contract's
 * x-gateway-trace-id / -span-id / -parent-span-id / -span-name and W3C Trace
 * Context (traceparent, tracestate). Two views of the same headers:
 *
 * - the gateway's own ids (response header, request log; tracer.ts
 *   readRequestIds): x-gateway-trace-id as sent (any string), else the
 *   traceparent's trace id, else a random UUID; the span and parent ids as
 *   sent, the parent falling back to the traceparent's parent-id.
 * - OpenTelemetry's (exported spans): 32 and 16 lowercase hex digits. A valid
 *   traceparent wins, since it is what OTel callers send; without one the
 *   trace id is derived from the gateway's trace id (otelTraceId) and the
 *   parent is x-gateway-parent-span-id when it is 16 hex digits.
 */
import { createHash } from 'node:crypto';

export interface W3CParent {
  traceId: string;
  parentId: string;
  /** The trace-flags byte (bit 0: sampled). */
  flags: number;
}

const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
const DASH = 0x2d;

/**
 * A W3C traceparent (`00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`),
 * or null when absent or invalid (then it is ignored, as the spec says: the
 * gateway starts its own trace). Versions above 00 may carry more fields
 * after the four it knows; version ff is invalid. Scanned by hand: a regular
 * expression with captures costs a microsecond here.
 */
export function parseTraceparent(raw: string | undefined): W3CParent | null {
  if (raw === undefined || raw.length < 55) return null;
  if (raw.charCodeAt(2) !== DASH || raw.charCodeAt(35) !== DASH || raw.charCodeAt(52) !== DASH) return null;
  if (!lowerHex(raw, 0, 2) || !lowerHex(raw, 3, 35) || !lowerHex(raw, 36, 52) || !lowerHex(raw, 53, 55)) return null;
  const version = raw.slice(0, 2);
  if (version === 'ff') return null;
  if (raw.length > 55 && (version === '00' || raw.charCodeAt(55) !== DASH)) return null;
  const traceId = raw.slice(3, 35);
  const parentId = raw.slice(36, 52);
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return null;
  return { traceId, parentId, flags: parseInt(raw.slice(53, 55), 16) };
}

/** Whether s[from, to) is lowercase hex digits only. */
function lowerHex(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

const HEX32 = /^[0-9a-f]{32}$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX16 = /^[0-9a-f]{16}$/i;

/**
 * The OTel trace id of a gateway trace id: itself when it is already 32 hex
 * digits, the UUID's digits when it is a UUID (the ids the gateway generates),
 * else the first 16 bytes of its SHA-256. Deterministic, so every process
 * and every retry of a caller puts the same x-gateway-trace-id in one trace.
 */
export function otelTraceId(gatewayId: string): string {
  let hex: string | null = null;
  if (HEX32.test(gatewayId)) hex = gatewayId.toLowerCase();
  else if (UUID.test(gatewayId)) hex = gatewayId.replaceAll('-', '').toLowerCase();
  if (hex !== null && hex !== ZERO_TRACE) return hex;
  return createHash('sha256').update(gatewayId).digest('hex').slice(0, 32);
}

/** A span id OTel can use (16 hex digits, not all zero, lowercased), or null. */
export function otelSpanId(id: string | null): string | null {
  if (id === null || !HEX16.test(id)) return null;
  const hex = id.toLowerCase();
  return hex === ZERO_SPAN ? null : hex;
}
