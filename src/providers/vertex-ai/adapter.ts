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
 *   Other publishers are routed by the model id (publishers.ts): Anthropic's (`claude-*`,
 *   `anthropic.claude-*`) take `rawPredict` / `streamRawPredict` with an Anthropic Messages body
 *   (chat/request.ts, the translation is ../anthropic's); they have no embeddings: 400 naming the model.
 *   Open models (`meta.llama-…`, https://cloud.google.com/vertex-ai/generative-ai/docs/maas/call-open-model-apis):
 *   POST …/projects/{project}/locations/{region}/endpoints/openapi/chat/completions with the client's
 *   OpenAI body, its model `{publisher}/{model}`; the answer is OpenAI's, relayed. Chat only.
 *   Errors are google.rpc.Status JSON, as on the Gemini API (Claude's own are Anthropic's).
 *
 * Config: `cloud2_service_account_json` (exchanged for an access token, auth.ts),
 * else a bearer access token as `api_key` or the client's Authorization;
 * `cloud2_project_id` (else the key file's project_id); `cloud2_region`.
 * `custom_host` replaces `https://{region}-aiplatform.googleapis.com/v1`.
 * Legacy completions: 400. The generic proxy passes through to {base}{path} with the token, except
 * OpenAI's fine-tuning paths (/fine_tuning/jobs…), which become Vertex AI tuning jobs (fine-tuning/).
 */
import type { Cancel } from '../../upstream/cancel.js';
import { err, invalid, ok, type GatewayError, type Result } from '../../shared/errors.js';
import { ENDPOINT_PATHS, type ModelEndpoint } from '../../shared/endpoint.js';
import type { Provider, ProviderAdapter, ProviderCall } from '../contract.js';
import { modelId } from '../google/model.js';
import { apiKey, passthroughRefused, trimSlash } from '../shared/target.js';
import { serviceAccount, TokenCache, type ServiceAccount } from './auth.js';
import { tuningCall } from './fine-tuning/call.js';
import { isFineTuningPath, tuningPlan } from './fine-tuning/request.js';
import { ANTHROPIC, GOOGLE, routeOf } from './publishers.js';
import type { VertexAISettings } from './settings.js';

const NAME = 'vertex-ai';
const REGION = /^[a-z0-9-]+$/;

type Credential = { kind: 'service_account'; account: ServiceAccount } | { kind: 'token'; token: string };

const tokens = new TokenCache();

const adapter: ProviderAdapter<VertexAISettings> = {
  name: NAME,
  lacks: { completions: 'Vertex AI has no text-completion API; use /chat/completions' },
  prepare({ target, endpoint, path, body, method, raw, signal }) {
    const settings = target.settings;
    const credential = credentialOf(settings.cloud2_service_account_json, target);
    if (!credential.ok) return credential;
    const region = settings.cloud2_region;
    if (region !== undefined && !REGION.test(region)) return err(invalid(`cloud2_region: '${region}' is not a Google Cloud region name`, 'cloud2_region'));
    if (region === undefined && (endpoint !== 'proxy' || target.customHost === undefined)) {
      return err(invalid(`provider '${NAME}' needs cloud2_region (e.g. us-central1)`, 'cloud2_region'));
    }
    const base = trimSlash(target.customHost ?? hostFor(region!));
    if (endpoint === 'proxy' && isFineTuningPath(path)) return fineTuning(credential.value, settings, base, method ?? 'GET', path, raw, signal);
    if (endpoint === 'proxy') return authorized(credential.value, { kind: 'relayed', url: base + path, headers: {}, addedUsage: false });
    if (body === null) return err(passthroughRefused(NAME, 'its URL names the model'));

    const location = locationOf(credential.value, settings, base);
    if (!location.ok) return location;
    const model = modelId(body);
    if (!model.ok) return model;
    const route = routeOf(model.value);
    if (route.kind === 'open') {
      if (endpoint !== 'chat') return err(unserved(model.value, 'open', endpoint));
      // The answer is OpenAI's own; whether these models take stream_options is not documented, so usage is not asked for.
      const url = `${location.value}/endpoints/openapi/chat/completions`;
      return authorized(credential.value, { kind: 'relayed', url, headers: {}, body: JSON.stringify({ ...body, model: route.model }), addedUsage: false });
    }
    const { publisher } = route;
    const translator = endpoint === 'chat' ? publisher.translators.chat : publisher.translators.embeddings;
    if (translator === undefined) return err(unserved(model.value, publisher.name, endpoint));
    const request = translator.request(body);
    if (!request.ok) return request;
    const chatMethod = endpoint === 'chat' ? publisher.chatMethod(body) : 'predict';
    const url = `${location.value}/publishers/${publisher.name}/models/${route.model}:${chatMethod}`;
    return authorized(credential.value, { kind: 'translated', url, headers: {}, body: request.value.body, answer: request.value.answer });
  },
};

export const vertexAI: Provider<VertexAISettings> = {
  adapter,
  translators: { [GOOGLE.name]: GOOGLE.translators, [ANTHROPIC.name]: ANTHROPIC.translators },
};

function unserved(model: string, kind: string, endpoint: ModelEndpoint): GatewayError {
  return invalid(`model '${model}': ${kind} models on ${NAME} do not serve ${ENDPOINT_PATHS[endpoint]}`, 'model', 'unsupported_model');
}

function hostFor(region: string): string {
  return region === 'global' ? 'https://aiplatform.googleapis.com/v1' : `https://${region}-aiplatform.googleapis.com/v1`;
}

/** The service account first (it is the configured identity), then a token from the config, then the client's. */
function credentialOf(json: Record<string, unknown> | undefined, target: Parameters<typeof apiKey>[0]): Result<Credential> {
  if (json !== undefined) {
    const account = serviceAccount(json);
    return account.ok ? ok({ kind: 'service_account', account: account.value }) : account;
  }
  const token = apiKey(target, NAME);
  if (!token.ok) return token;
  if (token.value !== undefined) return ok({ kind: 'token', token: token.value });
  return err(
    invalid(`provider '${NAME}' needs cloud2_service_account_json, or an access token as api_key or in an Authorization: Bearer header`, 'cloud2_service_account_json'),
  );
}

/** `…/v1/projects/{project}/locations/{region}`: the project from the config, else the service account's. */
function locationOf(credential: Credential, settings: VertexAISettings, base: string): Result<string> {
  const project = settings.cloud2_project_id ?? (credential.kind === 'service_account' ? credential.account.projectId : undefined);
  if (project === undefined || project === '') {
    return err(invalid(`provider '${NAME}' needs cloud2_project_id (or a service account key file with project_id)`, 'cloud2_project_id'));
  }
  // A custom host without a region reaches the generic proxy only: the region is checked before this.
  return ok(`${base}/projects/${encodeURIComponent(project)}/locations/${settings.cloud2_region!}`);
}

/**
 * OpenAI's fine-tuning paths as Vertex AI tuning jobs (fine-tuning/): read
 * before the token is asked for, so a bad request costs no exchange. Some
 * need a call before the routed one (prior.ts), with the token.
 */
function fineTuning(credential: Credential, settings: VertexAISettings, base: string, method: string, path: string, raw: unknown, signal: Cancel | undefined): Result<ProviderCall> | Promise<Result<ProviderCall>> {
  if (settings.cloud2_region === undefined) return err(invalid(`provider '${NAME}' needs cloud2_region for tuning jobs (e.g. us-central1)`, 'cloud2_region'));
  const plan = tuningPlan(method, path, raw);
  if (!plan.ok) return plan;
  const location = locationOf(credential, settings, base);
  if (!location.ok) return location;
  return withToken(credential, (token) => tuningCall(plan.value, location.value, `Bearer ${token}`, signal));
}

/** Adds the Authorization header: at once for a given or cached token, after the exchange otherwise. */
function authorized(credential: Credential, call: ProviderCall): Result<ProviderCall> | Promise<Result<ProviderCall>> {
  return withToken(credential, (token) => {
    call.headers.authorization = `Bearer ${token}`;
    return ok(call);
  });
}

/** `then` with the access token: synchronous for a given or cached one. */
function withToken<T>(credential: Credential, then: (token: string) => Result<T> | Promise<Result<T>>): Result<T> | Promise<Result<T>> {
  const go = (token: Result<string, GatewayError>): Result<T> | Promise<Result<T>> => (token.ok ? then(token.value) : token);
  if (credential.kind === 'token') return go(ok(credential.token));
  const token = tokens.get(credential.account);
  return token instanceof Promise ? token.then(go) : go(token);
}
