/**
 * /v1/users: the organisation's users (Portkey's /admin/users). A user is
 * created with an organisation role and, optionally, the workspaces they
 * join; emails are unique regardless of case. Deleting a user deletes their
 * keys (see UserRepo.delete). Organisation keys only, scopes `users.*`.
 */
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import { isUniqueViolation, type Db } from '../store/db.js';
import type { Seating } from '../store/members.js';
import { ORG_ROLES, WORKSPACE_ROLES, type OrgRole } from '../store/roles.js';
import type { NewUser, User } from '../store/users.js';
import { notFound, type Caller } from './access.js';
import { bodyChecker, listReply, queryOf, reply, S } from './input.js';
import { resolveSeats, seat, seconds, type Seat } from './membership.js';
import { requireOwnerFor, roleSchema } from './roles.js';
import { route, type AdminDeps, type Route } from './router.js';
import type { IssuedKey } from './user-keys.js';

export const EMAIL_SCHEMA = { type: 'string', maxLength: 320, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', description: 'an email address' };
export const PERSON_NAME = { type: ['string', 'null'], maxLength: 255 };

/** `workspaces: [{id, role}]`: the workspaces a user joins (id or slug) and the role in each. */
export const SEATS_SCHEMA = {
  type: 'array',
  maxItems: 100,
  items: { type: 'object', additionalProperties: false, required: ['id', 'role'], properties: { id: S.ref, role: roleSchema(WORKSPACE_ROLES) } },
};

interface CreateBody {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  role?: string;
  workspaces?: { id: string; role: string }[];
}

interface UpdateBody {
  first_name?: string | null;
  last_name?: string | null;
  role?: string;
}

const checkCreate = bodyChecker<CreateBody>({
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: { email: EMAIL_SCHEMA, first_name: PERSON_NAME, last_name: PERSON_NAME, role: roleSchema(ORG_ROLES), workspaces: SEATS_SCHEMA },
});

const checkUpdate = bodyChecker<UpdateBody>({
  type: 'object',
  additionalProperties: false,
  properties: { first_name: PERSON_NAME, last_name: PERSON_NAME, role: roleSchema(ORG_ROLES) },
});

export function userView(u: User, seats: readonly Seating[]): Record<string, unknown> {
  return {
    object: 'user',
    id: u.id,
    email: u.email,
    first_name: u.firstName,
    last_name: u.lastName,
    role: u.role,
    workspaces: seats.map((s) => ({ id: s.workspaceId, role: s.role })),
    created_at: u.createdAt,
    last_updated_at: u.lastUpdatedAt,
  };
}

/** The answer of a call that created a user: the user, and the secrets of keys made for them, shown this once. */
export function joinedView(user: User, seats: readonly Seat[], issued: readonly IssuedKey[]): Record<string, unknown> {
  return { ...userView(user, seats.map((s) => ({ workspaceId: s.workspace.id, role: s.role }))), api_keys: issued };
}

/**
 * Creates a user and seats them, all or nothing; 409 naming `email` when it
 * is taken. `first` runs first in the same transaction (an invite's
 * acceptance) and may refuse.
 */
export async function createUser(
  deps: AdminDeps,
  u: NewUser,
  seats: readonly Seat[],
  first?: (tx: Db) => Promise<GatewayError | null>,
): Promise<Result<{ user: User; issued: IssuedKey[] }>> {
  const org = await deps.store.settings.organisation();
  const at = seconds(deps);
  try {
    return await deps.store.db.transaction(async (tx): Promise<Result<{ user: User; issued: IssuedKey[] }>> => {
      const refused = first === undefined ? null : await first(tx);
      if (refused !== null) return { ok: false, error: refused };
      const user = await deps.store.users.create(u, at, tx);
      return { ok: true, value: { user, issued: await seat(deps, tx, org, user, seats, 'direct') } };
    });
  } catch (e) {
    if (isUniqueViolation(e)) return { ok: false, error: emailTaken(u.email) };
    throw e;
  }
}

/** What a new user (or an invite) asks for: the organisation role (member unless named; only owners grant owner) and the workspaces to join. */
export async function newcomer(deps: AdminDeps, caller: Caller, b: { role?: string; workspaces?: { id: string; role: string }[] }): Promise<Result<{ role: OrgRole; seats: Seat[] }>> {
  const role = (b.role?.toLowerCase() ?? 'member') as OrgRole;
  const owner = requireOwnerFor(caller, role);
  if (owner !== null) return { ok: false, error: owner };
  const seats = await resolveSeats(deps.store, b.workspaces ?? [], 'workspaces');
  return seats.ok ? { ok: true, value: { role, seats: seats.value } } : seats;
}

export function emailTaken(email: string, param = 'email'): GatewayError {
  return new GatewayError(409, `a user with the email '${email}' exists`, { code: 'conflict', param });
}

/** `role` query filter, any case; undefined when absent. */
export function roleFilter<R extends string>(query: URLSearchParams, roles: readonly R[]): Result<R | undefined> {
  const raw = query.get('role');
  if (raw === null) return { ok: true, value: undefined };
  const role = raw.toLowerCase() as R;
  return roles.includes(role) ? { ok: true, value: role } : { ok: false, error: invalid(`role: must be one of ${roles.join(', ')}`, 'role') };
}

async function found(deps: AdminDeps, id: string): Promise<Result<User>> {
  const user = await deps.store.users.get(id);
  return user === null ? { ok: false, error: notFound('user', id) } : { ok: true, value: user };
}

async function view(deps: AdminDeps, user: User): Promise<Record<string, unknown>> {
  return userView(user, (await deps.store.users.members.seatsOf([user.id])).get(user.id) ?? []);
}

export const userRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/users',
    description: 'Creates a user of the organisation.',
    handlerBody: checkCreate,
    organisation: 'creating a user',
    scope: 'users.create',
    admins: true,
    async handler({ caller, body }, deps) {
      const input = checkCreate(body);
      if (!input.ok) return input;
      const b = input.value;
      const joins = await newcomer(deps, caller, b);
      if (!joins.ok) return joins;
      const { role, seats } = joins.value;
      const made = await createUser(deps, { email: b.email, firstName: b.first_name ?? null, lastName: b.last_name ?? null, role }, seats);
      if (!made.ok) return made;
      return reply(201, joinedView(made.value.user, seats, made.value.issued));
    },
  }),
  route({
    method: 'GET',
    path: '/users',
    description: "Lists the organisation's users, filtered by role and email.",
    query: queryOf({ role: 'owner, admin or member (any case)', email: 'exact email address' }),
    organisation: 'listing users',
    scope: 'users.list',
    paged: true,
    async handler({ query, page }, deps) {
      const role = roleFilter(query, ORG_ROLES);
      if (!role.ok) return role;
      const users = await deps.store.users.list({ email: query.get('email') ?? undefined, role: role.value }, page);
      const seats = await deps.store.users.members.seatsOf(users.data.map((u) => u.id));
      return listReply(users, (u) => userView(u, seats.get(u.id) ?? []));
    },
  }),
  route({
    method: 'GET',
    path: '/users/:id',
    description: 'One user of the organisation.',
    organisation: 'reading a user',
    scope: 'users.read',
    async handler({ params }, deps) {
      const user = await found(deps, params.id!);
      return user.ok ? reply(200, await view(deps, user.value)) : user;
    },
  }),
  route({
    method: 'PUT',
    path: '/users/:id',
    description: "Changes a user's name or organisation role.",
    handlerBody: checkUpdate,
    organisation: 'changing a user',
    scope: 'users.update',
    admins: true,
    async handler({ caller, params, body }, deps) {
      const input = checkUpdate(body);
      if (!input.ok) return input;
      const user = await found(deps, params.id!);
      if (!user.ok) return user;
      const role = input.value.role?.toLowerCase() as OrgRole | undefined;
      const owner = requireOwnerFor(caller, user.value.role) ?? (role === undefined ? null : requireOwnerFor(caller, role));
      if (owner !== null) return { ok: false, error: owner };
      const patch = {
        ...(input.value.first_name !== undefined ? { firstName: input.value.first_name } : {}),
        ...(input.value.last_name !== undefined ? { lastName: input.value.last_name } : {}),
        ...(role !== undefined ? { role } : {}),
      };
      const updated = await deps.store.users.update(user.value.id, patch, seconds(deps));
      return updated === null ? { ok: false, error: notFound('user', params.id!) } : reply(200, await view(deps, updated));
    },
  }),
  route({
    method: 'DELETE',
    path: '/users/:id',
    description: 'Removes a user from the organisation.',
    organisation: 'deleting a user',
    scope: 'users.delete',
    admins: true,
    async handler({ caller, params }, deps) {
      const user = await found(deps, params.id!);
      if (!user.ok) return user;
      const owner = requireOwnerFor(caller, user.value.role);
      if (owner !== null) return { ok: false, error: owner };
      const keys = await deps.store.users.delete(user.value.id);
      if (keys === null) return { ok: false, error: notFound('user', params.id!) };
      return reply(200, { id: user.value.id, object: 'user', deleted: true, deleted_api_keys: keys });
    },
  }),
];
