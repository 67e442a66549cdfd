/**
 * Integrations: provider credentials set up once, for one workspace or for
 * the organisation (workspace_id null), from which workspaces create
 * providers (virtual_keys rows pointing here). Organisation integrations
 * reach a workspace only while it is enabled (integration_workspaces holds
 * the enabled ones). Integration models restrict or re-host models.
 * Credentials are one encrypted blob bound to the integration's id, opaque here.
 */
import { deleteAndAnnounce, type Changes } from './changes.js';
import type { Db } from './db.js';
import { isUniqueViolation } from './db.js';
import { nowSeconds } from './ids.js';
import { fromJson, listPage, toJson, type Page, type PageRequest } from './page.js';
import { insertVirtualKey, type NewVirtualKey } from './virtual-keys.js';

export interface SecretMapping {
  target_field: string;
  secret_reference_id: string;
  secret_key?: string;
  value_format?: 'string' | 'json';
}

export interface PricingAdjustments {
  /** Factor applied to the cost of requests through this integration (1 = list price). */
  multiplier: number;
}

export interface Integration {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  /** Canonical provider name (Portkey's ai_provider_id). */
  provider: string;
  /** null: an organisation integration. */
  workspaceId: string | null;
  /** Encrypted JSON of every target key the credential supplies. */
  credentials: string | null;
  /** What a GET may show of those: non-secret values, secret ones masked. */
  configurations: Record<string, unknown> | null;
  pricingAdjustments: PricingAdjustments | null;
  secretMappings: SecretMapping[] | null;
  /** false: only models listed and enabled may be called. */
  allowAllModels: boolean;
  status: string;
  createdAt: number;
  lastUpdatedAt: number;
  lastResetAt: number | null;
}

export interface IntegrationModel {
  slug: string;
  enabled: boolean;
  configurations: { custom_host?: string } | null;
  pricingConfig: Record<string, unknown> | null;
}

interface Row {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  provider: string;
  workspace_id: string | null;
  credentials: string | null;
  configurations: string | null;
  pricing_adjustments: string | null;
  secret_mappings: string | null;
  allow_all_models: number;
  status: string;
  created_at: number;
  last_updated_at: number;
  last_reset_at: number | null;
}

interface ModelRow {
  slug: string;
  enabled: number;
  configurations: string | null;
  pricing_config: string | null;
}

function toIntegration(r: Row): Integration {
  return {
    id: r.id,
    slug: r.slug,
    name: r.name,
    description: r.description,
    provider: r.provider,
    workspaceId: r.workspace_id,
    credentials: r.credentials,
    configurations: fromJson(r.configurations),
    pricingAdjustments: fromJson(r.pricing_adjustments),
    secretMappings: fromJson(r.secret_mappings),
    allowAllModels: r.allow_all_models === 1,
    status: r.status,
    createdAt: r.created_at,
    lastUpdatedAt: r.last_updated_at,
    lastResetAt: r.last_reset_at,
  };
}

function toModel(r: ModelRow): IntegrationModel {
  return { slug: r.slug, enabled: r.enabled === 1, configurations: fromJson(r.configurations), pricingConfig: fromJson(r.pricing_config) };
}

export type NewIntegration = Omit<Integration, 'status' | 'allowAllModels' | 'createdAt' | 'lastUpdatedAt' | 'lastResetAt'>;
export type IntegrationPatch = Partial<
  Pick<Integration, 'name' | 'description' | 'credentials' | 'configurations' | 'pricingAdjustments' | 'secretMappings'>
>;

/** Which unique slug a create ran into. */
export type SlugClash = 'integration' | 'provider';

export interface IntegrationFilter {
  /** Integrations a workspace can use: its own and the organisation's enabled for it. */
  accessibleBy?: string;
  type?: 'workspace' | 'organisation';
}

export class IntegrationRepo {
  constructor(
    private readonly db: Db,
    private readonly changes: Changes,
  ) {}

  /** The integration and, when given, its default provider, together or not at all. */
  async create(i: NewIntegration, provider: NewVirtualKey | null): Promise<{ ok: true; value: Integration } | { ok: false; clash: SlugClash }> {
    let clash: SlugClash = 'integration';
    try {
      await this.db.transaction(async (tx) => {
        const at = nowSeconds();
        await tx.run(
          `INSERT INTO integrations (id, slug, name, description, provider, workspace_id, credentials, configurations, pricing_adjustments,
             secret_mappings, status, created_at, last_updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)`,
          [
            i.id, i.slug, i.name, i.description, i.provider, i.workspaceId, i.credentials, toJson(i.configurations),
            toJson(i.pricingAdjustments), toJson(i.secretMappings), at, at,
          ],
        );
        clash = 'provider';
        if (provider !== null) await insertVirtualKey(tx, provider);
      });
    } catch (e) {
      if (isUniqueViolation(e)) return { ok: false, clash };
      throw e;
    }
    // After the commit: a cache that re-reads at once must find the rows.
    if (provider !== null) this.changes.publish({ kind: 'virtual_key', id: provider.id });
    return { ok: true, value: (await this.get(i.id))! };
  }

