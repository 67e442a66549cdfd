/**
 * /v1/workspaces: create, list (`status=active,archived`; archived only for
 * owners and admins), read, update (archive and restore through `status`;
 * overrides of organisation settings through `settings`), delete (only an
 * empty workspace; never the default one).
 */
import { GatewayError, ok, type Result } from '../shared/errors.js';
import { isForeignKeyViolation, isUniqueViolation } from '../store/db.js';
import { newSlug } from '../store/ids.js';
import type { WorkspaceOverrides } from '../store/settings.js';
import type { Workspace, WorkspaceStatus } from '../store/workspaces.js';
import { isOrgAdmin, notFound, visibleTo, type Caller } from './access.js';
import { resolveDefaultGuardrails } from './default-guardrails.js';
import { bodyChecker, listReply, queryOf, reply, S } from './input.js';
import { mergeOverrides, OVERRIDES_SCHEMA, type OverridesPatch } from './overrides.js';
import { route, type AdminDeps, type Route } from './router.js';

interface CreateBody {
  name: string;
  description?: string | null;
  slug?: string;
  metadata?: Record<string, string> | null;
  defaults?: Record<string, unknown> | null;
}

interface UpdateBody {
  name?: string;
  description?: string | null;
  status?: WorkspaceStatus;
  metadata?: Record<string, string> | null;
  defaults?: Record<string, unknown> | null;
  settings?: OverridesPatch | null;
}

const fields = {
  name: S.name,
  description: S.text,
  metadata: S.metadata,
  defaults: { type: ['object', 'null'] },
};

const checkCreate = bodyChecker<CreateBody>({
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { ...fields, slug: S.slug },
});

const checkUpdate = bodyChecker<UpdateBody>({
  type: 'object',
  additionalProperties: false,
  properties: { ...fields, status: { enum: ['active', 'archived'] }, settings: OVERRIDES_SCHEMA },
});

export function workspaceView(w: Workspace): Record<string, unknown> {
  return {
    object: 'workspace',
    id: w.id,
    slug: w.slug,
    name: w.name,
    description: w.description,
    status: w.status,
    is_default: w.isDefault,
    metadata: w.metadata,
    defaults: w.defaults,
    settings: w.settings,
    created_at: w.createdAt,
    last_updated_at: w.lastUpdatedAt,
    last_reset_at: w.lastResetAt,
  };
}

/** A workspace the caller may see, by id or slug; 404 otherwise. */
export async function visibleWorkspace(deps: AdminDeps, caller: Caller, ref: string): Promise<Result<Workspace>> {
  return visibleTo(caller, await deps.store.workspaces.find(ref), (ws) => ws.id, 'workspace', ref);
}

/** Like visibleWorkspace, for reads: an archived workspace exists only for owners and admins. */
export async function readableWorkspace(deps: AdminDeps, caller: Caller, ref: string): Promise<Result<Workspace>> {
  const ws = await visibleWorkspace(deps, caller, ref);
  if (ws.ok && ws.value.status === 'archived' && !isOrgAdmin(caller)) return { ok: false, error: notFound('workspace', ref) };
  return ws;
}

const STATUSES: readonly WorkspaceStatus[] = ['active', 'archived'];

