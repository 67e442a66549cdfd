/**
 * /v1/scim/workspaces: SCIM group → workspace mappings (spec 1.15.0). A
 * mapping names its group by exactly one of `scim_group_id` (an existing
 * group) or `scim_group_name` (created when missing, so a mapping can be made
 * before the identity provider pushes the group). A group has one role in
 * every workspace it maps to: a different role is refused, as Portkey does,
 * with a 400 naming `role`; the same mapping again returns the existing one
 * (200). The group's members join the workspace with the mapping's role;
 * deleting the mapping removes the memberships it alone gave.
 */
import { GatewayError, invalid } from '../shared/errors.js';
import { isUniqueViolation } from '../store/db.js';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../store/roles.js';
import type { ScimGroup, ScimMapping } from '../store/scim.js';
import { notFound } from './access.js';
import { bodyChecker, listReply, queryOf, reply, S } from './input.js';
import { announceDropped, seat, seconds, unseat } from './membership.js';
import { roleSchema } from './roles.js';
import { route, type Route } from './router.js';
import type { IssuedKey } from './user-keys.js';
import { roleFilter } from './users.js';

interface CreateBody {
  scim_group_name?: string;
  scim_group_id?: string;
  workspace_id: string;
  role: string;
}

const checkCreate = bodyChecker<CreateBody>({
  type: 'object',
  additionalProperties: false,
  required: ['workspace_id', 'role'],
  properties: { scim_group_name: S.name, scim_group_id: S.ref, workspace_id: S.ref, role: roleSchema(WORKSPACE_ROLES) },
});

function mappingView(m: ScimMapping): Record<string, unknown> {
  return { id: m.id, workspace_id: m.workspaceId, scim_group: m.groupName, scim_group_id: m.groupId, role: m.role };
}

export const scimMappingRoutes: Route[] = [
  route({
    method: 'POST',
    path: '/scim/workspaces',
    description: 'Maps a SCIM group to a workspace with a role.',
    handlerBody: checkCreate,
    organisation: 'mapping a SCIM group',
    scope: 'users.update',
    admins: true,
    async handler({ caller, body }, deps) {
      const input = checkCreate(body);
      if (!input.ok) return input;
      const b = input.value;
      if ((b.scim_group_name === undefined) === (b.scim_group_id === undefined)) {
        const param = b.scim_group_id === undefined ? 'scim_group_name' : 'scim_group_id';
        return { ok: false, error: invalid(`${param}: exactly one of scim_group_name or scim_group_id is required`, param) };
      }
      const role = b.role.toLowerCase() as WorkspaceRole;
      const ws = await deps.store.workspaces.find(b.workspace_id);
      if (ws === null) return { ok: false, error: new GatewayError(404, `workspace '${b.workspace_id}' not found`, { code: 'not_found', param: 'workspace_id' }) };
      if (ws.status === 'archived') return { ok: false, error: new GatewayError(409, `workspace '${ws.slug}' is archived`, { code: 'workspace_archived', param: 'workspace_id' }) };
      const scim = deps.store.users.scim;
      let group: ScimGroup | null;
      if (b.scim_group_id !== undefined) {
        group = await scim.group(b.scim_group_id);
        if (group === null) return { ok: false, error: new GatewayError(404, `SCIM group '${b.scim_group_id}' not found`, { code: 'not_found', param: 'scim_group_id' }) };
      } else group = await scim.groupByName(b.scim_group_name!);

      const mappings = group === null ? [] : await scim.mappingsOf(group.id);
      const other = mappings.find((m) => m.role !== role);
      if (other !== undefined) {
        return {
          ok: false,
          error: invalid(`role: SCIM group is already mapped to other workspace(s) with role '${other.role}'. A group can only be mapped with a single role across workspaces.`, 'role'),
        };
      }
      const same = mappings.find((m) => m.workspaceId === ws.id);
      if (same !== undefined) return reply(200, { ...mappingView(same), api_keys: [] });

      const members = group === null ? [] : await scim.members(group.id);
      const org = await deps.store.settings.organisation();
      const at = seconds(deps);
      try {
        const { mapping, issued } = await deps.store.db.transaction(async (tx) => {
          const g = group ?? (await scim.createGroup(b.scim_group_name!, at, tx));
          const mapping = await scim.createMapping(g, ws.id, role, at, tx);
          const issued: IssuedKey[] = [];
          for (const user of members) issued.push(...(await seat(deps, tx, org, user, [{ workspace: ws, role }], 'scim')));
          return { mapping, issued };
        });
        return reply(201, { ...mappingView(mapping), api_keys: issued });
      } catch (e) {
        // Another call created the same group or mapping meanwhile.
        if (isUniqueViolation(e)) return { ok: false, error: new GatewayError(409, 'the SCIM group or mapping was created concurrently; retry', { code: 'conflict' }) };
        throw e;
      }
    },
  }),
  route({
    method: 'GET',
    path: '/scim/workspaces',
    description: 'Lists SCIM group to workspace mappings.',
    query: queryOf({ role: 'admin, manager or member (any case)', workspace_id: 'workspace id or slug', scim_group_id: 'SCIM group id' }),
    organisation: 'listing SCIM mappings',
    scope: 'users.list',
    paged: true,
    async handler({ query, page }, deps) {
      const role = roleFilter(query, WORKSPACE_ROLES);
      if (!role.ok) return role;
      const wsRef = query.get('workspace_id');
      let workspaceId: string | undefined;
      if (wsRef !== null) {
        const ws = await deps.store.workspaces.find(wsRef);
        if (ws === null) return { ok: false, error: new GatewayError(404, `workspace '${wsRef}' not found`, { code: 'not_found', param: 'workspace_id' }) };
        workspaceId = ws.id;
      }
      const filter = { workspaceId, groupId: query.get('scim_group_id') ?? undefined, role: role.value };
      return listReply(await deps.store.users.scim.listMappings(filter, page), mappingView);
    },
  }),
  route({
    method: 'DELETE',
    path: '/scim/workspaces/:id',
    description: 'Deletes a SCIM group to workspace mapping.',
    organisation: 'deleting a SCIM mapping',
    scope: 'users.update',
    admins: true,
    async handler({ caller, params }, deps) {
      const scim = deps.store.users.scim;
      const mapping = await scim.mapping(params.id!);
      if (mapping === null) return { ok: false, error: notFound('SCIM mapping', params.id!) };
      const members = await scim.members(mapping.groupId);
      const dropped = await deps.store.db.transaction(async (tx) => {
        if (!(await scim.deleteMapping(mapping.id, tx))) return null;
        return unseat(deps, tx, await scim.unbackedSeats(members.map((m) => m.id), tx));
      });
      if (dropped === null) return { ok: false, error: notFound('SCIM mapping', params.id!) };
      announceDropped(deps, dropped);
      return reply(200, { id: mapping.id, object: 'scim_workspace_mapping', deleted: true });
    },
  }),
];
