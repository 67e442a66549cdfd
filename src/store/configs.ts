/**
 * Saved configs: a named, workspace-owned config whose body is versioned,
 * found by id, or by slug within its workspace (slugs are unique per workspace).
 * Every change of the body adds a version (numbered from 1) and makes it the
 * current one; name, status and the default flag change in place. Bodies are
 * stored as given, validated by the caller. Writes publish a `config` notice
 * for the caches on the request path.
 */
import type { Changes } from './changes.js';
import type { Db } from './db.js';
import { newId, nowSeconds } from './ids.js';
import { listPage, type Page, type PageRequest } from './page.js';

export type ConfigStatus = 'active' | 'archived';
export type ConfigBody = Record<string, unknown>;

export interface SavedConfig {
  id: string;
  slug: string;
  workspaceId: string;
  name: string;
  description: string | null;
  /** The workspace's config for requests that name neither a config nor a provider; at most one per workspace. */
  isDefault: boolean;
  status: ConfigStatus;
  /** The current version: its id and number. */
  versionId: string;
  version: number;
  createdAt: number;
  lastUpdatedAt: number;
}

/** A saved config with the body of its current version. */
export type StoredConfig = SavedConfig & { config: ConfigBody };

export interface ConfigVersion {
  id: string;
  configId: string;
  version: number;
  config: ConfigBody;
  createdAt: number;
}

export interface NewConfig {
  /** Given when the caller needs it before the insert (secrets sealed bound to it); else made here. */
  id?: string;
  workspaceId: string;
  slug: string;
  name: string;
  description: string | null;
  isDefault: boolean;
  config: ConfigBody;
}

export interface ConfigPatch {
  name?: string;
  description?: string | null;
  status?: ConfigStatus;
  isDefault?: boolean;
  /** A new body: becomes the next version. */
  config?: ConfigBody;
}

interface Row {
  id: string;
  slug: string;
  workspace_id: string;
  name: string;
  description: string | null;
  is_default: number;
  status: string;
  version_id: string;
  version: number;
  created_at: number;
  last_updated_at: number;
}

interface VersionRow {
  id: string;
  config_id: string;
  version: number;
  config: string;
  created_at: number;
}

function toSaved(r: Row): SavedConfig {
  return {
    id: r.id,
    slug: r.slug,
    workspaceId: r.workspace_id,
    name: r.name,
    description: r.description,
    isDefault: r.is_default === 1,
    status: r.status as ConfigStatus,
    versionId: r.version_id,
    version: r.version,
    createdAt: r.created_at,
    lastUpdatedAt: r.last_updated_at,
  };
}

function withBody(r: (Row & { config: string }) | undefined): StoredConfig | null {
  return r === undefined ? null : { ...toSaved(r), config: JSON.parse(r.config) as ConfigBody };
}

function toVersion(r: VersionRow): ConfigVersion {
  return { id: r.id, configId: r.config_id, version: r.version, config: JSON.parse(r.config) as ConfigBody, createdAt: r.created_at };
}

/** A config row with its current version's number (and body, for CURRENT_WITH_BODY). */
const CURRENT = '(SELECT c.*, v.version FROM configs c JOIN config_versions v ON v.id = c.version_id) AS c';
const CURRENT_WITH_BODY = 'SELECT c.*, v.version, v.config FROM configs c JOIN config_versions v ON v.id = c.version_id';

export class ConfigRepo {
  constructor(
    private readonly db: Db,
    private readonly changes: Changes,
  ) {}

  /** Inserts a config and its version 1; a default config takes the flag from the workspace's previous default. */
  async create(c: NewConfig): Promise<StoredConfig> {
    const at = nowSeconds();
    const id = c.id ?? newId();
    const versionId = newId();
    const cleared = await this.db.transaction(async (tx) => {
      const cleared = c.isDefault ? await clearDefault(tx, c.workspaceId, id, at) : [];
      await tx.run(
        `INSERT INTO configs (id, slug, workspace_id, name, description, is_default, status, version_id, created_at, last_updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?, ?)`,
        [id, c.slug, c.workspaceId, c.name, c.description, c.isDefault ? 1 : 0, versionId, at, at],
      );
      await tx.run('INSERT INTO config_versions (id, config_id, version, config, created_at) VALUES (?, ?, 1, ?, ?)', [
        versionId,
        id,
        JSON.stringify(c.config),
        at,
      ]);
      return cleared;
    });
    // A new config can satisfy a reference that failed before, or become the default.
    this.publish([id, ...cleared]);
    return (await this.get(id))!;
  }

  /** By id, in any workspace. */
  async get(id: string): Promise<StoredConfig | null> {
    return withBody(await this.db.get<Row & { config: string }>(`${CURRENT_WITH_BODY} WHERE c.id = ?`, [id]));
  }

