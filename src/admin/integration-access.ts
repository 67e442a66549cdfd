/**
 * Who may see, change and use an integration. Organisation keys see every
 * integration; a workspace key sees its workspace's and the organisation's
 * enabled for it (read only), and nothing else exists for it (404).
 * Organisation integrations change only through organisation keys; a
 * workspace's integrations also through its admins' keys (a workspace
 * service key acts as one), and its managers' while the workspace's
 * `managersWriteWsIntegrations` is on; never its members'.
 */
import { GatewayError, type Result } from '../shared/errors.js';
import type { Integration } from '../store/integrations.js';
import { notFound, requireOrganisation, requireStanding, standing, WORKSPACE_ADMIN, type Caller } from './access.js';
import type { AdminDeps } from './router.js';

export async function visibleIntegration(deps: AdminDeps, caller: Caller, ref: string): Promise<Result<Integration>> {
  const i = await deps.store.integrations.find(ref);
  if (i !== null && (caller.level === 'organisation' || (await deps.store.integrations.usableBy(i, caller.key.workspaceId)))) {
    return { ok: true, value: i };
  }
  return { ok: false, error: notFound('integration', ref) };
}

export async function writableIntegration(deps: AdminDeps, caller: Caller, ref: string): Promise<Result<Integration>> {
  const i = await visibleIntegration(deps, caller, ref);
  if (!i.ok) return i;
  const denied =
    i.value.workspaceId === null
      ? requireOrganisation(caller, 'changing an organisation integration')
      : await writeDenied(deps, caller, i.value.workspaceId);
  return denied === null ? i : { ok: false, error: denied };
}

/**
 * Who writes a workspace's integrations: admins and above; managers only while
 * the workspace's security settings allow it (a setting about managers would
 * mean nothing if members, below them, were let through).
 */
export async function writeDenied(deps: AdminDeps, caller: Caller, workspaceId: string): Promise<GatewayError | null> {
  if (standing(caller) >= WORKSPACE_ADMIN) return null;
  if (caller.workspaceRole !== 'manager') return requireStanding(caller, standing({ orgRole: null, workspaceRole: 'manager' }), "changing a workspace's integrations");
  const settings = await deps.store.settings.effective(workspaceId);
  if (settings.security_settings.managersWriteWsIntegrations) return null;
  return new GatewayError(403, "workspace managers may not change this workspace's integrations (managersWriteWsIntegrations is off)", {
    code: 'permission_denied',
  });
}

/**
 * An integration workspace `workspaceId` may create providers from (its
 * own, or an organisation one enabled for it); `integration_id` names it.
 */
export async function usableIntegration(deps: AdminDeps, ref: string, workspaceId: string): Promise<Result<Integration>> {
  const i = await deps.store.integrations.find(ref);
  if (i === null || (i.workspaceId !== null && i.workspaceId !== workspaceId)) {
    return { ok: false, error: new GatewayError(404, `integration '${ref}' not found`, { code: 'not_found', param: 'integration_id' }) };
  }
  if (!(await deps.store.integrations.usableBy(i, workspaceId))) {
    return {
      ok: false,
      error: new GatewayError(403, `integration '${i.slug}' is not enabled for this workspace (PUT /v1/integrations/${i.slug}/workspaces)`, {
        code: 'integration_not_enabled',
        param: 'integration_id',
      }),
    };
  }
  return { ok: true, value: i };
}
