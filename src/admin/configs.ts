/**
 * /v1/configs: saved configs, named and versioned, that `x-gateway-config`
 * takes by id or slug. Bodies are validated exactly as inline configs are;
 * a change of body is a new version. Slugs are unique per workspace: a
 * slug names a config in the workspace `?workspace_id=` names, else the
 * caller's own; an id names it anywhere the caller sees. A workspace key
 * sees only its own workspace's configs (another's is 404); organisation
 * keys act in the default workspace unless they name one.
 */
import { parseConfig } from '../config/schema.js';
import { maskConfig, openSealed, restoreMasked, sealConfig, unplacedSecret } from '../config/secrets.js';
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import type { ConfigBody, ConfigStatus, ConfigVersion, SavedConfig, StoredConfig } from '../store/configs.js';
import { isUniqueViolation } from '../store/db.js';
import { newId, newSlug } from '../store/ids.js';
import { byIdOrSlug, listedWorkspace, notFound, writableWorkspace, type Caller } from './access.js';
import { bodyChecker, idShapedSlug, LISTED_WORKSPACE, listReply, queryOf, reply, S, SLUG_WORKSPACE } from './input.js';
import { route, type AdminDeps, type Route } from './router.js';

interface CreateBody {
  name: string;
  config: ConfigBody;
  workspace_id?: string;
  slug?: string;
  description?: string | null;
  is_default?: boolean;
}

interface UpdateBody {
  name?: string;
  config?: ConfigBody;
  description?: string | null;
  status?: ConfigStatus;
  is_default?: boolean;
}

const fields = {
  name: S.name,
  config: { type: 'object' },
  description: S.text,
  is_default: { type: 'boolean' },
};

const checkCreate = bodyChecker<CreateBody>({
  type: 'object',
  additionalProperties: false,
  required: ['name', 'config'],
  properties: { ...fields, workspace_id: S.ref, slug: S.slug },
});

const checkUpdate = bodyChecker<UpdateBody>({
  type: 'object',
  additionalProperties: false,
  properties: { ...fields, status: { enum: ['active', 'archived'] } },
});

const checkValidate = bodyChecker<{ config: ConfigBody }>({
  type: 'object',
  additionalProperties: false,
  required: ['config'],
  properties: { config: fields.config },
});

/** Generated slugs get a random tail; a collision is retried this often before it is reported. */
const SLUG_TRIES = 3;

function configSummary(c: SavedConfig): Record<string, unknown> {
  return {
    object: 'config',
    id: c.id,
    slug: c.slug,
    name: c.name,
    description: c.description,
    workspace_id: c.workspaceId,
    is_default: c.isDefault,
    status: c.status,
    version_id: c.versionId,
    version: c.version,
    created_at: c.createdAt,
    last_updated_at: c.lastUpdatedAt,
  };
}

function configView(c: StoredConfig): Record<string, unknown> {
  return { ...configSummary(c), config: maskConfig(c.config) };
}

function versionView(v: ConfigVersion): Record<string, unknown> {
  return { object: 'config.version', id: v.id, version_id: v.id, config_id: v.configId, version: v.version, config: maskConfig(v.config), created_at: v.createdAt };
}

/** A body sent back as GET showed it: masks keep the secrets stored at their paths, unless the target now points elsewhere (config/secrets.ts). */
function keepMaskedSecrets(body: ConfigBody, current: StoredConfig, deps: AdminDeps): Result<ConfigBody> {
  return restoreMasked(body, current.config, (v, path) => openSealed(v, deps.secrets, current.id, path)) as Result<ConfigBody>;
}

/**
 * The config body validated as an inline config is; errors name the body
 * path (`config.targets[1].retry.attempts`). A target holding a secret must
 * say where it goes: its provider comes from the config, never the request.
 */
function checkConfig(body: ConfigBody): GatewayError | null {
  const parsed = parseConfig(body);
  if (!parsed.ok) {
    const e = parsed.error;
    return invalid(e.message, e.param === null ? 'config' : `config.${e.param}`, e.code);
  }
  const at = unplacedSecret(body);
  return at === null
    ? null
    : invalid(`${at}.provider: is required beside a stored secret (or virtual_key): taken from a request's headers, the secret could be sent anywhere`, `${at}.provider`);
}

/** A config the caller may see, by id, or by slug in the workspace the query names (else the caller's own); 404 otherwise. */
function visible(deps: AdminDeps, caller: Caller, ref: string, query: URLSearchParams): Promise<Result<StoredConfig>> {
  const configs = deps.store.configs;
  return byIdOrSlug(deps.store, caller, ref, query.get('workspace_id'), 'config', { byId: (id) => configs.get(id), bySlug: (ws, slug) => configs.find(slug, ws) });
}

/** The partial unique index lets one config per workspace be the default; two writers racing for it meet here. */
const defaultRace = (): GatewayError =>
  new GatewayError(409, "another request changed this workspace's default config at the same time; retry", { code: 'conflict', param: 'is_default' });

