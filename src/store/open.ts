/**
 * Picks the store engine from settings: Postgres when DATABASE_URL is set, else
 * SQLite in the data dir. Each engine is loaded only when chosen, so a process
 * carries one database driver, not two.
 */
import type { Settings } from '../settings.js';
import { Store, type Engine } from './store.js';

export type DbSettings = Pick<Settings, 'dataDir' | 'databaseUrl'>;

export async function openStore(settings: DbSettings): Promise<Store> {
  if (settings.databaseUrl === undefined) return new Store(await openDb(settings));
  const { PostgresDb } = await import('./postgres.js');
  const db = new PostgresDb(settings.databaseUrl);
  const store = new Store(db);
  db.connectChanges(store.changes);
  return store;
}

/** A connection of its own (the log writer thread's): no change notices, no migrations. */
export async function openDb(settings: DbSettings): Promise<Engine> {
  if (settings.databaseUrl !== undefined) {
    const { PostgresDb } = await import('./postgres.js');
    return new PostgresDb(settings.databaseUrl);
  }
  const { SqliteDb } = await import('./sqlite.js');
  return new SqliteDb(settings.dataDir);
}
