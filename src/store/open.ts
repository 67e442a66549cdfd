/**
 * Picks the store engine from settings: Postgres when DATABASE_URL is set, else
 * SQLite in the data dir. Each engine is loaded only when chosen, so a process
 * carries one database driver, not two.
 */
import type { Settings } from '../settings.js';
import type { Store } from './types.js';

export async function openStore(settings: Pick<Settings, 'dataDir' | 'databaseUrl'>): Promise<Store> {
  if (settings.databaseUrl !== undefined) {
    const { PostgresStore } = await import('./postgres.js');
    return new PostgresStore(settings.databaseUrl);
  }
  const { SqliteStore } = await import('./sqlite.js');
  return new SqliteStore(settings.dataDir);
}
