/**
 * Vertex AI credentials: a service account key (cloud2_service_account_json)
 * exchanged for an OAuth access token, or an access token given directly.
 *
 * The exchange is Google's two-legged OAuth for service accounts
 * (https://developers.google.com/identity/protocols/oauth2/service-account#httprest):
 * a JWT signed RS256 with the account's private key,
 *   header {alg:"RS256", typ:"JWT", kid:<private_key_id>}
 *   claims {iss:<client_email>, scope:"https://www.googleapis.com/auth/cloud-platform",
 *           aud:<token_uri>, iat:<now>, exp:<now + 3600>}
 * is POSTed form-encoded to the key file's own `token_uri`
 * (grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<jwt>), as
 * Google's client libraries do, and answered with
 * {access_token, expires_in, token_type:"Bearer"}; a refused assertion gets
 * 400 {error:"invalid_grant", error_description}.
 * Tokens are cached per service account until five minutes before they
 * expire (at most MAX_CACHED accounts, least recently used out first), and
 * concurrent requests share one exchange in flight.
 */
import { createHash, createPrivateKey, createSign, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { GatewayError, invalid, ok, type Result } from '../../shared/errors.js';
import { upstreamUrlProblem } from '../../shared/upstream-url.js';
import { AnswerTooLarge, TOKEN_ANSWER_BYTES } from '../../upstream/answer.js';
import { Cancel } from '../../upstream/cancel.js';
import { isRedirect, REDIRECT_CODE, send } from '../../upstream/client.js';
import { UpstreamAddressDenied } from '../../upstream/policy.js';

const PARAM = 'cloud2_service_account_json';
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_LIFETIME_S = 3600;
/** A token this close to its expiry is replaced, so none expires in flight. */
export const REFRESH_MARGIN_MS = 5 * 60_000;
const EXCHANGE_TIMEOUT_MS = 30_000;
/** Service accounts whose tokens are kept. */
export const MAX_CACHED = 1000;

export interface ServiceAccount {
  clientEmail: string;
  privateKey: KeyObject;
  privateKeyId: string | undefined;
  tokenUri: string;
  projectId: string | undefined;
  /** The account, its key and its token endpoint: one cached token each. */
  cacheKey: string;
}

/** Parsed once per config object: configs are frozen and memoised, so this is once per config. */
const parsed = new WeakMap<object, Result<ServiceAccount, GatewayError>>();

export function serviceAccount(json: Record<string, unknown>): Result<ServiceAccount, GatewayError> {
  let sa = parsed.get(json);
  if (sa === undefined) {
    sa = parseServiceAccount(json);
    parsed.set(json, sa);
  }
  return sa;
}

function parseServiceAccount(json: Record<string, unknown>): Result<ServiceAccount, GatewayError> {
  const bad = (field: string, why: string) => ({ ok: false as const, error: invalid(`${PARAM}.${field}: ${why}`, `${PARAM}.${field}`) });
  if (json.type !== undefined && json.type !== 'service_account') return bad('type', `is '${String(json.type)}'; only 'service_account' key files are accepted`);
  const { client_email: email, private_key: pem, token_uri: tokenUri, private_key_id: keyId, project_id: projectId } = json;
  if (typeof email !== 'string' || email === '') return bad('client_email', 'required (the service account\'s e-mail address)');
  if (typeof pem !== 'string' || pem === '') return bad('private_key', 'required (the PEM private key of the key file)');
  if (typeof tokenUri !== 'string') return bad('token_uri', 'required: the http(s) URL of the token endpoint');
  // The exchange is an upstream call like any other: the rule of custom_host.
  const badUri = upstreamUrlProblem(tokenUri);
  if (badUri !== null) return bad('token_uri', badUri);
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (e) {
    return bad('private_key', `does not parse as a PEM private key (${(e as Error).message})`);
  }
  if (key.asymmetricKeyType !== 'rsa') return bad('private_key', `is a ${key.asymmetricKeyType} key; RS256 needs an RSA key`);
  const keyHash = createHash('sha256').update(pem).digest('base64url');
  return ok({
    clientEmail: email,
    privateKey: key,
    privateKeyId: typeof keyId === 'string' && keyId !== '' ? keyId : undefined,
    tokenUri,
    projectId: typeof projectId === 'string' && projectId !== '' ? projectId : undefined,
    cacheKey: `${tokenUri}\n${email}\n${keyHash}`,
  });
}

export function signedAssertion(sa: ServiceAccount, nowS: number): string {
  const header = { alg: 'RS256', typ: 'JWT', ...(sa.privateKeyId !== undefined ? { kid: sa.privateKeyId } : {}) };
  const claims = { iss: sa.clientEmail, scope: SCOPE, aud: sa.tokenUri, iat: nowS, exp: nowS + JWT_LIFETIME_S };
  const input = `${b64url(header)}.${b64url(claims)}`;
  const signature = createSign('RSA-SHA256').update(input).sign(sa.privateKey).toString('base64url');
  return `${input}.${signature}`;
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export interface IssuedToken {
  accessToken: string;
  expiresInS: number;
}

export type Exchange = (sa: ServiceAccount) => Promise<Result<IssuedToken, GatewayError>>;

/** The exchange at the key file's token_uri. */
export const exchangeAtTokenUri: Exchange = async (sa) => {
  const form = new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
    assertion: signedAssertion(sa, Math.floor(Date.now() / 1000)),
  }).toString();
  // Not tied to any one client's request: the exchange is shared by every request waiting for it.
  const timer = new Cancel().withTimeout(EXCHANGE_TIMEOUT_MS);
  let status: number;
  let text: string;
  try {
    const res = await send(
      { url: sa.tokenUri, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form },
      timer.cancel,
    );
    status = res.statusCode;
    text = await res.body.text(TOKEN_ANSWER_BYTES);
  } catch (e) {
    if (e instanceof UpstreamAddressDenied) return { ok: false, error: e };
    if (e instanceof AnswerTooLarge) return { ok: false, error: exchangeFailed(502, `${sa.tokenUri} answered more than the ${e.limit} bytes a token answer may have`, 'token_exchange_failed') };
    const reason = timer.timedOut() ? `no answer within ${EXCHANGE_TIMEOUT_MS} ms` : ((e as { code?: string }).code ?? (e as Error).message);
    return { ok: false, error: exchangeFailed(502, `could not reach ${sa.tokenUri}: ${reason}`, 'token_exchange_failed') };
  } finally {
    timer.release();
  }
  if (isRedirect(status)) {
    return { ok: false, error: exchangeFailed(502, `${sa.tokenUri} answered ${status}, a redirect, which the gateway does not follow`, REDIRECT_CODE) };
  }
  let body: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // judged by status below
  }
  if (status >= 200 && status < 300 && typeof body.access_token === 'string' && body.access_token !== '') {
    return ok({ accessToken: body.access_token, expiresInS: typeof body.expires_in === 'number' ? body.expires_in : JWT_LIFETIME_S });
  }
  if (status >= 400 && status < 500) {
    // The endpoint refused this credential (invalid_grant, unauthorized_client…): the status is the token endpoint's.
    const code = typeof body.error === 'string' ? body.error : 'token_exchange_refused';
    const why = typeof body.error_description === 'string' ? `${code}: ${body.error_description}` : code;
    return { ok: false, error: exchangeFailed(status, `${sa.tokenUri} refused the service account's assertion (${why})`, code, PARAM) };
  }
  return { ok: false, error: exchangeFailed(502, `${sa.tokenUri} answered ${status} without an access token`, 'token_exchange_failed') };
};

