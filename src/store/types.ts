/**
 * The store: one interface over every persisted object, SQLite by default
 * or Postgres when DATABASE_URL is set. Methods are async so either
 * engine fits.
 */

export type ApiKeyType = 'organisation' | 'workspace';
export type ApiKeySubType = 'service' | 'user';

/** A gateway key as stored: never the secret, only its SHA-256. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  type: ApiKeyType;
  subType: ApiKeySubType;
  /** Organisation-admin keys hold every scope and act in the default workspace. */
  isAdmin: boolean;
  workspaceId: string;
  userId: string | null;
  scopes: string[];
  hash: string;
  status: 'active' | 'exhausted' | 'revoked';
  /** Unix seconds; null: never. */
  expiresAt: number | null;
  createdAt: number;
  lastResetAt: number | null;
}

export interface Workspace {
  id: string;
  slug: string;
  name: string;
  status: 'active' | 'archived';
  createdAt: number;
}

export interface Store {
  migrate(): Promise<void>;
  defaultWorkspace(): Promise<Workspace>;
  insertApiKey(key: ApiKeyRecord): Promise<void>;
  /** Replaces the hash of an existing key (bootstrap key from the environment). */
  updateApiKeyHash(id: string, hash: string): Promise<void>;
  findApiKeyByHash(hash: string): Promise<ApiKeyRecord | null>;
  getApiKey(id: string): Promise<ApiKeyRecord | null>;
  countApiKeys(): Promise<number>;
  /** Whether the database answers now; false, not an error, when it does not (for /health). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
