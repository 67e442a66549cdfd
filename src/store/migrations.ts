/**
 * Schema migrations, applied in order and recorded in schema_migrations.
 * Append only: a shipped migration never changes. Plain SQL that both SQLite
 * and Postgres accept.
 */
export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'workspaces and api keys',
    sql: `
      CREATE TABLE workspaces (
        id TEXT PRIMARY KEY,
        slug TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        description TEXT,
        status TEXT NOT NULL DEFAULT 'active',
        is_default INTEGER NOT NULL DEFAULT 0,
        created_at BIGINT NOT NULL,
        last_updated_at BIGINT NOT NULL
      );
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        sub_type TEXT NOT NULL,
        is_admin INTEGER NOT NULL DEFAULT 0,
        workspace_id TEXT NOT NULL REFERENCES workspaces(id),
        user_id TEXT,
        scopes TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL DEFAULT 'active',
        expires_at BIGINT,
        created_at BIGINT NOT NULL,
        last_reset_at BIGINT
      );
    `,
  },
];
