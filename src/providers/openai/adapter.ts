/**
 * One adapter object per row of the compatible-hosts table. The wire format
 * is the client's own, so only the URL and the credential change.
 */
import { invalid, ok, type Result, type GatewayError } from '../../shared/errors.js';
import { type CallInput, type ProviderAdapter, type ProviderCall } from '../types.js';
import { ENDPOINT_PATHS } from '../../shared/endpoint.js';
import type { CompatibleHost } from './hosts.js';

export function openAICompatible(name: string, host: CompatibleHost): ProviderAdapter {
  return {
    name,
    prepare({ target, endpoint, path }: CallInput): Result<ProviderCall, GatewayError> {
      if (endpoint !== 'proxy' && host.lacks?.includes(endpoint)) {
        return { ok: false, error: invalid(`provider '${name}' does not serve ${ENDPOINT_PATHS[endpoint]}`, 'provider') };
      }
      const base = target.customHost ?? host.baseUrl;
      if (base === null) {
        return { ok: false, error: invalid(`provider '${name}' needs custom_host (or x-gateway-custom-host)`, 'custom_host') };
      }
      const headers: Record<string, string> = {};
      const key = target.node.api_key;
      if (key !== undefined) headers.authorization = `Bearer ${key}`;
      else if (target.clientAuthorization !== undefined) headers.authorization = target.clientAuthorization;
      else if (host.auth === 'bearer' && target.customHost === undefined) {
        return { ok: false, error: invalid(`provider '${name}' needs an api_key (or an Authorization header)`, 'api_key') };
      }
      if (target.node.vendor_organization !== undefined) headers['openai-organization'] = target.node.vendor_organization;
      if (target.node.vendor_project !== undefined) headers['openai-project'] = target.node.vendor_project;
      return ok({ url: joinUrl(base, path), headers });
    },
  };
}

function joinUrl(base: string, path: string): string {
  return base.endsWith('/') ? base.slice(0, -1) + path : base + path;
}
