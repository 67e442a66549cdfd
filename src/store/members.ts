/**
 * Workspace memberships. A membership made by SCIM (a group mapped to the
 * workspace) is marked so: it goes when no group of the user maps there any
 * more, while one made by hand stays until removed by hand. Leaving a
 * workspace takes the user's keys of that workspace with it.
 */
import type { Db, SqlValue } from './db.js';
import { listPage, type Page, type PageRequest } from './page.js';
import type { OrgRole, WorkspaceRole } from './roles.js';

export type MemberSource = 'direct' | 'scim';

export interface Member {
  /** The user's id. */
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  orgRole: OrgRole;
  workspaceId: string;
  role: WorkspaceRole;
  source: MemberSource;
  createdAt: number;
}

interface Row {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  org_role: string;
  workspace_id: string;
  role: string;
  source: string;
  created_at: number;
}

function toMember(r: Row): Member {
  return {
    id: r.id,
    email: r.email,
    firstName: r.first_name,
    lastName: r.last_name,
    orgRole: r.org_role as OrgRole,
    workspaceId: r.workspace_id,
    role: r.role as WorkspaceRole,
    source: r.source as MemberSource,
    createdAt: r.created_at,
  };
}

/** Memberships with their users, shaped for listPage (paged by user id). */
const MEMBERS = `(SELECT u.id, u.email, u.first_name, u.last_name, u.role AS org_role, m.workspace_id, m.role, m.source, m.created_at
  FROM workspace_members m JOIN users u ON u.id = m.user_id) AS members`;

export interface MemberFilter {
  role?: WorkspaceRole;
  email?: string;
}

export interface Seating {
  workspaceId: string;
  role: WorkspaceRole;
}

export class MemberRepo {
  constructor(private readonly db: Db) {}

  /** False when the user already was a member (then nothing changes). `at`: Unix seconds. */
  async add(workspaceId: string, userId: string, role: WorkspaceRole, source: MemberSource, at: number, db: Db = this.db): Promise<boolean> {
    const n = await db.run(
      'INSERT INTO workspace_members (workspace_id, user_id, role, source, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [workspaceId, userId, role, source, at],
    );
    return n > 0;
  }

  async get(workspaceId: string, userId: string): Promise<Member | null> {
    const r = await this.db.get<Row>(`SELECT * FROM ${MEMBERS} WHERE workspace_id = ? AND id = ?`, [workspaceId, userId]);
    return r === undefined ? null : toMember(r);
  }

  list(workspaceId: string, filter: MemberFilter, page: PageRequest): Promise<Page<Member>> {
    const where = ['workspace_id = ?'];
    const params: SqlValue[] = [workspaceId];
    if (filter.role !== undefined) {
      where.push('role = ?');
      params.push(filter.role);
    }
    if (filter.email !== undefined) {
      where.push('email = ?');
      params.push(filter.email.trim().toLowerCase());
    }
    return listPage(this.db, MEMBERS, where, params, page, toMember);
  }

  /** The workspaces of each of these users. */
  async seatsOf(userIds: readonly string[]): Promise<Map<string, Seating[]>> {
    const out = new Map<string, Seating[]>(userIds.map((id) => [id, []]));
    if (userIds.length === 0) return out;
    const rows = await this.db.all<{ user_id: string; workspace_id: string; role: string }>(
      `SELECT user_id, workspace_id, role FROM workspace_members WHERE user_id IN (${userIds.map(() => '?').join(', ')}) ORDER BY workspace_id`,
      userIds,
    );
    for (const r of rows) out.get(r.user_id)?.push({ workspaceId: r.workspace_id, role: r.role as WorkspaceRole });
    return out;
  }

  async setRole(workspaceId: string, userId: string, role: WorkspaceRole): Promise<boolean> {
    return (await this.db.run('UPDATE workspace_members SET role = ? WHERE workspace_id = ? AND user_id = ?', [role, workspaceId, userId])) > 0;
  }

  /**
   * Ends a membership and deletes the user's keys of that workspace. Null when
   * there was no membership; else the deleted keys' ids, which the caller
   * announces to the key caches once the transaction has committed.
   */
  async remove(workspaceId: string, userId: string, tx: Db): Promise<string[] | null> {
    if ((await tx.run('DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?', [workspaceId, userId])) === 0) return null;
    const keys = await tx.all<{ id: string }>('SELECT id FROM api_keys WHERE workspace_id = ? AND user_id = ?', [workspaceId, userId]);
    await tx.run('DELETE FROM api_keys WHERE workspace_id = ? AND user_id = ?', [workspaceId, userId]);
    return keys.map((k) => k.id);
  }

  /** Whether the user holds a key auto-created in this workspace (there is at most one per user and workspace). */
  async hasAutoKey(userId: string, workspaceId: string, tx: Db): Promise<boolean> {
    const r = await tx.get("SELECT id FROM api_keys WHERE user_id = ? AND workspace_id = ? AND creation_mode = 'auto'", [userId, workspaceId]);
    return r !== undefined;
  }
}
