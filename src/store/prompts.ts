/**
 * Prompts and prompt partials: named templates of a workspace whose content
 * is versioned. Both kinds live in one table (`kind`), found by id, or by
 * slug within their workspace and kind. A version (`template`, `parameters`,
 * `metadata`, `model`, `description`) is never changed: every change of
 * content appends the next number. The prompt points at its default
 * (published) version, which only makeDefault moves; labels (`production`,
 * `staging`, custom ones) point at any version. Name, credential, config,
 * access and status change in place. Writes publish a `prompt` notice for
 * the caches on the request path.
 */
import type { Changes } from './changes.js';
import type { Db, SqlValue } from './db.js';
import { newId, nowSeconds } from './ids.js';
import { fromJson, listPage, toJson, type Page, type PageRequest } from './page.js';

export type PromptKind = 'prompt' | 'partial';
export type PromptStatus = 'active' | 'archived';
/** Workspace role at or above which an action on one prompt is allowed (prompts/access.ts). */
export type PromptRole = 'member' | 'manager' | 'admin';
export type PromptAction = 'read' | 'render' | 'run' | 'update';
export type PromptAccess = Partial<Record<PromptAction, PromptRole>>;

/** What a version holds: the template and what a render sends with it. */
export interface VersionContent {
  /** The template: a JSON list of messages (chat), or plain text. */
  template: string;
  parameters: Record<string, unknown>;
  metadata: Record<string, unknown> | null;
  model: string | null;
  description: string | null;
}

export interface PromptVersion extends VersionContent {
  id: string;
  promptId: string;
  version: number;
  createdAt: number;
}

export interface Prompt {
  id: string;
  kind: PromptKind;
  slug: string;
  workspaceId: string;
  name: string;
  /** The provider credential a run uses: a virtual key's id or slug, or `@<provider slug>`; null: none of its own. */
  virtualKey: string | null;
  /** A saved config (id or slug) a run is routed by; null: none. */
  configId: string | null;
  access: PromptAccess;
  status: PromptStatus;
  defaultVersionId: string;
  /** Label → version id. */
  labels: Record<string, string>;
  /** The highest version number. */
  latest: number;
  createdAt: number;
  lastUpdatedAt: number;
}

/** A prompt with its default version. */
export type StoredPrompt = Prompt & { version: PromptVersion };

export interface NewPrompt {
  kind: PromptKind;
  workspaceId: string;
  slug: string;
  name: string;
  virtualKey: string | null;
  configId: string | null;
  access: PromptAccess;
  content: VersionContent;
}

export interface PromptPatch {
  name?: string;
  virtualKey?: string | null;
  configId?: string | null;
  access?: PromptAccess;
  status?: PromptStatus;
  /** New content: appended as the next version (not the default until published). */
  content?: VersionContent;
}

export interface PromptFilter {
  /** Every workspace's when undefined. */
  workspaceId?: string;
  status?: PromptStatus;
  /** Case-insensitive part of the name or slug. */
  search?: string;
}

interface Row {
  id: string;
  kind: string;
  slug: string;
  workspace_id: string;
  name: string;
  virtual_key: string | null;
  config_id: string | null;
  access: string | null;
  status: string;
  default_version_id: string;
  created_at: number;
  last_updated_at: number;
}

interface VersionRow {
  id: string;
  prompt_id: string;
  version: number;
  template: string;
  parameters: string;
  metadata: string | null;
  model: string | null;
  description: string | null;
  created_at: number;
}

function toVersion(r: VersionRow): PromptVersion {
  return {
    id: r.id,
    promptId: r.prompt_id,
    version: r.version,
    template: r.template,
    parameters: JSON.parse(r.parameters) as Record<string, unknown>,
    metadata: fromJson(r.metadata),
    model: r.model,
    description: r.description,
    createdAt: r.created_at,
  };
}

function toPrompt(r: Row, labels: Record<string, string>, latest: number): Prompt {
  return {
    id: r.id,
    kind: r.kind as PromptKind,
    slug: r.slug,
    workspaceId: r.workspace_id,
    name: r.name,
    virtualKey: r.virtual_key,
    configId: r.config_id,
    access: fromJson<PromptAccess>(r.access) ?? {},
    status: r.status as PromptStatus,
    defaultVersionId: r.default_version_id,
    labels,
    latest,
    createdAt: r.created_at,
    lastUpdatedAt: r.last_updated_at,
  };
}

const VERSION_COLUMNS = 'id, prompt_id, version, template, parameters, metadata, model, description, created_at';

