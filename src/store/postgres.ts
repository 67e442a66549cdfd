/**
 * Postgres engine of the store, used when DATABASE_URL is set so several
 * gateway processes share one database. Same migrations and behaviour as the
 * SQLite engine; the shared test suite holds both to it.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { MIGRATIONS } from './migrations.js';
import { now, toKey, type ApiKeyRow } from './rows.js';
import type { ApiKeyRecord, Store, Workspace } from './types.js';

export interface PostgresStoreOptions {
  /** Schema to work in (search_path) instead of the connection's default; tests isolate themselves with it. */
  schema?: string;
}

/** Arbitrary constant naming the migration lock; every migrator of the same database takes it. */
const MIGRATION_LOCK = 0x5377_6d67;

// BIGINT columns hold Unix seconds and counts, far inside Number's safe range;
// pg returns int8 as a string unless told otherwise. Per pool, not global.
const TYPES = new pg.TypeOverrides();
TYPES.setTypeParser(pg.types.builtins.INT8, Number);

const PING_TIMEOUT_MS = 1000;

export class PostgresStore implements Store {
  private readonly pool: pg.Pool;

  constructor(connectionString: string, opts: PostgresStoreOptions = {}) {
    if (opts.schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(opts.schema)) {
      throw new Error(`invalid schema name '${opts.schema}'`);
    }
    this.pool = new pg.Pool({
      connectionString,
      types: TYPES,
      ...(opts.schema !== undefined ? { options: `-c search_path=${opts.schema}` } : {}),
    });
    // An idle client losing its connection (server restart) emits here; without a
    // listener that would crash the process. The next query reconnects or fails visibly.
    this.pool.on('error', () => {});
  }

  async migrate(): Promise<void> {
    await this.transaction(async (c) => {
      // Serialises migrators: a second process waits here, then finds everything applied.
      await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await c.query('CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
      const { rows } = await c.query<{ id: number }>('SELECT id FROM schema_migrations');
      const applied = new Set(rows.map((r) => r.id));
      for (const m of MIGRATIONS) {
        if (applied.has(m.id)) continue;
        await c.query(m.sql);
        await c.query('INSERT INTO schema_migrations (id, name, applied_at) VALUES ($1, $2, $3)', [m.id, m.name, now()]);
      }
    });
  }

  async defaultWorkspace(): Promise<Workspace> {
    const existing = await this.findDefaultWorkspace();
    if (existing !== null) return existing;
    const at = now();
    // Two processes may get here together: the slug is unique, so one insert wins and both read it back.
    await this.pool.query(
      `INSERT INTO workspaces (id, slug, name, status, is_default, created_at, last_updated_at)
       VALUES ($1, 'default', 'Default', 'active', 1, $2, $2) ON CONFLICT DO NOTHING`,
      [randomUUID(), at],
    );
    const ws = await this.findDefaultWorkspace();
    if (ws === null) throw new Error("cannot create the default workspace: the slug 'default' is taken");
    return ws;
  }

  async insertApiKey(k: ApiKeyRecord): Promise<void> {
    await this.pool.query(
      `INSERT INTO api_keys (id, name, type, sub_type, is_admin, workspace_id, user_id, scopes, key_hash, status, expires_at, created_at, last_reset_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [k.id, k.name, k.type, k.subType, k.isAdmin ? 1 : 0, k.workspaceId, k.userId, JSON.stringify(k.scopes), k.hash, k.status, k.expiresAt, k.createdAt, k.lastResetAt],
    );
  }

  async updateApiKeyHash(id: string, hash: string): Promise<void> {
    await this.pool.query('UPDATE api_keys SET key_hash = $1 WHERE id = $2', [hash, id]);
  }

  async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.pool.query<ApiKeyRow>('SELECT * FROM api_keys WHERE key_hash = $1', [hash]);
    return rows[0] === undefined ? null : toKey(rows[0]);
  }

  async getApiKey(id: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.pool.query<ApiKeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
    return rows[0] === undefined ? null : toKey(rows[0]);
  }

  async countApiKeys(): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>('SELECT COUNT(*) AS n FROM api_keys');
    return rows[0]!.n;
  }

  /** A health check must answer fast: an unreachable server reads as down after PING_TIMEOUT_MS. */
  async ping(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    const answer = this.pool.query('SELECT 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([answer, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async findDefaultWorkspace(): Promise<Workspace | null> {
    const { rows } = await this.pool.query<{ id: string; slug: string; name: string; status: Workspace['status']; created_at: number }>(
      'SELECT id, slug, name, status, created_at FROM workspaces WHERE is_default = 1',
    );
    const r = rows[0];
    return r === undefined ? null : { id: r.id, slug: r.slug, name: r.name, status: r.status, createdAt: r.created_at };
  }

  private async transaction<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      c.release();
    }
  }
}
