/**
 * Organisation settings (spec 1.11.0-1.15.0): GET and PUT (partial)
 * /v1/organisation/settings, and a workspace's effective settings at
 * GET /v1/workspaces/:id/settings (overrides are written through
 * PUT /v1/workspaces/:id `settings`, see overrides.ts).
 */
import type { OrgSettings, SecuritySettings } from '../store/settings.js';
import { DEFAULT_GUARDRAILS_SCHEMA, resolveDefaultGuardrails, type DefaultGuardrailsPatch } from './default-guardrails.js';
import { bodyChecker, reply } from './input.js';
import { SECURITY_KEYS } from './overrides.js';
import { route, type Route } from './router.js';
import { readableWorkspace } from './workspaces.js';

/** Spec Limits: the session TTL is at least 900 seconds. */
const MIN_SESSION_TTL_S = 900;
/** A key living less than a minute is a mistake, not a policy. */
const MIN_USER_KEY_TTL_S = 60;

interface OrgPatch extends DefaultGuardrailsPatch {
  user_api_key_auto_create?: boolean;
  user_api_key_ttl?: number | null;
  user_api_key_rotation_period?: OrgSettings['user_api_key_rotation_period'];
  session_settings?: { max_session_ttl?: number };
  security_settings?: Partial<SecuritySettings>;
  log_bodies?: boolean;
}

const checkOrgPatch = bodyChecker<OrgPatch>({
  type: 'object',
  additionalProperties: false,
  properties: {
    user_api_key_auto_create: { type: 'boolean' },
    log_bodies: { type: 'boolean' },
    default_input_guardrails: DEFAULT_GUARDRAILS_SCHEMA,
    default_output_guardrails: DEFAULT_GUARDRAILS_SCHEMA,
    user_api_key_ttl: { type: ['integer', 'null'], minimum: MIN_USER_KEY_TTL_S },
    user_api_key_rotation_period: { enum: ['weekly', 'monthly', null] },
    session_settings: {
      type: 'object',
      additionalProperties: false,
      properties: { max_session_ttl: { type: 'integer', minimum: MIN_SESSION_TTL_S } },
    },
    security_settings: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(SECURITY_KEYS.map((k) => [k, { type: 'boolean' }])),
    },
  },
});

function orgView(s: OrgSettings): Record<string, unknown> {
  return { object: 'organisation_settings', ...s };
}

export const settingsRoutes: Route[] = [
  route({
    method: 'GET',
    path: '/organisation/settings',
    description: "The organisation's settings: key policies, security settings, default guardrails.",
    organisation: 'reading organisation settings',
    scope: 'organisation_settings.read',
    async handler(_req, deps) {
      return reply(200, orgView(await deps.store.settings.organisation()));
    },
  }),
  route({
    method: 'PUT',
    path: '/organisation/settings',
    description: "Changes the organisation's settings.",
    handlerBody: checkOrgPatch,
    organisation: 'changing organisation settings',
    scope: 'organisation_settings.update',
    admins: true,
    async handler({ caller, body }, deps) {
      const input = checkOrgPatch(body);
      if (!input.ok) return input;
      const resolved = await resolveDefaultGuardrails(deps.store, input.value, null);
      if (!resolved.ok) return resolved;
      const patch = resolved.value;
      const current = await deps.store.settings.organisation();
      const next: OrgSettings = {
        ...current,
        ...patch,
        session_settings: { ...current.session_settings, ...patch.session_settings },
        security_settings: { ...current.security_settings, ...patch.security_settings },
      };
      await deps.store.settings.saveOrganisation(next);
      return reply(200, orgView(next));
    },
  }),
  route({
    method: 'GET',
    path: '/workspaces/:id/settings',
    description: "A workspace's effective settings: the organisation's with the workspace's overrides.",
    scope: 'workspaces.read',
    async handler({ caller, params }, deps) {
      const ws = await readableWorkspace(deps, caller, params.id!);
      if (!ws.ok) return ws;
      return reply(200, {
        object: 'workspace_settings',
        workspace_id: ws.value.id,
        ...(await deps.store.settings.effective(ws.value.id)),
        overrides: ws.value.settings ?? {},
      });
    },
  }),
];
