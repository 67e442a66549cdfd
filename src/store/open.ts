/**
 * Picks the store engine from settings: Postgres when DATABASE_URL is set, else
 * SQLite in the data dir. Each engine is loaded only when chosen, so a process
 * carries one database driver, not two.
 */
import type { Settings } from '../settings.js';
import { Store } from './store.js';

export async function openStore(settings: Pick<Settings, 'dataDir' | 'databaseUrl'>): Promise<Store> {
  if (settings.databaseUrl !== undefined) {
    const { PostgresDb } = await import('./postgres.js');
    const db = new PostgresDb(settings.databaseUrl);
    const store = new Store(db);
    db.connectChanges(store.changes);
    return store;
  }
  const { SqliteDb } = await import('./sqlite.js');
  return new Store(new SqliteDb(settings.dataDir));
}
