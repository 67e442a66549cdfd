/**
 * /v1/integrations/:id/integration-models: which models an integration's
 * providers may call, and where. PUT upserts the listed models (others stay)
 * and may set `allow_all_models`; on the request path a model listed with
 * `enabled: false`, or one not listed while allow_all_models is false, gets
 * 412, a model's `configurations.custom_host` is its base URL, and its
 * `pricing_config` its price (catalog/price.ts: cents per token). DELETE
 * `?slugs=a,b` removes models. The answer of each is the list.
 *
 * A model's custom_host decides where the integration's secrets go for that
 * model: setting, changing or removing one needs the integration's stored
 * secrets in the same body (`key`, and `configurations` holding its other
 * secret fields), checked against the stored ones; otherwise a 400 naming
 * the model's field.
 */
import { customPricing } from '../catalog/price.js';
import { SECRET_FIELDS } from '../config/secrets.js';
import { invalid, type Result } from '../shared/errors.js';
import { upstreamUrlProblem } from '../shared/upstream-url.js';
import type { Integration, IntegrationModel } from '../store/integrations.js';
import { KEY_SCHEMA, sameSecret, secretRequired, storedSecrets, unseal } from './credentials.js';
import { visibleIntegration, writableIntegration } from './integration-access.js';
import { bodyChecker, queryOf, reply } from './input.js';
import { route, type AdminDeps, type Reply, type Route } from './router.js';

interface PutBody {
  models: { slug: string; enabled: boolean; configurations?: { custom_host?: string }; pricing_config?: Record<string, unknown> | null }[];
  allow_all_models?: boolean;
  /** The integration's stored secrets, given again to point them at a model's custom_host. */
  key?: string;
  configurations?: Record<string, unknown>;
}

const checkPut = bodyChecker<PutBody>({
  type: 'object',
  additionalProperties: false,
  required: ['models'],
  properties: {
    models: {
      type: 'array',
      maxItems: 1000,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['slug', 'enabled'],
        properties: {
          slug: { type: 'string', minLength: 1, maxLength: 255 },
          enabled: { type: 'boolean' },
          configurations: { type: 'object', additionalProperties: false, properties: { custom_host: { type: 'string' } } },
          pricing_config: { type: ['object', 'null'] },
        },
      },
    },
    allow_all_models: { type: 'boolean' },
    key: KEY_SCHEMA,
    configurations: { type: 'object' },
  },
});

/** The rules the schema cannot state: non-empty configurations, a real URL, a price that reads as one, each slug once. */
function checkModels(models: PutBody['models']): Result<IntegrationModel[]> {
  const seen = new Set<string>();
  const out: IntegrationModel[] = [];
  for (const [i, m] of models.entries()) {
    const at = `models[${i}]`;
    if (seen.has(m.slug)) return { ok: false, error: invalid(`${at}.slug: '${m.slug}' is listed twice`, `${at}.slug`) };
    seen.add(m.slug);
    const c = m.configurations;
    if (c !== undefined && Object.keys(c).length === 0) return { ok: false, error: invalid(`${at}.configurations: must be a non-empty object`, `${at}.configurations`) };
    const badHost = c?.custom_host === undefined ? null : upstreamUrlProblem(c.custom_host);
    if (badHost !== null) return { ok: false, error: invalid(`${at}.configurations.custom_host: ${badHost}`, `${at}.configurations.custom_host`) };
    const price = m.pricing_config == null ? null : customPricing(m.pricing_config, `${at}.pricing_config`);
    if (typeof price === 'string') return { ok: false, error: invalid(price, price.slice(0, price.indexOf(':'))) };
    out.push({ slug: m.slug, enabled: m.enabled, configurations: c ?? null, pricingConfig: m.pricing_config ?? null });
  }
  return { ok: true, value: out };
}

/**
 * A model whose custom_host the body sets, changes or removes sends the
 * integration's secrets somewhere new: the body must give each stored secret
 * (the same value). Secrets given are checked whether or not a host moves.
 */
