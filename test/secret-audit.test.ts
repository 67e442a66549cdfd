// The promise about secrets, checked end to end on both engines: after
// creating every kind of secret the control plane holds (gateway keys, a
// rotated key, an auto-created user key, provider keys in virtual keys,
// integrations and saved configs, a key sent inline in a config header) and
// using each on a request, none of them appears in any management answer, in
// any row of any table, in the SQLite files on disk, or in a trace-level log.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { engines } from './support/engines.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { startMockOpenAI } from './support/mock-openai.js';

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const secret = (tag: string): string => `${tag}-${randomBytes(12).toString('hex')}`;

async function created(res: Promise<Response>): Promise<Record<string, any>> {
  const r = await res;
  const text = await r.text();
  assert.ok(r.status === 200 || r.status === 201, `${r.status}: ${text}`);
  return JSON.parse(text) as Record<string, any>;
}

/** Every row of every table, as text. */
async function dump(gw: TestGateway): Promise<string> {
  const tables =
    gw.store.db.engine === 'sqlite'
      ? await gw.store.db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
      : await gw.store.db.all<{ name: string }>('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()');
  assert.ok(tables.length > 10, 'every table of the schema was found');
  const parts: string[] = [];
  for (const { name } of tables) parts.push(JSON.stringify(await gw.store.db.all(`SELECT * FROM ${name}`)));
  return parts.join('\n');
}

for (const engine of engines()) {
  describe(`no secret after creation (${engine.name})`, { timeout: 60_000 }, () => {
    it('is in no answer, no row, no file and no log line', async () => {
      const env = await engine.fresh();
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      });
      const gw = await startTestGateway(env, {}, pino({ level: 'trace' }, sink));
      const mock = await startMockOpenAI();
      const secrets: Record<string, string> = {};
      const answers: string[] = [];
      const upstreamSaw = (): string | undefined => mock.requests.at(-1)?.headers.authorization as string | undefined;
      const send = async (key: string, headers: Record<string, string>): Promise<void> => {
        const res = await fetch(`${gw.v1}/chat/completions`, {
          method: 'POST',
          headers: { 'x-gateway-api-key': key, 'content-type': 'application/json', ...headers },
          body: JSON.stringify(chat),
        });
        const text = await res.text();
        assert.equal(res.status, 200, text);
        answers.push(text);
      };
      try {
        // Gateway keys: a service key, its rotation, and a user key made when the user joined.
        const k = await created(gw.call('/api-keys/workspace/service', { body: { name: 'audited', scopes: ['completions.write', 'configs.read'] } }));
        secrets.serviceKey = k.key;
        secrets.rotatedKey = (await created(gw.call(`/api-keys/${k.id}/rotate`, { body: {} }))).key;
        await created(gw.call('/organisation/settings', { method: 'PUT', body: { user_api_key_auto_create: true } }));
        const user = await created(gw.call('/users', { body: { email: 'audit@example.com', role: 'member', workspaces: [{ id: 'default', role: 'member' }] } }));
        secrets.userKey = user.api_keys[0].key;

        // Provider credentials: a virtual key, an integration's provider, a Bedrock secret, a saved config, an inline config.
        secrets.virtualKey = secret('sk-vk');
        await created(gw.call('/virtual-keys', { body: { name: 'audit vk', slug: 'audit-vk', provider: 'openai', key: secrets.virtualKey, custom_host: mock.url } }));
        secrets.integrationKey = secret('sk-int');
        await created(
          gw.call('/integrations', {
            body: { name: 'audit int', slug: 'audit-int', ai_provider_id: 'openai', key: secrets.integrationKey, workspace_id: 'default', configurations: { custom_host: mock.url } },
          }),
        );
        secrets.awsSecret = secret('aws-secret');
        await created(
          gw.call('/virtual-keys', {
            body: { name: 'audit bedrock', provider: 'bedrock', cloud1_access_key_id: 'AKIDAUDIT0000001', cloud1_secret_access_key: secrets.awsSecret, cloud1_region: 'us-east-1' },
          }),
        );
        secrets.configKey = secret('sk-cfg');
        const cfg = await created(gw.call('/configs', { body: { name: 'audit cfg', config: { provider: 'openai', api_key: secrets.configKey, custom_host: mock.url } } }));
        secrets.inlineKey = secret('sk-inline');

        // Each is used, and reaches the provider as given.
        await send(secrets.rotatedKey!, { 'x-gateway-virtual-key': 'audit-vk' });
        assert.equal(upstreamSaw(), `Bearer ${secrets.virtualKey}`);
        await send(secrets.serviceKey!, { 'x-gateway-provider': '@audit-int' });
        assert.equal(upstreamSaw(), `Bearer ${secrets.integrationKey}`);
        await send(secrets.userKey!, { 'x-gateway-config': cfg.slug });
        assert.equal(upstreamSaw(), `Bearer ${secrets.configKey}`);
        await send(secrets.serviceKey!, { 'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: secrets.inlineKey, custom_host: mock.url }) });
        assert.equal(upstreamSaw(), `Bearer ${secrets.inlineKey}`);

        for (const path of [
          '/api-keys?limit=100', `/api-keys/${k.id}`, '/users', `/users/${user.id}`, '/virtual-keys', '/virtual-keys/audit-vk',
          '/integrations', '/integrations/audit-int', '/integrations/audit-int/integration-models', '/configs', `/configs/${cfg.id}`,
          `/configs/${cfg.id}/versions`, '/workspaces/default', '/organisation/settings',
        ]) {
          const res = await gw.call(path);
          const text = await res.text();
          assert.equal(res.status, 200, `${path}: ${text}`);
          answers.push(text);
        }
        const SENT = 4; // the send() calls above
        // The request logs of those calls (written in batches off the request path), each log's bodies and headers included.
        let logs: { id: string }[] = [];
        for (let i = 0; i < 100 && logs.length < SENT; i++) {
          logs = ((await (await gw.call('/logs?limit=100')).json()) as { data: { id: string }[] }).data;
          if (logs.length < SENT) await new Promise((r) => setTimeout(r, 50));
        }
        assert.equal(logs.length, SENT, 'every call was logged');
        for (const l of logs) answers.push(await (await gw.call(`/logs/${l.id}`)).text());
        const rows = await dump(gw);
        for (const [name, value] of Object.entries(secrets)) {
          assert.ok(!answers.some((a) => a.includes(value)), `${name} appears in an answer after creation`);
          assert.ok(!rows.includes(value), `${name} is stored in plain text`);
        }
      } finally {
        await gw.stop();
        await mock.close();
      }
      // On disk (SQLite: the database and its WAL; Postgres keeps nothing here) and in the log.
      const dir = env.GATEWAY_DATA_DIR;
      // Every file of the data dir, the log spill directory's included.
      const files =
        dir === undefined
          ? []
          : readdirSync(dir, { recursive: true, withFileTypes: true })
              .filter((f) => f.isFile() && f.name !== 'encryption.key')
              .map((f) => readFileSync(join(f.parentPath, f.name)));
      const log = lines.join('');
      assert.ok(log.length > 0, 'the log was captured');
      for (const [name, value] of Object.entries(secrets)) {
        assert.ok(!files.some((b) => b.includes(value)), `${name} is in a file of the data dir`);
        assert.ok(!log.includes(value), `${name} was logged`);
      }
      await engine.cleanup();
    });
  });
}
