/**
 * One adapter per row of the compatible-hosts table. The wire format is the
 * client's own, so only the URL and the credential change, and the client's
 * bytes go on as they are — except a stream the client did not ask usage for,
 * sent to a host that answers include_usage as OpenAI does
 * (shared/stream-usage.ts), which goes with the option set and is marked so
 * the respond stage strips it again.
 */
import { err, invalid, ok } from '../../shared/errors.js';
import type { Provider, ProviderAdapter, RelayedCall } from '../contract.js';
import { wantsUsage, withUsage } from '../shared/stream-usage.js';
import type { CompatibleHost } from './hosts.js';
import type { OpenAISettings } from './settings.js';

export function openAICompatible(name: string, host: CompatibleHost): Provider<OpenAISettings> {
  const asksUsage = host.streamUsage === 'on-request';
  const adapter: ProviderAdapter<OpenAISettings> = {
    name,
    lacks: Object.fromEntries((host.lacks ?? []).map((e) => [e, ''])),
    nativeResponses: host.responses === true,
    prepare({ target, endpoint, path, body }) {
      const base = target.customHost ?? host.baseUrl;
      if (base === null) return err(invalid(`provider '${name}' needs custom_host (or x-gateway-custom-host)`, 'custom_host'));
      const headers: Record<string, string> = {};
      const { settings } = target;
      if (settings.api_key !== undefined) headers.authorization = `Bearer ${settings.api_key}`;
      else if (target.clientAuthorization !== undefined) headers.authorization = target.clientAuthorization;
      else if (host.auth === 'bearer' && target.customHost === undefined) {
        return err(invalid(`provider '${name}' needs an api_key (or an Authorization header)`, 'api_key'));
      }
      if (settings.vendor_organization !== undefined) headers['openai-organization'] = settings.vendor_organization;
      if (settings.vendor_project !== undefined) headers['openai-project'] = settings.vendor_project;
      const call: RelayedCall = { kind: 'relayed', url: joinUrl(base, path), headers, addedUsage: false };
      if (asksUsage && wantsUsage(endpoint, body)) {
        // The client's body is not touched: the cache key was made from it.
        call.body = JSON.stringify(withUsage(body));
        call.addedUsage = true;
      }
      return ok(call);
    },
  };
  return { adapter, translators: {} };
}

function joinUrl(base: string, path: string): string {
  return base.endsWith('/') ? base.slice(0, -1) + path : base + path;
}
