/**
 * /v1/integrations/:id/workspaces: the workspaces an organisation
 * integration is enabled for. Only enabled workspaces see it and create
 * providers from it; disabling one stops its providers at once (they answer
 * 403 until it is enabled again). Organisation keys only: the list names
 * workspaces.
 */
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import type { Integration } from '../store/integrations.js';
import { requireOrganisation, type Caller } from './access.js';
import { visibleIntegration } from './integration-access.js';
import { bodyChecker, reply } from './input.js';
import { route, type AdminDeps, type Reply, type Route } from './router.js';

interface PutBody {
  workspaces: { id: string; enabled: boolean }[];
}

const checkPut = bodyChecker<PutBody>({
  type: 'object',
  additionalProperties: false,
  required: ['workspaces'],
  properties: {
    workspaces: {
      type: 'array',
      maxItems: 1000,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'enabled'],
        properties: { id: { type: 'string', minLength: 1, maxLength: 255 }, enabled: { type: 'boolean' } },
      },
    },
  },
});

/**
 * An organisation integration, for an organisation key. The route's scope is
 * checked first (by the router), the key's level here, as it always was.
 */
async function organisationIntegration(deps: AdminDeps, caller: Caller, ref: string): Promise<Result<Integration>> {
  const denied = requireOrganisation(caller, 'workspace access of an integration');
  if (denied !== null) return { ok: false, error: denied };
  const found = await visibleIntegration(deps, caller, ref);
  if (!found.ok) return found;
  if (found.value.workspaceId !== null) {
    return { ok: false, error: new GatewayError(409, `integration '${ref}' belongs to one workspace: workspace access is for organisation integrations`, { code: 'conflict' }) };
  }
  return found;
}

async function listing(deps: AdminDeps, id: string): Promise<Result<Reply>> {
  const ids = await deps.store.integrations.workspaces(id);
  return reply(200, { object: 'list', total: ids.length, data: ids.map((w) => ({ object: 'integration-workspace', id: w, enabled: true })) });
}

const PATH = '/integrations/:id/workspaces';

export const integrationWorkspaceRoutes: Route[] = [
  route({
    method: 'GET',
    path: PATH,
    description: 'Lists the workspaces an organisation integration is enabled in.',
    scope: 'integrations.read',
    async handler({ caller, params }, deps) {
      const found = await organisationIntegration(deps, caller, params.id!);
      return found.ok ? listing(deps, found.value.id) : found;
    },
  }),
  route({
    method: 'PUT',
    path: PATH,
    description: 'Enables or disables an organisation integration in workspaces.',
    handlerBody: checkPut,
    scope: 'integrations.update',
    // The body is read after the integration is found (404/409 before 400).
    async handler({ caller, params, body }, deps) {
      const found = await organisationIntegration(deps, caller, params.id!);
      if (!found.ok) return found;
      const input = checkPut(body);
      if (!input.ok) return input;
      const changes: { workspaceId: string; enabled: boolean }[] = [];
      for (const [i, w] of input.value.workspaces.entries()) {
        const param = `workspaces[${i}].id`;
        const ws = await deps.store.workspaces.find(w.id);
        if (ws === null) return { ok: false, error: new GatewayError(404, `${param}: workspace '${w.id}' not found`, { code: 'not_found', param }) };
        if (changes.some((c) => c.workspaceId === ws.id)) return { ok: false, error: invalid(`${param}: workspace '${w.id}' is listed twice`, param) };
        changes.push({ workspaceId: ws.id, enabled: w.enabled });
      }
      await deps.store.integrations.setWorkspaces(found.value.id, changes);
      return listing(deps, found.value.id);
    },
  }),
];
