/**
 * /v1/integrations/:id/integration-models: which models an integration's
 * providers may call, and where. PUT upserts the listed models (others stay)
 * and may set `allow_all_models`; on the request path a model listed with
 * `enabled: false`, or one not listed while allow_all_models is false, gets
 * 412, and a model's `configurations.custom_host` is its base URL. DELETE
 * `?slugs=a,b` removes models. The answer of each is the list.
 */
import { isHttpUrl } from '../config/schema.js';
import { invalid, type Result } from '../shared/errors.js';
import type { Integration, IntegrationModel } from '../store/integrations.js';
import { visibleIntegration, writableIntegration } from './integration-access.js';
import { bodyChecker, reply } from './input.js';
import { route, type AdminDeps, type Reply, type Route } from './router.js';

interface PutBody {
  models: { slug: string; enabled: boolean; configurations?: { custom_host?: string }; pricing_config?: Record<string, unknown> | null }[];
  allow_all_models?: boolean;
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
  },
});

/** The rules the schema cannot state: non-empty configurations, a real URL, each slug once. */
function checkModels(models: PutBody['models']): Result<IntegrationModel[]> {
  const seen = new Set<string>();
  const out: IntegrationModel[] = [];
  for (const [i, m] of models.entries()) {
    const at = `models[${i}]`;
    if (seen.has(m.slug)) return { ok: false, error: invalid(`${at}.slug: '${m.slug}' is listed twice`, `${at}.slug`) };
    seen.add(m.slug);
    const c = m.configurations;
    if (c !== undefined && Object.keys(c).length === 0) return { ok: false, error: invalid(`${at}.configurations: must be a non-empty object`, `${at}.configurations`) };
    if (c?.custom_host !== undefined && !isHttpUrl(c.custom_host)) {
      return { ok: false, error: invalid(`${at}.configurations.custom_host: must be an http(s) URL`, `${at}.configurations.custom_host`) };
    }
    out.push({ slug: m.slug, enabled: m.enabled, configurations: c ?? null, pricingConfig: m.pricing_config ?? null });
  }
  return { ok: true, value: out };
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
    scope: 'integrations.read',
    async handler({ caller, params }, deps) {
      const found = await visibleIntegration(deps, caller, params.id!);
      return found.ok ? listing(deps, found.value) : found;
    },
  }),
  route({
    method: 'PUT',
    path: PATH,
    scope: 'integrations.update',
    body: checkPut,
    async handler({ caller, params, body }, deps) {
      const models = checkModels(body.models);
      if (!models.ok) return models;
      const found = await writableIntegration(deps, caller, params.id!);
      if (!found.ok) return found;
      await deps.store.integrations.putModels(found.value.id, models.value, body.allow_all_models);
      return listing(deps, found.value, body.allow_all_models);
    },
  }),
  route({
    method: 'DELETE',
    path: PATH,
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
