/**
 * azure-ai: models deployed from Azure AI Foundry (or Azure Machine Learning)
 * to a serverless API endpoint or a managed online endpoint. Their wire
 * format is OpenAI's, so bodies and answers pass as they are, except for the
 * few fields the Model Inference API names differently (inference-body.ts).
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
import { invalid, ok, type GatewayError, type Result } from '../../shared/errors.js';
import { type CallInput, type ProviderAdapter, type ProviderCall } from '../types.js';
import { ENDPOINT_PATHS } from '../../shared/endpoint.js';
import { credentialOf, withAuth } from './auth.js';
import { toInferenceChat } from './chat/request.js';
import { requiredLabel, setting, trimBase, withApiVersion, type AzureSettings } from './settings.js';

const NAME = 'azure-ai';
/** Entra ID scope of Azure Machine Learning endpoints unless cloud3_entra_scope says otherwise. */
const AZURE_ML_SCOPE = 'https://ml.azure.com/.default';

export const azureAI: ProviderAdapter = {
  name: NAME,
  prepare({ target, endpoint, path, body }: CallInput): Result<ProviderCall> | Promise<Result<ProviderCall>> {
    const { node } = target;
    const host = endpointHost(target.customHost, node);
    if (!host.ok) return host;
    const apiVersion = setting(node, 'cloud3_api_version', 'api_version');
    const root = apiVersion === undefined ? `${host.value}/v1` : host.value;
    const call: ProviderCall = { url: withApiVersion(root + (endpoint === 'proxy' ? path : ENDPOINT_PATHS[endpoint]), apiVersion), headers: {} };
    const deployment = setting(node, 'cloud3_deployment_name');
    if (node.cloud3_deployment_type === 'managed' && deployment !== undefined) call.headers['azureml-model-deployment'] = deployment;
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

/** The endpoint's https://… origin from its type, name and region, or the custom host that replaces it. */
function endpointHost(customHost: string | undefined, node: AzureSettings): Result<string, GatewayError> {
  if (customHost !== undefined) return ok(trimBase(customHost));
  const type = node.cloud3_deployment_type;
  if (type === undefined) {
    return { ok: false, error: invalid(`provider '${NAME}' needs cloud3_deployment_type (serverless or managed)`, 'cloud3_deployment_type', 'missing_provider_config') };
  }
  const name = type === 'managed' ? requiredLabel(NAME, node, 'cloud3_endpoint_name') : requiredLabel(NAME, node, 'cloud3_endpoint_name', 'cloud3_deployment_name');
  if (!name.ok) return name;
  const region = requiredLabel(NAME, node, 'cloud3_region');
  if (!region.ok) return region;
  const domain = type === 'managed' ? 'inference.ml.azure.com' : 'models.ai.azure.com';
  return ok(`https://${name.value}.${region.value}.${domain}`);
}
