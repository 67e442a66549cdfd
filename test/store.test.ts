// One suite of Store behaviours run against both engines: SQLite in a temp dir,
// Postgres in a fresh schema per test. Postgres is required (CI has it at
// 127.0.0.1:5432): if it is unreachable these tests fail rather than skip.
// TEST_DATABASE_URL points them at another server.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { hashKey } from '../src/http/auth.js';
import { applyMigration, MIGRATIONS } from '../src/store/migrations.js';
import { PostgresDb } from '../src/store/postgres.js';
import { SqliteDb } from '../src/store/sqlite.js';
import { Store } from '../src/store/store.js';
import { keyRecord as key } from './support/keys.js';
import { ADMIN_KEY, startTestGateway } from './support/gateway.js';
import { startPgRelay } from './support/pg-relay.js';
import { spawnGateway } from './support/process.js';

const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** One empty database; open() gives a new Store on it each time (a "process"). */
interface Backing {
  open(): Store;
}

interface Engine {
  name: string;
  setup(): Promise<void>;
  fresh(): Promise<Backing>;
  teardown(): Promise<void>;
}

function sqliteEngine(): Engine {
  const dirs: string[] = [];
  return {
    name: 'sqlite',
    async setup() {},
    async fresh() {
      const dir = mkdtempSync(join(tmpdir(), 'switchyard-store-'));
      dirs.push(dir);
      return { open: () => new Store(new SqliteDb(dir)) };
    },
    async teardown() {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}

function postgresEngine(): Engine {
  const admin = new pg.Client({ connectionString: PG_URL });
  const schemas: string[] = [];
  return {
    name: 'postgres',
    async setup() {
      await admin.connect();
    },
    async fresh() {
      const schema = await createSchema(admin);
      schemas.push(schema);
      return { open: () => new Store(new PostgresDb(schemaUrl(schema))) };
    },
    async teardown() {
      for (const s of schemas) await admin.query(`DROP SCHEMA ${s} CASCADE`);
      await admin.end();
    },
  };
}

/** libpq's `options` parameter confines a connection to one schema. */
function schemaUrl(schema: string): string {
  const u = new URL(PG_URL);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

async function createSchema(admin: pg.Client): Promise<string> {
  const schema = `sy_test_${randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  return schema;
}

/** Opens a migrated store, runs fn, and always closes it. */
async function withStore<T>(b: Backing, fn: (s: Store) => Promise<T>): Promise<T> {
  const s = b.open();
  try {
    await s.migrate();
    return await fn(s);
  } finally {
    await s.close();
  }
}

/** A store whose schema is as it was before migration `id` (the earlier ones recorded as applied): fn runs on it, then it is closed. */
async function withSchemaBefore(b: Backing, id: number, fn: (s: Store) => Promise<void>): Promise<void> {
  const s = b.open();
  try {
    await s.db.exec('CREATE TABLE schema_migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
    for (const m of MIGRATIONS.filter((m) => m.id < id)) {
      await applyMigration(s.db, m);
      await s.db.run('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, 0)', [m.id, m.name]);
    }
    await fn(s);
  } finally {
    await s.close();
  }
}

for (const engine of [sqliteEngine(), postgresEngine()]) {
  describe(`store (${engine.name})`, { timeout: 30_000 }, () => {
    before(() => engine.setup());
    after(() => engine.teardown());

    it('migrating twice, and from a second store on the same database, is a no-op', async () => {
      const b = await engine.fresh();
      await withStore(b, async (s) => {
        const ws = await s.workspaces.default();
        await s.apiKeys.insert(key({ workspaceId: ws.id }));
        await s.migrate();
        assert.equal(await s.apiKeys.count(), 1);
      });
      await withStore(b, async (s) => assert.equal(await s.apiKeys.count(), 1));
    });

    it('two stores migrating a fresh database at once both succeed', async () => {
      const b = await engine.fresh();
      const [x, y] = [b.open(), b.open()];
      try {
        await Promise.all([x.migrate(), y.migrate()]);
        assert.equal(await x.apiKeys.count(), 0);
        assert.equal(await y.apiKeys.count(), 0);
      } finally {
        await Promise.all([x.close(), y.close()]);
      }
    });

    it('insertMany writes rows with their types, skips keys already stored, and inside a transaction rolls back with it', async () => {
      const b = await engine.fresh();
      await withStore(b, async (s) => {
        await s.db.exec('CREATE TABLE many_t (id TEXT PRIMARY KEY, n BIGINT, f DOUBLE PRECISION, s TEXT)');
        const cols = ['id', 'n', 'f', 's'];
        await s.db.insertMany('many_t', cols, [
          ['a', 1_700_000_000_000, 3.06e-5, 'say "hi"\\n'],
          ['b', null, 0.5, null],
        ]);
        await s.db.insertMany('many_t', cols, [['a', 2, 2, 'again'], ['c', 3, 3, '']]);
        await s.db.insertMany('many_t', cols, []);
        await assert.rejects(
          s.db.transaction(async (tx) => {
            await tx.insertMany('many_t', cols, [['d', 4, 4, 'd']]);
            throw new Error('roll back');
          }),
          /roll back/,
        );
        assert.deepEqual(await s.db.all('SELECT id, n, f, s FROM many_t ORDER BY id'), [
          { id: 'a', n: 1_700_000_000_000, f: 3.06e-5, s: 'say "hi"\\n' },
          { id: 'b', n: null, f: 0.5, s: null },
          { id: 'c', n: 3, f: 3, s: '' },
        ]);
      });
    });

    it('the default workspace is created once and stays the same', async () => {
      const b = await engine.fresh();
      const first = await withStore(b, async (s) => {
        const ws = await s.workspaces.default();
        assert.equal(ws.slug, 'default');
        assert.equal(ws.status, 'active');
        assert.equal(typeof ws.createdAt, 'number');
        assert.deepEqual(await s.workspaces.default(), ws);
        return ws;
      });
      await withStore(b, async (s) => assert.deepEqual(await s.workspaces.default(), first));
    });

    it('two stores asking for the default workspace at once agree on one', async () => {
      const b = await engine.fresh();
      await withStore(b, async () => {});
      const [x, y] = [b.open(), b.open()];
      try {
        const [wx, wy] = await Promise.all([x.workspaces.default(), y.workspaces.default()]);
        assert.equal(wx.id, wy.id);
      } finally {
        await Promise.all([x.close(), y.close()]);
      }
    });

    it('a key round-trips by hash and by id, every field intact', async () => {
      const b = await engine.fresh();
      await withStore(b, async (s) => {
        const ws = await s.workspaces.default();
        const plain = key({ workspaceId: ws.id });
        const full = key({
          workspaceId: ws.id,
          type: 'organisation',
          subType: 'user',
          isAdmin: true,
          userId: 'user-1',
          scopes: [],
          status: 'revoked',
          expiresAt: 4_102_444_800,
          lastResetAt: 1_700_000_500,
        });
        await s.apiKeys.insert(plain);
        await s.apiKeys.insert(full);
        assert.deepEqual(await s.apiKeys.findByHash(plain.hash), plain);
        assert.deepEqual(await s.apiKeys.findByHash(full.hash), full);
        assert.deepEqual(await s.apiKeys.get(full.id), full);
        assert.equal(await s.apiKeys.findByHash(hashKey('nobody')), null);
        assert.equal(await s.apiKeys.get('missing'), null);
      });
    });

    it('countApiKeys counts every key', async () => {
      const b = await engine.fresh();
      await withStore(b, async (s) => {
        assert.equal(await s.apiKeys.count(), 0);
        const ws = await s.workspaces.default();
        for (let i = 0; i < 3; i++) await s.apiKeys.insert(key({ workspaceId: ws.id }));
        assert.equal(await s.apiKeys.count(), 3);
      });
    });

    it('update replaces the hash: the old one no longer finds the key', async () => {
      const b = await engine.fresh();
      await withStore(b, async (s) => {
        const k = key({ workspaceId: (await s.workspaces.default()).id });
        await s.apiKeys.insert(k);
        const next = hashKey('rotated');
        await s.apiKeys.update({ ...k, hash: next });
        assert.equal(await s.apiKeys.findByHash(k.hash), null);
        const found = await s.apiKeys.findByHash(next);
        assert.deepEqual({ ...found, lastUpdatedAt: 0 }, { ...k, hash: next, lastUpdatedAt: 0 });
        assert.equal((await s.apiKeys.get(k.id))?.hash, next);
      });
    });

    it('a second key with the same hash is refused', async () => {
      const b = await engine.fresh();
      await withStore(b, async (s) => {
        const ws = await s.workspaces.default();
        const k = key({ workspaceId: ws.id });
        await s.apiKeys.insert(k);
        await assert.rejects(s.apiKeys.insert(key({ workspaceId: ws.id, hash: k.hash })), /unique/i);
        assert.equal(await s.apiKeys.count(), 1);
      });
    });

    it('policies made before fail_mode existed (migration 11) fail open after it', async () => {
      await withSchemaBefore(await engine.fresh(), 11, async (s) => {
        const ws = await s.workspaces.default();
        const common = [ws.id, '[{"key":"api_key","value":"*"}]', '[{"key":"api_key"}]'];
        await s.db.run(
          `INSERT INTO rate_limit_policies (id, workspace_id, conditions, group_by, type, unit, value, created_at, last_updated_at) VALUES ('rate-old', ?, ?, ?, 'requests', 'rpm', 5, 0, 0)`,
          common,
        );
        await s.db.run(
          `INSERT INTO usage_limit_policies (id, workspace_id, conditions, group_by, type, credit_limit, created_at, last_updated_at) VALUES ('usage-old', ?, ?, ?, 'tokens', 100, 0, 0)`,
          common,
        );
        await s.migrate();
        assert.equal((await s.rateLimitPolicies.get('rate-old'))?.failMode, 'open');
        assert.equal((await s.usageLimitPolicies.get('usage-old'))?.failMode, 'open');
        const closed = await s.rateLimitPolicies.update('rate-old', { failMode: 'closed' });
        assert.equal(closed?.failMode, 'closed');
      });
    });

    it('a stored response chain stops at its character budget, and stays in its workspace', async () => {
      await withStore(await engine.fresh(), async (s) => {
        const ws = await s.workspaces.default();
        const other = await s.workspaces.create({ slug: 'elsewhere', name: 'Elsewhere', description: null, metadata: null, settings: null, defaults: null });
        const turn = (id: string, previous: string | null) =>
          s.responses.save({ id, workspaceId: ws.id, previousResponseId: previous, status: 'completed', response: `{"id":"${id}","pad":"${'r'.repeat(40)}"}`, input: `[{"pad":"${'i'.repeat(40)}"}]`, createdAt: 1 });
        await turn('resp_a', null);
        await turn('resp_b', 'resp_a');
        await turn('resp_c', 'resp_b');
        const whole = await s.responses.chain(ws.id, 'resp_c', 100, 10_000);
        assert.deepEqual([whole.turns.map((t) => JSON.parse(t.response).id), whole.cut, whole.tooLarge], [['resp_a', 'resp_b', 'resp_c'], false, false]);
        // Each turn is ~110 characters: the walk stops at the second and says so.
        const over = await s.responses.chain(ws.id, 'resp_c', 100, 150);
        assert.deepEqual([over.turns, over.tooLarge], [[], true]);
        const short = await s.responses.chain(ws.id, 'resp_c', 2, 10_000);
        assert.deepEqual([short.turns.length, short.cut], [2, true]);
        assert.deepEqual((await s.responses.chain(other.id, 'resp_c', 100, 10_000)).turns, []);
      });
    });

    it('logs written before migration 16 keep the checks they ran: filtered and grouped by them after it', async () => {
      await withSchemaBefore(await engine.fresh(), 16, async (s) => {
        const log = (id: string, status: string | null) =>
          s.db.run(
            `INSERT INTO request_logs (id, created_at_ms, trace_id, workspace_id, api_key_id, endpoint, method, path, status, latency_ms, tokens_estimated, retry_count, log_format, hook_results, hook_status)
             VALUES (?, 1, 't', 'ws', 'k', 'chat', 'POST', '/chat/completions', 200, 5, 0, 0, 'v1', ?, ?)`,
            [id, status === null ? null : '{"before_request_hooks":[],"after_request_hooks":[]}', status],
          );
        await log('log-a', 'failed');
        await log('log-b', 'passed');
        await log('log-c', null);
        const ran = "INSERT INTO log_checks (log_id, check_id, outcome) VALUES (?, ?, ?)";
        await s.db.run(ran, ['log-a', 'default.regexMatch', 'failed']);
        await s.db.run(ran, ['log-a', 'default.wordCount', 'passed']);
        await s.db.run(ran, ['log-b', 'default.regexMatch', 'passed']);
        await s.migrate();
        const all = { full: 'any' as const, own: [], userId: null, hideMetadata: [] };
        const page = { page: 0, size: 10, limit: 10, after: undefined };
        const ids = async (check: string) => (await s.logs.list({ guardrailCheck: check }, all, page)).data.map((l) => l.id).sort();
        assert.deepEqual(await ids('default.regexMatch'), ['log-a', 'log-b']);
        assert.deepEqual(await ids('default.wordCount'), ['log-a']);
        assert.deepEqual(await ids('default.contains'), []);
        assert.deepEqual((await s.logs.get('log-a', all))?.hooks?.checks, { 'default.regexMatch': 'failed', 'default.wordCount': 'passed' });
        assert.equal((await s.logs.get('log-c', all))?.hooks, null);
        const groups = await s.logs.groups('guardrail_check', [], {}, all, { limit: 10, after: undefined });
        assert.deepEqual(
          groups.data.map((g) => [g.key, g.requests, g.outcomes]),
          [
            ['default.regexMatch', 2, { passed: 1, failed: 1, errored: 0 }],
            ['default.wordCount', 1, { passed: 1, failed: 0, errored: 0 }],
          ],
        );
        await assert.rejects(s.db.get('SELECT 1 FROM log_checks'), /log_checks/);
      });
    });

    it('logs written before migration 20 are kept: read by id, listed, filtered by metadata; on Postgres in their days', async () => {
      await withSchemaBefore(await engine.fresh(), 20, async (s) => {
        const day = Date.UTC(2026, 2, 3, 12);
        const log = (id: string, createdAtMs: number) =>
          s.db.run(
            `INSERT INTO request_logs (id, created_at_ms, trace_id, workspace_id, api_key_id, endpoint, method, path, status, latency_ms, tokens_estimated, retry_count, log_format)
             VALUES (?, ?, 't', 'ws', 'k', 'chat', 'POST', '/chat/completions', 200, 5, 0, 0, 'v1')`,
            [id, createdAtMs],
          );
        await log('log-a', day);
        await log('log-b', day + 86_400_000);
        await log('log-c', day + 86_400_000 + 1);
        await s.db.run("INSERT INTO log_metadata (log_id, key, value) VALUES ('log-b', 'env', 'prod'), ('log-c', 'env', 'dev')");
        await s.migrate();
        const all = { full: 'any' as const, own: [], userId: null, hideMetadata: [] };
        const page = { limit: 10, after: undefined };
        assert.equal((await s.logs.get('log-a', all))?.createdAtMs, day);
        assert.deepEqual((await s.logs.list({}, all, page)).data.map((l) => l.id), ['log-c', 'log-b', 'log-a']);
        assert.deepEqual((await s.logs.list({ metadata: [['env', 'prod']] }, all, page)).data.map((l) => l.id), ['log-b']);
        if (s.db.engine !== 'postgres') return;
        // JIT would compile each plan once per partition: the gateway's sessions run without it, the URL's own options kept.
        assert.deepEqual(await s.db.get("SELECT current_setting('jit') AS jit, current_schemas(false)::text LIKE '%sy_test_%' AS own"), { jit: 'off', own: true });
        const where = await s.db.all<{ id: string; t: string }>('SELECT id, tableoid::regclass::text AS t FROM request_logs ORDER BY id');
        assert.deepEqual(where.map((r) => [r.id, r.t.replace(/^.*\./, '')]), [
          ['log-a', 'request_logs_p20260303'],
          ['log-b', 'request_logs_p20260304'],
          ['log-c', 'request_logs_p20260304'],
        ]);
        const pairs = await s.db.all<{ log_id: string; created_at_ms: number; t: string }>('SELECT log_id, created_at_ms, tableoid::regclass::text AS t FROM log_metadata ORDER BY log_id');
        assert.deepEqual(pairs.map((p) => [p.log_id, p.created_at_ms, p.t.replace(/^.*\./, '')]), [
          ['log-b', day + 86_400_000, 'log_metadata_p20260304'],
          ['log-c', day + 86_400_000 + 1, 'log_metadata_p20260304'],
        ]);
        // The old tables are gone; a replayed log (same id and time) is still written once.
        await assert.rejects(s.db.get('SELECT 1 FROM request_logs_unpartitioned'), /request_logs_unpartitioned/);
        const again = (await s.logs.get('log-b', all))!;
        await s.logs.insert([{ ...again, requestHeaders: null, requestBody: null, responseBody: null, hooks: null }]);
        assert.equal((await s.logs.list({}, all, page)).data.length, 3);
      });
    });

    it("logs written before migrations 23 and 24 count in groups filtered by metadata or model: on Postgres their pairs get their log's columns, the cross rollup their sums", async () => {
      await withSchemaBefore(await engine.fresh(), 23, async (s) => {
        const at = Date.UTC(2026, 2, 3, 12);
        const log = (id: string, model: string, status: number, latency: number) =>
          s.db.run(
            `INSERT INTO request_logs (id, created_at_ms, trace_id, workspace_id, api_key_id, model, endpoint, method, path, status, latency_ms, tokens_estimated, retry_count, log_format)
             VALUES (?, ?, 't', 'ws', 'k', ?, 'chat', 'POST', '/chat/completions', ?, ?, 0, 0, 'v1')`,
            [id, at, model, status, latency],
          );
        await log('log-a', 'gpt-4o', 200, 10);
        await log('log-b', 'gpt-4o', 500, 30);
        await log('log-c', 'claude-3', 200, 20);
        const pairs = [['log-a', 'env', 'prod'], ['log-b', 'env', 'prod'], ['log-c', 'env', 'dev']];
        if (s.db.engine === 'postgres') await s.db.insertMany('log_metadata', ['log_id', 'key', 'value', 'created_at_ms'], pairs.map((p) => [...p, at]));
        else await s.db.insertMany('log_metadata', ['log_id', 'key', 'value'], pairs);
        await s.migrate();
        const all = { full: 'any' as const, own: [], userId: null, hideMetadata: [] };
        const groups = await s.logs.groups('model', ['error_count', 'p50_latency'], { metadata: [['env', 'prod']] }, all, { limit: 10, after: undefined });
        assert.deepEqual(groups.data, [{ key: 'gpt-4o', requests: 2, values: { error_count: 1, p50_latency: 10 } }]);
        // On Postgres from the cross rollup, which migration 24 fills from the logs stored before it.
        const byStatus = await s.logs.groups('status_code', [], { model: 'gpt-4o' }, all, { limit: 10, after: undefined });
        assert.deepEqual(byStatus.data.map((g) => [g.key, g.requests]), [[200, 1], [500, 1]]);
        if (s.db.engine !== 'postgres') return;
        assert.equal(Number((await s.db.get<{ n: number }>('SELECT SUM(requests) AS n FROM request_log_cross'))!.n), 3);
        const copied = await s.db.all('SELECT log_id, workspace_id, model, status, latency_ms FROM log_metadata ORDER BY log_id');
        assert.deepEqual(copied, [
          { log_id: 'log-a', workspace_id: 'ws', model: 'gpt-4o', status: 200, latency_ms: 10 },
          { log_id: 'log-b', workspace_id: 'ws', model: 'gpt-4o', status: 500, latency_ms: 30 },
          { log_id: 'log-c', workspace_id: 'ws', model: 'claude-3', status: 200, latency_ms: 20 },
        ]);
      });
    });

    it('configs made before migration 12 keep their versions and default flag; then slugs are unique per workspace only', async () => {
      await withSchemaBefore(await engine.fresh(), 12, async (s) => {
        const ws = await s.workspaces.default();
        const other = await s.workspaces.create({ slug: 'other', name: 'Other', description: null, metadata: null, settings: null, defaults: null });
        const old = await s.configs.create({ workspaceId: ws.id, slug: 'shared', name: 'Old', description: 'kept', isDefault: true, config: { provider: 'openai' } });
        await s.configs.update(old.id, { config: { provider: 'anthropic' } });
        const before = await s.configs.get(old.id);
        const versionsBefore = await s.configs.versions(old.id, { limit: 10, after: undefined });
        // The old schema refused the slug in any workspace.
        await assert.rejects(s.configs.create({ workspaceId: other.id, slug: 'shared', name: 'X', description: null, isDefault: false, config: {} }), /unique/i);

        await s.migrate();
        assert.deepEqual(await s.configs.get(old.id), before);
        assert.deepEqual(await s.configs.versions(old.id, { limit: 10, after: undefined }), versionsBefore);
        assert.equal((await s.configs.findDefault(ws.id))?.id, old.id);
        const theirs = await s.configs.create({ workspaceId: other.id, slug: 'shared', name: 'Theirs', description: null, isDefault: true, config: {} });
        assert.equal((await s.configs.find('shared', other.id))?.id, theirs.id);
        assert.equal((await s.configs.find('shared', ws.id))?.id, old.id);
        await assert.rejects(s.configs.create({ workspaceId: ws.id, slug: 'shared', name: 'Again', description: null, isDefault: false, config: {} }), /unique/i);
        // The constraints came along: one default per workspace, versions go with their config.
        const second = "INSERT INTO configs (id, slug, workspace_id, name, is_default, status, version_id, created_at, last_updated_at) VALUES ('c2', 'two', ?, 'Two', 1, 'active', 'v', 0, 0)";
        await assert.rejects(s.db.run(second, [other.id]), /unique/i);
        await assert.rejects(s.db.run("INSERT INTO config_versions (id, config_id, version, config, created_at) VALUES ('v', 'no-such-config', 1, '{}', 0)"), /foreign key/i);
        assert.ok(await s.configs.delete(old.id));
        assert.equal(Number((await s.db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM config_versions WHERE config_id = ?', [old.id]))!.n), 0);
        assert.equal(await s.configs.get(old.id), null);
      });
    });

    it('data survives close and reopen', async () => {
      const b = await engine.fresh();
      const { ws, k } = await withStore(b, async (s) => {
        const ws = await s.workspaces.default();
        const k = key({ workspaceId: ws.id, expiresAt: 1_800_000_000 });
        await s.apiKeys.insert(k);
        return { ws, k };
      });
      await withStore(b, async (s) => {
        assert.deepEqual(await s.workspaces.default(), ws);
        assert.deepEqual(await s.apiKeys.get(k.id), k);
        assert.deepEqual(await s.apiKeys.findByHash(k.hash), k);
        assert.equal(await s.apiKeys.count(), 1);
      });
    });
  });
}

describe('gateway on Postgres (DATABASE_URL)', { timeout: 30_000 }, () => {
  const admin = new pg.Client({ connectionString: PG_URL });
  let schema: string;
  let databaseUrl: string;
  const encryption = randomBytes(32).toString('hex');

  before(async () => {
    await admin.connect();
    schema = await createSchema(admin);
    databaseUrl = schemaUrl(schema);
  });
  after(async () => {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });

  it('stores the bootstrap key in Postgres, authenticates with it, and keeps it across a restart', async () => {
    const first = await startTestGateway({ DATABASE_URL: databaseUrl, GATEWAY_ENCRYPTION_KEY: encryption });
    try {
      const ok = await first.call('/models');
      await ok.arrayBuffer();
      assert.equal(ok.status, 200);
      const bad = await first.call('/models', { headers: { 'x-gateway-api-key': `${ADMIN_KEY}x` } });
      await bad.arrayBuffer();
      assert.equal(bad.status, 401);
    } finally {
      await first.stop();
    }

    const { rows } = await admin.query<{ id: string; key_hash: string; is_admin: number }>(
      `SELECT id, key_hash, is_admin FROM ${schema}.api_keys`,
    );
    assert.deepEqual(rows, [{ id: 'bootstrap-admin', key_hash: hashKey(ADMIN_KEY), is_admin: 1 }]);

    // A fresh data dir and no GATEWAY_ADMIN_API_KEY: only the database can know the key now.
    const second = await startTestGateway({ DATABASE_URL: databaseUrl, GATEWAY_ADMIN_API_KEY: '', GATEWAY_ENCRYPTION_KEY: encryption });
    try {
      const ok = await second.call('/models');
      await ok.arrayBuffer();
      assert.equal(ok.status, 200);
    } finally {
      await second.stop();
    }
  });

  it('/health answers degraded (200) while the database is unreachable, and ok once it is back', async () => {
    // The gateway reaches Postgres through a TCP relay the test can cut and restore.
    const relay = await startPgRelay();
    const health = async (): Promise<unknown> => {
      const res = await fetch(`${gw.url}/health`);
      assert.equal(res.status, 200);
      return res.json();
    };

    const gw = await startTestGateway({ DATABASE_URL: relay.through(databaseUrl), GATEWAY_ENCRYPTION_KEY: encryption });
    try {
      assert.deepEqual(await health(), { status: 'ok' });
      await relay.cut();
      assert.deepEqual(await health(), { status: 'degraded' });
      await relay.restore();
      let body: unknown;
      for (let i = 0; i < 30; i++) {
        body = await health();
        if ((body as { status: string }).status === 'ok') break;
        await sleep(100);
      }
      assert.deepEqual(body, { status: 'ok' });
    } finally {
      await gw.stop();
      await relay.cut();
    }
  });
});

describe('several gateway processes on one empty Postgres', { timeout: 60_000 }, () => {
  const schemas: string[] = [];
  const admin = new pg.Client({ connectionString: PG_URL });
  before(() => admin.connect());
  after(async () => {
    for (const s of schemas) await admin.query(`DROP SCHEMA ${s} CASCADE`);
    await admin.end();
  });

  async function freshUrl(): Promise<string> {
    const schema = await createSchema(admin);
    schemas.push(schema);
    return schemaUrl(schema);
  }

  it('starting together without GATEWAY_ADMIN_API_KEY, exactly one generates and prints the admin key, and it works on both', async () => {
    const env = { DATABASE_URL: await freshUrl(), GATEWAY_ENCRYPTION_KEY: randomBytes(32).toString('hex') };
    const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'switchyard-race-')));
    const procs = await Promise.all(dirs.map((dir) => spawnGateway({ ...env, GATEWAY_DATA_DIR: dir })));
    try {
      const printed = procs.map((p) => /Generated organisation admin key[^:]*: (\S+)/.exec(p.stdout())?.[1]).filter((k) => k !== undefined);
      assert.equal(printed.length, 1, procs.map((p) => p.stdout()).join('\n---\n'));
      for (const p of procs) {
        const res = await fetch(`${p.url}/v1/models?limit=1`, { headers: { 'x-gateway-api-key': printed[0]! } });
        await res.arrayBuffer();
        assert.equal(res.status, 200);
      }
    } finally {
      for (const p of procs) p.kill();
      await Promise.all(procs.map((p) => p.exited));
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });

  it('a process with another GATEWAY_ENCRYPTION_KEY than the database was set up with refuses to start, saying why', async () => {
    const url = await freshUrl();
    const first = await startTestGateway({ DATABASE_URL: url, GATEWAY_ENCRYPTION_KEY: randomBytes(32).toString('hex') });
    await first.stop();
    await assert.rejects(
      startTestGateway({ DATABASE_URL: url, GATEWAY_ENCRYPTION_KEY: randomBytes(32).toString('hex') }),
      /GATEWAY_ENCRYPTION_KEY does not match/,
    );
  });
});
