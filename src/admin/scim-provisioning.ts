/**
 * SCIM 2.0 provisioning (RFC 7643/7644), the part an identity provider needs
 * to push people and groups: POST /v1/scim/v2/Users, POST /v1/scim/v2/Groups,
 * PATCH /v1/scim/v2/Groups/:id (members add/remove/replace, displayName
 * replace). Resources have RFC 7643 shapes; errors keep the gateway's
 * envelope (not SCIM's urn:…:Error), like every other route.
 *
 * A provisioned user is an organisation member whose userName is their email.
 * A user who joins a group mapped to workspaces (scim.ts) joins those
 * workspaces with the mapping's role; one who leaves it leaves the workspaces
 * no other group of theirs maps. Posting a group whose displayName exists
 * adopts that group (200), so a mapping made by name before the provider
 * pushed the group takes effect.
 */
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import { isUniqueViolation } from '../store/db.js';
import type { GroupMember, ScimGroup } from '../store/scim.js';
import type { User } from '../store/users.js';
import type { Workspace } from '../store/workspaces.js';
import { announceDropped, seat, seconds, unseat, type Seat } from './membership.js';
import { bodyChecker, iso, reply, S } from './input.js';
import { route, type AdminDeps, type Route } from './router.js';
import type { IssuedKey } from './user-keys.js';
import { createUser, EMAIL_SCHEMA } from './users.js';

const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const EMAIL = new RegExp(EMAIL_SCHEMA.pattern);

// Identity providers send more attributes than these (displayName, locale, externalId, …): accepted and ignored.
interface ScimUserBody {
  userName: string;
  name?: { givenName?: string; familyName?: string };
  emails?: { value: string; primary?: boolean }[];
}

const checkUser = bodyChecker<ScimUserBody>({
  type: 'object',
  required: ['userName'],
  properties: {
    userName: { type: 'string', minLength: 1, maxLength: 320 },
    name: { type: 'object', properties: { givenName: { type: 'string', maxLength: 255 }, familyName: { type: 'string', maxLength: 255 } } },
    emails: { type: 'array', maxItems: 20, items: { type: 'object', required: ['value'], properties: { value: EMAIL_SCHEMA, primary: { type: 'boolean' } } } },
  },
});

const memberRefs = { type: 'array', maxItems: 1000, items: { type: 'object', required: ['value'], properties: { value: S.ref } } };

interface ScimGroupBody {
  displayName: string;
  members?: { value: string }[];
}

const checkGroup = bodyChecker<ScimGroupBody>({
  type: 'object',
  required: ['displayName'],
  properties: { displayName: S.name, members: memberRefs },
});

interface PatchOp {
  op: string;
  path?: string;
  value?: unknown;
}

const checkPatch = bodyChecker<{ Operations: PatchOp[] }>({
  type: 'object',
  required: ['Operations'],
  properties: {
    Operations: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: {
        type: 'object',
        required: ['op'],
        properties: { op: { type: 'string', pattern: '^(?:[aA][dD][dD]|[rR][eE][mM][oO][vV][eE]|[rR][eE][pP][lL][aA][cC][eE])$', description: 'one of add, remove, replace' }, path: { type: 'string' } },
      },
    },
  },
});
const checkMemberRefs = bodyChecker<{ members?: { value: string }[] }>({ type: 'object', properties: { members: memberRefs } });

function userResource(u: User): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA],
    id: u.id,
    userName: u.email,
    name: { givenName: u.firstName, familyName: u.lastName },
    emails: [{ value: u.email, primary: true }],
    active: true,
    meta: { resourceType: 'User', created: iso(u.createdAt), lastModified: iso(u.lastUpdatedAt), location: `/v1/scim/v2/Users/${u.id}` },
  };
}

function groupResource(g: ScimGroup, members: readonly GroupMember[]): Record<string, unknown> {
  return {
    schemas: [GROUP_SCHEMA],
    id: g.id,
    displayName: g.name,
    members: members.map((m) => ({ value: m.id, display: m.email })),
    meta: { resourceType: 'Group', created: iso(g.createdAt), location: `/v1/scim/v2/Groups/${g.id}` },
  };
}

