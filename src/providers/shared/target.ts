/**
 * What adapters read of a target alike: the base URL, the API key, and the
 * 400s a target that cannot be called gets.
 */
import { err, invalid, ok, type GatewayError, type Result } from '../../shared/errors.js';
import type { ResolvedTarget } from '../contract.js';

/** `base` without trailing slashes, so paths can be appended as they are. */
export function trimSlash(base: string): string {
  return base.replace(/\/+$/, '');
}

/** The token of an `Authorization: Bearer <token>` value; undefined for any other. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : /^Bearer\s+(\S+)$/i.exec(authorization.trim())?.[1];
}

/** Printable ASCII without spaces: anything else cannot be an API key and would break the header it goes in. */
const TOKEN = /^[\x21-\x7e]+$/;

/**
 * The provider's API key: the target's api_key, else the token of the
 * client's `Authorization: Bearer <key>` (routing by headers); undefined when
 * there is neither. A key that cannot be one is a 400 naming where it came from.
 */
export function apiKey(target: ResolvedTarget, provider: string): Result<string | undefined> {
  const key = target.settings.api_key;
  if (key !== undefined) return TOKEN.test(key) ? ok(key) : err(invalid(`api_key: must be one word of printable characters (the ${provider} API key)`, 'api_key'));
  if (target.clientAuthorization === undefined) return ok(undefined);
  const token = bearerToken(target.clientAuthorization);
  return token !== undefined && TOKEN.test(token) ? ok(token) : err(invalid(`Authorization: must be "Bearer <${provider} API key>"`, 'Authorization'));
}

/** The 400 of a target with no credential at all. */
export function needsKey(provider: string, or = 'an Authorization: Bearer header'): GatewayError {
  return invalid(`provider '${provider}' needs an api_key (or ${or})`, 'api_key');
}

/** Pass-through mode on a provider whose URL names the model or whose body must be translated (signed): there is nothing to send an unread body to. */
export function passthroughRefused(provider: string, why: string): GatewayError {
  return invalid(`provider '${provider}' cannot take an untranslated body on an OpenAI path: ${why}; send the provider's own path through the generic proxy instead`, 'passthrough');
}
