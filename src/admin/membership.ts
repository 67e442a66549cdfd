/**
 * Joining and leaving workspaces, shared by every way a user gets there:
 * created with workspaces, an accepted invite, a SCIM group, a workspace add.
 * Joining makes the auto-created key where the workspace's settings ask for
 * one; leaving deletes the user's keys of that workspace.
 *
 * The functions taking `tx` run inside the caller's transaction and must use
 * only it (SQLite queues every other statement until it ends), so what they
 * need to read (workspaces, organisation settings) is read before.
 */
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import type { Db } from '../store/db.js';
import type { MemberSource } from '../store/members.js';
import type { WorkspaceRole } from '../store/roles.js';
import { applyOverrides, type OrgSettings, type WorkspaceOverrides } from '../store/settings.js';
import type { Store } from '../store/store.js';
import type { User } from '../store/users.js';
import type { Workspace } from '../store/workspaces.js';
import type { AdminDeps } from './router.js';
import { autoCreateKey, type IssuedKey } from './user-keys.js';

export interface Seat {
  workspace: Workspace;
  role: WorkspaceRole;
}

/**
 * A body's `workspaces: [{id, role}]` (id or slug; role already checked) →
 * seats: each workspace must exist (404), be active (409) and appear once (400).
 */
export async function resolveSeats(store: Store, refs: readonly { id: string; role: string }[], param: string): Promise<Result<Seat[]>> {
  const seats: Seat[] = [];
  for (const [i, ref] of refs.entries()) {
    const at = `${param}[${i}].id`;
    const ws = await store.workspaces.find(ref.id);
    if (ws === null) return { ok: false, error: new GatewayError(404, `workspace '${ref.id}' not found`, { code: 'not_found', param: at }) };
    if (ws.status === 'archived') return { ok: false, error: new GatewayError(409, `workspace '${ws.slug}' is archived`, { code: 'workspace_archived', param: at }) };
    if (seats.some((s) => s.workspace.id === ws.id)) return { ok: false, error: invalid(`${at}: workspace '${ref.id}' is named twice`, at) };
    seats.push({ workspace: ws, role: ref.role.toLowerCase() as WorkspaceRole });
  }
  return { ok: true, value: seats };
}

/** Inside tx: seats the user. A membership the user already has stays as it is; each new one gets its auto-created key if due. */
export async function seat(deps: AdminDeps, tx: Db, org: OrgSettings, user: Pick<User, 'id' | 'email'>, seats: readonly Seat[], source: MemberSource): Promise<IssuedKey[]> {
  const at = seconds(deps);
  const issued: IssuedKey[] = [];
  for (const s of seats) {
    if (!(await deps.store.users.members.add(s.workspace.id, user.id, s.role, source, at, tx))) continue;
    const settings = applyOverrides(org, (s.workspace.settings ?? {}) as WorkspaceOverrides);
    const key = await autoCreateKey(deps, tx, settings, user, s.workspace);
    if (key !== null) issued.push(key);
  }
  return issued;
}

/** Inside tx: ends these memberships; returns the ids of the keys that went with them. */
export async function unseat(deps: AdminDeps, tx: Db, seats: readonly { workspaceId: string; userId: string }[]): Promise<string[]> {
  const dropped: string[] = [];
  for (const s of seats) dropped.push(...((await deps.store.users.members.remove(s.workspaceId, s.userId, tx)) ?? []));
  return dropped;
}

/** After the transaction committed: the key caches (of every process) forget the deleted keys. */
export function announceDropped(deps: AdminDeps, keyIds: readonly string[]): void {
  for (const id of keyIds) deps.store.changes.publish({ kind: 'api_key', id });
}

/** The management clock (tests move it) in Unix seconds, the unit of stored times. */
export function seconds(deps: AdminDeps): number {
  return Math.floor(deps.now() / 1000);
}
