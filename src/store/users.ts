/** SCAFFOLD (identity work fills in users, memberships, invites, SCIM groups). */
import type { Changes } from './changes.js';
import type { Db } from './db.js';

export type OrgRole = 'owner' | 'admin' | 'member';
export type WorkspaceRole = 'admin' | 'manager' | 'member';

export class UserRepo {
  constructor(
    protected readonly db: Db,
    protected readonly changes: Changes,
  ) {}

  /** A user's organisation role and role in one workspace; null when the user does not exist. */
  async roles(userId: string, workspaceId: string): Promise<{ orgRole: OrgRole; workspaceRole: WorkspaceRole | null } | null> {
    const u = await this.db.get<{ role: string }>('SELECT role FROM users WHERE id = ?', [userId]);
    if (u === undefined) return null;
    const m = await this.db.get<{ role: string }>('SELECT role FROM workspace_members WHERE workspace_id = ? AND user_id = ?', [workspaceId, userId]);
    return { orgRole: u.role as OrgRole, workspaceRole: (m?.role as WorkspaceRole | undefined) ?? null };
  }
}