export const workspaceRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/workspaces',
    description: 'Creates a workspace.',
    organisation: 'creating a workspace',
    scope: 'workspaces.create',
    body: checkCreate,
    async handler({ body: b }, deps) {
      try {
        const ws = await deps.store.workspaces.create({
          slug: b.slug ?? newSlug(b.name),
          name: b.name,
          description: b.description ?? null,
          metadata: b.metadata ?? null,
          settings: null,
          defaults: b.defaults ?? null,
        });
        return reply(201, workspaceView(ws));
      } catch (e) {
        if (isUniqueViolation(e)) return { ok: false, error: new GatewayError(409, `workspace slug '${b.slug}' is taken`, { code: 'conflict', param: 'slug' }) };
        throw e;
      }
    },
  }),
  route({
    method: 'GET',
    path: '/workspaces',
    description: 'Lists workspaces, filtered by status (archived ones for owners and admins).',
    query: queryOf({ status: 'comma-separated: active (default), archived' }),
    scope: 'workspaces.list',
    paged: true,
    async handler({ caller, query, page }, deps) {
      const raw = query.get('status');
      const statuses = raw === null ? (['active'] as WorkspaceStatus[]) : raw.split(',').map((s) => s.trim());
      const unknown = statuses.find((s) => !STATUSES.includes(s as WorkspaceStatus));
      if (unknown !== undefined) return { ok: false, error: new GatewayError(400, `status: '${unknown}' is not one of active, archived`, { param: 'status' }) };
      if (statuses.includes('archived') && !isOrgAdmin(caller)) {
        return { ok: false, error: new GatewayError(403, 'only organisation owners and admins may list archived workspaces', { code: 'permission_denied', param: 'status' }) };
      }
      const only = caller.level === 'workspace' ? [caller.key.workspaceId] : undefined;
      return listReply(await deps.store.workspaces.list(statuses as WorkspaceStatus[], page, only), workspaceView);
    },
  }),
  route({
    method: 'GET',
    path: '/workspaces/:id',
    description: 'One workspace (by id or slug).',
    scope: 'workspaces.read',
    async handler({ caller, params }, deps) {
      const ws = await readableWorkspace(deps, caller, params.id!);
      return ws.ok ? reply(200, workspaceView(ws.value)) : ws;
    },
  }),
  route({
    method: 'PUT',
    path: '/workspaces/:id',
    description: 'Changes a workspace: name, description, defaults, limits.',
    organisation: 'changing a workspace',
    scope: 'workspaces.update',
    body: checkUpdate,
    async handler({ caller, params, body }, deps) {
      const ws = await visibleWorkspace(deps, caller, params.id!);
      if (!ws.ok) return ws;
      if (body.status === 'archived' && ws.value.isDefault) {
        return { ok: false, error: new GatewayError(409, 'the default workspace cannot be archived', { code: 'conflict', param: 'status' }) };
      }
      const { settings, ...fields } = body;
      const resolved = settings == null ? ok(settings) : await resolveDefaultGuardrails(deps.store, settings, ws.value.id, 'settings.');
      if (!resolved.ok) return resolved;
      // `settings` patches the stored overrides rather than replacing them.
      const overrides = resolved.value === undefined ? undefined : mergeOverrides(ws.value.settings as WorkspaceOverrides | null, resolved.value);
      const patch = overrides === undefined ? fields : { ...fields, settings: overrides as Workspace['settings'] };
      const updated = await deps.store.workspaces.update(ws.value.id, patch);
      return updated === null ? { ok: false, error: notFound('workspace', params.id!) } : reply(200, workspaceView(updated));
    },
  }),
  route({
    method: 'DELETE',
    path: '/workspaces/:id',
    description: 'Archives or deletes a workspace.',
    organisation: 'deleting a workspace',
    scope: 'workspaces.delete',
    async handler({ caller, params }, deps) {
      const ws = await visibleWorkspace(deps, caller, params.id!);
      if (!ws.ok) return ws;
      if (ws.value.isDefault) return { ok: false, error: new GatewayError(409, 'the default workspace cannot be deleted', { code: 'conflict' }) };
      try {
        await deps.store.workspaces.delete(ws.value.id);
      } catch (e) {
        if (isForeignKeyViolation(e)) {
          return { ok: false, error: new GatewayError(409, `workspace '${ws.value.slug}' still holds keys, configs, guardrails, credentials, members or SCIM mappings: delete them or archive the workspace`, { code: 'conflict' }) };
        }
        throw e;
      }
      return reply(200, { id: ws.value.id, object: 'workspace', deleted: true });
    },
  }),
];
