/**
 * SQLite engine of the store: one file in GATEWAY_DATA_DIR, WAL mode so log
 * writes (later) do not block readers. better-sqlite3 is synchronous; calls
 * are short indexed lookups, and the hot path reads through caches anyway.
 */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { MIGRATIONS } from './migrations.js';
import { now, toKey, type ApiKeyRow } from './rows.js';
import type { ApiKeyRecord, Store, Workspace } from './types.js';

export class SqliteStore implements Store {
  private readonly db: Database.Database;

  constructor(dataDir: string) {
    this.db = new Database(join(dataDir, 'switchyard.db'));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
  }

  async migrate(): Promise<void> {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
    const applied = new Set(this.db.prepare('SELECT id FROM schema_migrations').pluck().all() as number[]);
    for (const m of MIGRATIONS) {
      if (applied.has(m.id)) continue;
      this.db.transaction(() => {
        this.db.exec(m.sql);
        this.db.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(m.id, m.name, now());
      })();
    }
  }

  async defaultWorkspace(): Promise<Workspace> {
    const row = this.db.prepare('SELECT id, slug, name, status, created_at FROM workspaces WHERE is_default = 1').get() as
      | { id: string; slug: string; name: string; status: Workspace['status']; created_at: number }
      | undefined;
    if (row !== undefined) return { id: row.id, slug: row.slug, name: row.name, status: row.status, createdAt: row.created_at };
    const ws: Workspace = { id: randomUUID(), slug: 'default', name: 'Default', status: 'active', createdAt: now() };
    this.db
      .prepare('INSERT INTO workspaces (id, slug, name, status, is_default, created_at, last_updated_at) VALUES (?, ?, ?, ?, 1, ?, ?)')
      .run(ws.id, ws.slug, ws.name, ws.status, ws.createdAt, ws.createdAt);
    return ws;
  }

  async insertApiKey(k: ApiKeyRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO api_keys (id, name, type, sub_type, is_admin, workspace_id, user_id, scopes, key_hash, status, expires_at, created_at, last_reset_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(k.id, k.name, k.type, k.subType, k.isAdmin ? 1 : 0, k.workspaceId, k.userId, JSON.stringify(k.scopes), k.hash, k.status, k.expiresAt, k.createdAt, k.lastResetAt);
  }

  async updateApiKeyHash(id: string, hash: string): Promise<void> {
    this.db.prepare('UPDATE api_keys SET key_hash = ? WHERE id = ?').run(hash, id);
  }

  async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    const row = this.db.prepare('SELECT * FROM api_keys WHERE key_hash = ?').get(hash) as ApiKeyRow | undefined;
    return row === undefined ? null : toKey(row);
  }

  async getApiKey(id: string): Promise<ApiKeyRecord | null> {
    const row = this.db.prepare('SELECT * FROM api_keys WHERE id = ?').get(id) as ApiKeyRow | undefined;
    return row === undefined ? null : toKey(row);
  }

  async countApiKeys(): Promise<number> {
    return this.db.prepare('SELECT COUNT(*) FROM api_keys').pluck().get() as number;
  }

  async ping(): Promise<boolean> {
    try {
      this.db.prepare('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
