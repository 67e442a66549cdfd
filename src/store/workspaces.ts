/** Workspaces: the unit of isolation; every stored object but integrations belongs to one. */
import type { Changes } from './changes.js';
import type { Db } from './db.js';
import { newId, nowSeconds } from './ids.js';
import { fromJson, listPage, toJson, type Page, type PageRequest } from './page.js';

export type WorkspaceStatus = 'active' | 'archived';

export interface Workspace {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  status: WorkspaceStatus;
  isDefault: boolean;
  metadata: Record<string, string> | null;
  /** Overrides of organisation settings (see settings.ts); null: none. */
  settings: Record<string, unknown> | null;
  defaults: Record<string, unknown> | null;
  createdAt: number;
  lastUpdatedAt: number;
  lastResetAt: number | null;
}

interface Row {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  status: string;
  is_default: number;
  metadata: string | null;
  settings: string | null;
  defaults: string | null;
  created_at: number;
  last_updated_at: number;
  last_reset_at: number | null;
}

function toWorkspace(r: Row): Workspace {
  return {
    id: r.id,
    slug: r.slug,
    name: r.name,
    description: r.description,
    status: r.status as WorkspaceStatus,
    isDefault: r.is_default === 1,
    metadata: fromJson(r.metadata),
    settings: fromJson(r.settings),
    defaults: fromJson(r.defaults),
    createdAt: r.created_at,
    lastUpdatedAt: r.last_updated_at,
    lastResetAt: r.last_reset_at,
  };
}

export type NewWorkspace = Pick<Workspace, 'slug' | 'name' | 'description' | 'metadata' | 'settings' | 'defaults'>;
export type WorkspacePatch = Partial<Pick<Workspace, 'name' | 'description' | 'status' | 'metadata' | 'settings' | 'defaults'>>;

export class WorkspaceRepo {
  constructor(
    private readonly db: Db,
    private readonly changes: Changes,
  ) {}

  /** The workspace that exists from first start; created on first call. Two processes racing agree on one. */
  async default(): Promise<Workspace> {
    const existing = await this.db.get<Row>('SELECT * FROM workspaces WHERE is_default = 1');
    if (existing !== undefined) return toWorkspace(existing);
    const at = nowSeconds();
    // The slug is unique, so one insert wins and both read it back.
    await this.db.run(
      `INSERT INTO workspaces (id, slug, name, status, is_default, created_at, last_updated_at)
       VALUES (?, 'default', 'Default', 'active', 1, ?, ?) ON CONFLICT DO NOTHING`,
      [newId(), at, at],
    );
    const ws = await this.db.get<Row>('SELECT * FROM workspaces WHERE is_default = 1');
    if (ws === undefined) throw new Error("cannot create the default workspace: the slug 'default' is taken");
    return toWorkspace(ws);
  }

  async create(w: NewWorkspace): Promise<Workspace> {
    const at = nowSeconds();
    const id = newId();
    await this.db.run(
      `INSERT INTO workspaces (id, slug, name, description, status, is_default, metadata, settings, defaults, created_at, last_updated_at)
       VALUES (?, ?, ?, ?, 'active', 0, ?, ?, ?, ?, ?)`,
      [id, w.slug, w.name, w.description, toJson(w.metadata), toJson(w.settings), toJson(w.defaults), at, at],
    );
    return (await this.get(id))!;
  }

  async get(id: string): Promise<Workspace | null> {
    const r = await this.db.get<Row>('SELECT * FROM workspaces WHERE id = ?', [id]);
    return r === undefined ? null : toWorkspace(r);
  }

  /** By id or slug (the contract lets clients name a workspace either way). */
  async find(ref: string): Promise<Workspace | null> {
    const r = await this.db.get<Row>('SELECT * FROM workspaces WHERE id = ? OR slug = ?', [ref, ref]);
    return r === undefined ? null : toWorkspace(r);
  }

  /** Every workspace, archived ones included (organisation-wide log access reads each one's settings). */
  async all(): Promise<Workspace[]> {
    return (await this.db.all<Row>('SELECT * FROM workspaces ORDER BY id')).map(toWorkspace);
  }

  list(statuses: readonly WorkspaceStatus[], page: PageRequest, only?: readonly string[]): Promise<Page<Workspace>> {
    const where = [`status IN (${statuses.map(() => '?').join(', ')})`];
    const params: string[] = [...statuses];
    if (only !== undefined) {
      if (only.length === 0) return Promise.resolve({ data: [], hasMore: false });
      where.push(`id IN (${only.map(() => '?').join(', ')})`);
      params.push(...only);
    }
    return listPage(this.db, 'workspaces', where, params, page, toWorkspace);
  }

  async update(id: string, patch: WorkspacePatch): Promise<Workspace | null> {
    const current = await this.get(id);
    if (current === null) return null;
    const next = { ...current, ...patch };
    await this.db.run(
      `UPDATE workspaces SET name = ?, description = ?, status = ?, metadata = ?, settings = ?, defaults = ?, last_updated_at = ? WHERE id = ?`,
      [next.name, next.description, next.status, toJson(next.metadata), toJson(next.settings), toJson(next.defaults), nowSeconds(), id],
    );
    this.changes.publish({ kind: 'workspace', id });
    return this.get(id);
  }

  /** Deletes a workspace that holds nothing; false when it does not exist. */
  async delete(id: string): Promise<boolean> {
    const n = await this.db.run('DELETE FROM workspaces WHERE id = ? AND is_default = 0', [id]);
    if (n > 0) this.changes.publish({ kind: 'workspace', id });
    return n > 0;
  }
}
