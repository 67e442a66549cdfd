/**
 * SCIM groups, their members, and their mappings to workspaces. A group maps
 * to any number of workspaces, always with one role; its members are members
 * of those workspaces with that role.
 */
import type { Db, SqlValue } from './db.js';
import { newId } from './ids.js';
import { listPage, type Page, type PageRequest } from './page.js';
import type { WorkspaceRole } from './roles.js';

export interface ScimGroup {
  id: string;
  name: string;
  createdAt: number;
}

export interface ScimMapping {
  id: string;
  groupId: string;
  groupName: string;
  workspaceId: string;
  role: WorkspaceRole;
  createdAt: number;
}

interface MappingRow {
  id: string;
  group_id: string;
  group_name: string;
  workspace_id: string;
  role: string;
  created_at: number;
}

function toMapping(r: MappingRow): ScimMapping {
  return { id: r.id, groupId: r.group_id, groupName: r.group_name, workspaceId: r.workspace_id, role: r.role as WorkspaceRole, createdAt: r.created_at };
}

const MAPPINGS = `(SELECT gw.id, gw.group_id, g.name AS group_name, gw.workspace_id, gw.role, gw.created_at
  FROM scim_group_workspaces gw JOIN scim_groups g ON g.id = gw.group_id) AS mappings`;

export interface MappingFilter {
  workspaceId?: string;
  groupId?: string;
  role?: WorkspaceRole;
}

export interface GroupMember {
  id: string;
  email: string;
}

export class ScimRepo {
  constructor(private readonly db: Db) {}

  async group(id: string, db: Db = this.db): Promise<ScimGroup | null> {
    const r = await db.get<{ id: string; name: string; created_at: number }>('SELECT * FROM scim_groups WHERE id = ?', [id]);
    return r === undefined ? null : { id: r.id, name: r.name, createdAt: r.created_at };
  }

  async groupByName(name: string, db: Db = this.db): Promise<ScimGroup | null> {
    const r = await db.get<{ id: string; name: string; created_at: number }>('SELECT * FROM scim_groups WHERE name = ?', [name]);
    return r === undefined ? null : { id: r.id, name: r.name, createdAt: r.created_at };
  }

  /** Throws a unique violation when the name is taken. */
  async createGroup(name: string, at: number, db: Db = this.db): Promise<ScimGroup> {
    const group = { id: newId(), name, createdAt: at };
    await db.run('INSERT INTO scim_groups (id, name, created_at) VALUES (?, ?, ?)', [group.id, name, at]);
    return group;
  }

  /** Throws a unique violation when the name is taken. */
  async renameGroup(id: string, name: string, tx: Db): Promise<void> {
    await tx.run('UPDATE scim_groups SET name = ? WHERE id = ?', [name, id]);
  }

  async members(groupId: string, db: Db = this.db): Promise<GroupMember[]> {
    return db.all<GroupMember>(
      'SELECT u.id, u.email FROM scim_group_members gm JOIN users u ON u.id = gm.user_id WHERE gm.group_id = ? ORDER BY u.id',
      [groupId],
    );
  }

  /** False when the user already was in the group. */
  async addMember(groupId: string, userId: string, tx: Db): Promise<boolean> {
    return (await tx.run('INSERT INTO scim_group_members (group_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING', [groupId, userId])) > 0;
  }

  /** False when the user was not in the group. */
  async removeMember(groupId: string, userId: string, tx: Db): Promise<boolean> {
    return (await tx.run('DELETE FROM scim_group_members WHERE group_id = ? AND user_id = ?', [groupId, userId])) > 0;
  }

  async mapping(id: string, db: Db = this.db): Promise<ScimMapping | null> {
    const r = await db.get<MappingRow>(`SELECT * FROM ${MAPPINGS} WHERE id = ?`, [id]);
    return r === undefined ? null : toMapping(r);
  }

  async mappingsOf(groupId: string, db: Db = this.db): Promise<ScimMapping[]> {
    return (await db.all<MappingRow>(`SELECT * FROM ${MAPPINGS} WHERE group_id = ? ORDER BY id`, [groupId])).map(toMapping);
  }

  /** Throws a unique violation when the group already maps to the workspace. */
  async createMapping(group: ScimGroup, workspaceId: string, role: WorkspaceRole, at: number, tx: Db): Promise<ScimMapping> {
    const mapping: ScimMapping = { id: newId(), groupId: group.id, groupName: group.name, workspaceId, role, createdAt: at };
    await tx.run('INSERT INTO scim_group_workspaces (id, group_id, workspace_id, role, created_at) VALUES (?, ?, ?, ?, ?)', [
      mapping.id, group.id, workspaceId, role, at,
    ]);
    return mapping;
  }

  listMappings(filter: MappingFilter, page: PageRequest): Promise<Page<ScimMapping>> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    for (const [column, value] of [['workspace_id', filter.workspaceId], ['group_id', filter.groupId], ['role', filter.role]] as const) {
      if (value === undefined) continue;
      where.push(`${column} = ?`);
      params.push(value);
    }
    return listPage(this.db, MAPPINGS, where, params, page, toMapping);
  }

  async deleteMapping(id: string, tx: Db): Promise<boolean> {
    return (await tx.run('DELETE FROM scim_group_workspaces WHERE id = ?', [id])) > 0;
  }

  /** Memberships of these users made by SCIM that no group of theirs maps to any more. */
  async unbackedSeats(userIds: readonly string[], tx: Db): Promise<{ workspaceId: string; userId: string }[]> {
    if (userIds.length === 0) return [];
    const rows = await tx.all<{ workspace_id: string; user_id: string }>(
      `SELECT m.workspace_id, m.user_id FROM workspace_members m
       WHERE m.source = 'scim' AND m.user_id IN (${userIds.map(() => '?').join(', ')})
         AND NOT EXISTS (SELECT 1 FROM scim_group_members gm JOIN scim_group_workspaces gw ON gw.group_id = gm.group_id
                         WHERE gm.user_id = m.user_id AND gw.workspace_id = m.workspace_id)`,
      userIds,
    );
    return rows.map((r) => ({ workspaceId: r.workspace_id, userId: r.user_id }));
  }
}
