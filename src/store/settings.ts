/**
 * Organisation settings and their workspace overrides (spec: Versioning
 * 1.11.0-1.15.0). One row holds the organisation's settings; a workspace's
 * `settings` column holds only what it overrides. `effective()` merges them.
 */
import type { Changes } from './changes.js';
import type { Db } from './db.js';
import { nowSeconds } from './ids.js';

export type RotationPeriod = 'weekly' | 'monthly';

/** Settings a workspace may override (spec: "workspace override allowed"). */
export interface SecuritySettings {
  membersViewAllData: boolean;
  managersViewAllData: boolean;
  organisationAdminsViewLogs: boolean;
  organisationAdminsViewLogMetadata: boolean;
  managersWriteWsIntegrations: boolean;
  managersWriteWsMcpIntegrations: boolean;
  managersWriteMcpServers: boolean;
  /** Workspace members may create, change and delete prompts and partials; off: managers and above. */
  membersWritePrompts: boolean;
}

export interface OrgSettings {
  /** Create a workspace-user key when a user joins, accepts an invite, is provisioned by SCIM or added to a workspace. */
  user_api_key_auto_create: boolean;
  /** Lifetime in seconds of auto-created user keys; null: no expiry. */
  user_api_key_ttl: number | null;
  /** Enforced rotation period of user keys; null: not enforced. */
  user_api_key_rotation_period: RotationPeriod | null;
  session_settings: { max_session_ttl: number };
  security_settings: SecuritySettings;
  /** Request logs keep request and response bodies (redacted); false: metadata, tokens and cost only. */
  log_bodies: boolean;
  /** Ids of organisation guardrails run on every request of every workspace: on its input, on its output. */
  default_input_guardrails: string[];
  default_output_guardrails: string[];
}

/** The settings naming default guardrails, of the organisation and of a workspace. */
export const DEFAULT_GUARDRAIL_KEYS = ['default_input_guardrails', 'default_output_guardrails'] as const;
export type DefaultGuardrailKey = (typeof DEFAULT_GUARDRAIL_KEYS)[number];

/** What a workspace's `settings` may hold. */
export interface WorkspaceOverrides {
  user_api_key_auto_create?: boolean;
  security_settings?: Partial<SecuritySettings>;
  log_bodies?: boolean;
  /** Ids of the workspace's (or the organisation's) guardrails run on its requests besides the organisation's defaults. */
  default_input_guardrails?: string[];
  default_output_guardrails?: string[];
}

/** The effective settings for one workspace: default guardrails are the organisation's, then the workspace's own. */
export type EffectiveSettings = OrgSettings;

export const DEFAULT_SETTINGS: OrgSettings = Object.freeze({
  user_api_key_auto_create: false,
  user_api_key_ttl: null,
  user_api_key_rotation_period: null,
  session_settings: { max_session_ttl: 86_400 },
  security_settings: {
    membersViewAllData: true,
    managersViewAllData: true,
    organisationAdminsViewLogs: true,
    organisationAdminsViewLogMetadata: true,
    managersWriteWsIntegrations: true,
    managersWriteWsMcpIntegrations: true,
    managersWriteMcpServers: true,
    membersWritePrompts: true,
  },
  log_bodies: true,
  default_input_guardrails: [],
  default_output_guardrails: [],
}) as OrgSettings;

export class SettingsRepo {
  constructor(
    private readonly db: Db,
    private readonly changes: Changes,
  ) {}

  /** The organisation's settings, defaults filled in for anything never set. */
  async organisation(): Promise<OrgSettings> {
    const row = await this.db.get<{ settings: string }>('SELECT settings FROM org_settings WHERE id = 1');
    return row === undefined ? DEFAULT_SETTINGS : merge(DEFAULT_SETTINGS, JSON.parse(row.settings) as Partial<OrgSettings>);
  }

  async saveOrganisation(next: OrgSettings): Promise<void> {
    const at = nowSeconds();
    await this.db.run(
      `INSERT INTO org_settings (id, settings, last_updated_at) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET settings = excluded.settings, last_updated_at = excluded.last_updated_at`,
      [JSON.stringify(next), at],
    );
    this.changes.publish({ kind: 'settings', id: 'organisation' });
  }

  /** Organisation settings with one workspace's overrides applied. */
  async effective(workspaceId: string): Promise<EffectiveSettings> {
    const org = await this.organisation();
    const row = await this.db.get<{ settings: string | null }>('SELECT settings FROM workspaces WHERE id = ?', [workspaceId]);
    if (row?.settings == null) return org;
    return applyOverrides(org, JSON.parse(row.settings) as WorkspaceOverrides);
  }

  /**
   * Where guardrail `id` is a default: `organisation` and the slugs of the
   * workspaces whose settings name it. Ids are UUIDs, so a LIKE on the JSON
   * text finds the candidate rows without a LIKE wildcard in the pattern.
   */
  async namingGuardrail(id: string): Promise<string[]> {
    const names = (s: Partial<Record<DefaultGuardrailKey, string[]>>): boolean => DEFAULT_GUARDRAIL_KEYS.some((k) => s[k]?.includes(id) === true);
    const where: string[] = names(await this.organisation()) ? ['organisation'] : [];
    const rows = await this.db.all<{ slug: string; settings: string }>('SELECT slug, settings FROM workspaces WHERE settings LIKE ? ORDER BY id', [`%"${id}"%`]);
    for (const r of rows) if (names(JSON.parse(r.settings) as WorkspaceOverrides)) where.push(`workspace '${r.slug}'`);
    return where;
  }
}

export function applyOverrides(org: OrgSettings, o: WorkspaceOverrides): EffectiveSettings {
  return {
    ...org,
    user_api_key_auto_create: o.user_api_key_auto_create ?? org.user_api_key_auto_create,
    log_bodies: o.log_bodies ?? org.log_bodies,
    security_settings: { ...org.security_settings, ...o.security_settings },
    // A workspace adds to the organisation's guardrails; it cannot drop them.
    default_input_guardrails: [...new Set([...org.default_input_guardrails, ...(o.default_input_guardrails ?? [])])],
    default_output_guardrails: [...new Set([...org.default_output_guardrails, ...(o.default_output_guardrails ?? [])])],
  };
}

function merge(base: OrgSettings, saved: Partial<OrgSettings>): OrgSettings {
  return {
    ...base,
    ...saved,
    session_settings: { ...base.session_settings, ...saved.session_settings },
    security_settings: { ...base.security_settings, ...saved.security_settings },
  };
}