/** A prompt's rows with the latest version number, for lists (labels are read for single prompts only). */
const WITH_LATEST = '(SELECT p.*, (SELECT MAX(version) FROM prompt_versions v WHERE v.prompt_id = p.id) AS latest FROM prompts p) AS p';

/** `number`, `latest`, a label, or a version id: how a version is named (`slug@3`, `slug@production`). */
const NUMBER = /^\d{1,9}$/;

export class PromptRepo {
  constructor(
    private readonly db: Db,
    private readonly changes: Changes,
  ) {}

  /** Inserts a prompt and its version 1, which is its default. */
  async create(p: NewPrompt): Promise<StoredPrompt> {
    const at = nowSeconds();
    const id = newId();
    const versionId = newId();
    await this.db.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO prompts (id, kind, slug, workspace_id, name, virtual_key, config_id, access, status, default_version_id, created_at, last_updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?)`,
        [id, p.kind, p.slug, p.workspaceId, p.name, p.virtualKey, p.configId, toJson(p.access), versionId, at, at],
      );
      await insertVersion(tx, versionId, id, 1, p.content, at);
    });
    // A request may have named it before it existed.
    this.publish(id);
    return (await this.get(id))!;
  }

  /** By id, in any workspace, with its default version. */
  async get(id: string): Promise<StoredPrompt | null> {
    return this.stored(await this.db.get<Row>('SELECT * FROM prompts WHERE id = ?', [id]));
  }

  /** By id or slug among one workspace's prompts (or partials). */
  async find(kind: PromptKind, workspaceId: string, ref: string): Promise<StoredPrompt | null> {
    return this.stored(
      await this.db.get<Row>('SELECT * FROM prompts WHERE workspace_id = ? AND kind = ? AND (id = ? OR slug = ?) ORDER BY CASE WHEN id = ? THEN 0 ELSE 1 END LIMIT 1', [
        workspaceId,
        kind,
        ref,
        ref,
        ref,
      ]),
    );
  }

  async slugTaken(kind: PromptKind, workspaceId: string, slug: string): Promise<boolean> {
    return (await this.db.get('SELECT 1 AS x FROM prompts WHERE workspace_id = ? AND kind = ? AND slug = ?', [workspaceId, kind, slug])) !== undefined;
  }

  /** Newest first. */
  list(kind: PromptKind, filter: PromptFilter, page: PageRequest): Promise<Page<Prompt>> {
    const where = ['kind = ?'];
    const params: SqlValue[] = [kind];
    if (filter.workspaceId !== undefined) {
      where.push('workspace_id = ?');
      params.push(filter.workspaceId);
    }
    if (filter.status !== undefined) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.search !== undefined) {
      // The search text is a value, its wildcards escaped: it matches itself only.
      where.push("(LOWER(name) LIKE ? ESCAPE '\\' OR slug LIKE ? ESCAPE '\\')");
      const like = `%${filter.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      params.push(like, like);
    }
    return listPage<Row & { latest: number }, Prompt>(this.db, WITH_LATEST, where, params, page, (r) => toPrompt(r, {}, r.latest));
  }

  /**
   * Applies a patch; new content is appended as the next version, which the
   * answer names. Null when the prompt does not exist.
   */
  async update(id: string, patch: PromptPatch): Promise<{ prompt: StoredPrompt; added: PromptVersion | null } | null> {
    const at = nowSeconds();
    const added = await this.db.transaction(async (tx) => {
      // Touching the row first locks it (Postgres): concurrent updates number their versions one after another.
      if ((await tx.run('UPDATE prompts SET last_updated_at = ? WHERE id = ?', [at, id])) === 0) return null;
      const current = (await tx.get<Row>('SELECT * FROM prompts WHERE id = ?', [id]))!;
      let versionId: string | null = null;
      if (patch.content !== undefined) {
        const last = await tx.get<{ n: number }>('SELECT MAX(version) AS n FROM prompt_versions WHERE prompt_id = ?', [id]);
        versionId = newId();
        await insertVersion(tx, versionId, id, last!.n + 1, patch.content, at);
      }
      await tx.run('UPDATE prompts SET name = ?, virtual_key = ?, config_id = ?, access = ?, status = ? WHERE id = ?', [
        patch.name ?? current.name,
        patch.virtualKey === undefined ? current.virtual_key : patch.virtualKey,
        patch.configId === undefined ? current.config_id : patch.configId,
        patch.access === undefined ? current.access : toJson(patch.access),
        patch.status ?? current.status,
        id,
      ]);
      return { versionId };
    });
    if (added === null) return null;
    this.publish(id);
    const prompt = (await this.get(id))!;
    return { prompt, added: added.versionId === null ? null : await this.version(id, added.versionId) };
  }