  async get(id: string): Promise<Integration | null> {
    const r = await this.db.get<Row>('SELECT * FROM integrations WHERE id = ?', [id]);
    return r === undefined ? null : toIntegration(r);
  }

  /** By id or slug (both unique across the organisation). */
  async find(ref: string): Promise<Integration | null> {
    const r = await this.db.get<Row>('SELECT * FROM integrations WHERE id = ? OR slug = ? ORDER BY CASE WHEN id = ? THEN 0 ELSE 1 END LIMIT 1', [ref, ref, ref]);
    return r === undefined ? null : toIntegration(r);
  }

  list(filter: IntegrationFilter, page: PageRequest): Promise<Page<Integration>> {
    const where: string[] = [];
    const params: string[] = [];
    if (filter.accessibleBy !== undefined) {
      where.push('(workspace_id = ? OR (workspace_id IS NULL AND id IN (SELECT integration_id FROM integration_workspaces WHERE workspace_id = ?)))');
      params.push(filter.accessibleBy, filter.accessibleBy);
    }
    if (filter.type === 'workspace') where.push('workspace_id IS NOT NULL');
    if (filter.type === 'organisation') where.push('workspace_id IS NULL');
    return listPage(this.db, 'integrations', where, params, page, toIntegration);
  }

  async update(id: string, patch: IntegrationPatch): Promise<Integration | null> {
    const current = await this.get(id);
    if (current === null) return null;
    const n = { ...current, ...patch };
    await this.db.run(
      `UPDATE integrations SET name = ?, description = ?, credentials = ?, configurations = ?, pricing_adjustments = ?, secret_mappings = ?,
         last_updated_at = ? WHERE id = ?`,
      [n.name, n.description, n.credentials, toJson(n.configurations), toJson(n.pricingAdjustments), toJson(n.secretMappings), nowSeconds(), id],
    );
    this.changes.publish({ kind: 'integration', id });
    return this.get(id);
  }

  /** Deletes the integration with its providers, models and workspace access. */
  delete(id: string): Promise<boolean> {
    return deleteAndAnnounce(this.db, this.changes, 'integrations', { kind: 'integration', id });
  }

  /** Whether workspace `workspaceId` may use the integration: its own, or an organisation one enabled for it. */
  async usableBy(i: Integration, workspaceId: string): Promise<boolean> {
    if (i.workspaceId !== null) return i.workspaceId === workspaceId;
    const r = await this.db.get('SELECT 1 AS x FROM integration_workspaces WHERE integration_id = ? AND workspace_id = ?', [i.id, workspaceId]);
    return r !== undefined;
  }

  /** Ids of the workspaces an organisation integration is enabled for. */
  async workspaces(id: string): Promise<string[]> {
    const rows = await this.db.all<{ workspace_id: string }>('SELECT workspace_id FROM integration_workspaces WHERE integration_id = ? ORDER BY workspace_id', [id]);
    return rows.map((r) => r.workspace_id);
  }

  /** Enables and disables workspaces, all in one transaction. */
  async setWorkspaces(id: string, changes: readonly { workspaceId: string; enabled: boolean }[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const c of changes) {
        if (c.enabled) {
          await tx.run('INSERT INTO integration_workspaces (integration_id, workspace_id) VALUES (?, ?) ON CONFLICT DO NOTHING', [id, c.workspaceId]);
        } else {
          await tx.run('DELETE FROM integration_workspaces WHERE integration_id = ? AND workspace_id = ?', [id, c.workspaceId]);
        }
      }
    });
    this.changes.publish({ kind: 'integration', id });
  }

  async models(id: string): Promise<IntegrationModel[]> {
    const rows = await this.db.all<ModelRow>('SELECT slug, enabled, configurations, pricing_config FROM integration_models WHERE integration_id = ? ORDER BY slug', [id]);
    return rows.map(toModel);
  }

  /** Upserts the listed models (others stay as they are) and, when given, allow_all_models; one transaction. */
  async putModels(id: string, models: readonly IntegrationModel[], allowAllModels: boolean | undefined): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (const m of models) {
        await tx.run(
          `INSERT INTO integration_models (integration_id, slug, enabled, configurations, pricing_config) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (integration_id, slug) DO UPDATE SET enabled = excluded.enabled, configurations = excluded.configurations,
             pricing_config = excluded.pricing_config`,
          [id, m.slug, m.enabled ? 1 : 0, toJson(m.configurations), toJson(m.pricingConfig)],
        );
      }
      if (allowAllModels !== undefined) {
        await tx.run('UPDATE integrations SET allow_all_models = ?, last_updated_at = ? WHERE id = ?', [allowAllModels ? 1 : 0, nowSeconds(), id]);
      }
    });
    this.changes.publish({ kind: 'integration', id });
  }

  /** Removes the named models; resolves to how many existed. */
  async deleteModels(id: string, slugs: readonly string[]): Promise<number> {
    const n = await this.db.run(`DELETE FROM integration_models WHERE integration_id = ? AND slug IN (${slugs.map(() => '?').join(', ')})`, [id, ...slugs]);
    this.changes.publish({ kind: 'integration', id });
    return n;
  }
}
