// One suite of Store behaviours run against both engines: SQLite in a temp dir,
// Postgres in a fresh schema per test. Postgres is required (CI has it at
// 127.0.0.1:5432): if it is unreachable these tests fail rather than skip.
// TEST_DATABASE_URL points them at another server.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { hashKey } from '../src/server/auth.js';
import { PostgresStore } from '../src/store/postgres.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { ApiKeyRecord, Store } from '../src/store/types.js';
import { ADMIN_KEY, startTestGateway } from './support/gateway.js';

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
      return { open: () => new SqliteStore(dir) };
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
      return { open: () => new PostgresStore(PG_URL, { schema }) };
    },
    async teardown() {
      for (const s of schemas) await admin.query(`DROP SCHEMA ${s} CASCADE`);
      await admin.end();
    },
  };
}

async function createSchema(admin: pg.Client): Promise<string> {
  const schema = `sy_test_${randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  return schema;
}

function key(overrides: Partial<ApiKeyRecord> & { workspaceId: string }): ApiKeyRecord {
  const id = overrides.id ?? `key-${randomBytes(4).toString('hex')}`;
  return {
    id,
    name: `Key ${id}`,
    type: 'workspace',
    subType: 'service',
    isAdmin: false,
    userId: null,
    scopes: ['completions.write', 'configs.read'],
    hash: hashKey(`secret-${id}`),
    status: 'active',
    expiresAt: null,
    createdAt: 1_700_000_000,
    lastResetAt: null,
    ...overrides,
  };
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

for (const engine of [sqliteEngine(), postgresEngine()]) {
  describe(`store (${engine.name})`, { timeout: 30_000 }, () => {
    before(() => engine.setup());
    after(() => engine.teardown());

    it('migrating twice, and from a second store on the same database, is a no-op', async () => {
      const b = await engine.fresh();
      await withStore(b, async (s) => {
        const ws = await s.defaultWorkspace();
        await s.insertApiKey(key({ workspaceId: ws.id }));
        await s.migrate();
        assert.equal(await s.countApiKeys(), 1);
      });
      await withStore(b, async (s) => assert.equal(await s.countApiKeys(), 1));
    });

    it('two stores migrating a fresh database at once both succeed', async () => {
      const b = await engine.fresh();
      const [x, y] = [b.open(), b.open()];
      try {
        await Promise.all([x.migrate(), y.migrate()]);
        assert.equal(await x.countApiKeys(), 0);
        assert.equal(await y.countApiKeys(), 0);
      } finally {
        await Promise.all([x.close(), y.close()]);
      }
    });

    it('the default workspace is created once and stays the same', async () => {
      const b = await engine.fresh();
      const first = await withStore(b, async (s) => {
        const ws = await s.defaultWorkspace();
        assert.equal(ws.slug, 'default');
        assert.equal(ws.status, 'active');
        assert.equal(typeof ws.createdAt, 'number');
        assert.deepEqual(await s.defaultWorkspace(), ws);
        return ws;
      });
      await withStore(b, async (s) => assert.deepEqual(await s.defaultWorkspace(), first));
    });

    it('two stores asking for the default workspace at once agree on one', async () => {
      const b = await engine.fresh();
      await withStore(b, async () => {});
      const [x, y] = [b.open(), b.open()];
      try {
        const [wx, wy] = await Promise.all([x.defaultWorkspace(), y.defaultWorkspace()]);
        assert.equal(wx.id, wy.id);
      } finally {
        await Promise.all([x.close(), y.close()]);
      }
    });

    it('a key round-trips by hash and by id, every field intact', async () => {
      const b = await engine.fresh();
      await withStore(b, async (s) => {
        const ws = await s.defaultWorkspace();
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
        await s.insertApiKey(plain);
        await s.insertApiKey(full);
        assert.deepEqual(await s.findApiKeyByHash(plain.hash), plain);
        assert.deepEqual(await s.findApiKeyByHash(full.hash), full);
        assert.deepEqual(await s.getApiKey(full.id), full);
        assert.equal(await s.findApiKeyByHash(hashKey('nobody')), null);
        assert.equal(await s.getApiKey('missing'), null);
      });
    });

    it('countApiKeys counts every key', async () => {
      const b = await engine.fresh();
      await withStore(b, async (s) => {
        assert.equal(await s.countApiKeys(), 0);
        const ws = await s.defaultWorkspace();
        for (let i = 0; i < 3; i++) await s.insertApiKey(key({ workspaceId: ws.id }));
        assert.equal(await s.countApiKeys(), 3);
      });
    });

    it('updateApiKeyHash replaces the hash: the old one no longer finds the key', async () => {
      const b = await engine.fresh();
      await withStore(b, async (s) => {
        const k = key({ workspaceId: (await s.defaultWorkspace()).id });
        await s.insertApiKey(k);
        const next = hashKey('rotated');
        await s.updateApiKeyHash(k.id, next);
        assert.equal(await s.findApiKeyByHash(k.hash), null);
        assert.deepEqual(await s.findApiKeyByHash(next), { ...k, hash: next });
        assert.equal((await s.getApiKey(k.id))?.hash, next);
      });
    });

    it('a second key with the same hash is refused', async () => {
      const b = await engine.fresh();
      await withStore(b, async (s) => {
        const ws = await s.defaultWorkspace();
        const k = key({ workspaceId: ws.id });
        await s.insertApiKey(k);
        await assert.rejects(s.insertApiKey(key({ workspaceId: ws.id, hash: k.hash })), /unique/i);
        assert.equal(await s.countApiKeys(), 1);
      });
    });

    it('data survives close and reopen', async () => {
      const b = await engine.fresh();
      const { ws, k } = await withStore(b, async (s) => {
        const ws = await s.defaultWorkspace();
        const k = key({ workspaceId: ws.id, expiresAt: 1_800_000_000 });
        await s.insertApiKey(k);
        return { ws, k };
      });
      await withStore(b, async (s) => {
        assert.deepEqual(await s.defaultWorkspace(), ws);
        assert.deepEqual(await s.getApiKey(k.id), k);
        assert.deepEqual(await s.findApiKeyByHash(k.hash), k);
        assert.equal(await s.countApiKeys(), 1);
      });
    });
  });
}

describe('gateway on Postgres (DATABASE_URL)', { timeout: 30_000 }, () => {
  const admin = new pg.Client({ connectionString: PG_URL });
  let schema: string;
  let databaseUrl: string;

  before(async () => {
    await admin.connect();
    schema = await createSchema(admin);
    // libpq's `options` parameter confines the gateway to this test's schema.
    const u = new URL(PG_URL);
    u.searchParams.set('options', `-c search_path=${schema}`);
    databaseUrl = u.toString();
  });
  after(async () => {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });

  it('stores the bootstrap key in Postgres, authenticates with it, and keeps it across a restart', async () => {
    const first = await startTestGateway({ DATABASE_URL: databaseUrl });
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
    const second = await startTestGateway({ DATABASE_URL: databaseUrl, GATEWAY_ADMIN_API_KEY: '' });
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
    const target = new URL(PG_URL);
    const sockets = new Set<net.Socket>();
    const relay = (port: number): Promise<net.Server> =>
      new Promise((resolve) => {
        const server = net.createServer((client) => {
          const upstream = net.connect(Number(target.port || 5432), target.hostname);
          for (const sock of [client, upstream]) {
            sockets.add(sock);
            sock.on('error', () => {});
            sock.on('close', () => {
              client.destroy();
              upstream.destroy();
            });
          }
          client.pipe(upstream).pipe(client);
        });
        server.listen(port, '127.0.0.1', () => resolve(server));
      });
    const cut = (server: net.Server): void => {
      server.close();
      for (const sock of sockets) sock.destroy();
    };
    const health = async (): Promise<unknown> => {
      const res = await fetch(`${gw.url}/health`);
      assert.equal(res.status, 200);
      return res.json();
    };

    let server = await relay(0);
    const port = (server.address() as AddressInfo).port;
    const u = new URL(databaseUrl);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    const gw = await startTestGateway({ DATABASE_URL: u.toString() });
    try {
      assert.deepEqual(await health(), { status: 'ok' });
      cut(server);
      assert.deepEqual(await health(), { status: 'degraded' });
      server = await relay(port);
      let body: unknown;
      for (let i = 0; i < 30; i++) {
        body = await health();
        if ((body as { status: string }).status === 'ok') break;
        await sleep(100);
      }
      assert.deepEqual(body, { status: 'ok' });
    } finally {
      await gw.stop();
      cut(server);
    }
  });
});
