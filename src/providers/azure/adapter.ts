/**
 * azure-openai (alias cloud3): OpenAI models deployed in an Azure OpenAI
 * resource. The wire format is OpenAI's own, so the client's bytes go on and
 * Azure's answers come back unchanged; only the URL and the credential differ.
 *
 * Wire format (Azure OpenAI inference REST reference,
 * https://learn.microsoft.com/azure/ai-foundry/openai/reference, and its
 * OpenAPI spec, azure-rest-api-specs: specification/cognitiveservices/
 * data-plane/AzureOpenAI/inference):
 *
 *   POST https://{resource_name}.openai.azure.com/openai/deployments/{deployment_id}/chat/completions?api-version={api_version}
 *        (…/completions, …/embeddings)
 *   api-key: <key>    or    Authorization: Bearer <Entra token for https://cognitiveservices.azure.com/.default>
 *   Request and answer bodies, SSE stream (ending in `data: [DONE]`): OpenAI's. The deployment decides the
 *   model; `model` in the body is ignored, so it is left as the client sent it.
 *   Azure adds fields OpenAI's SDKs ignore: `prompt_filter_results`, per-choice `content_filter_results`, and
 *   a first stream chunk with no choices carrying the prompt's filter results. They pass as sent.
 *   Errors: {"error":{"code":"…","message":"…"}} (plus `param`, `type`, `inner_error` for model errors);
 *   a missing or unsupported api-version, or an unknown path, is 404 {"error":{"code":"404","message":"Resource not found"}};
 *   an unknown deployment 404 {"error":{"code":"DeploymentNotFound",…}}. Relayed as Azure sent them,
 *   with their headers (retry-after-ms and x-ratelimit-* on 429 guide the OpenAI SDK's own retries).
 *
 *   Streams are asked for usage (stream_options.include_usage, stripped again by the relay) where the API
 *   version takes the option: see takesStreamOptions.
 *
 *   api_version "v1" selects the v1 API (https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle):
 *   POST https://{resource_name}.openai.azure.com/openai/v1/chat/completions, no api-version query, and the
 *   body's `model` names the deployment (the body is rewritten for it).
 *
 * A custom host replaces https://{resource_name}.openai.azure.com (an APIM gateway, a test mock).
 * Generic proxy: {host}/openai{path}, the target's api-version added unless the client's query has one.
 */
import { ok, type GatewayError, type Result } from '../../shared/errors.js';
import { wantsUsage, withUsage } from '../shared/stream-usage.js';
import { type CallInput, type ProviderAdapter, type ProviderCall } from '../types.js';
import { ENDPOINT_PATHS } from '../../shared/endpoint.js';
import { credentialOf, withAuth } from './auth.js';
import { chooseDeployment, targetApiVersion } from './deployments.js';
import { requiredLabel, trimBase, withApiVersion, type AzureSettings } from './settings.js';

const NAME = 'azure-openai';
/** Entra ID scope of Azure OpenAI (Cognitive Services) unless cloud3_entra_scope says otherwise. */
const AZURE_OPENAI_SCOPE = 'https://cognitiveservices.azure.com/.default';
const V1 = 'v1';

export const azureOpenAI: ProviderAdapter = {
  name: NAME,
  prepare({ target, endpoint, path, body }: CallInput): Result<ProviderCall> | Promise<Result<ProviderCall>> {
    const host = resourceHost(target.customHost, target.node);
    if (!host.ok) return host;
    let call: ProviderCall;
    if (endpoint === 'proxy') {
      const apiVersion = targetApiVersion(target.node);
      const url = apiVersion === V1 ? `${host.value}/openai/v1${path}` : withApiVersion(`${host.value}/openai${path}`, apiVersion);
      call = { url, headers: {} };
    } else {
      const chosen = chooseDeployment(NAME, target.node, body?.model);
      if (!chosen.ok) return chosen;
      const { deploymentId, apiVersion } = chosen.value;
      let sent = body;
      if (apiVersion === V1) {
        call = { url: `${host.value}/openai/v1${ENDPOINT_PATHS[endpoint]}`, headers: {} };
        // In the v1 API the body's model names the deployment.
        if (sent !== null && sent.model !== deploymentId) sent = { ...sent, model: deploymentId };
      } else {
        const url = `${host.value}/openai/deployments/${encodeURIComponent(deploymentId)}${ENDPOINT_PATHS[endpoint]}`;
        call = { url: withApiVersion(url, apiVersion), headers: {} };
      }
      if (takesStreamOptions(apiVersion) && wantsUsage(endpoint, sent)) {
        sent = withUsage(sent);
        call.addedUsage = true;
      }
      if (sent !== body) call.body = JSON.stringify(sent);
    }
    const cred = credentialOf(target, AZURE_OPENAI_SCOPE);
    if (!cred.ok) return cred;
    return withAuth(call, cred.value, 'api-key');
  },
};

/**
 * Whether an API version takes stream_options: the v1 API and dated versions
 * from 2024-09-01-preview on (GA in 2024-10-21); earlier ones refuse it with a
 * 400, so streams there are not asked for usage (shared/stream-usage.ts).
 */
function takesStreamOptions(apiVersion: string): boolean {
  return apiVersion === V1 || apiVersion.slice(0, 10) >= '2024-09-01';
}

/** https://{resource_name}.openai.azure.com, or the custom host that replaces it. */
function resourceHost(customHost: string | undefined, node: AzureSettings): Result<string, GatewayError> {
  if (customHost !== undefined) return ok(trimBase(customHost));
  const resource = requiredLabel(NAME, node, 'resource_name', 'cloud3_resource_name');
  return resource.ok ? ok(`https://${resource.value}.openai.azure.com`) : resource;
}
