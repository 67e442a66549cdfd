/**
 * Access control of the management routes: who is calling (key type, role,
 * scopes) and what they may see. Workspace keys act only in their own
 * workspace and never see another's objects (404, not 403: existence is not
 * disclosed); organisation keys act in any workspace, in the default one
 * when they name none.
 */
import { err, GatewayError, ok, type Result } from '../shared/errors.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import { keyRoles as rolesOfKey, standing, STANDINGS, WORKSPACE_STANDING, type OrgRole, type Roles, type WorkspaceRole } from '../store/roles.js';
import type { Store } from '../store/store.js';
import type { Workspace } from '../store/workspaces.js';

export type { OrgRole, WorkspaceRole };

const ACTIONS = ['create', 'read', 'list', 'update', 'delete'] as const;
const CRUD_FAMILIES = ['configs', 'virtual_keys', 'integrations', 'prompts', 'guardrails', 'policies', 'workspaces', 'api_keys', 'users', 'organisation_settings'];

/** Every scope a key may hold (contract: `<resource>.<action>`; rotation scopes end in `.rotate`). */
export const KNOWN_SCOPES: ReadonlySet<string> = new Set([
  'completions.write',
  'logs.list',
  'logs.view',
  'logs.export',
  'analytics.view',
  'prompts.render',
  'prompts.run',
  'api_keys.rotate',
  ...CRUD_FAMILIES.flatMap((f) => ACTIONS.map((a) => `${f}.${a}`)),
]);

export interface Caller {
  key: ApiKeyRecord;
  /** Organisation keys act across workspaces; workspace keys only in key.workspaceId. */
  level: 'organisation' | 'workspace';
  /** Organisation role: admin keys and organisation service keys act as admins; user keys as their user. */
  orgRole: OrgRole | null;
  /** Role in key.workspaceId for workspace keys: service keys act as workspace admins; user keys as their membership. */
  workspaceRole: WorkspaceRole | null;
}

export type { Roles };

/** What a key's roles follow from: its kind, and for user keys the user's roles where the key lives. */
export type KeyKind = Pick<ApiKeyRecord, 'type' | 'subType' | 'isAdmin' | 'userId' | 'workspaceId'>;

/** The roles a key acts with (see Caller, store/roles.ts keyRoles). */
export function keyRoles(store: Store, key: KeyKind): Promise<Roles> {
  return rolesOfKey(store.users, key);
}

export async function resolveCaller(store: Store, key: ApiKeyRecord): Promise<Caller> {
  return { key, level: key.type, ...(await keyRoles(store, key)) };
}

export const WORKSPACE_ADMIN = WORKSPACE_STANDING.admin;
export { standing };

/** 403 unless the caller stands at `needed` or above; `what` names the action that needs it. */
export function requireStanding(caller: Caller, needed: number, what: string, param: string | null = null): GatewayError | null {
  const mine = standing(caller);
  if (mine >= needed) return null;
  return new GatewayError(403, `${what} needs ${STANDINGS[needed]} or above, and this key's role is ${STANDINGS[mine]}`, { code: 'permission_denied', param });
}

export function hasScope(caller: Caller, scope: string): boolean {
  return caller.key.isAdmin || caller.key.scopes.includes(scope);
}

export function requireScope(caller: Caller, scope: string): GatewayError | null {
  return hasScope(caller, scope) ? null : new GatewayError(403, `gateway key lacks the scope '${scope}'`, { code: 'missing_scope', param: scope });
}

/** Routes about the organisation itself (workspaces, organisation keys, settings) refuse workspace keys. */
export function requireOrganisation(caller: Caller, what: string): GatewayError | null {
  return caller.level === 'organisation' ? null : new GatewayError(403, `${what} needs an organisation key`, { code: 'organisation_key_required' });
}

/** Owners and admins: organisation admin keys, organisation service keys, users whose organisation role is owner or admin. */
export function isOrgAdmin(caller: Caller): boolean {
  return caller.orgRole === 'owner' || caller.orgRole === 'admin';
}

