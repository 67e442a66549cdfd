/**
 * A workspace's overrides of organisation settings (spec: "workspace override
 * allowed"), as PUT /v1/workspaces/:id takes them in `settings`: a value sets
 * an override, null removes it, null for the whole object removes all.
 */
import type { SchemaObject } from 'ajv';
import { DEFAULT_GUARDRAIL_KEYS, DEFAULT_SETTINGS, type SecuritySettings, type WorkspaceOverrides } from '../store/settings.js';
import { DEFAULT_GUARDRAILS_SCHEMA, type DefaultGuardrailsPatch } from './default-guardrails.js';

export const SECURITY_KEYS = Object.keys(DEFAULT_SETTINGS.security_settings) as (keyof SecuritySettings)[];

/** The workspace's default guardrails are its own, added to the organisation's (default-guardrails.ts). */
export interface OverridesPatch extends DefaultGuardrailsPatch<string[] | null> {
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
    ...Object.fromEntries(DEFAULT_GUARDRAIL_KEYS.map((k) => [k, { ...DEFAULT_GUARDRAILS_SCHEMA, type: ['array', 'null'] }])),
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
  // Keys whose value replaces the override whole.
  const whole = next as Record<string, unknown>;
  for (const key of ['user_api_key_auto_create', 'log_bodies', ...DEFAULT_GUARDRAIL_KEYS] as const) {
    if (patch[key] === null) delete whole[key];
    else if (patch[key] !== undefined) whole[key] = patch[key];
  }
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

