/**
 * /v1/workspaces/:id/users: a workspace's members (Portkey's
 * /admin/workspaces/{id}/users). Reading needs `workspaces.read`; adding,
 * changing and removing need `workspaces.update` and an organisation owner or
 * admin, or the workspace's own admin or manager, never above the caller's
 * own role (access.ts `standing`): a manager neither grants the admin role nor
 * changes or removes an admin (or an organisation admin seated here).
 * Removing a member deletes their keys of that workspace.
 */
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import type { Member } from '../store/members.js';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../store/roles.js';
import type { User } from '../store/users.js';
import type { Workspace } from '../store/workspaces.js';
import { isOrgAdmin, notFound, requireStanding, standing, type Caller } from './access.js';
import { bodyChecker, listReply, pageRequest, queryOf, reply, S } from './input.js';
import { announceDropped, seat, unseat } from './membership.js';
import { roleSchema } from './roles.js';
import { route, type AdminDeps, type Route } from './router.js';
import type { IssuedKey } from './user-keys.js';
import { roleFilter } from './users.js';
import { readableWorkspace, visibleWorkspace } from './workspaces.js';

interface AddBody {
  users: { id: string; role: string }[];
}

const checkAdd = bodyChecker<AddBody>({
  type: 'object',
  additionalProperties: false,
  required: ['users'],
  properties: {
    users: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: { type: 'object', additionalProperties: false, required: ['id', 'role'], properties: { id: S.ref, role: roleSchema(WORKSPACE_ROLES) } },
    },
  },
});

const checkUpdate = bodyChecker<{ role: string }>({
  type: 'object',
  additionalProperties: false,
  required: ['role'],
  properties: { role: roleSchema(WORKSPACE_ROLES) },
});

function memberView(m: Member): Record<string, unknown> {
  return {
    object: 'workspace-user',
    id: m.id,
    email: m.email,
    first_name: m.firstName,
    last_name: m.lastName,
    org_role: m.orgRole,
    role: m.role,
    workspace_id: m.workspaceId,
    status: 'active',
    source: m.source,
    created_at: m.createdAt,
  };
}

/** The workspace a member change acts on: visible (404), manageable by the caller (403), active (409). */
async function manageable(deps: AdminDeps, caller: Caller, ref: string): Promise<Result<Workspace>> {
  const ws = await visibleWorkspace(deps, caller, ref);
  if (!ws.ok) return ws;
  const manager = isOrgAdmin(caller) || (caller.level === 'workspace' && (caller.workspaceRole === 'admin' || caller.workspaceRole === 'manager'));
  if (!manager) return { ok: false, error: new GatewayError(403, 'managing members needs an organisation owner or admin, or a workspace admin or manager', { code: 'permission_denied' }) };
  if (ws.value.status === 'archived') return { ok: false, error: new GatewayError(409, `workspace '${ws.value.slug}' is archived`, { code: 'workspace_archived' }) };
  return ws;
}

async function member(deps: AdminDeps, ws: Workspace, userId: string): Promise<Result<Member>> {
  const m = await deps.store.users.members.get(ws.id, userId);
  return m === null ? { ok: false, error: notFound('workspace member', userId) } : { ok: true, value: m };
}

/** 403 unless the caller stands at least as high as the member (by their organisation and workspace roles). */
function outranks(caller: Caller, m: Member, doing: string): Result<Member> {
  const denied = requireStanding(caller, standing({ orgRole: m.orgRole, workspaceRole: m.role }), `${doing} user '${m.id}'`);
  return denied === null ? { ok: true, value: m } : { ok: false, error: denied };
}

/** 403 naming `param` unless the caller stands at least as high as the workspace role it would grant. */
function mayGrant(caller: Caller, role: WorkspaceRole, param: string): GatewayError | null {
  return requireStanding(caller, standing({ orgRole: null, workspaceRole: role }), `${param}: granting the workspace role '${role}'`, param);
}

