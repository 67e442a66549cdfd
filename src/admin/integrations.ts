/**
 * /v1/integrations (Portkey's shapes): provider credentials for one
 * workspace (`workspace_id`) or, from organisation keys that name none, for
 * the organisation. A workspace integration creates its default provider
 * (a virtual key with `integration_id`, addressable as `@slug`) unless
 * `create_default_provider` is false; an organisation integration reaches a
 * workspace once enabled there (integration-workspaces.ts), where providers
 * are created with POST /v1/virtual-keys {integration_id}.
 *
 * `pricing_adjustments` takes `{multiplier}`: one number > 0 by which cost
 * is multiplied (1 = list price), stored for cost accounting.
 * `secret_mappings` are checked and stored; secret references themselves
 * are not part of this gateway yet, so a mapped field must also be stored
 * for requests to use it (else they get a 400 saying so). A mapped `key`
 * makes `key` optional here, as in Portkey.
 */
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import { newId, newSlug } from '../store/ids.js';
import type { Integration, IntegrationPatch, PricingAdjustments, SecretMapping } from '../store/integrations.js';
import type { NewVirtualKey } from '../store/virtual-keys.js';
import { listedWorkspace, notFound, writableWorkspace } from './access.js';
import { checkCredentialSet, checkRedirect, KEY_SCHEMA, isProviderField, knownProvider, mergeFields, providerFields, seal, unseal, type StoredFields } from './credentials.js';
import { visibleIntegration, writableIntegration, writeDenied } from './integration-access.js';
import { integrationModelRoutes } from './integration-models.js';
import { integrationWorkspaceRoutes } from './integration-workspaces.js';
import { bodyChecker, LISTED_WORKSPACE, listReply, queryOf, reply, S } from './input.js';
import { route, type AdminDeps, type AdminRequest, type Reply, type Route } from './router.js';

interface CreateBody {
  name: string;
  ai_provider_id?: string;
  provider?: string;
  key?: string;
  slug?: string;
  description?: string | null;
  workspace_id?: string;
  configurations?: Record<string, unknown>;
  create_default_provider?: boolean;
  default_provider_slug?: string;
  pricing_adjustments?: PricingAdjustments | null;
  secret_mappings?: SecretMapping[] | null;
}

interface UpdateBody {
  name?: string;
  description?: string | null;
  key?: string | null;
  configurations?: Record<string, unknown>;
  pricing_adjustments?: PricingAdjustments | null;
  secret_mappings?: SecretMapping[] | null;
}

const shared = {
  name: S.name,
  description: S.text,
  // Provider fields, checked by the config schema afterwards.
  configurations: { type: 'object' },
  pricing_adjustments: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['multiplier'],
    properties: { multiplier: { type: 'number', exclusiveMinimum: 0 } },
  },
  secret_mappings: {
    type: ['array', 'null'],
    maxItems: 64,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['target_field', 'secret_reference_id'],
      properties: {
        target_field: { type: 'string', minLength: 1, maxLength: 255 },
        secret_reference_id: S.ref,
        secret_key: { type: 'string', minLength: 1, maxLength: 1024 },
        value_format: { enum: ['string', 'json'] },
      },
    },
  },
};

const checkCreate = bodyChecker<CreateBody>({
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    ...shared,
    ai_provider_id: S.ref,
    provider: S.ref,
    key: KEY_SCHEMA,
    slug: S.slug,
    workspace_id: S.ref,
    create_default_provider: { type: 'boolean' },
    default_provider_slug: S.slug,
  },
});

const checkUpdate = bodyChecker<UpdateBody>({
  type: 'object',
  additionalProperties: false,
  properties: { ...shared, key: { ...KEY_SCHEMA, type: ['string', 'null'] } },
});

export function integrationView(i: Integration): Record<string, unknown> {
  const { masked_key: maskedKey = null, ...configurations } = i.configurations ?? {};
  return {
    object: 'integration',
    id: i.id,
    slug: i.slug,
    name: i.name,
    description: i.description,
    ai_provider_id: i.provider,
    workspace_id: i.workspaceId,
    type: i.workspaceId === null ? 'organisation' : 'workspace',
    status: i.status,
    masked_key: maskedKey,
    configurations,
    allow_all_models: i.allowAllModels,
    pricing_adjustments: i.pricingAdjustments,
    secret_mappings: i.secretMappings ?? [],
    created_at: i.createdAt,
    last_updated_at: i.lastUpdatedAt,
    last_reset_at: i.lastResetAt,
  };
}