  /** Deletes a prompt, its versions and labels; false when it does not exist. */
  async delete(id: string): Promise<boolean> {
    const n = await this.db.transaction(async (tx) => {
      await tx.run('DELETE FROM prompt_labels WHERE prompt_id = ?', [id]);
      await tx.run('DELETE FROM prompt_versions WHERE prompt_id = ?', [id]);
      return tx.run('DELETE FROM prompts WHERE id = ?', [id]);
    });
    if (n > 0) this.publish(id);
    return n > 0;
  }

  /** A prompt's versions, newest first. */
  versions(promptId: string, page: PageRequest): Promise<Page<PromptVersion>> {
    return listPage(this.db, 'prompt_versions', ['prompt_id = ?'], [promptId], page, toVersion);
  }

  /** One version, by number, `latest`, label or version id; null when none is so named. */
  async version(promptId: string, ref: string): Promise<PromptVersion | null> {
    let r: VersionRow | undefined;
    if (NUMBER.test(ref)) {
      r = await this.db.get<VersionRow>(`SELECT ${VERSION_COLUMNS} FROM prompt_versions WHERE prompt_id = ? AND version = ?`, [promptId, Number(ref)]);
    } else if (ref === 'latest') {
      r = await this.db.get<VersionRow>(`SELECT ${VERSION_COLUMNS} FROM prompt_versions WHERE prompt_id = ? ORDER BY version DESC LIMIT 1`, [promptId]);
    } else {
      r = await this.db.get<VersionRow>(
        `SELECT ${VERSION_COLUMNS} FROM prompt_versions WHERE prompt_id = ? AND (id = ? OR id = (SELECT version_id FROM prompt_labels WHERE prompt_id = ? AND label = ?))`,
        [promptId, ref, promptId, ref],
      );
    }
    return r === undefined ? null : toVersion(r);
  }

  /** Publishes version `versionId` as the default; false when the prompt does not exist. */
  async makeDefault(promptId: string, versionId: string): Promise<boolean> {
    const n = await this.db.run('UPDATE prompts SET default_version_id = ?, last_updated_at = ? WHERE id = ?', [versionId, nowSeconds(), promptId]);
    if (n > 0) this.publish(promptId);
    return n > 0;
  }

  /** Points `label` at a version (null: takes the label off). */
  async setLabel(promptId: string, label: string, versionId: string | null): Promise<void> {
    if (versionId === null) await this.db.run('DELETE FROM prompt_labels WHERE prompt_id = ? AND label = ?', [promptId, label]);
    else {
      await this.db.run(
        'INSERT INTO prompt_labels (prompt_id, label, version_id) VALUES (?, ?, ?) ON CONFLICT (prompt_id, label) DO UPDATE SET version_id = excluded.version_id',
        [promptId, label, versionId],
      );
    }
    this.publish(promptId);
  }

  private async stored(r: Row | undefined): Promise<StoredPrompt | null> {
    if (r === undefined) return null;
    const [version, labels, latest] = await Promise.all([
      this.db.get<VersionRow>(`SELECT ${VERSION_COLUMNS} FROM prompt_versions WHERE id = ?`, [r.default_version_id]),
      this.db.all<{ label: string; version_id: string }>('SELECT label, version_id FROM prompt_labels WHERE prompt_id = ? ORDER BY label', [r.id]),
      this.db.get<{ n: number }>('SELECT MAX(version) AS n FROM prompt_versions WHERE prompt_id = ?', [r.id]),
    ]);
    const byLabel = Object.fromEntries(labels.map((l) => [l.label, l.version_id]));
    return { ...toPrompt(r, byLabel, Number(latest!.n)), version: toVersion(version!) };
  }

  private publish(id: string): void {
    this.changes.publish({ kind: 'prompt', id });
  }
}

function insertVersion(tx: Db, id: string, promptId: string, version: number, c: VersionContent, at: number): Promise<number> {
  return tx.run(`INSERT INTO prompt_versions (${VERSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
    id,
    promptId,
    version,
    c.template,
    JSON.stringify(c.parameters),
    toJson(c.metadata),
    c.model,
    c.description,
    at,
  ]);
}
