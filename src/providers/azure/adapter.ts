/**
 * Azure's two providers. Both speak OpenAI's wire format, so their answers
 * are relayed as Azure sent them; only the URL, the credential (auth.ts) and,
 * for azure-ai, a few request fields (chat/request.ts) differ. Their config
 * keys are in settings.ts.
 *
 * ## azure-openai
 *
 * (alias cloud3) OpenAI models deployed in an Azure OpenAI
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
 *   Streams are asked for usage (stream_options.include_usage, stripped again by the respond stage) where the API
 *   version takes the option: see takesStreamOptions.
 *
 *   api_version "v1" selects the v1 API (https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle):
 *   POST https://{resource_name}.openai.azure.com/openai/v1/chat/completions, no api-version query, and the
 *   body's `model` names the deployment (the body is rewritten for it).
 *
 *   Responses API: POST https://{resource_name}.openai.azure.com/openai/responses?api-version={api_version}
 *   (/openai/v1/responses in the v1 API), the body's model naming the deployment.
 *
 * A custom host replaces https://{resource_name}.openai.azure.com (an APIM gateway, a test mock).
 * Generic proxy: {host}/openai{path}, the target's api-version added unless the client's query has one.
 
 *
 * ## azure-ai
 *
 * Models deployed from Azure AI Foundry (or Azure Machine Learning)
 * to a serverless API endpoint or a managed online endpoint. Their wire
 * format is OpenAI's, so bodies and answers pass as they are, except for the
 * few fields the Model Inference API names differently (chat/request.ts).
 *
 * Hosts (Microsoft Learn: "Deploy models as serverless API deployments",
 * "Online endpoints for real-time inference"; the layout Portkey's azure-ai
 * provider used with these config keys):
 *   serverless  https://{cloud3_endpoint_name | cloud3_deployment_name}.{cloud3_region}.models.ai.azure.com
 *               (a serverless deployment and its endpoint share the name)
 *   managed     https://{cloud3_endpoint_name}.{cloud3_region}.inference.ml.azure.com
 *               azureml-model-deployment: {cloud3_deployment_name}   (picks one deployment of the
 *               endpoint; without it the endpoint's traffic rules decide)
 *   A custom host replaces either.
 * Routes:
 *   no cloud3_api_version: the endpoints' OpenAI-compatible routes
 *     POST {host}/v1/chat/completions  (…/v1/completions, …/v1/embeddings)
 *   cloud3_api_version set: the Azure AI Model Inference API
 *     (https://learn.microsoft.com/azure/ai-studio/reference/reference-model-inference-api)
 *     POST {host}/chat/completions?api-version={cloud3_api_version}  (…/completions, …/embeddings)
 *     Parameters outside its list are refused with 422 unless `extra-parameters` is `pass-through`
 *     (handed to the model) or `drop` (removed silently). The adapter sends pass-through: the
 *     client's parameters reach the model as sent. A client may choose `drop` through
 *     x-gateway-forward-headers: extra-parameters (forwarded headers override the adapter's).
 * Auth: Authorization: Bearer <endpoint key>, or an Entra ID token (scope https://ml.azure.com/.default,
 *   the azure-ai-inference SDK's default, unless cloud3_entra_scope).
 * Answers, SSE streams (ending in `data: [DONE]`) and errors ({"error":{"code","message",…}}): relayed as sent.
 * Generic proxy: {root}{path}, root being {host}/v1 or, with an api-version, {host} with the version added.
 
 */
import { err, invalid, ok, type Result } from '../../shared/errors.js';
import { ENDPOINT_PATHS } from '../../shared/endpoint.js';
import type { Provider, ProviderAdapter, RelayedCall } from '../contract.js';
import { wantsUsage, withUsage } from '../shared/stream-usage.js';
import { trimSlash } from '../shared/target.js';
import { credentialOf, withAuth } from './auth.js';
import { toInferenceChat } from './chat/request.js';
import { chooseDeployment, targetApiVersion } from './deployments.js';
import { requiredLabel, setting, type AzureSettings } from './settings.js';

/** Entra ID scope of Azure OpenAI (Cognitive Services) unless cloud3_entra_scope says otherwise. */
const AZURE_OPENAI_SCOPE = 'https://cognitiveservices.azure.com/.default';
/** Entra ID scope of Azure Machine Learning endpoints unless cloud3_entra_scope says otherwise. */
const AZURE_ML_SCOPE = 'https://ml.azure.com/.default';
const V1 = 'v1';