async function checkSecretsGiven(deps: AdminDeps, i: Integration, models: readonly IntegrationModel[], body: PutBody): Promise<Result<void>> {
  const stray = Object.keys(body.configurations ?? {}).find((k) => !SECRET_FIELDS.has(k));
  if (stray !== undefined) {
    return { ok: false, error: invalid(`configurations.${stray}: only the integration's stored secrets are given here`, `configurations.${stray}`) };
  }
  const before = new Map((await deps.store.integrations.models(i.id)).map((m) => [m.slug, m.configurations?.custom_host]));
  const moved = models.findIndex((m) => m.configurations?.custom_host !== before.get(m.slug));
  if (moved === -1 && body.key === undefined && body.configurations === undefined) return { ok: true, value: undefined };
  const current = unseal(deps.secrets, i.credentials, i.id, `integration '${i.slug}'`);
  if (!current.ok) return current;
  const stored = current.value as Record<string, unknown>;
  const given = (k: string): unknown => (k === 'api_key' ? body.key : body.configurations?.[k]);
  const param = (k: string): string => (k === 'api_key' ? 'key' : `configurations.${k}`);
  const wrong = [...Object.keys(body.configurations ?? {}), ...(body.key === undefined ? [] : ['api_key'])].find((k) => !sameSecret(given(k), stored[k]));
  if (wrong !== undefined) return { ok: false, error: invalid(`${param(wrong)}: is not the secret the integration stores`, param(wrong), 'secret_mismatch') };
  const missing = storedSecrets(current.value).filter((k) => given(k) === undefined);
  if (moved !== -1 && missing.length > 0) return { ok: false, error: secretRequired(`models[${moved}].configurations.custom_host`, missing.map(param)) };
  return { ok: true, value: undefined };
}

async function listing(deps: AdminDeps, i: Integration, allowAllModels = i.allowAllModels): Promise<Result<Reply>> {
  const models = await deps.store.integrations.models(i.id);
  return reply(200, {
    object: 'list',
    total: models.length,
    allow_all_models: allowAllModels,
    data: models.map((m) => ({ object: 'integration-model', slug: m.slug, enabled: m.enabled, configurations: m.configurations, pricing_config: m.pricingConfig })),
  });
}

const PATH = '/integrations/:id/integration-models';

export const integrationModelRoutes: Route[] = [
  route({
    method: 'GET',
    path: PATH,
    description: 'Lists the models an integration offers, with their custom pricing and settings.',
    scope: 'integrations.read',
    async handler({ caller, params }, deps) {
      const found = await visibleIntegration(deps, caller, params.id!);
      return found.ok ? listing(deps, found.value) : found;
    },
  }),
  route({
    method: 'PUT',
    path: PATH,
    description: 'Adds or changes models of an integration.',
    scope: 'integrations.update',
    body: checkPut,
    async handler({ caller, params, body }, deps) {
      const models = checkModels(body.models);
      if (!models.ok) return models;
      const found = await writableIntegration(deps, caller, params.id!);
      if (!found.ok) return found;
      const secrets = await checkSecretsGiven(deps, found.value, models.value, body);
      if (!secrets.ok) return secrets;
      await deps.store.integrations.putModels(found.value.id, models.value, body.allow_all_models);
      return listing(deps, found.value, body.allow_all_models);
    },
  }),
  route({
    method: 'DELETE',
    path: PATH,
    description: 'Removes models (by slugs) from an integration.',
    query: queryOf({ slugs: 'comma-separated model slugs to remove' }),
    scope: 'integrations.update',
    async handler({ caller, params, query }, deps) {
      const slugs = (query.get('slugs') ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
      if (slugs.length === 0) return { ok: false, error: invalid('slugs: name the models to remove, comma-separated', 'slugs') };
      const found = await writableIntegration(deps, caller, params.id!);
      if (!found.ok) return found;
      await deps.store.integrations.deleteModels(found.value.id, slugs);
      return listing(deps, found.value);
    },
  }),
];
