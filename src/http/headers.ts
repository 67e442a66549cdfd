/** The contract's x-gateway-* request headers, parsed and checked once per request. */
import type { IncomingHttpHeaders } from 'node:http';
import { invalid, type Result } from '../shared/errors.js';
import { single } from '../shared/headers.js';

export interface GatewayHeaders {
  metadata: Record<string, string>;
  timeoutMs: number | undefined;
  forwardHeaders: readonly string[];
  strict: boolean | undefined;
}

const EMPTY_METADATA: Record<string, string> = Object.freeze({}) as Record<string, string>;
const NONE: readonly string[] = Object.freeze([]);

export function parseGatewayHeaders(h: IncomingHttpHeaders): Result<GatewayHeaders> {
  let metadata = EMPTY_METADATA;
  const rawMeta = single(h['x-gateway-metadata']);
  if (rawMeta !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(rawMeta);
    } catch {
      return { ok: false, error: invalid('x-gateway-metadata: not valid JSON', 'x-gateway-metadata') };
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return { ok: false, error: invalid('x-gateway-metadata: must be a JSON object', 'x-gateway-metadata') };
    }
    for (const [k, v] of Object.entries(parsed)) {
      if (typeof v !== 'string') return { ok: false, error: invalid(`x-gateway-metadata.${k}: values must be strings`, `x-gateway-metadata.${k}`) };
    }
    metadata = parsed as Record<string, string>;
  }

  let timeoutMs: number | undefined;
  const rawTimeout = single(h['x-gateway-request-timeout']);
  if (rawTimeout !== undefined) {
    timeoutMs = Number(rawTimeout);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1) {
      return { ok: false, error: invalid('x-gateway-request-timeout: must be a positive integer of milliseconds', 'x-gateway-request-timeout') };
    }
  }

  const rawForward = single(h['x-gateway-forward-headers']);
  const forwardHeaders =
    rawForward === undefined ? NONE : rawForward.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');

  const rawStrict = single(h['x-gateway-strict-compat-compliance']);
  let strict: boolean | undefined;
  if (rawStrict !== undefined) {
    if (rawStrict !== 'true' && rawStrict !== 'false') {
      return { ok: false, error: invalid('x-gateway-strict-compat-compliance: must be true or false', 'x-gateway-strict-compat-compliance') };
    }
    strict = rawStrict === 'true';
  }
  return { ok: true, value: { metadata, timeoutMs, forwardHeaders, strict } };
}
