/**
 * The two store engines for HTTP tests: each `fresh()` is the environment of
 * a new, empty database (a temp data dir for SQLite; a new schema for
 * Postgres, reached through DATABASE_URL). Starting two gateways with the
 * same environment is a restart on the same data. Postgres is required (CI
 * has it at 127.0.0.1:5432); TEST_DATABASE_URL points elsewhere.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

export interface TestEngine {
  name: 'sqlite' | 'postgres';
  fresh(): Promise<Record<string, string>>;
  /** Drops the database of one environment fresh() made. */
  drop(env: Record<string, string>): Promise<void>;
  /** Drops every database fresh() made. */
  cleanup(): Promise<void>;
}

/** libpq's `options` parameter confines a connection to one schema. */
export function schemaUrl(schema: string): string {
  const u = new URL(PG_URL);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

export async function createSchema(): Promise<string> {
  const schema = `sy_test_${randomBytes(6).toString('hex')}`;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await c.end();
  }
  return schema;
}

export async function dropSchemas(schemas: readonly string[]): Promise<void> {
  if (schemas.length === 0) return;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    for (const s of schemas) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  } finally {
    await c.end();
  }
}

/** Removes the entries `pick` selects (all, without one) from `made` and returns them. */
function take<T>(made: T[], pick: (x: T) => boolean = () => true): T[] {
  const taken = made.filter(pick);
  made.splice(0, made.length, ...made.filter((x) => !pick(x)));
  return taken;
}

function sqlite(): TestEngine {
  const dirs: string[] = [];
  const remove = (list: string[]): void => {
    for (const d of list) rmSync(d, { recursive: true, force: true });
  };
  return {
    name: 'sqlite',
    async fresh() {
      const dir = mkdtempSync(join(tmpdir(), 'switchyard-engine-'));
      dirs.push(dir);
      return { GATEWAY_DATA_DIR: dir };
    },
    async drop(env) {
      remove(take(dirs, (d) => d === env.GATEWAY_DATA_DIR));
    },
    async cleanup() {
      remove(take(dirs));
    },
  };
}

function postgres(): TestEngine {
  const schemas: string[] = [];
  return {
    name: 'postgres',
    async fresh() {
      const schema = await createSchema();
      schemas.push(schema);
      // Every process of one database shares the encryption key (each test gateway has its own data dir).
      return { DATABASE_URL: schemaUrl(schema), GATEWAY_ENCRYPTION_KEY: randomBytes(32).toString('hex') };
    },
    async drop(env) {
      await dropSchemas(take(schemas, (s) => schemaUrl(s) === env.DATABASE_URL));
    },
    async cleanup() {
      await dropSchemas(take(schemas));
    },
  };
}

/** A SQLite database in a temp dir, for suites that do not run on both engines. */
export function scratchEngine(): TestEngine {
  return sqlite();
}

/** Both engines, for `for (const engine of engines()) describe(...)`. */
export function engines(): TestEngine[] {
  return [sqlite(), postgres()];
}
