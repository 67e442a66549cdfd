/**
 * Which credential an Azure target uses, and the header that carries it.
 * Both Azure APIs take a Microsoft Entra ID token as `Authorization: Bearer`;
 * they differ in where a plain key goes: Azure OpenAI reads it from the
 * `api-key` header, AI Foundry endpoints from `Authorization: Bearer`.
 *
 * Precedence: Entra client credentials in the config (the explicit, stronger
 * choice, as Portkey's azure_auth_mode 'entra'), then `api_key`, then an
 * `Authorization` value (the config's key, else the client's header).
 */
import { invalid, ok, type GatewayError, type Result } from '../../shared/errors.js';
import type { ProviderCall, ResolvedTarget } from '../contract.js';
import { entraCredentials, entraToken, type EntraCredentials } from './entra.js';
import { setting, type AzureSettings } from './settings.js';

export type Credential =
  | { kind: 'entra'; entra: EntraCredentials }
  /** An API key of the resource or endpoint. */
  | { kind: 'key'; key: string }
  /** An Entra access token the client obtained itself. */
  | { kind: 'token'; token: string };

/** Where a plain key goes: Azure OpenAI's `api-key`, or `Authorization: Bearer` (AI Foundry). */
export type KeyHeader = 'api-key' | 'authorization';

// Access tokens are JWTs (three base64url parts joined by dots); Azure keys never hold a dot.
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** The target's credential, or a 400 naming what is missing. Sync: nothing is fetched yet. */
export function credentialOf(target: ResolvedTarget<AzureSettings>, defaultScope: string): Result<Credential, GatewayError> {
  const { provider, settings } = target;
  const entra = entraCredentials(provider, settings, defaultScope);
  if (!entra.ok) return entra;
  if (entra.value !== null) return ok({ kind: 'entra', entra: entra.value });
  const key = setting(settings, 'api_key');
  if (key !== undefined) return ok({ kind: 'key', key });
  const authorization = setting(settings, 'Authorization') ?? target.clientAuthorization;
  if (authorization !== undefined && authorization.trim() !== '') {
    const value = /^Bearer\s+(.+)$/i.exec(authorization.trim())?.[1] ?? authorization.trim();
    return ok(JWT.test(value) ? { kind: 'token', token: value } : { kind: 'key', key: value });
  }
  return {
    ok: false,
    error: invalid(
      `provider '${provider}' needs api_key, an Authorization header, or Entra ID client credentials (cloud3_entra_tenant_id, cloud3_entra_client_id, cloud3_entra_client_secret)`,
      'api_key',
      'missing_provider_config',
    ),
  };
}

/**
 * `call` with its auth header added: at once for a key or a token (the
 * request path stays synchronous), after the exchange for Entra credentials.
 */
export function withAuth(call: ProviderCall, cred: Credential, keyHeader: KeyHeader): Result<ProviderCall> | Promise<Result<ProviderCall>> {
  switch (cred.kind) {
    case 'key':
      if (keyHeader === 'api-key') call.headers['api-key'] = cred.key;
      else call.headers.authorization = `Bearer ${cred.key}`;
      return ok(call);
    case 'token':
      call.headers.authorization = `Bearer ${cred.token}`;
      return ok(call);
    case 'entra':
      return entraToken(cred.entra).then((token) => {
        if (!token.ok) return token;
        call.headers.authorization = `Bearer ${token.value}`;
        return ok(call);
      });
  }
}
