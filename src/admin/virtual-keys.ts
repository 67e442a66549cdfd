/**
 * /v1/virtual-keys: a workspace's stored provider credentials. Created with
 * `provider` + `key` (+ the config's provider fields), or with
 * `integration_id` instead: a provider of that integration (Portkey's
 * providers), addressable as `@slug` too. The credentials are sealed into
 * one encrypted blob and never shown again: GET shows the non-secret fields
 * and masked secrets. Slugs are unique per workspace.
 */
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import { isUniqueViolation } from '../store/db.js';
import { newId, newSlug } from '../store/ids.js';
import type { VirtualKey, VirtualKeyPatch } from '../store/virtual-keys.js';
import { byIdOrSlug, listedWorkspace, notFound, writableWorkspace, type Caller } from './access.js';
import { checkCredentialSet, checkRedirect, KEY_SCHEMA, knownProvider, mergeFields, providerFields, seal, unseal, type StoredFields } from './credentials.js';
import { usableIntegration } from './integration-access.js';
import { bodyChecker, LISTED_WORKSPACE, listReply, queryOf, reply, S, SLUG_WORKSPACE } from './input.js';
import { route, type AdminDeps, type AdminRequest, type Reply, type Route } from './router.js';

interface CreateBody {
  name: string;
  provider?: string;
  key?: string;
  integration_id?: string;
  workspace_id?: string;
  slug?: string;
  note?: string | null;
  /** The rest: provider fields, checked by the config schema. */
  [field: string]: unknown;
}

interface UpdateBody {
  name?: string;
  note?: string | null;
  key?: string | null;
  [field: string]: unknown;
}

// Provider fields are open here and checked by the config schema afterwards.
const checkCreate = bodyChecker<CreateBody>({
  type: 'object',
  required: ['name'],
  properties: { name: S.name, provider: S.ref, key: KEY_SCHEMA, integration_id: S.ref, workspace_id: S.ref, slug: S.slug, note: S.text },
});

const checkUpdate = bodyChecker<UpdateBody>({
  type: 'object',
  properties: { name: S.name, note: S.text, key: { ...KEY_SCHEMA, type: ['string', 'null'] } },
});

const CREATE_FIELDS = new Set(['name', 'provider', 'key', 'integration_id', 'workspace_id', 'slug', 'note']);
const UPDATE_FIELDS = new Set(['name', 'note', 'key']);

function rest(body: Record<string, unknown>, known: ReadonlySet<string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([k]) => !known.has(k)));
}

export function virtualKeyView(k: VirtualKey): Record<string, unknown> {
  return {
    ...k.settings,
    object: 'virtual-key',
    id: k.id,
    slug: k.slug,
    name: k.name,
    workspace_id: k.workspaceId,
    provider: k.provider,
    integration_id: k.integrationId,
    status: k.status,
    note: k.note,
    created_at: k.createdAt,
    last_updated_at: k.lastUpdatedAt,
    last_reset_at: k.lastResetAt,
  };
}

/**
 * A virtual key the caller may see: by id, or by slug in the workspace the
 * query names (else the caller's own; the default one for organisation keys).
 */
function visible(deps: AdminDeps, caller: Caller, ref: string, workspaceRef: string | null): Promise<Result<VirtualKey>> {
  const keys = deps.store.virtualKeys;
  return byIdOrSlug(deps.store, caller, ref, workspaceRef, 'virtual key', { byId: (id) => keys.get(id), bySlug: (ws, slug) => keys.find(ws, slug, true) });
}

function slugTaken(slug: string): GatewayError {
  return new GatewayError(409, `slug '${slug}' is taken in this workspace`, { code: 'conflict', param: 'slug' });
}

async function create({ caller, body: b }: AdminRequest<CreateBody>, deps: AdminDeps): Promise<Result<Reply>> {
  const ws = await writableWorkspace(deps.store, caller, b.workspace_id);
  if (!ws.ok) return ws;
  const id = newId();
  const slug = b.slug ?? newSlug(b.name);
  const common = { id, slug, workspaceId: ws.value.id, name: b.name, note: b.note ?? null };
  let row;
  if (b.integration_id !== undefined) {
    const stray = ['provider', 'key', ...Object.keys(rest(b, CREATE_FIELDS))].find((k) => b[k] !== undefined);
    if (stray !== undefined) return { ok: false, error: invalid(`${stray}: not allowed with integration_id: the integration holds the credentials`, stray) };
    const integration = await usableIntegration(deps, b.integration_id, ws.value.id);
    if (!integration.ok) return integration;
    row = { ...common, provider: integration.value.provider, integrationId: integration.value.id, credentials: null, settings: null };
  } else {
    if (b.provider === undefined) return { ok: false, error: invalid('provider: is required (or integration_id)', 'provider') };
    const provider = knownProvider(b.provider, 'provider');
    if (!provider.ok) return provider;
    const fields = providerFields(rest(b, CREATE_FIELDS), []);
    if (!fields.ok) return fields;
    const f: StoredFields = b.key === undefined ? fields.value.set : { ...fields.value.set, api_key: b.key };
    const problem = checkCredentialSet(provider.value, f, new Set(), 'key', (field) => field);
    if (problem !== null) return { ok: false, error: problem };
    const sealed = seal(deps.secrets, id, f);
    row = { ...common, provider: provider.value, integrationId: null, credentials: sealed.credentials, settings: sealed.view };
  }
  try {
    await deps.store.virtualKeys.create(row);
  } catch (e) {
    if (isUniqueViolation(e)) return { ok: false, error: slugTaken(slug) };
    throw e;
  }
  return reply(201, { id, slug, object: 'virtual-key' });
}