/** Whether an object of `workspaceId` exists for this caller at all. */
export function canSee(caller: Caller, workspaceId: string | null): boolean {
  return caller.level === 'organisation' || workspaceId === caller.key.workspaceId;
}

export function notFound(what: string, ref: string): GatewayError {
  return new GatewayError(404, `${what} '${ref}' not found`, { code: 'not_found' });
}

/** `found` if it exists for the caller (canSee the workspace `workspaceOf` gives); a 404 naming `what` and `ref` otherwise. */
export function visibleTo<T>(caller: Caller, found: T | null, workspaceOf: (t: T) => string | null, what: string, ref: string): Result<T> {
  return found !== null && canSee(caller, workspaceOf(found)) ? ok(found) : err(notFound(what, ref));
}

/**
 * The workspace a call acts in: the one named by `workspace_id` (id or slug),
 * else the caller's own (organisation keys: the default workspace). A
 * workspace key naming another workspace is refused; an archived workspace
 * takes no new objects.
 */
export async function actingWorkspace(store: Store, caller: Caller, ref: string | undefined, param = 'workspace_id'): Promise<Result<Workspace>> {
  if (ref === undefined) {
    const ws = caller.level === 'workspace' ? await store.workspaces.get(caller.key.workspaceId) : await store.workspaces.default();
    return ws === null ? { ok: false, error: notFound('workspace', caller.key.workspaceId) } : { ok: true, value: ws };
  }
  const ws = await store.workspaces.find(ref);
  if (caller.level === 'workspace' && ws?.id !== caller.key.workspaceId) {
    return { ok: false, error: new GatewayError(403, `this key cannot act in workspace '${ref}'`, { code: 'workspace_denied', param }) };
  }
  if (ws === null) return { ok: false, error: new GatewayError(404, `workspace '${ref}' not found`, { code: 'not_found', param }) };
  return { ok: true, value: ws };
}

/**
 * An object named by id (in any workspace the caller sees) or by slug, which
 * names it only within a workspace: the one `workspaceRef` names (the query's
 * `workspace_id`), else the caller's own (the default one for organisation
 * keys). 404 naming `what` when neither finds one the caller may see.
 */
export async function byIdOrSlug<T extends { workspaceId: string }>(
  store: Store,
  caller: Caller,
  ref: string,
  workspaceRef: string | null,
  what: string,
  lookup: { byId(id: string): Promise<T | null>; bySlug(workspaceId: string, slug: string): Promise<T | null> },
): Promise<Result<T>> {
  const byId = await lookup.byId(ref);
  if (byId !== null && canSee(caller, byId.workspaceId)) return ok(byId);
  const ws = await actingWorkspace(store, caller, workspaceRef ?? undefined);
  if (!ws.ok) return ws;
  const bySlug = await lookup.bySlug(ws.value.id, ref);
  return bySlug === null ? err(notFound(what, ref)) : ok(bySlug);
}

/**
 * The workspace a list is narrowed to, by id: the one `workspace_id` names,
 * else the caller's own for workspace keys; undefined (every workspace) for
 * organisation keys that name none.
 */
export async function listedWorkspace(store: Store, caller: Caller, query: URLSearchParams): Promise<Result<string | undefined>> {
  const ref = query.get('workspace_id') ?? undefined;
  if (ref === undefined && caller.level === 'organisation') return ok(undefined);
  const ws = await actingWorkspace(store, caller, ref);
  return ws.ok ? ok(ws.value.id) : ws;
}

/** Like actingWorkspace, for writes: an archived workspace is read-only. */
export async function writableWorkspace(store: Store, caller: Caller, ref: string | undefined, param = 'workspace_id'): Promise<Result<Workspace>> {
  const ws = await actingWorkspace(store, caller, ref, param);
  if (ws.ok && ws.value.status === 'archived') {
    return { ok: false, error: new GatewayError(409, `workspace '${ws.value.slug}' is archived`, { code: 'workspace_archived', param }) };
  }
  return ws;
}
