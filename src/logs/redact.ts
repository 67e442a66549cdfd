/**
 * What a log may keep of a request: bodies, metadata and errors with secrets
 * removed, and only an allow-list of headers. Two nets: fields whose name
 * says secret (`api_key`, `client_secret`, `authorization`, …) lose their
 * value whatever it is, and strings anywhere lose substrings shaped like
 * credentials (`Bearer …`, `sk-…` keys, cloud access key ids, Google API
 * keys, JWTs, PEM private keys). Gateway keys never reach a body the gateway
 * logs: they travel in x-gateway-api-key, which is not on the allow-list.
 */
import type { IncomingHttpHeaders } from 'node:http';

export const REDACTED = '[REDACTED]';

/** Bodies longer than this are cut (a log is for reading, not for replaying uploads). */
export const LOG_BODY_MAX_CHARS = 1024 * 1024;

/** Names compared lower-case with separators removed: `X-Api-Key`, `api_key` and `apiKey` are one name. */
const SECRET_NAMES = new Set(['passwd', 'credentials']);
const SECRET_SUFFIXES = ['apikey', 'secret', 'password', 'authorization', 'cookie', 'privatekey', 'accesskey', 'accesskeyid', 'serviceaccountjson'];
/** `…token` with something before it (access_token, session_token); a bare `token` is also logprobs' generated text, kept. */
const TOKEN_SUFFIX = 'token';

function normalise(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

export function isSecretName(name: string): boolean {
  const n = normalise(name);
  if (SECRET_NAMES.has(n)) return true;
  if (n.length > TOKEN_SUFFIX.length && n.endsWith(TOKEN_SUFFIX)) return true;
  return SECRET_SUFFIXES.some((s) => n.endsWith(s));
}

const SECRET_SHAPES = new RegExp(
  [
    '-----BEGIN [A-Z ]*PRIVATE KEY-----[\\s\\S]*?-----END [A-Z ]*PRIVATE KEY-----',
    '\\bBearer\\s+[A-Za-z0-9\\-._~+/]+=*',
    '\\bsk-[A-Za-z0-9_\\-]{16,}',
    '\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b',
    '\\bAIza[0-9A-Za-z_\\-]{35}',
    '\\beyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}',
  ].join('|'),
  'gi',
);

/** A string with every credential-shaped substring replaced. */
export function redactText(s: string): string {
  return s.replace(SECRET_SHAPES, REDACTED);
}

/** `"<secret name>": "value"` inside text that is not one JSON document (SSE streams, cut bodies). */
const SECRET_FIELD_IN_TEXT = /"((?:[^"\\]|\\.)*)"(\s*:\s*)"(?:[^"\\]|\\.)*"/g;

function redactLooseText(s: string): string {
  return redactText(s).replace(SECRET_FIELD_IN_TEXT, (whole, name: string, colon: string) => (isSecretName(name) ? `"${name}"${colon}"${REDACTED}"` : whole));
}

function replacer(key: string, value: unknown): unknown {
  if (key !== '' && isSecretName(key) && value !== null && value !== undefined) return REDACTED;
  return typeof value === 'string' ? redactText(value) : value;
}

/** A JSON value with secrets removed (a copy). */
export function redactValue<T>(value: T): T {
  if (value === null || value === undefined) return value;
  return JSON.parse(JSON.stringify(value, replacer)) as T;
}

/** Metadata for the log: values of secret-named keys and credential-shaped substrings removed. */
export function redactMetadata(m: Readonly<Record<string, string>> | null | undefined): Record<string, string> | null {
  if (m === null || m === undefined) return null;
  const out: Record<string, string> = {};
  for (const k in m) out[k] = isSecretName(k) ? REDACTED : redactText(m[k]!);
  return out;
}

/**
 * A body as the log stores it: a parsed value is serialised with secrets
 * removed; raw bytes or text are parsed as JSON when they are JSON, else
 * kept as text (SSE streams, form data) with secret fields and shapes
 * removed. Null when there is no body. Cut at maxChars.
 */
export function logBody(body: unknown, maxChars = LOG_BODY_MAX_CHARS): string | null {
  if (body === null || body === undefined) return null;
  let out: string;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const s = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
    if (s.length === 0) return null;
    out = looksLikeJson(s) ? (parsedText(s) ?? redactLooseText(s)) : redactLooseText(s);
  } else {
    out = JSON.stringify(body, replacer);
  }
  return out.length > maxChars ? `${out.slice(0, maxChars)}…[cut: ${out.length - maxChars} more characters]` : out;
}

function looksLikeJson(s: string): boolean {
  const c = s.trimStart()[0];
  return c === '{' || c === '[';
}

function parsedText(s: string): string | null {
  try {
    return JSON.stringify(JSON.parse(s), replacer);
  } catch {
    return null;
  }
}

/** Request headers a log may keep: none that carry credentials, configs (inline keys) or hosts. */
const SAFE_HEADERS = [
  'content-type',
  'content-length',
  'accept',
  'user-agent',
  'x-gateway-provider',
  'x-gateway-virtual-key',
  'x-gateway-trace-id',
  'x-gateway-span-id',
  'x-gateway-parent-span-id',
  'x-gateway-span-name',
  'x-gateway-cache-namespace',
  'x-gateway-cache-force-refresh',
  'x-gateway-request-timeout',
  'x-gateway-forward-headers',
  'x-gateway-strict-compat-compliance',
] as const;

export function safeHeaders(headers: IncomingHttpHeaders): Record<string, string> | null {
  let out: Record<string, string> | null = null;
  for (const name of SAFE_HEADERS) {
    const v = headers[name];
    if (v === undefined) continue;
    out ??= {};
    out[name] = redactText(Array.isArray(v) ? v.join(', ') : v);
  }
  return out;
}
