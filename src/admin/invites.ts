/**
 * /v1/users/invites: an invitation names an email, the organisation role and
 * the workspaces to join; it is pending for INVITE_TTL_S. Accepting it
 * creates the user and memberships (and auto-created keys) at once. There are
 * no user sessions in this gateway, so the accepting call is made on the
 * user's behalf by an organisation key (the dashboard, an identity bridge),
 * which hands the answer's `api_keys` secrets to the user.
 *
 * Accepting an accepted invite: 409. An expired one: 410 Gone (it cannot be
 * accepted any more; a new invite is needed), distinct from the conflict.
 */
import { GatewayError, type Result } from '../shared/errors.js';
import type { Invite, InviteStatus } from '../store/invites.js';
import { ORG_ROLES } from '../store/roles.js';
import { normaliseEmail } from '../store/users.js';
import type { Workspace } from '../store/workspaces.js';
import { notFound } from './access.js';
import { bodyChecker, listReply, queryOf, reply } from './input.js';
import { seconds, type Seat } from './membership.js';
import { roleSchema } from './roles.js';
import { route, type AdminDeps, type Route } from './router.js';
import { createUser, EMAIL_SCHEMA, emailTaken, joinedView, newcomer, PERSON_NAME, SEATS_SCHEMA } from './users.js';

/** Portkey's invitations last a week; so do these. */
const INVITE_TTL_S = 7 * 86_400;
const STATUSES: readonly InviteStatus[] = ['pending', 'accepted', 'expired'];

interface CreateBody {
  email: string;
  role?: string;
  workspaces?: { id: string; role: string }[];
}

interface AcceptBody {
  first_name?: string | null;
  last_name?: string | null;
}

const checkCreate = bodyChecker<CreateBody>({
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: { email: EMAIL_SCHEMA, role: roleSchema(ORG_ROLES), workspaces: SEATS_SCHEMA },
});

const checkAccept = bodyChecker<AcceptBody>({
  type: 'object',
  additionalProperties: false,
  properties: { first_name: PERSON_NAME, last_name: PERSON_NAME },
});

function inviteView(i: Invite): Record<string, unknown> {
  return {
    object: 'invite',
    id: i.id,
    email: i.email,
    role: i.role,
    workspaces: i.workspaces,
    status: i.status,
    expires_at: i.expiresAt,
    created_at: i.createdAt,
    accepted_at: i.acceptedAt,
  };
}

async function found(deps: AdminDeps, id: string): Promise<Result<Invite>> {
  const invite = await deps.store.users.invites.get(id, seconds(deps));
  return invite === null ? { ok: false, error: notFound('invite', id) } : { ok: true, value: invite };
}

function alreadyAccepted(id: string): GatewayError {
  return new GatewayError(409, `invite '${id}' has already been accepted`, { code: 'invite_accepted' });
}

/** The invite's workspaces that still exist (one deleted since the invite was made is skipped). */
async function remainingSeats(deps: AdminDeps, invite: Invite): Promise<Seat[]> {
  const seats: Seat[] = [];
  for (const s of invite.workspaces) {
    const ws: Workspace | null = await deps.store.workspaces.get(s.id);
    if (ws !== null) seats.push({ workspace: ws, role: s.role });
  }
  return seats;
}

export const inviteRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/users/invites',
    description: 'Invites a user to the organisation, and to workspaces with roles.',
    handlerBody: checkCreate,
    organisation: 'inviting a user',
    scope: 'users.create',
    admins: true,
    async handler({ caller, body }, deps) {
      const input = checkCreate(body);
      if (!input.ok) return input;
      const b = input.value;
      const joins = await newcomer(deps, caller, b);
      if (!joins.ok) return joins;
      const { role, seats } = joins.value;
      const email = normaliseEmail(b.email);
      const now = seconds(deps);
      if ((await deps.store.users.byEmail(email)) !== null) return { ok: false, error: emailTaken(email) };
      if ((await deps.store.users.invites.pendingFor(email, now)) !== null) {
        return { ok: false, error: new GatewayError(409, `'${email}' already has a pending invite`, { code: 'conflict', param: 'email' }) };
      }
      const invite = await deps.store.users.invites.create(
        { email, role, workspaces: seats.map((s) => ({ id: s.workspace.id, role: s.role })), expiresAt: now + INVITE_TTL_S },
        now,
      );
      return reply(201, inviteView(invite));
    },
  }),
  route({
    method: 'GET',
    path: '/users/invites',
    description: 'Lists invites, filtered by status.',
    query: queryOf({ status: { enum: STATUSES } }),
    organisation: 'listing invites',
    scope: 'users.list',
    paged: true,
    async handler({ query, page }, deps) {
      const status = query.get('status') ?? undefined;
      if (status !== undefined && !STATUSES.includes(status as InviteStatus)) {
        return { ok: false, error: new GatewayError(400, `status: must be one of ${STATUSES.join(', ')}`, { param: 'status' }) };
      }
      return listReply(await deps.store.users.invites.list(status as InviteStatus | undefined, seconds(deps), page), inviteView);
    },
  }),
  route({
    method: 'GET',
    path: '/users/invites/:id',
    description: 'One invite.',
    organisation: 'reading an invite',
    scope: 'users.read',
    async handler({ params }, deps) {
      const invite = await found(deps, params.id!);
      return invite.ok ? reply(200, inviteView(invite.value)) : invite;
    },
  }),
  route({
    method: 'POST',
    path: '/users/invites/:id/accept',
    description: "Accepts an invite: the user joins with the invite's roles.",
    handlerBody: checkAccept,
    organisation: 'accepting an invite',
    scope: 'users.create',
    admins: true,
    async handler({ caller, params, body }, deps) {
      const input = checkAccept(body);
      if (!input.ok) return input;
      const invite = await found(deps, params.id!);
      if (!invite.ok) return invite;
      const i = invite.value;
      if (i.status === 'accepted') return { ok: false, error: alreadyAccepted(i.id) };
      if (i.status === 'expired') return { ok: false, error: new GatewayError(410, `invite '${i.id}' has expired`, { code: 'invite_expired' }) };
      const seats = await remainingSeats(deps, i);
      const made = await createUser(
        deps,
        { email: i.email, firstName: input.value.first_name ?? null, lastName: input.value.last_name ?? null, role: i.role },
        seats,
        // Marks the invite accepted in the same transaction: of two acceptances at once, one creates the user.
        async (tx) => ((await deps.store.users.invites.accept(i.id, seconds(deps), tx)) ? null : alreadyAccepted(i.id)),
      );
      if (!made.ok) return made;
      return reply(201, { ...joinedView(made.value.user, seats, made.value.issued), invite_id: i.id });
    },
  }),
  route({
    method: 'DELETE',
    path: '/users/invites/:id',
    description: 'Withdraws an invite.',
    organisation: 'deleting an invite',
    scope: 'users.delete',
    admins: true,
    async handler({ caller, params }, deps) {
      if (!(await deps.store.users.invites.delete(params.id!))) return { ok: false, error: notFound('invite', params.id!) };
      return reply(200, { id: params.id, object: 'invite', deleted: true });
    },
  }),
];
