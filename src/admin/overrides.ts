/**
 * A workspace's overrides of organisation settings (spec: "workspace override
 * allowed"), as PUT /v1/workspaces/:id takes them in `settings`: a value sets
 * an override, null removes it, null for the whole object removes all.
 */
import type { SchemaObject } from 'ajv';
import { DEFAULT_SETTINGS, type SecuritySettings, type WorkspaceOverrides } from '../store/settings.js';

export const SECURITY_KEYS = Object.keys(DEFAULT_SETTINGS.security_settings) as (keyof SecuritySettings)[];

export interface OverridesPatch {
  user_api_key_auto_create?: boolean | null;
  log_bodies?: boolean | null;
  security_settings?: Partial<Record<keyof SecuritySettings, boolean | null>> | null;
}

export const OVERRIDES_SCHEMA: SchemaObject = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: {
    user_api_key_auto_create: { type: ['boolean', 'null'] },
    log_bodies: { type: ['boolean', 'null'] },
    security_settings: {
      type: ['object', 'null'],
      additionalProperties: false,
      properties: Object.fromEntries(SECURITY_KEYS.map((k) => [k, { type: ['boolean', 'null'] }])),
    },
  },
};

/** The overrides after a patch; null when none are left. */
export function mergeOverrides(current: WorkspaceOverrides | null, patch: OverridesPatch | null): WorkspaceOverrides | null {
  if (patch === null) return null;
  const next: WorkspaceOverrides = { ...current };
  if (patch.user_api_key_auto_create === null) delete next.user_api_key_auto_create;
  else if (patch.user_api_key_auto_create !== undefined) next.user_api_key_auto_create = patch.user_api_key_auto_create;
  if (patch.log_bodies === null) delete next.log_bodies;
  else if (patch.log_bodies !== undefined) next.log_bodies = patch.log_bodies;
  if (patch.security_settings === null) delete next.security_settings;
  else if (patch.security_settings !== undefined) {
    const security: Partial<SecuritySettings> = { ...next.security_settings };
    for (const [k, v] of Object.entries(patch.security_settings) as [keyof SecuritySettings, boolean | null][]) {
      if (v === null) delete security[k];
      else security[k] = v;
    }
    if (Object.keys(security).length === 0) delete next.security_settings;
    else next.security_settings = security;
  }
  return Object.keys(next).length === 0 ? null : next;
}

