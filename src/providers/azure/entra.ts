/**
 * Microsoft Entra ID client-credentials tokens, shared by azure-openai and
 * azure-ai. Wire format (OAuth 2.0 client credentials grant, v2.0 endpoint;
 * https://learn.microsoft.com/entra/identity-platform/v2-oauth2-client-creds-grant-flow):
 *
 *   POST {authority}/{tenant}/oauth2/v2.0/token
 *   Content-Type: application/x-www-form-urlencoded
 *   grant_type=client_credentials&client_id=…&client_secret=…&scope=<resource>/.default
 *   → 200 {"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":"eyJ…"}
 *   → 4xx {"error":"invalid_client","error_description":"AADSTS7000215: …\r\nTrace ID: …","error_codes":[…],…}
 *
 * {authority} is https://login.microsoftonline.com unless AZURE_AUTHORITY_HOST
 * says otherwise (sovereign clouds, tests), as Azure's SDKs do; it is read
 * when a token is needed, so a test may set it in process.env at any time.
 * Tokens are cached per credential until shortly before they expire (at
 * most MAX_CACHED credentials, least recently used out first), and
 * concurrent requests wait on one exchange.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { GatewayError, invalid, ok, type Result } from '../../shared/errors.js';
import { AnswerTooLarge, TOKEN_ANSWER_BYTES } from '../../upstream/answer.js';
import { Cancel } from '../../upstream/cancel.js';
import { isRedirect, REDIRECT_CODE, send } from '../../upstream/client.js';
import { UpstreamAddressDenied } from '../../upstream/policy.js';
import { trimSlash } from '../shared/target.js';
import { ENTRA_KEYS, setting, type AzureSettings } from './settings.js';

export interface EntraCredentials {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  scope: string;
}

/** The client-credentials grant's answer (only the fields used). */
interface TokenAnswer {
  access_token?: unknown;
  expires_in?: unknown;
}

/** The identity platform's error answer. */
interface TokenError {
  error?: unknown;
  error_description?: unknown;
}

interface CachedToken {
  token: string;
  /** From here on the token is renewed before use. */
  refreshAt: number;
  expiresAt: number;
}

export const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';
/** Renew this long before expiry (azure-identity's refresh offset), or at half-life for short-lived tokens. */
const REFRESH_MARGIN_S = 300;
const TOKEN_TIMEOUT_MS = 10_000;
export const MAX_CACHED = 1000;

/** The Entra credentials of a target; null when it has none; a 400 naming the missing key when only some are set. */
export function entraCredentials(provider: string, node: AzureSettings, defaultScope: string): Result<EntraCredentials | null> {
  const [tenantId, clientId, clientSecret] = ENTRA_KEYS.map((k) => setting(node, k));
  if (tenantId === undefined && clientId === undefined && clientSecret === undefined) return ok(null);
  const missing = ENTRA_KEYS.find((k) => setting(node, k) === undefined);
  if (missing !== undefined) {
    return {
      ok: false,
      error: invalid(`provider '${provider}' uses Entra ID client credentials, which need ${ENTRA_KEYS.join(', ')}: ${missing} is missing`, missing, 'missing_provider_config'),
    };
  }
  return ok({ tenantId: tenantId!, clientId: clientId!, clientSecret: clientSecret!, scope: setting(node, 'cloud3_entra_scope') ?? defaultScope });
}

