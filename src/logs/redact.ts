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
import RE2 from 're2';

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
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** JavaScript's `\s` in RE2's syntax (RE2's own lacks `\v` and the Unicode spaces). */
const SPACE = '[\\t\\n\\x0B\\f\\r\\p{Z}\\x{FEFF}]';

/**
 * Credential shapes, in RE2: they run over bodies callers write, and
 * JavaScript's backtracking took quadratic time on some (each
 * `-----BEGIN PRIVATE KEY-----` of a body without an END scanned to its
 * end, as did each start of `eyJ-eyJ-…`): a 1 MiB body cost the log writer
 * minutes. A private key without its END (the text was cut inside it) is
 * removed to the end of the text. Each shape's start is also in SHAPE_START
 * (below): a shape missing there would be stored unredacted.
 */
const SECRET_SHAPES = new RE2(
  [
    '-----BEGIN [A-Z ]*PRIVATE KEY-----(?:[\\s\\S]*?-----END [A-Z ]*PRIVATE KEY-----|[\\s\\S]*)',
    `\\b[Bb]earer${SPACE}+[A-Za-z0-9\\-._~+/]+=*`,
    '\\bsk-[A-Za-z0-9_\\-]{16,}',
    '\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b',
    '\\bAIza[0-9A-Za-z_\\-]{35}',
    '\\beyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}',
  ].join('|'),
  'g',
);

/**
 * Where a credential shape may start: literal words, a quick scan in
 * JavaScript; a string without one never goes to RE2, whose call costs
 * ~1 µs even on a short string (headers, metadata values).
 */
const SHAPE_START = '-----BEGIN|[Bb]earer|sk-[A-Za-z0-9_-]{16}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|eyJ[A-Za-z0-9_-]{10}';
const SHAPE_HINT = new RegExp(SHAPE_START);

/** A string with every credential-shaped substring replaced. */
export function redactText(s: string): string {
  return SHAPE_HINT.test(s) ? s.replace(SECRET_SHAPES, REDACTED) : s;
}

/**
 * Whether text may hold something to redact; false only when it certainly
 * holds nothing, and then the text is stored as it is. It matches the start
 * of every credential shape, the end of every secret name followed by the
 * closing quote of a JSON key (`…key"`, any case), and any `\u00XX` escape.
 * Why that suffices for JSON (a body, or a line of an SSE stream): other escapes decode to quotes, slashes or
 * control characters, never to the letters, digits, `-` or `_` that spell a
 * shape's start or a name's last word, so without a `\u00XX` escape those
 * are raw characters in the text, in a row, and the key's closing quote
 * follows its last one. (A backslash escape before `sk-…` makes a word
 * boundary the raw text lacks: hence no `\b` here.) Literal words, so the
 * scan is quick; a match that is no secret only costs the slower pass.
 */
function mayHoldSecret(text: string): boolean {
  return SHAPE_OR_ESCAPE_HINT.test(text) || SECRET_KEY_HINT.test(text);
}
const SHAPE_OR_ESCAPE_HINT = new RegExp(`${SHAPE_START}|\\\\u00[0-7]`);
const SECRET_KEY_HINT = /(?:key(?:[-_ ]?id)?|secret|passw(?:or)?d|authori[sz]ation|cookie|token|json|credentials)"/i;

/**
 * `"<secret name>": "value"` inside text that is not one JSON document; the
 * name as JSON spells it (escapes decoded). A value the end of the text cuts
 * (a body cut there) has no closing quote.
 */
const FIELD_IN_TEXT = /"((?:[^"\\]|\\.)*)"(\s*:\s*)"(?:[^"\\]|\\.)*(?:"|\\?$)/g;

function redactFieldsInText(s: string): string {
  return s.replace(FIELD_IN_TEXT, (whole, name: string, colon: string) => (isSecretName(jsonString(name) ?? name) ? `"${name}"${colon}"${REDACTED}"` : whole));
}

/** The content of a JSON string decoded; null when it is not valid JSON. */
function jsonString(inner: string): string | null {
  if (!inner.includes('\\')) return inner;
  try {
    return JSON.parse(`"${inner}"`) as string;
  } catch {
    return null;
  }
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
 * as text, cut at maxChars before anything else (so redaction runs over at
 * most maxChars, and a cut JSON body is redacted as text); null when there
 * is no body. The usual body, in
 * which mayHoldSecret finds nothing, is stored as it came, at the cost of two
 * regular-expression scans. Otherwise secrets are removed: JSON is parsed and
 * rewritten with secret-named fields replaced at any depth and credential
 * shapes cut out of every string (so escapes cannot hide one); other text,
 * such as an SSE stream, has each line that is JSON (after `data:`)
 * rewritten the same way, credential shapes cut out anywhere, and the values
 * of `"<secret name>": "…"` pairs replaced.
 */
export function logBody(body: unknown, maxChars = LOG_BODY_MAX_CHARS): string | null {
  if (body === null || body === undefined) return null;
  const text = typeof body === 'string' ? body : body instanceof Uint8Array ? utf8(body) : JSON.stringify(body);
  if (text === undefined || text.length === 0) return null;
  // Cut first: what redaction costs is bounded by what is kept, not by what was sent.
  const kept = text.length > maxChars ? text.slice(0, maxChars) : text;
  const out = mayHoldSecret(kept) ? redactBody(kept) : kept;
  return kept === text ? out : `${out}…[cut: ${text.length - maxChars} more characters]`;
}

/** Buffer's own toString, not a view made for it: making the view costs more than decoding a small body. */
function utf8(bytes: Uint8Array): string {
  return (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('utf8');
}

/** logBody's slow path: the text rewritten as the comment there says. */
function redactBody(text: string): string {
  const json = rewritten(text);
  if (json !== null) return json;
  // One line (a cut JSON body) that did not parse whole will not as a line either: spare a second parse.
  const lines = ONE_LINE.test(text) && !text.startsWith('data:')
    ? text
    : text.replace(JSON_LINE, (line, prefix: string, doc: string) => {
        const r = rewritten(doc);
        return r === null ? line : prefix + r;
      });
  return redactFieldsInText(redactText(lines));
}

/** A line that may be JSON, alone or as an SSE `data:` field. */
const JSON_LINE = /^(data:[ \t]?|)([{["].*)$/gm;
/** No line terminator as JSON_LINE's `.` and `$` know them. */
const ONE_LINE = /^[^\n\r\u2028\u2029]*$/;

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

/** The allow-listed request headers as they came (the request thread's cheap half of safeHeaders). */
export function pickHeaders(headers: IncomingHttpHeaders): Record<string, string> | null {
  let out: Record<string, string> | null = null;
  for (const name of SAFE_HEADERS) {
    const v = headers[name];
    if (v === undefined) continue;
    out ??= {};
    out[name] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Picked headers with credential-shaped substrings removed. */
export function redactHeaders(picked: Readonly<Record<string, string>> | null): Record<string, string> | null {
  if (picked === null) return null;
  const out: Record<string, string> = {};
  for (const name in picked) out[name] = redactText(picked[name]!);
  return out;
}

export function safeHeaders(headers: IncomingHttpHeaders): Record<string, string> | null {
  return redactHeaders(pickHeaders(headers));
}
