/**
 * What rate-limit and usage-limit policies share in the store: the fields
 * every policy has (workspace, name, conditions, group_by, fail mode,
 * status, times)
 * and one repository (create, get, list, active, update, delete) that a
 * kind's description turns into that kind's: its table, its change notice
 * and its own columns. A kind's own field `fooBar` is stored in column
 * `foo_bar`.
 */
import { deleteAndAnnounce, type ChangeKind, type Changes } from './changes.js';
import type { Db, SqlValue } from './db.js';
import { newId, nowSeconds } from './ids.js';
import { listPage, type Page, type PageRequest } from './page.js';

export const POLICY_STATUSES = ['active', 'archived'] as const;
export type PolicyStatus = (typeof POLICY_STATUSES)[number];

/**
 * What a condition or group_by entry reads: workspace_id, api_key,
 * endpoint_type or metadata.<name>; a `trusted` metadata entry reads only
 * what the key's own defaults.metadata sets, never the caller's value.
 */
export interface PolicyKey {
  key: string;
  trusted?: true;
}

/** `value` is what the key must equal, or `*` for any. */
export interface PolicyCondition extends PolicyKey {
  value: string;
}

export type PolicyGroupBy = PolicyKey;

/** While a policy's counters cannot be reached: admit requests uncounted (`open`, the default), or refuse them. */
export const FAIL_MODES = ['open', 'closed'] as const;
export type FailMode = (typeof FAIL_MODES)[number];

export interface Policy {
  id: string;
  workspaceId: string;
  name: string | null;
  conditions: PolicyCondition[];
  groupBy: PolicyGroupBy[];
  failMode: FailMode;
  status: PolicyStatus;
  createdAt: number;
  lastUpdatedAt: number;
}

/** The fields a kind adds to every policy. */
export type OwnFields<P extends Policy> = Omit<P, keyof Policy>;

/** What every new policy is given; a kind adds its own fields (those it leaves out are stored null). */
export type NewPolicy = Pick<Policy, 'workspaceId' | 'name' | 'conditions' | 'groupBy' | 'failMode'>;

export type PolicyPatch<P extends Policy> = Partial<Omit<P, 'id' | 'workspaceId' | 'createdAt' | 'lastUpdatedAt'>>;

export interface PolicyFilter<P extends Policy> {
  statuses: readonly PolicyStatus[];
  /** Unset: every workspace. */
  workspaceId?: string;
  /** Own fields that must equal the value given (unset ones are not filtered). */
  equal?: Partial<OwnFields<P>>;
}

export interface PolicyKind<P extends Policy> {
  table: string;
  change: ChangeKind;
  /** Every own field, with how its stored value reads back (drivers may hand numbers back as strings). */
  columns: { readonly [K in keyof OwnFields<P>]-?: (stored: unknown) => P[K] };
}

/** Readers for `PolicyKind.columns`. */
export const stored = <T>(v: unknown): T => v as T;
export const nullableNumber = (v: unknown): number | null => (v === null ? null : Number(v));

const columnOf = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export class PolicyRepo<P extends Policy, N extends NewPolicy> {
  /** The kind's own fields, and the column each is stored in. */
  private readonly own: readonly (readonly [field: string, column: string, read: (v: unknown) => unknown])[];

  constructor(
    protected readonly db: Db,
    protected readonly changes: Changes,
    protected readonly kind: PolicyKind<P>,
  ) {
    this.own = Object.entries<(v: unknown) => unknown>(kind.columns).map(([field, read]) => [field, columnOf(field), read]);
  }

  async create(p: N): Promise<P> {
    const id = newId();
    const at = nowSeconds();
    const own = this.own.map(([field]) => ((p as Record<string, unknown>)[field] ?? null) as SqlValue);
    const columns = ['id', 'workspace_id', 'name', 'conditions', 'group_by', 'fail_mode', 'status', 'created_at', 'last_updated_at', ...this.own.map(([, column]) => column)];
    await this.db.run(`INSERT INTO ${this.kind.table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`, [
      id,
      p.workspaceId,
      p.name,
      JSON.stringify(p.conditions),
      JSON.stringify(p.groupBy),
      p.failMode,
      'active',
      at,
      at,
      ...own,
    ]);
    this.changes.publish({ kind: this.kind.change, id });
    return (await this.get(id))!;
  }

  async get(id: string): Promise<P | null> {
    const r = await this.db.get<Record<string, unknown>>(`SELECT * FROM ${this.kind.table} WHERE id = ?`, [id]);
    return r === undefined ? null : this.toPolicy(r);
  }

  /** One page, newest first: `statuses` any of, each `equal` field an exact match. */
  list(filter: PolicyFilter<P>, page: PageRequest): Promise<Page<P>> {
    const where = [`status IN (${filter.statuses.map(() => '?').join(', ')})`];
    const params: SqlValue[] = [...filter.statuses];
    const equal: [string, unknown][] = [['workspace_id', filter.workspaceId], ...Object.entries(filter.equal ?? {}).map(([f, v]): [string, unknown] => [columnOf(f), v])];
    for (const [column, value] of equal) {
      if (value === undefined) continue;
      where.push(`${column} = ?`);
      params.push(value as SqlValue);
    }
    return listPage(this.db, this.kind.table, where, params, page, (r: Record<string, unknown>) => this.toPolicy(r));
  }

  /** Every active policy of a workspace: what requests made in it are checked against. */
  async active(workspaceId: string): Promise<P[]> {
    const rows = await this.db.all<Record<string, unknown>>(`SELECT * FROM ${this.kind.table} WHERE workspace_id = ? AND status = 'active' ORDER BY id`, [workspaceId]);
    return rows.map((r) => this.toPolicy(r));
  }

  async update(id: string, patch: PolicyPatch<P>): Promise<P | null> {
    const current = await this.get(id);
    if (current === null) return null;
    const n: Record<string, unknown> = { ...current, ...patch };
    const set = ['name', 'conditions', 'group_by', 'fail_mode', 'status', ...this.own.map(([, column]) => column), 'last_updated_at'];
    await this.db.run(`UPDATE ${this.kind.table} SET ${set.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [
      n.name as SqlValue,
      JSON.stringify(n.conditions),
      JSON.stringify(n.groupBy),
      n.failMode as SqlValue,
      n.status as SqlValue,
      ...this.own.map(([field]) => n[field] as SqlValue),
      nowSeconds(),
      id,
    ]);
    this.changes.publish({ kind: this.kind.change, id });
    return this.get(id);
  }

  delete(id: string): Promise<boolean> {
    return deleteAndAnnounce(this.db, this.changes, this.kind.table, { kind: this.kind.change, id });
  }

  private toPolicy(r: Record<string, unknown>): P {
    const p: Record<string, unknown> = {
      id: r.id,
      workspaceId: r.workspace_id,
      name: r.name,
      conditions: JSON.parse(r.conditions as string) as PolicyCondition[],
      groupBy: JSON.parse(r.group_by as string) as PolicyGroupBy[],
      failMode: r.fail_mode,
      status: r.status,
      createdAt: Number(r.created_at),
      lastUpdatedAt: Number(r.last_updated_at),
    };
    for (const [field, column, read] of this.own) p[field] = read(r[column]);
    return p as P;
  }
}