/** The authority host from the environment, defaulted and normalised as Azure's SDKs do. */
export function authorityHost(env: NodeJS.ProcessEnv = process.env): Result<string> {
  const raw = env.AZURE_AUTHORITY_HOST;
  if (raw === undefined || raw === '') return ok(DEFAULT_AUTHORITY);
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`;
  if (!URL.canParse(withScheme)) {
    return { ok: false, error: new GatewayError(500, `AZURE_AUTHORITY_HOST '${raw}' is not a URL`, { code: 'invalid_environment' }) };
  }
  return ok(trimSlash(withScheme));
}

/** Credentials come from configs, inline ones too: the least recently used token goes when the cache is full. */
const cache = new LRUCache<string, CachedToken>({ max: MAX_CACHED });
const pending = new Map<string, Promise<Result<CachedToken>>>();

/** An access token for `c`: cached, shared with concurrent callers, or freshly exchanged. */
export async function entraToken(c: EntraCredentials): Promise<Result<string>> {
  const authority = authorityHost();
  if (!authority.ok) return authority;
  // The secret is part of the key (a rotated secret must not reuse a token), hashed so it is not kept twice.
  const key = createHash('sha256').update([authority.value, c.tenantId, c.clientId, c.clientSecret, c.scope].join('\0')).digest('base64url');
  const hit = cache.get(key);
  if (hit !== undefined && hit.refreshAt > Date.now()) return ok(hit.token);
  let exchange = pending.get(key);
  if (exchange === undefined) {
    exchange = requestToken(authority.value, c).then((r) => {
      if (r.ok) cache.set(key, r.value);
      return r;
    });
    pending.set(key, exchange);
    void exchange.finally(() => pending.delete(key));
  }
  const fresh = await exchange;
  if (fresh.ok) return ok(fresh.value.token);
  // A token still valid outlives a failed renewal: an identity-platform hiccup costs nothing yet.
  if (hit !== undefined && hit.expiresAt > Date.now()) return ok(hit.token);
  return fresh;
}

async function requestToken(authority: string, c: EntraCredentials): Promise<Result<CachedToken>> {
  const url = `${authority}/${encodeURIComponent(c.tenantId)}/oauth2/v2.0/token`;
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret, scope: c.scope });
  const started = Date.now();
  // Through the gateway's pool: the upstream policy applies, and a redirect is not followed.
  const timer = new Cancel().withTimeout(TOKEN_TIMEOUT_MS);
  let status: number;
  let text: string;
  try {
    const res = await send(
      { url, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: form.toString() },
      timer.cancel,
    );
    status = res.statusCode;
    text = await res.body.text(TOKEN_ANSWER_BYTES);
  } catch (e) {
    if (e instanceof UpstreamAddressDenied) return { ok: false, error: e };
    if (e instanceof AnswerTooLarge) return fail(502, `the Entra ID token endpoint answered more than the ${e.limit} bytes a token answer may have`, 'upstream_answer_too_large');
    if (timer.timedOut()) return fail(504, `the Entra ID token endpoint did not answer within ${TOKEN_TIMEOUT_MS} ms`, 'gateway_timeout');
    return fail(502, `could not reach the Entra ID token endpoint: ${(e as { code?: string }).code ?? (e as Error).message}`, 'upstream_unreachable');
  } finally {
    timer.release();
  }
  if (isRedirect(status)) return fail(502, `the Entra ID token endpoint answered ${status}, a redirect, which the gateway does not follow`, REDIRECT_CODE);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  if (status < 200 || status >= 300) {
    const e = (typeof body === 'object' && body !== null ? body : {}) as TokenError;
    // The description's first line is the AADSTS message; trace ids follow on the next lines.
    const description = typeof e.error_description === 'string' ? e.error_description.split(/\r?\n/)[0]! : text.slice(0, 200);
    const code = typeof e.error === 'string' ? e.error : 'entra_token_error';
    return fail(status >= 400 ? status : 502, `Entra ID token request failed (${code}): ${description}`, code);
  }
  const a = (typeof body === 'object' && body !== null ? body : {}) as TokenAnswer;
  const expiresIn = Number(a.expires_in);
  if (typeof a.access_token !== 'string' || a.access_token === '' || !(expiresIn > 0)) {
    return fail(502, 'the Entra ID token endpoint answered without access_token and expires_in', 'bad_upstream_response');
  }
  const margin = Math.min(REFRESH_MARGIN_S, expiresIn / 2);
  return ok({ token: a.access_token, refreshAt: started + (expiresIn - margin) * 1000, expiresAt: started + expiresIn * 1000 });
}

function fail(status: number, message: string, code: string): Result<never> {
  return { ok: false, error: new GatewayError(status, message, { code }) };
}
