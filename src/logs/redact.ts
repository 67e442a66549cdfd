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

/**
 * A secret name ends in one of these (any case; `-`, `_` or a space may
 * separate the words): `api_key`, `X-Api-Key`, `apiKey`, `client_secret`,
 * `access_token`, `cloud1_secret_access_key`, … A bare `token` is not one:
 * it is also logprobs' generated text.
 */
const SECRET_ENDINGS =
  'api[-_ ]?key|secret|passw(?:or)?d|authori[sz]ation|cookie|.token|private[-_ ]?key|access[-_ ]?key(?:[-_ ]?id)?|service[-_ ]?account[-_ ]?json|credentials';
const SECRET_NAME = new RegExp(`(?:${SECRET_ENDINGS})$`, 'i');
/**
 * Matches wherever a JSON key with a secret name could end (the last word of
 * every ending, then the closing quote: `…key"`): text without a match has
 * no such field, and skips the field-by-field pass. Literal words, so the
 * scan is fast; a match that is no secret only costs the slower pass.
 */
const SECRET_KEY_HINT = /(?:key(?:[-_ ]?id)?|secret|passw(?:or)?d|authori[sz]ation|cookie|token|json|credentials)"/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

const SECRET_SHAPES = new RegExp(
  [
    '-----BEGIN [A-Z ]*PRIVATE KEY-----[\\s\\S]*?-----END [A-Z ]*PRIVATE KEY-----',
    '\\b[Bb]earer\\s+[A-Za-z0-9\\-._~+/]+=*',
    '\\bsk-[A-Za-z0-9_\\-]{16,}',
    '\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b',
    '\\bAIza[0-9A-Za-z_\\-]{35}',
    '\\beyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}',
  ].join('|'),
  'g',
);

/** A string with every credential-shaped substring replaced. */
export function redactText(s: string): string {
  return s.replace(SECRET_SHAPES, REDACTED);
}

/** `"<secret name>": "value"` inside text that is not one JSON document (SSE streams, cut bodies). */
const FIELD_IN_TEXT = /"((?:[^"\\]|\\.)*)"(\s*:\s*)"(?:[^"\\]|\\.)*"/g;

function redactFieldsInText(s: string): string {
  return s.replace(FIELD_IN_TEXT, (whole, name: string, colon: string) => (isSecretName(name) ? `"${name}"${colon}"${REDACTED}"` : whole));
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
 * A body as the log stores it: a parsed value serialised, raw bytes or text
 * as text, with credential shapes removed and, when a secret-named field
 * may be in it, that field's value too (JSON is then parsed and rewritten;
 * other text, such as SSE streams, loses the values of `"name": "…"` pairs).
 * Null when there is no body. Cut at maxChars. The usual body, with no
 * secret-named field, costs one serialisation and two regular-expression
 * scans.
 */
export function logBody(body: unknown, maxChars = LOG_BODY_MAX_CHARS): string | null {
  if (body === null || body === undefined) return null;
  const raw = typeof body === 'string' || body instanceof Uint8Array;
  const text = !raw ? JSON.stringify(body) : typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  if (text === undefined || text.length === 0) return null;
  let out = redactText(text);
  if (SECRET_KEY_HINT.test(out)) out = (looksLikeJson(out) ? rewritten(out) : null) ?? redactFieldsInText(out);
  return out.length > maxChars ? `${out.slice(0, maxChars)}…[cut: ${out.length - maxChars} more characters]` : out;
}

function looksLikeJson(s: string): boolean {
  const c = s.trimStart()[0];
  return c === '{' || c === '[';
}

/** JSON rewritten with secret-named fields replaced; null when the text is not JSON after all. */
function rewritten(s: string): string | null {
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
