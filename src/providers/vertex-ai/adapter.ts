/**
 * Google Vertex AI (alias cloud2).
 *
 * Wire format (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/projects.locations.endpoints/generateContent,
 * …/model-reference/text-embeddings-api):
 *   POST https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}
 *        /publishers/{publisher}/models/{model}:{method}
 *   (region "global": https://aiplatform.googleapis.com/v1/…), header `Authorization: Bearer <access token>`.
 *   Google's models: `generateContent`, `streamGenerateContent?alt=sse` with the Gemini API's own bodies
 *   (the translation is ../google's), `predict` for text embeddings (embeddings.ts).
 *   Other publishers are routed by model prefix (publishers.ts): Anthropic's `claude-*` models
 *   take `rawPredict` / `streamRawPredict` with an Anthropic Messages body (anthropic.ts, the
 *   translation is ../anthropic's); they have no embeddings: 400 naming the model.
 *   Errors are google.rpc.Status JSON, as on the Gemini API (Claude's own are Anthropic's).
 *
 * Config: `cloud2_service_account_json` (exchanged for an access token, auth.ts),
 * else a bearer access token as `api_key` or the client's Authorization;
 * `cloud2_project_id` (else the key file's project_id); `cloud2_region`.
 * `custom_host` replaces `https://{region}-aiplatform.googleapis.com/v1`.
 * Legacy completions: 400. The generic proxy passes through to {base}{path} with the token.
 */
import { invalid, ok, type GatewayError, type Result } from '../../shared/errors.js';
import { bearerToken, modelOf, passthroughRefused, trimSlash } from '../google/adapter.js';
import { type CallInput, type ProviderAdapter, type ProviderCall } from '../types.js';
import { ENDPOINT_PATHS } from '../../shared/endpoint.js';
import { serviceAccount, TokenCache, type ServiceAccount } from './auth.js';
import { publisherOf } from './publishers.js';

const NAME = 'vertex-ai';
const REGION = /^[a-z0-9-]+$/;

type Credential = { kind: 'service_account'; account: ServiceAccount } | { kind: 'token'; token: string };

const tokens = new TokenCache();

export const vertexAdapter: ProviderAdapter = {
  name: NAME,
  prepare({ target, endpoint, path, body }: CallInput) {
    if (endpoint === 'completions') return fail(invalid(`provider '${NAME}' does not serve /completions (use /chat/completions)`, 'provider'));
    const node = target.node;
    const credential = credentialOf(node.cloud2_service_account_json, node.api_key, target.clientAuthorization);
    if (!credential.ok) return credential;
    const region = node.cloud2_region;
    if (region !== undefined && !REGION.test(region)) return fail(invalid(`cloud2_region: '${region}' is not a Google Cloud region name`, 'cloud2_region'));
    if (region === undefined && (endpoint !== 'proxy' || target.customHost === undefined)) {
      return fail(invalid(`provider '${NAME}' needs cloud2_region (e.g. us-central1)`, 'cloud2_region'));
    }
    const base = trimSlash(target.customHost ?? hostFor(region!));
    if (endpoint === 'proxy') return authorized(credential.value, { url: base + path, headers: {} });
    if (body === null) return fail(passthroughRefused(NAME));

    const project = node.cloud2_project_id ?? (credential.value.kind === 'service_account' ? credential.value.account.projectId : undefined);
    if (project === undefined || project === '') {
      return fail(invalid(`provider '${NAME}' needs cloud2_project_id (or a service account key file with project_id)`, 'cloud2_project_id'));
    }
    const model = modelOf(body);
    if (!model.ok) return model;
    const publisher = publisherOf(model.value);
    const build = endpoint === 'chat' ? publisher.chat : publisher.embeddings;
    if (build === null) {
      return fail(invalid(`model '${model.value}': ${publisher.name} models on ${NAME} do not serve ${ENDPOINT_PATHS[endpoint]}`, 'model', 'unsupported_model'));
    }
    const call = build(body, model.value, NAME);
    if (!call.ok) return call;
    const url =
      `${base}/projects/${encodeURIComponent(project)}/locations/${region}` +
      `/publishers/${publisher.name}/models/${model.value}:${call.value.method}`;
    return authorized(credential.value, { url, headers: {}, body: call.value.body, translator: call.value.translator });
  },
};

function hostFor(region: string): string {
  return region === 'global' ? 'https://aiplatform.googleapis.com/v1' : `https://${region}-aiplatform.googleapis.com/v1`;
}

/** The service account first (it is the configured identity), then a token from the config, then the client's. */
function credentialOf(
  json: Record<string, unknown> | undefined,
  apiKey: string | undefined,
  clientAuthorization: string | undefined,
): Result<Credential, GatewayError> {
  if (json !== undefined) {
    const account = serviceAccount(json);
    return account.ok ? ok({ kind: 'service_account', account: account.value }) : account;
  }
  const token = apiKey ?? bearerToken(clientAuthorization);
  if (token !== undefined && token !== '') return ok({ kind: 'token', token });
  return fail(
    invalid(
      `provider '${NAME}' needs cloud2_service_account_json, or an access token as api_key or in an Authorization: Bearer header`,
      'cloud2_service_account_json',
    ),
  );
}

/** Adds the Authorization header: at once for a given or cached token, after the exchange otherwise. */
function authorized(
  credential: Credential,
  call: ProviderCall,
): Result<ProviderCall, GatewayError> | Promise<Result<ProviderCall, GatewayError>> {
  const withToken = (token: Result<string, GatewayError>): Result<ProviderCall, GatewayError> => {
    if (!token.ok) return token;
    call.headers.authorization = `Bearer ${token.value}`;
    return ok(call);
  };
  if (credential.kind === 'token') return withToken(ok(credential.token));
  const token = tokens.get(credential.account);
  return token instanceof Promise ? token.then(withToken) : withToken(token);
}

function fail(error: GatewayError): Result<never, GatewayError> {
  return { ok: false, error };
}
