/**
 * Azure's config keys (spec: the cloud3 keys, and Azure OpenAI's resource,
 * deployment and API version), shared by azure-openai and azure-ai, and how
 * they are read. Several come in two spellings, the spec's plain one and the
 * third cloud's prefixed one (`resource_name` or `cloud3_resource_name`); the
 * plain one wins. Empty strings count as absent, so `"resource_name": ""` is
 * reported as missing rather than sent to Azure.
 */
import { Type } from '@sinclair/typebox';
import { invalid, ok, type GatewayError, type Result } from '../../shared/errors.js';
import { arrayOf, bool, enumOf, headerValue, object, str } from '../../shared/json-schema.js';
import { providerSettings, type SettingsOf, type TargetCredential } from '../shared/settings.js';

/** One Azure OpenAI deployment a request's model may pick by alias (deployments.ts). */
const deployment = object({ deployment_id: str, alias: str, api_version: str, is_default: Type.Optional(bool) });

export const ENTRA_KEYS = ['cloud3_entra_tenant_id', 'cloud3_entra_client_id', 'cloud3_entra_client_secret'] as const;

export const AZURE_SETTINGS = providerSettings({
  keys: {
    resource_name: str,
    deployment_id: str,
    api_version: str,
    deployments: arrayOf(deployment, 'an array'),
    cloud3_region: str,
    // A managed endpoint's deployment is sent as azureml-model-deployment.
    cloud3_deployment_name: headerValue,
    cloud3_endpoint_name: str,
    cloud3_api_version: str,
    cloud3_deployment_type: enumOf(['serverless', 'managed'], 'serverless or managed'),
    cloud3_entra_scope: str,
    // Entra ID client credentials (tenant, app id, secret): the token replaces api_key.
    cloud3_entra_tenant_id: str,
    cloud3_entra_client_id: str,
    cloud3_entra_client_secret: str,
    cloud3_resource_name: str,
    cloud3_deployment_id: str,
    cloud3_model_name: str,
  },
  secrets: ['cloud3_entra_client_secret'],
  // The resource or endpoint host (name, type, region: adapter.ts), and whose tenant and which
  // resource an Entra token is asked for.
  destinations: [
    'resource_name',
    'cloud3_resource_name',
    'cloud3_endpoint_name',
    'cloud3_deployment_name',
    'cloud3_deployment_type',
    'cloud3_region',
    'cloud3_entra_tenant_id',
    'cloud3_entra_scope',
  ],
  keyGroups: [
    ['cloud3_deployment_name', 'cloud3_deployment_type', 'cloud3_region', 'cloud3_api_version'],
    ['cloud3_endpoint_name', 'cloud3_deployment_type'],
    // Entra ID client credentials stand in for api_key (Portkey: azure_auth_mode 'entra').
    [...ENTRA_KEYS],
  ],
});

/** An Azure target's keys, with the credential keys every target may carry. */
export type AzureSettings = SettingsOf<typeof AZURE_SETTINGS> & TargetCredential;

type StringKey = { [K in keyof AzureSettings]-?: AzureSettings[K] extends string | undefined ? K : never }[keyof AzureSettings];

/** The first of `keys` set to a non-empty string. */
export function setting(node: AzureSettings, ...keys: StringKey[]): string | undefined {
  for (const key of keys) {
    const v = node[key];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

/** `setting` or a 400 naming the key (and its other spelling). */
export function required(provider: string, node: AzureSettings, ...keys: [StringKey, ...StringKey[]]): Result<string, GatewayError> {
  const v = setting(node, ...keys);
  if (v !== undefined) return ok(v);
  const names = keys.length === 1 ? keys[0] : `${keys[0]} (or ${keys.slice(1).join(', ')})`;
  return { ok: false, error: invalid(`provider '${provider}' needs ${names}`, keys[0], 'missing_provider_config') };
}

/** Azure resource, endpoint and region names become DNS labels of the host: letters, digits, inner hyphens. */
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/** `required`, and a 400 naming the key when its value cannot be a label of a host name. */
export function requiredLabel(provider: string, node: AzureSettings, ...keys: [StringKey, ...StringKey[]]): Result<string, GatewayError> {
  const key = keys.find((k) => setting(node, k) !== undefined);
  if (key === undefined) return required(provider, node, ...keys);
  const value = setting(node, key)!;
  return DNS_LABEL.test(value)
    ? ok(value)
    : { ok: false, error: invalid(`${key} '${value}' is not a valid host name label (letters, digits and inner hyphens)`, key, 'invalid_provider_config') };
}