async function update({ caller, params, query, body: b }: AdminRequest<UpdateBody>, deps: AdminDeps): Promise<Result<Reply>> {
  const found = await visible(deps, caller, params.id!, query.get('workspace_id'));
  if (!found.ok) return found;
  const vk = found.value;
  const fieldsRaw = rest(b, UPDATE_FIELDS);
  const patch: VirtualKeyPatch = {};
  if (b.name !== undefined) patch.name = b.name;
  if (b.note !== undefined) patch.note = b.note;
  if (vk.integrationId !== null) {
    const stray = ['key', ...Object.keys(fieldsRaw)].find((k) => b[k] !== undefined);
    if (stray !== undefined) return { ok: false, error: invalid(`${stray}: a provider of an integration takes its credentials from the integration`, stray) };
  } else if (b.key !== undefined || Object.keys(fieldsRaw).length > 0) {
    const fields = providerFields(fieldsRaw, []);
    if (!fields.ok) return fields;
    const current = unseal(deps.secrets, vk.credentials, vk.id, `virtual key '${vk.slug}'`);
    if (!current.ok) return current;
    const set: StoredFields = b.key === undefined || b.key === null ? fields.value.set : { ...fields.value.set, api_key: b.key };
    const cleared = b.key === null ? [...fields.value.cleared, 'api_key'] : fields.value.cleared;
    const redirect = checkRedirect(current.value, set, cleared, (field) => field);
    if (redirect !== null) return { ok: false, error: redirect };
    const next = mergeFields(current.value, set, cleared);
    const problem = checkCredentialSet(vk.provider, next, new Set(), 'key', (field) => field);
    if (problem !== null) return { ok: false, error: problem };
    const sealed = seal(deps.secrets, vk.id, next);
    patch.credentials = sealed.credentials;
    patch.settings = sealed.view;
  }
  const updated = await deps.store.virtualKeys.update(vk.id, patch);
  return updated === null ? { ok: false, error: notFound('virtual key', params.id!) } : reply(200, virtualKeyView(updated));
}

export const virtualKeyRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/virtual-keys',
    description: 'Stores a provider key as a virtual key; x-gateway-virtual-key takes its id or slug.',
    scope: 'virtual_keys.create',
    body: checkCreate,
    handler: create,
  }),
  route({
    method: 'GET',
    path: '/virtual-keys',
    description: 'Lists virtual keys (never their secrets).',
    query: queryOf(LISTED_WORKSPACE),
    scope: 'virtual_keys.list',
    paged: true,
    async handler({ caller, query, page }, deps) {
      const workspaceId = await listedWorkspace(deps.store, caller, query);
      if (!workspaceId.ok) return workspaceId;
      return listReply(await deps.store.virtualKeys.list(workspaceId.value, page), virtualKeyView);
    },
  }),
  route({
    method: 'GET',
    path: '/virtual-keys/:id',
    description: 'One virtual key (by id or slug), its secret masked.',
    query: queryOf(SLUG_WORKSPACE),
    scope: 'virtual_keys.read',
    async handler({ caller, params, query }, deps) {
      const found = await visible(deps, caller, params.id!, query.get('workspace_id'));
      return found.ok ? reply(200, virtualKeyView(found.value)) : found;
    },
  }),
  route({
    method: 'PUT',
    path: '/virtual-keys/:id',
    description: 'Changes a virtual key; changing its host needs the secret again.',
    query: queryOf(SLUG_WORKSPACE),
    scope: 'virtual_keys.update',
    body: checkUpdate,
    handler: update,
  }),
  route({
    method: 'DELETE',
    path: '/virtual-keys/:id',
    description: 'Deletes a virtual key.',
    query: queryOf(SLUG_WORKSPACE),
    scope: 'virtual_keys.delete',
    async handler({ caller, params, query }, deps) {
      const found = await visible(deps, caller, params.id!, query.get('workspace_id'));
      if (!found.ok) return found;
      await deps.store.virtualKeys.delete(found.value.id);
      return reply(200, { id: found.value.id, object: 'virtual-key', deleted: true });
    },
  }),
];
