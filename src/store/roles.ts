/**
 * The roles a user holds: one in the organisation (users.ts), one per
 * workspace it is a member of (members.ts), and the roles invites and SCIM
 * group mappings grant (invites.ts, scim.ts).
 */
export type OrgRole = 'owner' | 'admin' | 'member';
export type WorkspaceRole = 'admin' | 'manager' | 'member';

export const ORG_ROLES: readonly OrgRole[] = ['owner', 'admin', 'member'];
export const WORKSPACE_ROLES: readonly WorkspaceRole[] = ['admin', 'manager', 'member'];

/** Roles in the order of what they reach, indexed by `standing`: an organisation owner or admin reaches past any workspace role. */
export const STANDINGS = ['none', 'workspace member', 'workspace manager', 'workspace admin', 'organisation admin', 'organisation owner'] as const;
const ORG_STANDING: Readonly<Record<OrgRole, number>> = { member: 0, admin: 4, owner: 5 };
export const WORKSPACE_STANDING: Readonly<Record<WorkspaceRole, number>> = { member: 1, manager: 2, admin: 3 };

/** The roles a caller acts with. */
export interface Roles {
  orgRole: OrgRole | null;
  workspaceRole: WorkspaceRole | null;
}

/** Where roles stand, for "no key makes, changes or takes the secret of a key that stands above it" and role-gated objects. */
export function standing(r: Roles): number {
  return Math.max(r.orgRole === null ? 0 : ORG_STANDING[r.orgRole], r.workspaceRole === null ? 0 : WORKSPACE_STANDING[r.workspaceRole]);
}

/** What a key's roles follow from: its kind, and for user keys the user's roles where the key lives. */
export interface KeyKind {
  type: 'organisation' | 'workspace';
  subType: 'service' | 'user';
  isAdmin: boolean;
  userId: string | null;
  workspaceId: string;
}

/**
 * The roles a key acts with: admin keys as owners, organisation service keys
 * as organisation admins, workspace service keys as workspace admins, user
 * keys as their user (a user who is not a member of the key's workspace has
 * no workspace role there).
 */
export async function keyRoles(users: { roles(userId: string, workspaceId: string): Promise<Roles | null> }, key: KeyKind): Promise<Roles> {
  const fixed = fixedRoles(key);
  if (fixed !== null) return fixed;
  const roles = key.userId === null ? null : await users.roles(key.userId, key.workspaceId);
  return { orgRole: roles?.orgRole ?? null, workspaceRole: key.type === 'workspace' ? (roles?.workspaceRole ?? null) : null };
}

/** The roles of admin and service keys, which follow from their kind alone; null for user keys. */
export function fixedRoles(key: KeyKind): Roles | null {
  if (key.isAdmin) return { orgRole: 'owner', workspaceRole: null };
  if (key.subType === 'service') return key.type === 'organisation' ? { orgRole: 'admin', workspaceRole: null } : { orgRole: null, workspaceRole: 'admin' };
  return null;
}
