/** Gateway API keys: never the secret, only its SHA-256 (and, during a rotation, the previous one's). */
import { deleteAndAnnounce, type Changes } from './changes.js';
import type { Db } from './db.js';
import { nowSeconds } from './ids.js';
import { fromJson, listPage, toJson, type Page, type PageRequest } from './page.js';

export type ApiKeyType = 'organisation' | 'workspace';
export type ApiKeySubType = 'service' | 'user';
export type ApiKeyStatus = 'active' | 'exhausted' | 'revoked';

export interface RotationPolicy {
  rotation_period: 'weekly' | 'monthly' | null;
  /** Unix seconds of the next scheduled rotation; null: none scheduled. */
  next_rotation_at: number | null;
  key_transition_period_ms: number | null;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  description: string | null;
  type: ApiKeyType;
  subType: ApiKeySubType;
  /** Organisation-admin keys hold every scope. */
  isAdmin: boolean;
  workspaceId: string;
  userId: string | null;
  scopes: string[];
  hash: string;
  /** A few characters of the secret's end, to tell keys apart in lists. */
  keyHint: string | null;
  /** The secret replaced by the last rotation, valid until previousExpiresAt (Unix seconds). */
  previousHash: string | null;
  previousExpiresAt: number | null;
  rotationPolicy: RotationPolicy | null;
  lastRotatedAt: number | null;
  defaults: Record<string, unknown> | null;
  metadata: Record<string, string> | null;
  creationMode: 'api' | 'auto' | 'bootstrap';
  status: ApiKeyStatus;
  /** Unix seconds; null: never. */
  expiresAt: number | null;
  createdAt: number;
  lastUpdatedAt: number | null;
  lastResetAt: number | null;
}

export interface ApiKeyRow {
  id: string;
  name: string;
  description: string | null;
  type: string;
  sub_type: string;
  is_admin: number;
  workspace_id: string;
  user_id: string | null;
  scopes: string;
  key_hash: string;
  key_hint: string | null;
  previous_key_hash: string | null;
  previous_key_expires_at: number | null;
  rotation_policy: string | null;
  last_rotated_at: number | null;
  defaults: string | null;
  metadata: string | null;
  creation_mode: string;
  status: string;
  expires_at: number | null;
  created_at: number;
  last_updated_at: number | null;
  last_reset_at: number | null;
}

export function toKey(r: ApiKeyRow): ApiKeyRecord {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    type: r.type as ApiKeyType,
    subType: r.sub_type as ApiKeySubType,
    isAdmin: r.is_admin === 1,
    workspaceId: r.workspace_id,
    userId: r.user_id,
    scopes: JSON.parse(r.scopes) as string[],
    hash: r.key_hash,
    keyHint: r.key_hint,
    previousHash: r.previous_key_hash,
    previousExpiresAt: r.previous_key_expires_at,
    rotationPolicy: fromJson(r.rotation_policy),
    lastRotatedAt: r.last_rotated_at,
    defaults: fromJson(r.defaults),
    metadata: fromJson(r.metadata),
    creationMode: r.creation_mode as ApiKeyRecord['creationMode'],
    status: r.status as ApiKeyStatus,
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    lastUpdatedAt: r.last_updated_at,
    lastResetAt: r.last_reset_at,
  };
}

const COLUMNS =
  'id, name, description, type, sub_type, is_admin, workspace_id, user_id, scopes, key_hash, key_hint, previous_key_hash, previous_key_expires_at, rotation_policy, last_rotated_at, defaults, metadata, creation_mode, status, expires_at, created_at, last_updated_at, last_reset_at';

export interface ApiKeyFilter {
  /** Workspace keys of this workspace. */
  workspaceId?: string;
  userId?: string;
  type?: ApiKeyType;
  subType?: ApiKeySubType;
}

/** What a key's management may change: never its secret, type, workspace or user. */
export type ApiKeyPatch = Pick<ApiKeyRecord, 'name' | 'description' | 'scopes' | 'rotationPolicy' | 'defaults' | 'metadata' | 'expiresAt'>;