/** The user's email: the primary one, else the first, else userName when it is an address. */
function emailOf(b: ScimUserBody): Result<string> {
  const email = (b.emails?.find((e) => e.primary === true) ?? b.emails?.[0])?.value ?? b.userName;
  return EMAIL.test(email) ? { ok: true, value: email } : { ok: false, error: invalid('emails: an email address is required (in emails or as userName)', 'emails') };
}

/** Ids of existing users, for a list of SCIM member references; 404 naming the first unknown one. */
async function knownUsers(deps: AdminDeps, refs: readonly { value: string }[], param: string): Promise<Result<GroupMember[]>> {
  const out: GroupMember[] = [];
  for (const [i, ref] of refs.entries()) {
    const user = await deps.store.users.get(ref.value);
    if (user === null) return { ok: false, error: new GatewayError(404, `user '${ref.value}' not found`, { code: 'not_found', param: `${param}[${i}].value` }) };
    if (!out.some((u) => u.id === user.id)) out.push({ id: user.id, email: user.email });
  }
  return { ok: true, value: out };
}

/**
 * Gives a group the members `target` (and, if given, a new name), all at
 * once: newcomers join the group's workspaces, leavers leave the ones no
 * other group of theirs maps. Returns the keys made for newcomers.
 */
async function applyGroup(deps: AdminDeps, group: ScimGroup, current: readonly GroupMember[], target: readonly GroupMember[], rename: string | null): Promise<IssuedKey[]> {
  const scim = deps.store.users.scim;
  const joining = target.filter((t) => !current.some((c) => c.id === t.id));
  const leaving = current.filter((c) => !target.some((t) => t.id === c.id));
  const seats: Seat[] = [];
  for (const m of await scim.mappingsOf(group.id)) {
    const ws: Workspace | null = await deps.store.workspaces.get(m.workspaceId);
    if (ws !== null) seats.push({ workspace: ws, role: m.role });
  }
  const org = await deps.store.settings.organisation();
  const { issued, dropped } = await deps.store.db.transaction(async (tx) => {
    if (rename !== null) await scim.renameGroup(group.id, rename, tx);
    const issued: IssuedKey[] = [];
    for (const user of joining) {
      await scim.addMember(group.id, user.id, tx);
      issued.push(...(await seat(deps, tx, org, user, seats, 'scim')));
    }
    for (const user of leaving) await scim.removeMember(group.id, user.id, tx);
    return { issued, dropped: await unseat(deps, tx, await scim.unbackedSeats(leaving.map((u) => u.id), tx)) };
  });
  announceDropped(deps, dropped);
  return issued;
}

/**
 * The members after a PATCH's operations, applied in order, and the new name
 * if one is set. Attribute names are case-insensitive (RFC 7643); `remove`
 * takes a list of members in `value`, none (all go), or a path
 * `members[value eq "<id>"]`.
 */
async function patched(deps: AdminDeps, ops: readonly PatchOp[], current: readonly GroupMember[]): Promise<Result<{ members: GroupMember[]; rename: string | null }>> {
  let members = [...current];
  let rename: string | null = null;
  for (const [i, o] of ops.entries()) {
    const op = o.op.toLowerCase();
    const at = `Operations[${i}]`;
    const single = o.path === undefined ? null : /^members\[value eq "([^"]+)"\]$/i.exec(o.path);
    if (single !== null && op === 'remove') {
      members = members.filter((m) => m.id !== single[1]);
      continue;
    }
    // Without a path, the attributes come in value: {members, displayName}.
    let attrs: { members?: unknown; displayname?: unknown };
    const path = o.path?.toLowerCase();
    if (path === 'members' || path === 'displayname') attrs = { [path]: o.value };
    else if (path === undefined && op !== 'remove' && typeof o.value === 'object' && o.value !== null && !Array.isArray(o.value)) {
      attrs = Object.fromEntries(Object.entries(o.value).map(([k, v]) => [k.toLowerCase(), v]));
    } else return { ok: false, error: invalid(`${at}.path: only members and displayName can be changed`, `${at}.path`) };
    if ('displayname' in attrs) {
      const name = attrs.displayname;
      if (op === 'remove' || typeof name !== 'string' || name === '' || name.length > 255) {
        return { ok: false, error: invalid(`${at}.value: displayName must be a name of 1 to 255 characters`, `${at}.value`) };
      }
      rename = name;
    }
    if (!('members' in attrs)) continue;
    if (op === 'remove' && attrs.members === undefined) {
      members = [];
      continue;
    }
    const refs = checkMemberRefs({ members: attrs.members });
    if (!refs.ok) return { ok: false, error: invalid(`${at}.value: members must be a list of {value: user id}`, `${at}.value`) };
    const users = await knownUsers(deps, refs.value.members ?? [], `${at}.value`);
    if (!users.ok) return users;
    if (op === 'replace') members = users.value;
    else if (op === 'add') members.push(...users.value.filter((u) => !members.some((m) => m.id === u.id)));
    else members = members.filter((m) => !users.value.some((u) => u.id === m.id));
  }
  return { ok: true, value: { members, rename } };
}

