/**
 * Picks the store engine from settings: Postgres when DATABASE_URL is set, else
 * SQLite in the data dir (open-db.ts). Each engine is loaded only when chosen,
 * so a process carries one database driver, not two.
 */
import type { Settings } from '../settings.js';
import { FailoverDb } from './failover.js';
import { LOG_READ_TIMEOUT_MS } from './logs.js';
import { openDb, type DbSettings } from './open-db.js';
import { SqliteReads } from './sqlite-reads.js';
import { Store } from './store.js';

export type StoreSettings = DbSettings & Partial<Pick<Settings, 'databaseReaderUrl' | 'writerHa'>>;

/** With HA on, a connection not made in this long counts as the writer being away (and the reader's, as failed). */
const HA_CONNECT_TIMEOUT_MS = 3000;

export async function openStore(settings: StoreSettings): Promise<Store> {
  // SQLite's log and analytics reads run in a process of their own (sqlite-reads.ts), off the request thread.
  if (settings.databaseUrl === undefined) return new Store(await openDb(settings), new SqliteReads(settings.dataDir, { timeoutMs: LOG_READ_TIMEOUT_MS }));
  const { PostgresDb } = await import('./postgres.js');
  const connectTimeoutMs = settings.writerHa === true ? HA_CONNECT_TIMEOUT_MS : undefined;
  const db = new PostgresDb(settings.databaseUrl, { connectTimeoutMs });
  const reader = settings.databaseReaderUrl === undefined ? null : new PostgresDb(settings.databaseReaderUrl, { connectTimeoutMs });
  const store = new Store(settings.writerHa === true ? new FailoverDb(db, reader) : db, reader);
  db.connectChanges(store.changes);
  return store;
}