/** A new secret for a key, claimed against the secret it replaces. */
export interface Rotation {
  id: string;
  /** Hash of the current secret: the claim fails when another rotation replaced it first. */
  fromHash: string;
  hash: string;
  keyHint: string;
  /** Unix seconds: the replaced secret works until then. */
  transitionEndsAt: number;
  /** Unix seconds. */
  at: number;
  /**
   * Scheduled rotations: the new secret sealed for the owner to claim once, the
   * advanced policy, and the due time the claim requires to be unchanged (one
   * process of several wins; a policy changed meanwhile wins over the sweep).
   */
  scheduled?: { sealedKey: string; due: number; next: RotationPolicy };
}

export class ApiKeyRepo {
  constructor(
    private readonly db: Db,
    private readonly changes: Changes,
  ) {}

  async insert(k: ApiKeyRecord, db: Db = this.db): Promise<void> {
    await db.run(`INSERT INTO api_keys (${COLUMNS}, next_rotation_at) VALUES (${COLUMNS.split(',').map(() => '?').join(', ')}, ?)`, [
      k.id, k.name, k.description, k.type, k.subType, k.isAdmin ? 1 : 0, k.workspaceId, k.userId, JSON.stringify(k.scopes), k.hash,
      k.keyHint, k.previousHash, k.previousExpiresAt, toJson(k.rotationPolicy), k.lastRotatedAt, toJson(k.defaults), toJson(k.metadata),
      k.creationMode, k.status, k.expiresAt, k.createdAt, k.lastUpdatedAt, k.lastResetAt, k.rotationPolicy?.next_rotation_at ?? null,
    ]);
  }