function nameTaken(name: string, param: string): GatewayError {
  return new GatewayError(409, `a SCIM group named '${name}' exists`, { code: 'conflict', param });
}

export const scimProvisioningRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/scim/v2/Users',
    description: 'SCIM 2.0: provisions a user.',
    handlerBody: checkUser,
    organisation: 'provisioning a user',
    scope: 'users.create',
    admins: true,
    async handler({ caller, body }, deps) {
      const input = checkUser(body);
      if (!input.ok) return input;
      const email = emailOf(input.value);
      if (!email.ok) return email;
      const name = input.value.name;
      const made = await createUser(deps, { email: email.value, firstName: name?.givenName ?? null, lastName: name?.familyName ?? null, role: 'member' }, []);
      return made.ok ? reply(201, userResource(made.value.user)) : made;
    },
  }),
  route({
    method: 'POST',
    path: '/scim/v2/Groups',
    description: 'SCIM 2.0: provisions a group and its members.',
    handlerBody: checkGroup,
    organisation: 'provisioning a group',
    scope: 'users.create',
    admins: true,
    async handler({ caller, body }, deps) {
      const input = checkGroup(body);
      if (!input.ok) return input;
      const wanted = await knownUsers(deps, input.value.members ?? [], 'members');
      if (!wanted.ok) return wanted;
      const scim = deps.store.users.scim;
      let group = await scim.groupByName(input.value.displayName);
      const adopted = group !== null;
      if (group === null) {
        try {
          group = await scim.createGroup(input.value.displayName, seconds(deps));
        } catch (e) {
          if (isUniqueViolation(e)) return { ok: false, error: nameTaken(input.value.displayName, 'displayName') };
          throw e;
        }
      }
      const current = await scim.members(group.id);
      const target = [...current, ...wanted.value.filter((w) => !current.some((c) => c.id === w.id))];
      const issued = await applyGroup(deps, group, current, target, null);
      return reply(adopted ? 200 : 201, { ...groupResource(group, await scim.members(group.id)), api_keys: issued });
    },
  }),
  route({
    method: 'PATCH',
    path: '/scim/v2/Groups/:id',
    description: "SCIM 2.0: changes a group's name or members (add, remove, replace).",
    handlerBody: checkPatch,
    organisation: 'changing a group',
    scope: 'users.update',
    admins: true,
    async handler({ caller, params, body }, deps) {
      const input = checkPatch(body);
      if (!input.ok) return input;
      const scim = deps.store.users.scim;
      const group = await scim.group(params.id!);
      if (group === null) return { ok: false, error: new GatewayError(404, `SCIM group '${params.id}' not found`, { code: 'not_found' }) };
      const current = await scim.members(group.id);
      const next = await patched(deps, input.value.Operations, current);
      if (!next.ok) return next;
      let issued: IssuedKey[];
      try {
        issued = await applyGroup(deps, group, current, next.value.members, next.value.rename);
      } catch (e) {
        if (isUniqueViolation(e)) return { ok: false, error: nameTaken(next.value.rename ?? group.name, 'displayName') };
        throw e;
      }
      const after = (await scim.group(group.id)) ?? group;
      return reply(200, { ...groupResource(after, await scim.members(group.id)), api_keys: issued });
    },
  }),
];