function exchangeFailed(status: number, message: string, code: string, param: string | null = null): GatewayError {
  return new GatewayError(status, `Vertex AI token exchange failed: ${message}`, { code, param });
}

interface Cached {
  token: string;
  /** When to exchange again (ms, the cache's clock). */
  refreshAt: number;
}

/**
 * Access tokens per service account. A cached token answers synchronously;
 * otherwise one exchange runs per account however many requests wait for it.
 * Failures are not cached: the next request tries again.
 */
export class TokenCache {
  /** Service accounts come from configs, inline ones too: the least recently used token goes when full. */
  private readonly tokens = new LRUCache<string, Cached>({ max: MAX_CACHED });
  private readonly inFlight = new Map<string, Promise<Result<string, GatewayError>>>();

  constructor(
    private readonly exchange: Exchange = exchangeAtTokenUri,
    private readonly now: () => number = Date.now,
  ) {}

  get(sa: ServiceAccount): Result<string, GatewayError> | Promise<Result<string, GatewayError>> {
    const hit = this.tokens.get(sa.cacheKey);
    if (hit !== undefined && this.now() < hit.refreshAt) return ok(hit.token);
    let pending = this.inFlight.get(sa.cacheKey);
    if (pending === undefined) {
      pending = this.refresh(sa);
      this.inFlight.set(sa.cacheKey, pending);
    }
    return pending;
  }

  private refresh(sa: ServiceAccount): Promise<Result<string, GatewayError>> {
    // Deferred a tick, so the entry in inFlight exists before the exchange can settle.
    return Promise.resolve()
      .then(() => this.exchange(sa))
      .then(
        (r): Result<string, GatewayError> => {
          if (!r.ok) return r;
          this.tokens.set(sa.cacheKey, { token: r.value.accessToken, refreshAt: this.now() + r.value.expiresInS * 1000 - REFRESH_MARGIN_MS });
          return ok(r.value.accessToken);
        },
        (e: unknown): Result<string, GatewayError> => ({ ok: false, error: exchangeFailed(502, (e as Error).message, 'token_exchange_failed') }),
      )
      .finally(() => this.inFlight.delete(sa.cacheKey));
  }
}
