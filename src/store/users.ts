/**
 * The organisation's users and their roles. Memberships, invites and SCIM
 * groups have repositories of their own, reached through this one
 * (`store.users.members`, `.invites`, `.scim`).
 *
 * Emails are stored lower-case: the unique index then makes them unique
 * regardless of case.
 */
import type { Changes } from './changes.js';
import type { Db, SqlValue } from './db.js';
import { newId } from './ids.js';
import { InviteRepo } from './invites.js';
import { MemberRepo } from './members.js';
import { listPage, type Page, type PageRequest } from './page.js';
import type { OrgRole, WorkspaceRole } from './roles.js';
import { ScimRepo } from './scim.js';

export interface User {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  role: OrgRole;
  createdAt: number;
  lastUpdatedAt: number;
}

export interface UserRow {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  role: string;
  created_at: number;
  last_updated_at: number;
}

export function toUser(r: UserRow): User {
  return {
    id: r.id,
    email: r.email,
    firstName: r.first_name,
    lastName: r.last_name,
    role: r.role as OrgRole,
    createdAt: r.created_at,
    lastUpdatedAt: r.last_updated_at,
  };
}

export type NewUser = Pick<User, 'email' | 'firstName' | 'lastName' | 'role'>;
export type UserPatch = Partial<Pick<User, 'firstName' | 'lastName' | 'role'>>;

export interface UserFilter {
  email?: string;
  role?: OrgRole;
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export class UserRepo {
  readonly members: MemberRepo;
  readonly invites: InviteRepo;
  readonly scim: ScimRepo;

  constructor(
    protected readonly db: Db,
    protected readonly changes: Changes,
  ) {
    this.members = new MemberRepo(db);
    this.invites = new InviteRepo(db);
    this.scim = new ScimRepo(db);
  }

  /** Throws a unique violation when the email is taken. `at`: Unix seconds. */
  async create(u: NewUser, at: number, db: Db = this.db): Promise<User> {
    const user: User = { id: newId(), ...u, email: normaliseEmail(u.email), createdAt: at, lastUpdatedAt: at };
    await db.run('INSERT INTO users (id, email, first_name, last_name, role, created_at, last_updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      user.id, user.email, user.firstName, user.lastName, user.role, at, at,
    ]);
    return user;
  }

  async get(id: string, db: Db = this.db): Promise<User | null> {
    const r = await db.get<UserRow>('SELECT * FROM users WHERE id = ?', [id]);
    return r === undefined ? null : toUser(r);
  }

  async byEmail(email: string): Promise<User | null> {
    const r = await this.db.get<UserRow>('SELECT * FROM users WHERE email = ?', [normaliseEmail(email)]);
    return r === undefined ? null : toUser(r);
  }

  list(filter: UserFilter, page: PageRequest): Promise<Page<User>> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (filter.email !== undefined) {
      where.push('email = ?');
      params.push(normaliseEmail(filter.email));
    }
    if (filter.role !== undefined) {
      where.push('role = ?');
      params.push(filter.role);
    }
    return listPage(this.db, 'users', where, params, page, toUser);
  }

  async update(id: string, patch: UserPatch, at: number): Promise<User | null> {
    const current = await this.get(id);
    if (current === null) return null;
    const next = { ...current, ...patch };
    await this.db.run('UPDATE users SET first_name = ?, last_name = ?, role = ?, last_updated_at = ? WHERE id = ?', [next.firstName, next.lastName, next.role, at, id]);
    this.changes.publish({ kind: 'user', id });
    return { ...next, lastUpdatedAt: at };
  }

  /**
   * Removes a user with their memberships, group memberships and every key
   * they own (a departed user's secrets must stop working everywhere). Null
   * when there was no such user; else the ids of the deleted keys, already
   * announced to the key caches.
   */
  async delete(id: string): Promise<string[] | null> {
    const keys = await this.db.transaction(async (tx) => {
      if ((await tx.get('SELECT id FROM users WHERE id = ?', [id])) === undefined) return null;
      const owned = await tx.all<{ id: string }>('SELECT id FROM api_keys WHERE user_id = ?', [id]);
      await tx.run('DELETE FROM api_keys WHERE user_id = ?', [id]);
      await tx.run('DELETE FROM users WHERE id = ?', [id]);
      return owned.map((k) => k.id);
    });
    if (keys === null) return null;
    for (const key of keys) this.changes.publish({ kind: 'api_key', id: key });
    this.changes.publish({ kind: 'user', id });
    return keys;
  }

  /** A user's organisation role and role in one workspace; null when the user does not exist. */
  async roles(userId: string, workspaceId: string): Promise<{ orgRole: OrgRole; workspaceRole: WorkspaceRole | null } | null> {
    const u = await this.db.get<{ role: string }>('SELECT role FROM users WHERE id = ?', [userId]);
    if (u === undefined) return null;
    const m = await this.db.get<{ role: string }>('SELECT role FROM workspace_members WHERE workspace_id = ? AND user_id = ?', [workspaceId, userId]);
    return { orgRole: u.role as OrgRole, workspaceRole: (m?.role as WorkspaceRole | undefined) ?? null };
  }
}
