/**
 * Which request logs a caller may read (spec 1.11.0, 1.12.0, 1.15.0), as a
 * LogScope for the log repository:
 *
 * - Organisation admin keys, service keys (within what they reach) and
 *   owners see every log.
 * - Organisation admins (organisation-level user keys of users whose
 *   organisation role is admin) see every log, except that a workspace whose
 *   effective `organisationAdminsViewLogs` is false shows them no log rows
 *   (its analytics still count), and one whose
 *   `organisationAdminsViewLogMetadata` is false shows its logs without
 *   metadata. A workspace-level key of an organisation admin sees its whole
 *   workspace ("owners and admins always see everything").
 * - Other users see a workspace by their role in it: admins everything;
 *   managers and members everything unless `managersViewAllData` /
 *   `membersViewAllData` is false there, then only the logs of their own
 *   keys; no role, nothing.
 * - Archived workspaces only for owners and admins.
 */
import { GatewayError, type Result } from '../shared/errors.js';
import { isReadTimeout } from '../store/db.js';
import { LOG_READ_TIMEOUT_MS, type LogScope } from '../store/logs.js';
import type { WorkspaceRole } from '../store/roles.js';
import { applyOverrides, type OrgSettings, type SecuritySettings, type WorkspaceOverrides } from '../store/settings.js';
import type { Store } from '../store/store.js';
import type { Workspace } from '../store/workspaces.js';
import { actingWorkspace, isOrgAdmin, type Caller } from './access.js';

/** Log routes read rows; analytics routes read aggregates (organisationAdminsViewLogs does not hide those). */
export type LogReader = 'logs' | 'analytics';

type Sight = 'full' | 'own' | 'none';

function seesEverything(caller: Caller): boolean {
  return caller.key.isAdmin || caller.key.subType === 'service' || caller.orgRole === 'owner';
}

/** What a user key sees of one workspace, given the workspace's security settings and the user's role there. */
function sight(caller: Caller, reader: LogReader, s: SecuritySettings, role: WorkspaceRole | null): { sight: Sight; hideMetadata: boolean } {
  if (caller.orgRole === 'admin') {
    if (caller.level === 'workspace') return { sight: 'full', hideMetadata: false };
    if (reader === 'logs' && !s.organisationAdminsViewLogs) return { sight: 'none', hideMetadata: false };
    return { sight: 'full', hideMetadata: !s.organisationAdminsViewLogMetadata };
  }
  const all = role === 'admin' || (role === 'manager' && s.managersViewAllData) || (role === 'member' && s.membersViewAllData);
  return { sight: all ? 'full' : role === null ? 'none' : 'own', hideMetadata: false };
}

export interface ScopedRead {
  scope: LogScope;
  /** The workspace named by `workspace_id`, resolved to its id. */
  workspaceId: string | undefined;
}

/** The caller's scope, within the workspace `ref` (id or slug) names when given. */
export async function logScope(store: Store, caller: Caller, reader: LogReader, ref: string | undefined): Promise<Result<ScopedRead>> {
  let candidates: Workspace[];
  let workspaceId: string | undefined;
  if (ref !== undefined) {
    const ws = await actingWorkspace(store, caller, ref);
    if (!ws.ok) return ws;
    if (ws.value.status === 'archived' && !isOrgAdmin(caller)) {
      return { ok: false, error: new GatewayError(404, `workspace '${ref}' not found`, { code: 'not_found', param: 'workspace_id' }) };
    }
    candidates = [ws.value];
    workspaceId = ws.value.id;
  } else if (caller.level === 'workspace') {
    const ws = await store.workspaces.get(caller.key.workspaceId);
    candidates = ws === null ? [] : [ws];
  } else if (seesEverything(caller)) {
    return { ok: true, value: { scope: { full: 'any', own: [], userId: null, hideMetadata: [] }, workspaceId } };
  } else {
    candidates = await store.workspaces.all();
  }
  const scope = { full: [] as string[], own: [] as string[], userId: caller.key.userId, hideMetadata: [] as string[] };
  const visible = candidates.filter((w) => w.status !== 'archived' || isOrgAdmin(caller));
  if (seesEverything(caller)) {
    scope.full = visible.map((w) => w.id);
    return { ok: true, value: { scope, workspaceId } };
  }
  const org = await store.settings.organisation();
  const roles = await rolesOf(store, caller);
  for (const w of visible) {
    const s = security(org, w);
    const seen = sight(caller, reader, s, roles.get(w.id) ?? null);
    if (seen.sight === 'full') scope.full.push(w.id);
    if (seen.sight === 'own') scope.own.push(w.id);
    if (seen.hideMetadata) scope.hideMetadata.push(w.id);
  }
  return { ok: true, value: { scope, workspaceId } };
}

function security(org: OrgSettings, w: Workspace): SecuritySettings {
  return w.settings === null ? org.security_settings : applyOverrides(org, w.settings as WorkspaceOverrides).security_settings;
}

/** The user's role in each workspace: a workspace key's role in its own; an organisation key's memberships. */
async function rolesOf(store: Store, caller: Caller): Promise<Map<string, WorkspaceRole>> {
  if (caller.level === 'workspace') {
    return caller.workspaceRole === null ? new Map() : new Map([[caller.key.workspaceId, caller.workspaceRole]]);
  }
  if (caller.key.userId === null) return new Map();
  const seats = (await store.users.members.seatsOf([caller.key.userId])).get(caller.key.userId) ?? [];
  return new Map(seats.map((s) => [s.workspaceId, s.role]));
}

/** A log or analytics read; one that ran past its bound (LOG_READ_TIMEOUT_MS) is refused as such, any other failure thrown on. */
export async function logRead<T>(read: () => Promise<T>): Promise<Result<T>> {
  try {
    return { ok: true, value: await read() };
  } catch (e) {
    if (!isReadTimeout(e)) throw e;
    const s = LOG_READ_TIMEOUT_MS / 1000;
    return { ok: false, error: new GatewayError(504, `the log query did not finish within ${s} s: narrow its time window or add filters`, { code: 'query_timeout' }) };
  }
}