const openAI: ProviderAdapter<AzureSettings> = {
  name: 'azure-openai',
  lacks: {},
  nativeResponses: true,
  prepare({ target, endpoint, path, body }) {
    const host = resourceHost(target.customHost, target.settings);
    if (!host.ok) return host;
    let call: RelayedCall;
    if (endpoint === 'proxy') {
      const apiVersion = targetApiVersion(target.settings);
      const url = apiVersion === V1 ? `${host.value}/openai/v1${path}` : withApiVersion(`${host.value}/openai${path}`, apiVersion);
      call = { kind: 'relayed', url, headers: {}, addedUsage: false };
    } else {
      const chosen = chooseDeployment(openAI.name, target.settings, body?.model);
      if (!chosen.ok) return chosen;
      const { deploymentId, apiVersion } = chosen.value;
      let sent = body;
      let url: string;
      if (apiVersion === V1 || endpoint === 'responses') {
        // The v1 API, and the Responses API in every version, are not per deployment: the body's model names it.
        url = apiVersion === V1 ? `${host.value}/openai/v1${ENDPOINT_PATHS[endpoint]}` : withApiVersion(`${host.value}/openai/responses`, apiVersion);
        if (sent !== null && sent.model !== deploymentId) sent = { ...sent, model: deploymentId };
      } else {
        url = withApiVersion(`${host.value}/openai/deployments/${encodeURIComponent(deploymentId)}${ENDPOINT_PATHS[endpoint]}`, apiVersion);
      }
      call = { kind: 'relayed', url, headers: {}, addedUsage: false };
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

const ai: ProviderAdapter<AzureSettings> = {
  name: 'azure-ai',
  lacks: {},
  prepare({ target, endpoint, path, body }) {
    const settings = target.settings;
    const host = endpointHost(target.customHost, settings);
    if (!host.ok) return host;
    const apiVersion = setting(settings, 'cloud3_api_version', 'api_version');
    const root = apiVersion === undefined ? `${host.value}/v1` : host.value;
    const url = withApiVersion(root + (endpoint === 'proxy' ? path : ENDPOINT_PATHS[endpoint]), apiVersion);
    const call: RelayedCall = { kind: 'relayed', url, headers: {}, addedUsage: false };
    const deployment = setting(settings, 'cloud3_deployment_name');
    if (settings.cloud3_deployment_type === 'managed' && deployment !== undefined) call.headers['azureml-model-deployment'] = deployment;
    if (apiVersion !== undefined && endpoint !== 'proxy') {
      call.headers['extra-parameters'] = 'pass-through';
      const edited = endpoint === 'chat' && body !== null ? toInferenceChat(body) : null;
      if (edited !== null) call.body = JSON.stringify(edited);
    }
    const cred = credentialOf(target, AZURE_ML_SCOPE);
    if (!cred.ok) return cred;
    return withAuth(call, cred.value, 'authorization');
  },
};

/** Azure OpenAI's answers are OpenAI's own: no translator. */
export const azureOpenAI: Provider<AzureSettings> = { adapter: openAI, translators: {} };
/** The Model Inference API answers in OpenAI's shape: no translator, only chat/request.ts's edits of the request. */
export const azureAI: Provider<AzureSettings> = { adapter: ai, translators: {} };

/**
 * Whether an API version takes stream_options: the v1 API and dated versions
 * from 2024-09-01-preview on (GA in 2024-10-21); earlier ones refuse it with a
 * 400, so streams there are not asked for usage (shared/stream-usage.ts).
 */
function takesStreamOptions(apiVersion: string): boolean {
  return apiVersion === V1 || apiVersion.slice(0, 10) >= '2024-09-01';
}

/** https://{resource_name}.openai.azure.com, or the custom host that replaces it. */
function resourceHost(customHost: string | undefined, settings: AzureSettings): Result<string> {
  if (customHost !== undefined) return ok(trimSlash(customHost));
  const resource = requiredLabel(openAI.name, settings, 'resource_name', 'cloud3_resource_name');
  return resource.ok ? ok(`https://${resource.value}.openai.azure.com`) : resource;
}

/** The endpoint's https://… origin from its type, name and region, or the custom host that replaces it. */
function endpointHost(customHost: string | undefined, settings: AzureSettings): Result<string> {
  if (customHost !== undefined) return ok(trimSlash(customHost));
  const type = settings.cloud3_deployment_type;
  if (type === undefined) return err(invalid(`provider '${ai.name}' needs cloud3_deployment_type (serverless or managed)`, 'cloud3_deployment_type', 'missing_provider_config'));
  const name = type === 'managed' ? requiredLabel(ai.name, settings, 'cloud3_endpoint_name') : requiredLabel(ai.name, settings, 'cloud3_endpoint_name', 'cloud3_deployment_name');
  if (!name.ok) return name;
  const region = requiredLabel(ai.name, settings, 'cloud3_region');
  if (!region.ok) return region;
  const domain = type === 'managed' ? 'inference.ml.azure.com' : 'models.ai.azure.com';
  return ok(`https://${name.value}.${region.value}.${domain}`);
}

/** Appends `api-version` unless the path's query already carries one (the client's own, on the generic proxy). */
export function withApiVersion(url: string, apiVersion: string | undefined): string {
  if (apiVersion === undefined) return url;
  const q = url.indexOf('?');
  if (q !== -1 && new URLSearchParams(url.slice(q + 1)).has('api-version')) return url;
  return `${url}${q === -1 ? '?' : '&'}api-version=${encodeURIComponent(apiVersion)}`;
}
