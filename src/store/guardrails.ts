/**
 * Saved guardrails: named checks (`[{id, parameters}]`) and the actions taken
 * on their verdict (`deny`, `async`, `on_fail`, `on_success`…), owned by a
 * workspace or, with workspace id null, by the organisation. Found by id, or
 * by slug within its workspace or among the organisation's. Every change of
 * checks or actions is a new version (a number from 1 and an id); name and
 * status change in place. Checks and actions are stored as given, validated
 * by the caller. Writes publish a `guardrail` notice for the caches on the
 * request path.
 */
import { deleteAndAnnounce, type Changes } from './changes.js';
import type { Db, SqlValue } from './db.js';
import { newId, nowSeconds } from './ids.js';
import type { OffsetPage } from './page.js';

export type GuardrailStatus = 'active' | 'archived';

export interface GuardrailCheck {
  /** `<provider>.<check>`, e.g. `default.regexMatch`. */
  id: string;
  parameters: Record<string, unknown>;
}

export type GuardrailActions = Record<string, unknown>;

export interface Guardrail {
  id: string;
  slug: string;
  /** Null: the organisation's, usable by every workspace. */
  workspaceId: string | null;
  name: string;
  checks: GuardrailCheck[];
  actions: GuardrailActions;
  status: GuardrailStatus;
  version: number;
  versionId: string;
  createdAt: number;
  lastUpdatedAt: number;
}

export type NewGuardrail = Pick<Guardrail, 'slug' | 'workspaceId' | 'name' | 'checks' | 'actions'>;

export type GuardrailPatch = Partial<Pick<Guardrail, 'name' | 'checks' | 'actions' | 'status'>>;

export interface GuardrailFilter {
  /** The guardrails this workspace can use: its own and the organisation's; every one when undefined. */
  usableBy?: string;
  /** Only these ids. */
  ids?: readonly string[];
}

interface Row {
  id: string;
  slug: string;
  workspace_id: string | null;
  name: string;
  checks: string;
  actions: string;
  status: string;
  version: number;
  version_id: string;
  created_at: number;
  last_updated_at: number;
}

function toGuardrail(r: Row): Guardrail {
  return {
    id: r.id,
    slug: r.slug,
    workspaceId: r.workspace_id,
    name: r.name,
    checks: JSON.parse(r.checks) as GuardrailCheck[],
    actions: JSON.parse(r.actions) as GuardrailActions,
    status: r.status as GuardrailStatus,
    version: r.version,
    versionId: r.version_id,
    createdAt: r.created_at,
    lastUpdatedAt: r.last_updated_at,
  };
}

/** Rows a workspace can use (its own and the organisation's), or the organisation's alone (null). */
function usableClause(workspaceId: string | null): { sql: string; params: SqlValue[] } {
  return workspaceId === null ? { sql: 'workspace_id IS NULL', params: [] } : { sql: '(workspace_id = ? OR workspace_id IS NULL)', params: [workspaceId] };
}

export class GuardrailRepo {
  constructor(
    private readonly db: Db,
    private readonly changes: Changes,
  ) {}

  async create(g: NewGuardrail): Promise<Guardrail> {
    const at = nowSeconds();
    const id = newId();
    await this.db.run(
      `INSERT INTO guardrails (id, slug, workspace_id, name, checks, actions, status, version, version_id, created_at, last_updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'active', 1, ?, ?, ?)`,
      [id, g.slug, g.workspaceId, g.name, JSON.stringify(g.checks), JSON.stringify(g.actions), newId(), at, at],
    );
    // A request may have named it before it existed.
    this.changes.publish({ kind: 'guardrail', id });
    return (await this.get(id))!;
  }

  /** By id, whoever owns it. */
  async get(id: string): Promise<Guardrail | null> {
    const r = await this.db.get<Row>('SELECT * FROM guardrails WHERE id = ?', [id]);
    return r === undefined ? null : toGuardrail(r);
  }

  /**
   * By id or slug, among the guardrails `workspaceId` can use (its own and
   * the organisation's; the organisation's alone for null). A slug both
   * have names the workspace's own.
   */
  async findFor(ref: string, workspaceId: string | null): Promise<Guardrail | null> {
    const usable = usableClause(workspaceId);
    const r = await this.db.get<Row>(
      `SELECT * FROM guardrails WHERE ${usable.sql} AND (id = ? OR slug = ?) ORDER BY CASE WHEN workspace_id IS NULL THEN 1 ELSE 0 END LIMIT 1`,
      [...usable.params, ref, ref],
    );
    return r === undefined ? null : toGuardrail(r);
  }

  async slugTaken(workspaceId: string | null, slug: string): Promise<boolean> {
    const owner = workspaceId === null ? 'workspace_id IS NULL' : 'workspace_id = ?';
    return (await this.db.get(`SELECT 1 AS x FROM guardrails WHERE ${owner} AND slug = ?`, workspaceId === null ? [slug] : [workspaceId, slug])) !== undefined;
  }

  /** Newest first, one page of `size` from `page * size`, with how many match in all. */
  async list(filter: GuardrailFilter, page: OffsetPage): Promise<{ data: Guardrail[]; total: number }> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (filter.usableBy !== undefined) {
      const usable = usableClause(filter.usableBy);
      where.push(usable.sql);
      params.push(...usable.params);
    }
    if (filter.ids !== undefined) {
      if (filter.ids.length === 0) return { data: [], total: 0 };
      where.push(`id IN (${filter.ids.map(() => '?').join(', ')})`);
      params.push(...filter.ids);
    }
    const clause = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`;
    const rows = await this.db.all<Row>(`SELECT * FROM guardrails${clause} ORDER BY id DESC LIMIT ? OFFSET ?`, [...params, page.size, page.page * page.size]);
    const count = await this.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM guardrails${clause}`, params);
    return { data: rows.map(toGuardrail), total: Number(count!.n) };
  }

  /** Applies a patch; new checks or actions make the next version. Null when the guardrail does not exist. */
  async update(id: string, patch: GuardrailPatch): Promise<Guardrail | null> {
    // Only the fields the patch names are written, and the version is counted in
    // the statement: concurrent updates neither undo each other nor share a number.
    const sets: string[] = [];
    const params: SqlValue[] = [];
    const set = (column: string, value: SqlValue): void => {
      sets.push(`${column} = ?`);
      params.push(value);
    };
    set('last_updated_at', nowSeconds());
    if (patch.name !== undefined) set('name', patch.name);
    if (patch.status !== undefined) set('status', patch.status);
    if (patch.checks !== undefined) set('checks', JSON.stringify(patch.checks));
    if (patch.actions !== undefined) set('actions', JSON.stringify(patch.actions));
    if (patch.checks !== undefined || patch.actions !== undefined) {
      sets.push('version = version + 1');
      set('version_id', newId());
    }
    if ((await this.db.run(`UPDATE guardrails SET ${sets.join(', ')} WHERE id = ?`, [...params, id])) === 0) return null;
    this.changes.publish({ kind: 'guardrail', id });
    return this.get(id);
  }

  /** False when it does not exist. */
  delete(id: string): Promise<boolean> {
    return deleteAndAnnounce(this.db, this.changes, 'guardrails', { kind: 'guardrail', id });
  }
}