// Member changes read their body after the workspace is found and manageable (404/403/409 before 400).
export const memberRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/workspaces/:id/users',
    description: 'Adds users to a workspace with roles.',
    handlerBody: checkAdd,
    scope: 'workspaces.update',
    async handler({ caller, params, body }, deps) {
      const ws = await manageable(deps, caller, params.id!);
      if (!ws.ok) return ws;
      const input = checkAdd(body);
      if (!input.ok) return input;
      const joining: { user: User; role: WorkspaceRole }[] = [];
      for (const [i, ref] of input.value.users.entries()) {
        const param = `users[${i}].id`;
        const user = await deps.store.users.get(ref.id);
        if (user === null) return { ok: false, error: new GatewayError(404, `user '${ref.id}' not found`, { code: 'not_found', param }) };
        if (joining.some((j) => j.user.id === user.id)) return { ok: false, error: invalid(`${param}: user '${ref.id}' is named twice`, param) };
        if ((await deps.store.users.members.get(ws.value.id, user.id)) !== null) {
          return { ok: false, error: new GatewayError(409, `user '${ref.id}' is already a member of workspace '${ws.value.slug}'`, { code: 'conflict', param }) };
        }
        const role = ref.role.toLowerCase() as WorkspaceRole;
        const above = mayGrant(caller, role, `users[${i}].role`);
        if (above !== null) return { ok: false, error: above };
        joining.push({ user, role });
      }
      const org = await deps.store.settings.organisation();
      const issued = await deps.store.db.transaction(async (tx) => {
        const keys: IssuedKey[] = [];
        for (const j of joining) keys.push(...(await seat(deps, tx, org, j.user, [{ workspace: ws.value, role: j.role }], 'direct')));
        return keys;
      });
      const added: Member[] = [];
      for (const j of joining) {
        const m = await deps.store.users.members.get(ws.value.id, j.user.id);
        if (m !== null) added.push(m);
      }
      return reply(201, { object: 'list', data: added.map(memberView), api_keys: issued });
    },
  }),
  route({
    method: 'GET',
    path: '/workspaces/:id/users',
    description: "Lists a workspace's members, filtered by role and email.",
    query: queryOf({ role: 'admin, manager or member (any case)', email: 'exact email address' }),
    scope: 'workspaces.read',
    // Paging is read after the workspace is found (404 before 400).
    async handler({ caller, params, query }, deps) {
      const ws = await readableWorkspace(deps, caller, params.id!);
      if (!ws.ok) return ws;
      const page = pageRequest(query);
      if (!page.ok) return page;
      const role = roleFilter(query, WORKSPACE_ROLES);
      if (!role.ok) return role;
      return listReply(await deps.store.users.members.list(ws.value.id, { role: role.value, email: query.get('email') ?? undefined }, page.value), memberView);
    },
  }),
  route({
    method: 'GET',
    path: '/workspaces/:id/users/:userId',
    description: 'One member of a workspace.',
    scope: 'workspaces.read',
    async handler({ caller, params }, deps) {
      const ws = await readableWorkspace(deps, caller, params.id!);
      if (!ws.ok) return ws;
      const m = await member(deps, ws.value, params.userId!);
      return m.ok ? reply(200, memberView(m.value)) : m;
    },
  }),
  route({
    method: 'PUT',
    path: '/workspaces/:id/users/:userId',
    description: "Changes a member's role in a workspace.",
    handlerBody: checkUpdate,
    scope: 'workspaces.update',
    async handler({ caller, params, body }, deps) {
      const ws = await manageable(deps, caller, params.id!);
      if (!ws.ok) return ws;
      const input = checkUpdate(body);
      if (!input.ok) return input;
      const found = await member(deps, ws.value, params.userId!);
      const m = found.ok ? outranks(caller, found.value, 'changing the role of') : found;
      if (!m.ok) return m;
      const role = input.value.role.toLowerCase() as WorkspaceRole;
      const above = mayGrant(caller, role, 'role');
      if (above !== null) return { ok: false, error: above };
      await deps.store.users.members.setRole(ws.value.id, m.value.id, role);
      return reply(200, memberView({ ...m.value, role }));
    },
  }),
  route({
    method: 'DELETE',
    path: '/workspaces/:id/users/:userId',
    description: 'Removes a member from a workspace.',
    scope: 'workspaces.update',
    async handler({ caller, params }, deps) {
      const ws = await manageable(deps, caller, params.id!);
      if (!ws.ok) return ws;
      const found = await member(deps, ws.value, params.userId!);
      const m = found.ok ? outranks(caller, found.value, 'removing') : found;
      if (!m.ok) return m;
      const dropped = await deps.store.db.transaction((tx) => unseat(deps, tx, [{ workspaceId: ws.value.id, userId: m.value.id }]));
      announceDropped(deps, dropped);
      return reply(200, { id: m.value.id, object: 'workspace-user', workspace_id: ws.value.id, deleted: true, deleted_api_keys: dropped });
    },
  }),
];
