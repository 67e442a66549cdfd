/**
 * The read replica (DB_READER_*) and the writer high-availability mode
 * (DB_WRITER_HA) on a real Postgres. The "replica" is the test database
 * reached as a role that may only SELECT, so what it answers is told apart by
 * who asked: revoking its grant breaks the log reads and nothing else. The
 * writer is reached through a relay the test cuts (support/pg-relay.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import pg from 'pg';
import { createSchema, dropSchemas, PG_URL, schemaUrl } from './support/engines.js';
import { ADMIN_KEY, startTestGateway, type TestGateway } from './support/gateway.js';
import { assertEnvelope } from './support/http.js';
import { keyRecord } from './support/keys.js';
import { logOf } from './support/logs.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { startPgRelay, type PgRelay } from './support/pg-relay.js';
import { expectJson } from './support/tenants.js';

const OPENAI_KEY = 'sk-mock-openai-0123456789abcdef';
const target = new URL(PG_URL);

describe('read replica and writer HA mode (Postgres)', { timeout: 90_000 }, () => {
  const admin = new pg.Client({ connectionString: PG_URL });
  const role = `sy_reader_${randomBytes(5).toString('hex')}`;
  const encryption = randomBytes(32).toString('hex');
  let schema: string;
  let openai: MockOpenAI;

  before(async () => {
    await admin.connect();
    schema = await createSchema();
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    openai = await startMockOpenAI({ apiKey: OPENAI_KEY });
  });
  after(async () => {
    await openai?.close();
    await dropSchemas([schema]);
    await admin.query(`DROP OWNED BY ${role}`).catch(() => {});
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.end();
  });

  /** The reader: the same database on its own host and port, as a role that may only read (granted once the gateway has migrated). */
  const readerEnv = { DB_READER_HOST: target.hostname, DB_READER_PORT: target.port || '5432', DB_READER_USER: role };
  const grant = async (): Promise<void> => {
    await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
  };
  const client = (key: string): OpenAI =>
    new OpenAI({
      apiKey: OPENAI_KEY,
      baseURL: `${gw.v1}`,
      maxRetries: 0,
      defaultHeaders: { 'x-gateway-api-key': key, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url },
    });
  let gw: TestGateway;
  const chat = async (key: string, traceId: string): Promise<string> => {
    const answer = await client(key).chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
      { headers: { 'x-gateway-trace-id': traceId } },
    );
    return answer.choices[0]!.message.content ?? '';
  };
  const newConfig = (name: string) => gw.call('/configs', { body: { name, config: { provider: 'openai', api_key: OPENAI_KEY } } });

  it('log and analytics reads go to the reader; everything else, writes included, to the writer', async () => {
    gw = await startTestGateway({ DATABASE_URL: schemaUrl(schema), GATEWAY_ENCRYPTION_KEY: encryption, ...readerEnv });
    try {
      await grant();
      assert.ok((await chat(ADMIN_KEY, 'trace-reader-1')).length > 0);
      const log = await logOf(gw, 'trace-reader-1');
      assert.equal(log.status, 200);
      // The reader's session is named for pg_stat_activity, and its last statement ended the log read's transaction
      // (each log read runs in one of its own, bounded by statement_timeout: store/statements-within.ts).
      const sessions = await admin.query<{ application_name: string; query: string }>('SELECT application_name, query FROM pg_stat_activity WHERE usename = $1', [role]);
      assert.ok(sessions.rows.length > 0, 'the reader role has a session');
      assert.ok(sessions.rows.every((r) => r.application_name === 'switchyard-reader'));
      assert.ok(sessions.rows.some((r) => r.query === 'COMMIT'), JSON.stringify(sessions.rows));
      const groups = await expectJson(await gw.call('/analytics/groups/model'), 200);
      assert.deepEqual(groups.data.map((g: { model: string; requests: number }) => [g.model, g.requests]), [['gpt-4o-mini', 1]]);

      // The reader loses its grant: log reads and analytics fail; management reads and writes, the writer's, do not.
      await admin.query(`REVOKE SELECT ON ALL TABLES IN SCHEMA ${schema} FROM ${role}`);
      assert.equal((await gw.call('/logs')).status, 500);
      assert.equal((await gw.call(`/logs/${log.id}`)).status, 500);
      assert.equal((await gw.call('/logs/groups/model')).status, 500);
      assert.equal((await gw.call('/analytics/groups/model')).status, 500);
      assert.equal((await newConfig('on-the-writer')).status, 201);
      assert.equal((await gw.call('/configs')).status, 200);
      await grant();
      assert.equal((await gw.call('/logs')).status, 200);
      assert.equal((await gw.call(`/logs/${log.id}`)).status, 200);
    } finally {
      await gw.stop();
    }
  });

  describe('the writer goes away', () => {
    let relay: PgRelay;
    before(async () => {
      relay = await startPgRelay();
    });
    after(() => relay.cut());

    it('with DB_WRITER_HA=on: model requests served, reads from the reader, writes 503, /health degraded; writes again once it is back', async () => {
      gw = await startTestGateway({ DATABASE_URL: relay.through(schemaUrl(schema)), GATEWAY_ENCRYPTION_KEY: encryption, DB_WRITER_HA: 'on', ...readerEnv });
      try {
        await grant();
        const config = await expectJson(await newConfig('before-the-outage'), 201);
        // A key never used yet: its first request must read it, from the reader.
        const rec = keyRecord({ workspaceId: (await gw.store.workspaces.default()).id, scopes: ['completions.write'] });
        await gw.store.apiKeys.insert(rec);

        await relay.cut();
        assert.deepEqual(await (await fetch(`${gw.url}/health`)).json(), { status: 'degraded' });
        assert.ok((await chat(`secret-${rec.id}`, 'trace-ha-1')).length > 0);
        const configs = await expectJson(await gw.call('/configs'), 200);
        assert.ok(configs.data.some((c: { id: string }) => c.id === config.id));
        assert.equal((await gw.call('/logs')).status, 200);
        const refused = await gw.call('/configs', { body: { name: 'during-the-outage', config: { provider: 'openai', api_key: OPENAI_KEY } } });
        assert.equal(refused.headers.get('retry-after'), '1');
        const e = await assertEnvelope(refused, 503);
        assert.equal(e.code, 'database_unavailable');
        assert.match(e.message, /database writer is unreachable/);

        await relay.restore();
        let created = 0;
        for (let i = 0; i < 50 && created !== 201; i++) {
          created = (await newConfig('after-the-outage')).status;
          if (created !== 201) await sleep(100);
        }
        assert.equal(created, 201);
        assert.deepEqual(await (await fetch(`${gw.url}/health`)).json(), { status: 'ok' });
        // The request served during the outage was spilled, then written once the writer came back.
        assert.equal((await logOf(gw, 'trace-ha-1')).status, 200);
      } finally {
        await gw.stop();
        await relay.restore();
      }
    });

    it('without DB_WRITER_HA: as before, management calls fail with the writer (500) though a reader is set', async () => {
      gw = await startTestGateway({ DATABASE_URL: relay.through(schemaUrl(schema)), GATEWAY_ENCRYPTION_KEY: encryption, ...readerEnv });
      try {
        await relay.cut();
        assert.deepEqual(await (await fetch(`${gw.url}/health`)).json(), { status: 'degraded' });
        assert.equal((await gw.call('/configs')).status, 500);
        assert.equal((await newConfig('no-ha')).status, 500);
      } finally {
        await relay.restore();
        await gw.stop();
      }
    });
  });
});