  /** By id or slug, in one workspace: slugs are unique per workspace only. */
  async find(ref: string, workspaceId: string): Promise<StoredConfig | null> {
    return withBody(await this.db.get<Row & { config: string }>(`${CURRENT_WITH_BODY} WHERE c.workspace_id = ? AND (c.id = ? OR c.slug = ?)`, [workspaceId, ref, ref]));
  }

  /** The workspace's default config, if it has one. */
  async findDefault(workspaceId: string): Promise<StoredConfig | null> {
    return withBody(await this.db.get<Row & { config: string }>(`${CURRENT_WITH_BODY} WHERE c.workspace_id = ? AND c.is_default = 1`, [workspaceId]));
  }

  async slugTaken(workspaceId: string, slug: string): Promise<boolean> {
    return (await this.db.get('SELECT 1 AS x FROM configs WHERE workspace_id = ? AND slug = ?', [workspaceId, slug])) !== undefined;
  }

  /** Newest first; every workspace's when `workspaceId` is undefined. */
  list(workspaceId: string | undefined, page: PageRequest): Promise<Page<SavedConfig>> {
    return workspaceId === undefined
      ? listPage(this.db, CURRENT, [], [], page, toSaved)
      : listPage(this.db, CURRENT, ['workspace_id = ?'], [workspaceId], page, toSaved);
  }

  /**
   * Applies a patch; a new body becomes the next version. Archiving drops the
   * default flag (an archived config serves no request). Null when the config
   * does not exist.
   */
  async update(id: string, patch: ConfigPatch): Promise<StoredConfig | null> {
    const at = nowSeconds();
    const cleared = await this.db.transaction(async (tx) => {
      // Touching the row first locks it (Postgres): concurrent updates number their versions one after another.
      if ((await tx.run('UPDATE configs SET last_updated_at = ? WHERE id = ?', [at, id])) === 0) return null;
      const current = (await tx.get<Omit<Row, 'version'>>('SELECT * FROM configs WHERE id = ?', [id]))!;
      let versionId = current.version_id;
      if (patch.config !== undefined) {
        const last = await tx.get<{ n: number }>('SELECT MAX(version) AS n FROM config_versions WHERE config_id = ?', [id]);
        versionId = newId();
        await tx.run('INSERT INTO config_versions (id, config_id, version, config, created_at) VALUES (?, ?, ?, ?, ?)', [
          versionId,
          id,
          last!.n + 1,
          JSON.stringify(patch.config),
          at,
        ]);
      }
      const status = patch.status ?? current.status;
      const isDefault = status === 'archived' ? false : (patch.isDefault ?? current.is_default === 1);
      const cleared = isDefault && current.is_default !== 1 ? await clearDefault(tx, current.workspace_id, id, at) : [];
      await tx.run('UPDATE configs SET name = ?, description = ?, status = ?, is_default = ?, version_id = ? WHERE id = ?', [
        patch.name ?? current.name,
        patch.description === undefined ? current.description : patch.description,
        status,
        isDefault ? 1 : 0,
        versionId,
        id,
      ]);
      return cleared;
    });
    if (cleared === null) return null;
    this.publish([id, ...cleared]);
    return this.get(id);
  }

  /** Deletes a config and its versions; false when it does not exist. */
  async delete(id: string): Promise<boolean> {
    const n = await this.db.transaction(async (tx) => {
      await tx.run('DELETE FROM config_versions WHERE config_id = ?', [id]);
      return tx.run('DELETE FROM configs WHERE id = ?', [id]);
    });
    if (n > 0) this.publish([id]);
    return n > 0;
  }

  /** A config's versions, newest first. */
  versions(configId: string, page: PageRequest): Promise<Page<ConfigVersion>> {
    return listPage(this.db, 'config_versions', ['config_id = ?'], [configId], page, toVersion);
  }

  /** One version of a config, by version id or number. */
  async version(configId: string, ref: string): Promise<ConfigVersion | null> {
    const r = /^\d{1,9}$/.test(ref)
      ? await this.db.get<VersionRow>('SELECT * FROM config_versions WHERE config_id = ? AND version = ?', [configId, Number(ref)])
      : await this.db.get<VersionRow>('SELECT * FROM config_versions WHERE config_id = ? AND id = ?', [configId, ref]);
    return r === undefined ? null : toVersion(r);
  }

  private publish(ids: readonly string[]): void {
    for (const id of ids) this.changes.publish({ kind: 'config', id });
  }
}

/** Takes the default flag off the workspace's other configs; returns the ids it was taken from. */
async function clearDefault(tx: Db, workspaceId: string, keep: string, at: number): Promise<string[]> {
  const rows = await tx.all<{ id: string }>(
    'UPDATE configs SET is_default = 0, last_updated_at = ? WHERE workspace_id = ? AND is_default = 1 AND id <> ? RETURNING id',
    [at, workspaceId, keep],
  );
  return rows.map((r) => r.id);
}