/** Targets are `key` or `configurations.<provider field>`, each at most once; the fields they map (api_key for `key`). */
function mappedFields(mappings: readonly SecretMapping[]): Result<Set<string>> {
  const out = new Set<string>();
  for (const [i, m] of mappings.entries()) {
    const param = `secret_mappings[${i}].target_field`;
    const field = m.target_field === 'key' ? 'api_key' : m.target_field.startsWith('configurations.') ? m.target_field.slice('configurations.'.length) : '';
    if (field !== 'api_key' && !isProviderField(field)) {
      return { ok: false, error: invalid(`${param}: must be key or configurations.<field> naming a provider field, not '${m.target_field}'`, param) };
    }
    if (out.has(field)) return { ok: false, error: invalid(`${param}: '${m.target_field}' is mapped twice`, param) };
    out.add(field);
  }
  return { ok: true, value: out };
}

/** The credential set after `key` and `configurations`, checked against the provider and the secret mappings. */
function credentialSet(provider: string, f: StoredFields, mappings: readonly SecretMapping[] | null): Result<StoredFields> {
  const mapped = mappedFields(mappings ?? []);
  if (!mapped.ok) return mapped;
  const problem = checkCredentialSet(provider, f, mapped.value, 'key', (field) => `configurations.${field}`);
  return problem === null ? { ok: true, value: f } : { ok: false, error: problem };
}

async function create({ caller, body: b }: AdminRequest<CreateBody>, deps: AdminDeps): Promise<Result<Reply>> {
  const providerParam = b.ai_provider_id !== undefined ? 'ai_provider_id' : 'provider';
  const providerName = b.ai_provider_id ?? b.provider;
  if (providerName === undefined) return { ok: false, error: invalid('ai_provider_id: is required', 'ai_provider_id') };
  const provider = knownProvider(providerName, providerParam);
  if (!provider.ok) return provider;

  // Organisation keys that name no workspace make an organisation integration; workspace keys act in their own.
  let workspaceId: string | null = null;
  if (b.workspace_id !== undefined || caller.level === 'workspace') {
    const ws = await writableWorkspace(deps.store, caller, b.workspace_id);
    if (!ws.ok) return ws;
    const refused = await writeDenied(deps, caller, ws.value.id);
    if (refused !== null) return { ok: false, error: refused };
    workspaceId = ws.value.id;
  }
  const createDefault = b.create_default_provider ?? workspaceId !== null;
  if (createDefault && workspaceId === null) {
    return {
      ok: false,
      error: invalid(
        'create_default_provider: only for workspace integrations; enable an organisation integration for workspaces with PUT /v1/integrations/:id/workspaces',
        'create_default_provider',
      ),
    };
  }
  if (b.default_provider_slug !== undefined && !createDefault) {
    return { ok: false, error: invalid('default_provider_slug: needs create_default_provider', 'default_provider_slug') };
  }

  const fields = providerFields(b.configurations ?? {}, ['configurations']);
  if (!fields.ok) return fields;
  const f = credentialSet(provider.value, b.key === undefined ? fields.value.set : { ...fields.value.set, api_key: b.key }, b.secret_mappings ?? null);
  if (!f.ok) return f;

  const id = newId();
  const slug = b.slug ?? newSlug(b.name);
  const sealed = seal(deps.secrets, id, f.value);
  const providerSlug = b.default_provider_slug ?? slug;
  const defaultProvider: NewVirtualKey | null =
    createDefault && workspaceId !== null
      ? { id: newId(), slug: providerSlug, workspaceId, name: b.name, provider: provider.value, integrationId: id, credentials: null, settings: null, note: null }
      : null;
  const created = await deps.store.integrations.create(
    {
      id,
      slug,
      name: b.name,
      description: b.description ?? null,
      provider: provider.value,
      workspaceId,
      credentials: sealed.credentials,
      configurations: sealed.view,
      pricingAdjustments: b.pricing_adjustments ?? null,
      secretMappings: b.secret_mappings ?? null,
    },
    defaultProvider,
  );
  if (!created.ok) {
    return {
      ok: false,
      error:
        created.clash === 'integration'
          ? new GatewayError(409, `integration slug '${slug}' is taken`, { code: 'conflict', param: 'slug' })
          : new GatewayError(409, `default_provider_slug: a provider '${providerSlug}' exists in this workspace already`, {
              code: 'conflict',
              param: 'default_provider_slug',
            }),
    };
  }
  return reply(201, { id, slug, object: 'integration', ...(defaultProvider === null ? {} : { default_provider_slug: providerSlug }) });
}

