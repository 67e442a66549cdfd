/**
 * Invitations to join the organisation: an email, the role it will have, and
 * the workspaces it will join. Stored status is pending or accepted; a
 * pending invite past its expiry reads as expired.
 */
import type { Db, SqlValue } from './db.js';
import { newId } from './ids.js';
import { listPage, type Page, type PageRequest } from './page.js';
import type { OrgRole, WorkspaceRole } from './roles.js';

export type InviteStatus = 'pending' | 'accepted' | 'expired';

export interface InvitedSeat {
  /** Workspace id (slugs are resolved when the invite is made). */
  id: string;
  role: WorkspaceRole;
}

export interface Invite {
  id: string;
  email: string;
  role: OrgRole;
  workspaces: InvitedSeat[];
  status: InviteStatus;
  expiresAt: number;
  createdAt: number;
  acceptedAt: number | null;
}

interface Row {
  id: string;
  email: string;
  role: string;
  workspaces: string;
  status: string;
  expires_at: number;
  created_at: number;
  accepted_at: number | null;
}

/** `now`: Unix seconds, for telling pending from expired. */
function toInvite(r: Row, now: number): Invite {
  return {
    id: r.id,
    email: r.email,
    role: r.role as OrgRole,
    workspaces: JSON.parse(r.workspaces) as InvitedSeat[],
    status: r.status === 'pending' && r.expires_at <= now ? 'expired' : (r.status as InviteStatus),
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    acceptedAt: r.accepted_at,
  };
}

export type NewInvite = Pick<Invite, 'email' | 'role' | 'workspaces' | 'expiresAt'>;

export class InviteRepo {
  constructor(private readonly db: Db) {}

  /** `at`: Unix seconds. The email is expected lower-case already. */
  async create(i: NewInvite, at: number): Promise<Invite> {
    const invite: Invite = { id: newId(), ...i, status: 'pending', createdAt: at, acceptedAt: null };
    await this.db.run('INSERT INTO invites (id, email, role, workspaces, status, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      invite.id, invite.email, invite.role, JSON.stringify(invite.workspaces), 'pending', invite.expiresAt, at,
    ]);
    return invite;
  }

  async get(id: string, now: number): Promise<Invite | null> {
    const r = await this.db.get<Row>('SELECT * FROM invites WHERE id = ?', [id]);
    return r === undefined ? null : toInvite(r, now);
  }

  /** A pending, unexpired invite for this email, if any. */
  async pendingFor(email: string, now: number): Promise<Invite | null> {
    const r = await this.db.get<Row>("SELECT * FROM invites WHERE email = ? AND status = 'pending' AND expires_at > ?", [email, now]);
    return r === undefined ? null : toInvite(r, now);
  }

  list(status: InviteStatus | undefined, now: number, page: PageRequest): Promise<Page<Invite>> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (status === 'accepted') where.push("status = 'accepted'");
    else if (status !== undefined) {
      where.push(`status = 'pending' AND expires_at ${status === 'pending' ? '>' : '<='} ?`);
      params.push(now);
    }
    return listPage(this.db, 'invites', where, params, page, (r: Row) => toInvite(r, now));
  }

  /** Marks a pending invite accepted; false when another acceptance got there first. */
  async accept(id: string, at: number, tx: Db): Promise<boolean> {
    return (await tx.run("UPDATE invites SET status = 'accepted', accepted_at = ? WHERE id = ? AND status = 'pending'", [at, id])) > 0;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM invites WHERE id = ?', [id])) > 0;
  }
}