  /** The key whose current secret, or previous secret during a rotation's transition, has this hash. */
  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    const r = await this.db.get<ApiKeyRow>('SELECT * FROM api_keys WHERE key_hash = ? OR previous_key_hash = ?', [hash, hash]);
    return r === undefined ? null : toKey(r);
  }

  async get(id: string): Promise<ApiKeyRecord | null> {
    const r = await this.db.get<ApiKeyRow>('SELECT * FROM api_keys WHERE id = ?', [id]);
    return r === undefined ? null : toKey(r);
  }

  async count(): Promise<number> {
    const r = await this.db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM api_keys');
    return Number(r!.n);
  }

  list(filter: ApiKeyFilter, page: PageRequest): Promise<Page<ApiKeyRecord>> {
    const where: string[] = [];
    const params: string[] = [];
    if (filter.workspaceId !== undefined) {
      // Organisation keys belong to no workspace (their column holds the default one, for the foreign key).
      where.push("type = 'workspace' AND workspace_id = ?");
      params.push(filter.workspaceId);
    }
    if (filter.userId !== undefined) {
      where.push('user_id = ?');
      params.push(filter.userId);
    }
    if (filter.type !== undefined) {
      where.push('type = ?');
      params.push(filter.type);
    }
    if (filter.subType !== undefined) {
      where.push('sub_type = ?');
      params.push(filter.subType);
    }
    return listPage(this.db, 'api_keys', where, params, page, toKey);
  }

  /** Replaces a stored key's mutable fields with those of `k` (same id). */
  async update(k: ApiKeyRecord, db: Db = this.db): Promise<void> {
    await db.run(
      `UPDATE api_keys SET name = ?, description = ?, scopes = ?, key_hash = ?, key_hint = ?, previous_key_hash = ?, previous_key_expires_at = ?,
         rotation_policy = ?, next_rotation_at = ?, last_rotated_at = ?, defaults = ?, metadata = ?, status = ?, expires_at = ?, last_updated_at = ?, last_reset_at = ?
       WHERE id = ?`,
      [
        k.name, k.description, JSON.stringify(k.scopes), k.hash, k.keyHint, k.previousHash, k.previousExpiresAt, toJson(k.rotationPolicy),
        k.rotationPolicy?.next_rotation_at ?? null, k.lastRotatedAt, toJson(k.defaults), toJson(k.metadata), k.status, k.expiresAt, nowSeconds(),
        k.lastResetAt, k.id,
      ],
    );
    this.changes.publish({ kind: 'api_key', id: k.id });
  }

  /**
   * Changes what management may change, leaving the secret columns alone: a
   * rotation running meanwhile is neither undone nor revived. False when the key is gone.
   */
  async patch(id: string, p: ApiKeyPatch, at: number): Promise<boolean> {
    const n = await this.db.run(
      `UPDATE api_keys SET name = ?, description = ?, scopes = ?, rotation_policy = ?, next_rotation_at = ?, defaults = ?, metadata = ?, expires_at = ?,
         last_updated_at = ?
       WHERE id = ?`,
      [
        p.name, p.description, JSON.stringify(p.scopes), toJson(p.rotationPolicy), p.rotationPolicy?.next_rotation_at ?? null, toJson(p.defaults),
        toJson(p.metadata), p.expiresAt, at, id,
      ],
    );
    if (n > 0) this.changes.publish({ kind: 'api_key', id });
    return n > 0;
  }

  /**
   * Puts a new secret in place if the key still has the one `r` replaces (and,
   * scheduled, is still due at the same time). False: someone else rotated or
   * rescheduled it first. A manual rotation drops any sealed secret of an
   * earlier scheduled one: that secret is already the previous one.
   */
  async rotate(r: Rotation): Promise<boolean> {
    const common = [r.hash, r.keyHint, r.fromHash, r.transitionEndsAt, r.at, r.at];
    const n =
      r.scheduled === undefined
        ? await this.db.run(
            `UPDATE api_keys SET key_hash = ?, key_hint = ?, previous_key_hash = ?, previous_key_expires_at = ?, last_rotated_at = ?, last_updated_at = ?,
               rotated_key = NULL
             WHERE id = ? AND key_hash = ?`,
            [...common, r.id, r.fromHash],
          )
        : await this.db.run(
            `UPDATE api_keys SET key_hash = ?, key_hint = ?, previous_key_hash = ?, previous_key_expires_at = ?, last_rotated_at = ?, last_updated_at = ?,
               rotated_key = ?, rotation_policy = ?, next_rotation_at = ?
             WHERE id = ? AND key_hash = ? AND next_rotation_at = ?`,
            [
              ...common, r.scheduled.sealedKey, JSON.stringify(r.scheduled.next), r.scheduled.next.next_rotation_at, r.id, r.fromHash,
              r.scheduled.due,
            ],
          );
    if (n > 0) this.changes.publish({ kind: 'api_key', id: r.id });
    return n > 0;
  }

  /**
   * Active, unexpired keys whose scheduled rotation is due (Unix seconds `now`),
   * soonest first. Keys still in a rotation's transition wait for it to end:
   * a key has at most two live secrets.
   */
  async dueForRotation(now: number, limit: number): Promise<ApiKeyRecord[]> {
    const rows = await this.db.all<ApiKeyRow>(
      `SELECT * FROM api_keys
       WHERE next_rotation_at <= ? AND status = 'active' AND (expires_at IS NULL OR expires_at > ?)
         AND (previous_key_expires_at IS NULL OR previous_key_expires_at <= ?)
       ORDER BY next_rotation_at LIMIT ?`,
      [now, now, now, limit],
    );
    return rows.map(toKey);
  }

  /** The sealed secret of the key's last scheduled rotation, handed out once: the first taker clears it. */
  async takeRotatedKey(id: string): Promise<string | null> {
    const row = await this.db.get<{ rotated_key: string | null }>('SELECT rotated_key FROM api_keys WHERE id = ?', [id]);
    if (row?.rotated_key == null) return null;
    const n = await this.db.run('UPDATE api_keys SET rotated_key = NULL WHERE id = ? AND rotated_key = ?', [id, row.rotated_key]);
    return n > 0 ? row.rotated_key : null;
  }

  delete(id: string): Promise<boolean> {
    return deleteAndAnnounce(this.db, this.changes, 'api_keys', { kind: 'api_key', id });
  }
}