async function update({ caller, params, body: b }: AdminRequest<UpdateBody>, deps: AdminDeps): Promise<Result<Reply>> {
  const found = await writableIntegration(deps, caller, params.id!);
  if (!found.ok) return found;
  const i = found.value;
  const patch: IntegrationPatch = {};
  if (b.name !== undefined) patch.name = b.name;
  if (b.description !== undefined) patch.description = b.description;
  if (b.pricing_adjustments !== undefined) patch.pricingAdjustments = b.pricing_adjustments;
  if (b.secret_mappings !== undefined) patch.secretMappings = b.secret_mappings;
  if (b.key !== undefined || b.configurations !== undefined || b.secret_mappings !== undefined) {
    const fields = providerFields(b.configurations ?? {}, ['configurations']);
    if (!fields.ok) return fields;
    const current = unseal(deps.secrets, i.credentials, i.id, `integration '${i.slug}'`);
    if (!current.ok) return current;
    const set: StoredFields = typeof b.key === 'string' ? { ...fields.value.set, api_key: b.key } : fields.value.set;
    const cleared = b.key === null ? [...fields.value.cleared, 'api_key'] : fields.value.cleared;
    const redirect = checkRedirect(current.value, set, cleared, (field) => `configurations.${field}`);
    if (redirect !== null) return { ok: false, error: redirect };
    const merged = mergeFields(current.value, set, cleared);
    const f = credentialSet(i.provider, merged, b.secret_mappings === undefined ? i.secretMappings : b.secret_mappings);
    if (!f.ok) return f;
    const sealed = seal(deps.secrets, i.id, f.value);
    patch.credentials = sealed.credentials;
    patch.configurations = sealed.view;
  }
  const updated = await deps.store.integrations.update(i.id, patch);
  return updated === null ? { ok: false, error: notFound('integration', params.id!) } : reply(200, integrationView(updated));
}

const TYPES = ['workspace', 'organisation', 'all'];

export const integrationRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/integrations',
    description: 'Stores provider credentials as an integration (organisation or workspace).',
    scope: 'integrations.create',
    body: checkCreate,
    handler: create,
  }),
  route({
    method: 'GET',
    path: '/integrations',
    description: 'Lists integrations (never their secrets).',
    query: queryOf({ type: { enum: TYPES }, ...LISTED_WORKSPACE }),
    scope: 'integrations.list',
    paged: true,
    async handler({ caller, query, page }, deps) {
      const type = query.get('type') ?? 'all';
      if (!TYPES.includes(type)) return { ok: false, error: invalid(`type: '${type}' is not one of ${TYPES.join(', ')}`, 'type') };
      // workspace_id: the integrations that workspace can use; workspace keys see only theirs.
      const accessibleBy = await listedWorkspace(deps.store, caller, query);
      if (!accessibleBy.ok) return accessibleBy;
      const filter = { accessibleBy: accessibleBy.value, type: type === 'all' ? undefined : (type as 'workspace' | 'organisation') };
      return listReply(await deps.store.integrations.list(filter, page), integrationView);
    },
  }),
  route({
    method: 'GET',
    path: '/integrations/:id',
    description: 'One integration (by id or slug), its secrets masked.',
    scope: 'integrations.read',
    async handler({ caller, params }, deps) {
      const found = await visibleIntegration(deps, caller, params.id!);
      return found.ok ? reply(200, integrationView(found.value)) : found;
    },
  }),
  route({
    method: 'PUT',
    path: '/integrations/:id',
    description: 'Changes an integration; changing its host needs the secret again.',
    scope: 'integrations.update',
    body: checkUpdate,
    handler: update,
  }),
  route({
    method: 'DELETE',
    path: '/integrations/:id',
    description: 'Deletes an integration.',
    scope: 'integrations.delete',
    async handler({ caller, params }, deps) {
      const found = await writableIntegration(deps, caller, params.id!);
      if (!found.ok) return found;
      await deps.store.integrations.delete(found.value.id);
      return reply(200, { id: found.value.id, object: 'integration', deleted: true });
    },
  }),
  ...integrationModelRoutes,
  ...integrationWorkspaceRoutes,
];
