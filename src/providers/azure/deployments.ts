/**
 * Which Azure OpenAI deployment serves a request. A target names one
 * (`deployment_id` + `api_version`) or several (`deployments`, each with an
 * `alias`): then the request's `model` picks the deployment whose alias it
 * is, else the one marked `is_default` (the first, if several are), else the
 * request is refused with a 400 naming the model and listing the aliases.
 * With `deployments` present, the top-level deployment_id is not consulted:
 * one list decides, so a typo in a model name never lands on a silent fallback.
 */
import { invalid, ok, type GatewayError, type Result } from '../../shared/errors.js';
import { required, setting, type AzureSettings } from './settings.js';

export interface ChosenDeployment {
  deploymentId: string;
  apiVersion: string;
}

export function chooseDeployment(provider: string, node: AzureSettings, model: unknown): Result<ChosenDeployment, GatewayError> {
  const list = node.deployments ?? [];
  if (list.length > 0) {
    const picked = (typeof model === 'string' ? list.find((d) => d.alias === model) : undefined) ?? list.find((d) => d.is_default === true);
    if (picked !== undefined) return ok({ deploymentId: picked.deployment_id, apiVersion: picked.api_version });
    const aliases = list.map((d) => `'${d.alias}'`).join(', ');
    const what = typeof model === 'string' ? `unknown model alias '${model}'` : 'the request names no model';
    return {
      ok: false,
      error: invalid(`${what} for provider '${provider}': the deployments' aliases are ${aliases}, and none is_default`, 'model', 'unknown_model_alias'),
    };
  }
  const deploymentId = required(provider, node, 'deployment_id', 'cloud3_deployment_id');
  if (!deploymentId.ok) return deploymentId;
  const apiVersion = required(provider, node, 'api_version', 'cloud3_api_version');
  if (!apiVersion.ok) return apiVersion;
  return ok({ deploymentId: deploymentId.value, apiVersion: apiVersion.value });
}

/**
 * The api-version of a target outside any deployment (the generic proxy: files, batches,
 * fine-tuning), if set: its own, else its default deployment's (the first's, as above), so
 * a target that lists only deployments still reaches routes Azure serves only with a version.
 */
export function targetApiVersion(node: AzureSettings): string | undefined {
  const list = node.deployments ?? [];
  return setting(node, 'api_version', 'cloud3_api_version') ?? (list.find((d) => d.is_default === true) ?? list[0])?.api_version;
}
