/** Picks the store engine from settings: Postgres when DATABASE_URL is set, else SQLite in the data dir. */
import type { Settings } from '../settings.js';
import { PostgresStore } from './postgres.js';
import { SqliteStore } from './sqlite.js';
import type { Store } from './types.js';

export function openStore(settings: Pick<Settings, 'dataDir' | 'databaseUrl'>): Store {
  return settings.databaseUrl !== undefined ? new PostgresStore(settings.databaseUrl) : new SqliteStore(settings.dataDir);
}