export const configRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/configs',
    description: 'Saves a config (routing, retries, cache, guardrails); its id or slug goes in x-gateway-config.',
    scope: 'configs.create',
    body: checkCreate,
    async handler({ caller, body: b }, deps) {
      const bad = idShapedSlug(b.slug) ?? checkConfig(b.config);
      if (bad !== null) return { ok: false, error: bad };
      const ws = await writableWorkspace(deps.store, caller, b.workspace_id);
      if (!ws.ok) return ws;
      // Known before the insert: the config's secrets are sealed bound to it.
      const id = newId();
      const config = sealConfig(b.config, deps.secrets, id) as ConfigBody;
      for (let attempt = 1; ; attempt++) {
        const slug = b.slug ?? newSlug(`pc ${b.name}`);
        try {
          const c = await deps.store.configs.create({
            id,
            workspaceId: ws.value.id,
            slug,
            name: b.name,
            description: b.description ?? null,
            isDefault: b.is_default === true,
            config,
          });
          return reply(201, { object: 'config', id: c.id, slug: c.slug, version_id: c.versionId });
        } catch (e) {
          if (!isUniqueViolation(e)) throw e;
          if (!(await deps.store.configs.slugTaken(ws.value.id, slug))) return { ok: false, error: defaultRace() };
          if (b.slug === undefined && attempt < SLUG_TRIES) continue;
          return { ok: false, error: new GatewayError(409, `config slug '${slug}' is taken in this workspace`, { code: 'conflict', param: 'slug' }) };
        }
      }
    },
  }),
  // The console's editor checks a config as it is typed, with the same rules a save applies; nothing is stored.
  route({
    method: 'POST',
    path: '/configs/validate',
    description: 'Checks a config with the rules a save applies (the console editor validates as you type); stores nothing.',
    scope: 'configs.read',
    body: checkValidate,
    async handler({ body: b }) {
      const bad = checkConfig(b.config);
      return bad === null ? reply(200, { object: 'config.validation', valid: true }) : { ok: false, error: bad };
    },
  }),
  route({
    method: 'GET',
    path: '/configs',
    description: 'Lists saved configs.',
    query: queryOf(LISTED_WORKSPACE),
    scope: 'configs.list',
    paged: true,
    async handler({ caller, query, page }, deps) {
      const workspaceId = await listedWorkspace(deps.store, caller, query);
      if (!workspaceId.ok) return workspaceId;
      return listReply(await deps.store.configs.list(workspaceId.value, page), configSummary);
    },
  }),
  route({
    method: 'GET',
    path: '/configs/:id',
    description: 'One saved config (by id or slug), its secrets masked.',
    query: queryOf(SLUG_WORKSPACE),
    scope: 'configs.read',
    async handler({ caller, params, query }, deps) {
      const c = await visible(deps, caller, params.id!, query);
      return c.ok ? reply(200, configView(c.value)) : c;
    },
  }),
  route({
    method: 'PUT',
    path: '/configs/:id',
    description: 'Changes a saved config: a new version.',
    query: queryOf(SLUG_WORKSPACE),
    scope: 'configs.update',
    body: checkUpdate,
    async handler({ caller, params, query, body: b }, deps) {
      const c = await visible(deps, caller, params.id!, query);
      if (!c.ok) return c;
      let config: ConfigBody | undefined;
      if (b.config !== undefined) {
        const restored = keepMaskedSecrets(b.config, c.value, deps);
        if (!restored.ok) return restored;
        const bad = checkConfig(restored.value);
        if (bad !== null) return { ok: false, error: bad };
        config = sealConfig(restored.value, deps.secrets, c.value.id) as ConfigBody;
      }
      if (b.is_default === true && (b.status ?? c.value.status) === 'archived') {
        return { ok: false, error: invalid('is_default: an archived config cannot be the default', 'is_default') };
      }
      try {
        const updated = await deps.store.configs.update(c.value.id, {
          name: b.name,
          description: b.description,
          status: b.status,
          isDefault: b.is_default,
          config,
        });
        return updated === null ? { ok: false, error: notFound('config', params.id!) } : reply(200, configView(updated));
      } catch (e) {
        if (isUniqueViolation(e)) return { ok: false, error: defaultRace() };
        throw e;
      }
    },
  }),
  route({
    method: 'DELETE',
    path: '/configs/:id',
    description: 'Deletes a saved config.',
    query: queryOf(SLUG_WORKSPACE),
    scope: 'configs.delete',
    async handler({ caller, params, query }, deps) {
      const c = await visible(deps, caller, params.id!, query);
      if (!c.ok) return c;
      if (!(await deps.store.configs.delete(c.value.id))) return { ok: false, error: notFound('config', params.id!) };
      return reply(200, { object: 'config', id: c.value.id, deleted: true });
    },
  }),
  route({
    method: 'GET',
    path: '/configs/:id/versions',
    description: "Lists a saved config's versions, newest first.",
    query: queryOf(SLUG_WORKSPACE),
    scope: 'configs.read',
    paged: true,
    async handler({ caller, params, query, page }, deps) {
      const c = await visible(deps, caller, params.id!, query);
      if (!c.ok) return c;
      return listReply(await deps.store.configs.versions(c.value.id, page), versionView);
    },
  }),
  route({
    method: 'GET',
    path: '/configs/:id/versions/:versionId',
    description: 'One version of a saved config.',
    query: queryOf(SLUG_WORKSPACE),
    scope: 'configs.read',
    async handler({ caller, params, query }, deps) {
      const c = await visible(deps, caller, params.id!, query);
      if (!c.ok) return c;
      const v = await deps.store.configs.version(c.value.id, params.versionId!);
      return v === null ? { ok: false, error: notFound('config version', params.versionId!) } : reply(200, versionView(v));
    },
  }),
];
