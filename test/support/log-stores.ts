/** A migrated Postgres store and SQLite store side by side, for tests that hold one engine's log answers to the other's. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import { engines } from './engines.js';

export interface TwoStores {
  pg: Store;
  lite: Store;
  /** Closes both and drops their databases. */
  close(): Promise<void>;
}

export async function twoStores(): Promise<TwoStores> {
  const [sqlite, postgres] = engines();
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-two-stores-'));
  const pg = await openStore({ dataDir: dir, databaseUrl: (await postgres!.fresh()).DATABASE_URL });
  const lite = await openStore({ dataDir: (await sqlite!.fresh()).GATEWAY_DATA_DIR!, databaseUrl: undefined });
  await pg.migrate();
  await lite.migrate();
  return {
    pg,
    lite,
    async close() {
      await pg.close();
      await lite.close();
      await postgres!.cleanup();
      await sqlite!.cleanup();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
