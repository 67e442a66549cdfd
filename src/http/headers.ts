/**
 * The contract's x-gateway-* request headers, parsed and checked once per
 * request: every value that becomes part of an upstream call is checked here,
 * so a bad one is a 400 naming the header, never a failed provider call.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { invalid, type Result } from '../shared/errors.js';
import { forwardProblem, single } from '../shared/headers.js';
import { upstreamUrlProblem } from '../shared/upstream-url.js';

export interface GatewayHeaders {
  metadata: Readonly<Record<string, string>>;
  timeoutMs: number | undefined;
  forwardHeaders: readonly string[];
  strict: boolean | undefined;
}

const EMPTY_METADATA: Record<string, string> = Object.freeze({}) as Record<string, string>;
const NONE: readonly string[] = Object.freeze([]);

/** `rawHeaders` as Node keeps them (name, value, …): a gateway header sent twice is refused, not joined into one value. */
export function parseGatewayHeaders(h: IncomingHttpHeaders, rawHeaders: readonly string[]): Result<GatewayHeaders> {
  const twice = repeated(rawHeaders);
  if (twice !== null) return { ok: false, error: invalid(`${twice}: sent more than once`, twice) };
  const host = single(h['x-gateway-custom-host']);
  const badHost = host === undefined ? null : upstreamUrlProblem(host);
  if (badHost !== null) return { ok: false, error: invalid(`x-gateway-custom-host: ${badHost}`, 'x-gateway-custom-host') };
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
  const unforwardable = forwardHeaders.find((n) => forwardProblem(n) !== null);
  if (unforwardable !== undefined) {
    return { ok: false, error: invalid(`x-gateway-forward-headers: ${unforwardable} ${forwardProblem(unforwardable)}`, 'x-gateway-forward-headers') };
  }

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

/** Indices in `raw` of the gateway headers seen so far; reused, since this runs for every request and cannot be re-entered. */
const seen: number[] = [];

/** The first x-gateway-* header that appears more than once (case aside), or null; allocates nothing unless one does. */
function repeated(raw: readonly string[]): string | null {
  seen.length = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length < 11 || !isGatewayHeader(name)) continue;
    for (const j of seen) if (sameName(raw[j]!, name)) return name.toLowerCase();
    seen.push(i);
  }
  return null;
}

const PREFIX = 'x-gateway-';

function isGatewayHeader(name: string): boolean {
  for (let k = 0; k < PREFIX.length; k++) if (lower(name.charCodeAt(k)) !== PREFIX.charCodeAt(k)) return false;
  return true;
}

/** Header names equal but for ASCII case. */
function sameName(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) if (lower(a.charCodeAt(k)) !== lower(b.charCodeAt(k))) return false;
  return true;
}

const lower = (c: number): number => (c >= 65 && c <= 90 ? c | 32 : c);
