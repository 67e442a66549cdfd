// A SIGTERM while the gateway still starts: the migrations it is running are
// not cut halfway; once they end, what the start opened is closed and the
// process exits 0 (not 143, killed by the signal's default action). The
// migrations are held in the middle by taking their Postgres advisory lock.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { MIGRATION_LOCK } from '../src/store/migrations.js';
import { createSchema, dropSchemas, PG_URL, schemaUrl } from './support/engines.js';
import { until } from './support/http.js';
import { spawnMain, type GatewayProcess } from './support/process.js';

const schemas: string[] = [];
after(() => dropSchemas(schemas));

/** Sessions that wait for the migration lock, other than `holder`'s. */
async function waiters(holder: pg.Client): Promise<number> {
  const r = await holder.query(
    "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1 AND pid <> pg_backend_pid()",
    [MIGRATION_LOCK],
  );
  return r.rows[0].n as number;
}

for (const workers of ['1', '2']) {
  describe(`SIGTERM during the migrations (GATEWAY_WORKERS=${workers})`, { timeout: 60_000 }, () => {
    it('the migrations end, the store closes, exit 0; the schema is whole', async () => {
      const schema = await createSchema();
      schemas.push(schema);
      const holder = new pg.Client({ connectionString: PG_URL });
      await holder.connect();
      let gw: GatewayProcess | undefined;
      try {
        await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
        gw = await spawnMain({ GATEWAY_WORKERS: workers, DATABASE_URL: schemaUrl(schema), GATEWAY_ADMIN_API_KEY: 'starting-admin-key-0123456789abcdef', GATEWAY_ENCRYPTION_KEY: randomBytes(32).toString('hex') });
        const { child } = gw;
        await until('the migrations to wait for their lock', async () => (await waiters(holder)) === 1, 15_000);
        child.kill('SIGTERM');
        await sleep(300);
        assert.equal(child.exitCode, null, `exited on the signal while migrating: ${gw.stderr()}`);
        assert.equal(child.signalCode, null);
        await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
        assert.deepEqual(await gw.exited, { code: 0, signal: null }, gw.stderr());
        const applied = await holder.query(`SELECT count(*)::int AS n FROM ${schema}.schema_migrations`);
        assert.ok(applied.rows[0].n > 20, `${applied.rows[0].n} migrations recorded`);
      } finally {
        // A test that failed midway leaves no gateway behind (its pipes would hold this file's process open).
        gw?.kill();
        await holder.end();
      }
    });
  });
}
