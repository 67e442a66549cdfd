/**
 * One database connection from settings, without the Store over it: the log
 * writer thread's, which so loads neither the other repositories nor the
 * migrations into its isolate. Each engine is loaded only when chosen.
 */
import type { Settings } from '../settings.js';
import type { Engine } from './store.js';

export type DbSettings = Pick<Settings, 'dataDir' | 'databaseUrl'>;

/** A connection of its own (the log writer thread's): no change notices, no migrations. */
export async function openDb(settings: DbSettings): Promise<Engine> {
  if (settings.databaseUrl !== undefined) {
    const { PostgresDb } = await import('./postgres.js');
    return new PostgresDb(settings.databaseUrl);
  }
  const { SqliteDb } = await import('./sqlite.js');
  return new SqliteDb(settings.dataDir);
}
