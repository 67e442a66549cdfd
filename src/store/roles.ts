/**
 * The roles a user holds: one in the organisation (users.ts), one per
 * workspace it is a member of (members.ts), and the roles invites and SCIM
 * group mappings grant (invites.ts, scim.ts).
 */
export type OrgRole = 'owner' | 'admin' | 'member';
export type WorkspaceRole = 'admin' | 'manager' | 'member';

export const ORG_ROLES: readonly OrgRole[] = ['owner', 'admin', 'member'];
export const WORKSPACE_ROLES: readonly WorkspaceRole[] = ['admin', 'manager', 'member'];
