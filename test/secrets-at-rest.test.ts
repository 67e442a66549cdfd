// Encryption at rest (issue 15 item 3): a passphrase becomes the key through
// scrypt under a salt and parameters the database keeps; a database of the
// previous release (SHA-256 of the passphrase, config secrets bound to their
// workspace) is re-wrapped at its first start, on both engines;
// GATEWAY_ENCRYPTION_KEY_FILE; the warning for a key beside the SQLite file;
// `$sealed` in input refused; config secrets bound to their config and
// place; GATEWAY_ADMIN_API_KEY of fewer than 32 characters refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, hash, randomBytes, scryptSync } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { readSettings } from '../src/settings.js';
import { openSecrets } from '../src/store/key-setup.js';
import { migrate } from '../src/store/migrations.js';
import { configSecretBinding, Secrets } from '../src/store/secrets.js';
import { SqliteDb } from '../src/store/sqlite.js';
import { engines, scratchEngine } from './support/engines.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { assertEnvelope } from './support/http.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { expectJson } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const PASSPHRASE = 'correct horse battery staple, stapled twice over';
const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
const passphraseSource = (text: string) => ({ text, origin: 'GATEWAY_ENCRYPTION_KEY', file: null });

function capture(): { logger: Logger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      out.push(String(chunk));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines: () => out.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

interface Kdf {
  name: string;
  salt: string;
  N: number;
  r: number;
  p: number;
}

async function meta(gw: TestGateway, name: string): Promise<string | undefined> {
  return (await gw.store.db.get<{ value: string }>('SELECT value FROM meta WHERE name = ?', [name]))?.value;
}

describe('a passphrase is stretched with scrypt under a stored salt', { timeout: 60_000 }, () => {
  it('records the salt and parameters; the check value needs scrypt to test a guess; each database has its own salt', async () => {
    const dirs = [mkdtempSync(join(tmpdir(), 'switchyard-kdf-')), mkdtempSync(join(tmpdir(), 'switchyard-kdf-'))];
    const dbs = dirs.map((d) => new SqliteDb(d));
    try {
      const salts: string[] = [];
      for (const db of dbs) {
        await migrate(db);
        const opened = await openSecrets(passphraseSource(PASSPHRASE), db);
        const kdf = JSON.parse((await db.get<{ value: string }>("SELECT value FROM meta WHERE name = 'encryption_kdf'"))!.value) as Kdf;
        assert.deepEqual({ ...kdf, salt: undefined }, { name: 'scrypt', salt: undefined, N: 2 ** 17, r: 8, p: 1 });
        assert.equal(Buffer.from(kdf.salt, 'base64').length, 16);
        salts.push(kdf.salt);
        const key = scryptSync(PASSPHRASE, Buffer.from(kdf.salt, 'base64'), 32, { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 256 * 1024 * 1024 });
        // The key is scrypt's: what it seals, that key opens.
        assert.equal(Secrets.fromKey(key).decrypt(opened.secrets.encrypt('sealed', 'row'), 'row'), 'sealed');
        const check = (await db.get<{ value: string }>("SELECT value FROM meta WHERE name = 'encryption_key_check'"))!.value;
        assert.equal(check, createHmac('sha256', key).update('switchyard encryption key check').digest('hex'));
        assert.notEqual(check, Secrets.fromKey(hash('sha256', PASSPHRASE, 'buffer')).checkValue(), 'the unsalted SHA-256 key is not the check');
      }
      assert.notEqual(salts[0], salts[1]);
      // The same passphrase opens it again; another, or a raw key, is refused.
      await openSecrets(passphraseSource(PASSPHRASE), dbs[0]!);
      await assert.rejects(openSecrets(passphraseSource(`${PASSPHRASE}!`), dbs[0]!), /GATEWAY_ENCRYPTION_KEY does not match/);
      await assert.rejects(openSecrets(passphraseSource(randomBytes(32).toString('hex')), dbs[0]!), /GATEWAY_ENCRYPTION_KEY does not match/);
    } finally {
      for (const db of dbs) db.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });
});

for (const engine of engines()) {
  for (const kind of ['passphrase', 'raw key'] as const) {
    describe(`a previous release's database is re-wrapped at its first start (${engine.name}, ${kind})`, { timeout: 90_000 }, () => {
      let mock: MockOpenAI;
      let env: Record<string, string>;
      const given = kind === 'passphrase' ? PASSPHRASE : randomBytes(32).toString('hex');
      before(async () => {
        mock = await startMockOpenAI();
        env = { ...(await engine.fresh()), GATEWAY_ENCRYPTION_KEY: given };
      });
      after(async () => {
        await mock.close();
        await engine.cleanup();
      });

      it('reads what the previous release wrote, re-encrypts it once, and no blob opens with the old key any more', async () => {
        const vkKey = `sk-vk-${randomBytes(8).toString('hex')}`;
        const intKey = `sk-int-${randomBytes(8).toString('hex')}`;
        const cfgKey = `sk-cfg-${randomBytes(8).toString('hex')}`;
        const rotated = `rotated-${randomBytes(8).toString('hex')}`;
        let first = await startTestGateway(env);
        let keyId: string;
        let configId: string;
        let workspaceId: string;
        try {
          await expectJson(await first.call('/virtual-keys', { body: { name: 'vk', provider: 'openai', key: vkKey, slug: 'old-vk', custom_host: mock.url } }), 201);
          await expectJson(
            await first.call('/integrations', { body: { name: 'int', ai_provider_id: 'openai', key: intKey, slug: 'old-int', workspace_id: 'default', configurations: { custom_host: mock.url } } }),
            201,
          );
          const cfg = await expectJson(
            await first.call('/configs', { body: { name: 'old', config: { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: cfgKey, custom_host: mock.url }] } } }),
            201,
          );
          configId = cfg.id;
          keyId = (await expectJson(await first.call('/api-keys/organisation/service', { body: { name: 'rotating', scopes: ['completions.write'] } }), 201)).id;
          workspaceId = (await expectJson(await first.call('/workspaces/default'), 200)).id;

          // Written back as the previous release had it: its key, its config binding, its check value, no KDF or format.
          const kdf = await meta(first, 'encryption_kdf');
          const now = Secrets.fromKey(
            kdf === undefined
              ? Buffer.from(given, 'hex')
              : scryptSync(given, Buffer.from((JSON.parse(kdf) as Kdf).salt, 'base64'), 32, { N: 2 ** 17, r: 8, p: 1, maxmem: 256 * 1024 * 1024 }),
          );
          const old = Secrets.fromKey(kind === 'passphrase' ? hash('sha256', given, 'buffer') : Buffer.from(given, 'hex'));
          const db = first.store.db;
          for (const table of ['virtual_keys', 'integrations']) {
            for (const r of await db.all<{ id: string; credentials: string }>(`SELECT id, credentials FROM ${table} WHERE credentials IS NOT NULL`)) {
              await db.run(`UPDATE ${table} SET credentials = ? WHERE id = ?`, [old.encrypt(now.decrypt(r.credentials, r.id), r.id), r.id]);
            }
          }
          await db.run('UPDATE api_keys SET rotated_key = ? WHERE id = ?', [old.encrypt(rotated, keyId), keyId]);
          const version = (await db.get<{ id: string; config: string }>('SELECT id, config FROM config_versions WHERE config_id = ?', [configId]))!;
          const body = JSON.parse(version.config) as { targets: { api_key: { $sealed: string } }[] };
          const sealed = body.targets[0]!.api_key.$sealed;
          body.targets[0]!.api_key = { $sealed: old.encrypt(now.decrypt(sealed, configSecretBinding(configId, 'config.targets[0].api_key')), workspaceId) };
          await db.run('UPDATE config_versions SET config = ? WHERE id = ?', [JSON.stringify(body), version.id]);
          await db.run("DELETE FROM meta WHERE name IN ('encryption_kdf', 'encryption_format')");
          await db.run("UPDATE meta SET value = ? WHERE name = 'encryption_key_check'", [old.checkValue()]);
        } finally {
          await first.stop();
        }

        const log = capture();
        const second = await startTestGateway(env, {}, log.logger);
        try {
          const warned = log.lines().filter((l) => String(l.msg).includes('re-encrypted'));
          assert.equal(warned.length, 1);
          // Passphrase: both credential rows, the rotated key and the config secret; a raw key is kept, only the config secret is rebound.
          assert.equal(warned[0]!.blobs, kind === 'passphrase' ? 4 : 1);
          assert.deepEqual(warned[0]!.unreadable, []);

          for (const headers of [{ 'x-gateway-virtual-key': 'old-vk' }, { 'x-gateway-provider': '@old-int' }, { 'x-gateway-config': configId }] as Record<string, string>[]) {
            await expectJson(await second.call('/chat/completions', { headers, body: chat }), 200);
          }
          assert.deepEqual(
            mock.requests.slice(-3).map((r) => r.headers.authorization),
            [`Bearer ${vkKey}`, `Bearer ${intKey}`, `Bearer ${cfgKey}`],
          );

          const old = Secrets.fromKey(kind === 'passphrase' ? hash('sha256', given, 'buffer') : Buffer.from(given, 'hex'));
          assert.equal(await meta(second, 'encryption_format'), '2');
          if (kind === 'passphrase') {
            assert.notEqual(await meta(second, 'encryption_key_check'), old.checkValue());
            const vk = await second.store.db.get<{ id: string; credentials: string }>("SELECT id, credentials FROM virtual_keys WHERE slug = 'old-vk'");
            assert.throws(() => old.decrypt(vk!.credentials, vk!.id), 'the old SHA-256 key opens nothing');
            const kdf = JSON.parse((await meta(second, 'encryption_kdf'))!) as Kdf;
            const key = scryptSync(given, Buffer.from(kdf.salt, 'base64'), 32, { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 256 * 1024 * 1024 });
            const row = await second.store.db.get<{ rotated_key: string }>('SELECT rotated_key FROM api_keys WHERE id = ?', [keyId]);
            assert.equal(Secrets.fromKey(key).decrypt(row!.rotated_key, keyId), rotated);
          }
        } finally {
          await second.stop();
        }

        // Once only: the next start finds this release's format.
        const again = capture();
        first = await startTestGateway(env, {}, again.logger);
        try {
          assert.equal(again.lines().filter((l) => String(l.msg).includes('re-encrypted')).length, 0);
          await expectJson(await first.call('/chat/completions', { headers: { 'x-gateway-config': configId }, body: chat }), 200);
        } finally {
          await first.stop();
        }
      });
    });
  }
}

describe('GATEWAY_ENCRYPTION_KEY_FILE, and a key beside the SQLite file', { timeout: 60_000 }, () => {
  const engine = scratchEngine();
  after(() => engine.cleanup());
  const beside = (l: Record<string, unknown>) => String(l.msg).includes('same directory as the SQLite database');

  it('reads the key from the file (trailing newline ignored): the same key as from the variable, no key generated', async () => {
    const keyDir = mkdtempSync(join(tmpdir(), 'switchyard-keyfile-'));
    try {
      const key = randomBytes(32).toString('hex');
      const file = join(keyDir, 'key');
      writeFileSync(file, `${key}\n`, { mode: 0o600 });
      const env = await engine.fresh();
      const log = capture();
      const first = await startTestGateway({ ...env, GATEWAY_ENCRYPTION_KEY_FILE: file }, {}, log.logger);
      try {
        await expectJson(await first.call('/virtual-keys', { body: { name: 'vk', provider: 'openai', key: 'sk-from-file-0000' } }), 201);
      } finally {
        await first.stop();
      }
      assert.equal(existsSync(join(env.GATEWAY_DATA_DIR!, 'encryption.key')), false);
      assert.equal(log.lines().filter(beside).length, 0, 'the key is kept elsewhere: nothing to say');
      const second = await startTestGateway({ ...env, GATEWAY_ENCRYPTION_KEY: key });
      await second.stop();
      await assert.rejects(startTestGateway({ ...env, GATEWAY_ENCRYPTION_KEY_FILE: join(keyDir, 'missing') }), /GATEWAY_ENCRYPTION_KEY_FILE: cannot read .*missing \(ENOENT\)/);
      assert.throws(() => readSettings({ GATEWAY_ENCRYPTION_KEY: key, GATEWAY_ENCRYPTION_KEY_FILE: file }), /GATEWAY_ENCRYPTION_KEY or GATEWAY_ENCRYPTION_KEY_FILE, not both/);
    } finally {
      rmSync(keyDir, { recursive: true, force: true });
    }
  });

  it('a generated key beside the SQLite file is said once at start; with Postgres it is not beside the data', async () => {
    const log = capture();
    const gw = await startTestGateway({}, {}, log.logger);
    await gw.stop();
    const said = log.lines().filter(beside);
    assert.equal(said.length, 1);
    assert.equal(said[0]!.level, 40, 'a warning');
    assert.match(String(said[0]!.keyFile), /encryption\.key$/);

    const [pg] = engines().filter((e) => e.name === 'postgres');
    const { DATABASE_URL } = await pg!.fresh();
    const quiet = capture();
    try {
      const onPg = await startTestGateway({ DATABASE_URL: DATABASE_URL! }, {}, quiet.logger);
      await onPg.stop();
    } finally {
      await pg!.cleanup();
    }
    assert.equal(quiet.lines().filter(beside).length, 0);
  });
});

describe('GATEWAY_ADMIN_API_KEY', () => {
  it('shorter than 32 characters is refused at start, without echoing it', () => {
    const short = 'admin-key-31-characters-long-xx';
    assert.equal(short.length, 31);
    assert.throws(
      () => readSettings({ GATEWAY_ADMIN_API_KEY: short }),
      (e: Error) => /GATEWAY_ADMIN_API_KEY must be at least 32 characters \(it has 31\)/.test(e.message) && !e.message.includes(short),
    );
    assert.equal(readSettings({ GATEWAY_ADMIN_API_KEY: `${short}x` }).adminApiKey, `${short}x`);
    assert.equal(readSettings({}).adminApiKey, undefined);
  });
});

for (const engine of engines()) {
  describe(`sealed values (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let mock: MockOpenAI;
    before(async () => {
      mock = await startMockOpenAI();
    });
    after(() => mock.close());

    it('a `$sealed` anywhere in input is a 400 naming its path, and nothing is stored', async () => {
      const blob = { $sealed: 'v1:aaaa:bbbb:cccc' };
      const cases: [string, unknown, string][] = [
        ['/configs', { name: 'c', config: { provider: 'openai', api_key: blob } }, 'config.api_key.$sealed'],
        ['/configs', { name: 'c', config: { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', override_params: { x: [blob] } }] } }, 'config.targets[0].override_params.x[0].$sealed'],
        ['/virtual-keys', { name: 'v', provider: 'vertex-ai', cloud2_region: 'us-central1', cloud2_service_account_json: blob }, 'cloud2_service_account_json.$sealed'],
        ['/integrations', { name: 'i', ai_provider_id: 'openai', key: 'sk-x', configurations: { custom_host: blob } }, 'configurations.custom_host.$sealed'],
      ];
      for (const [path, body, param] of cases) {
        const e = await assertEnvelope(await gw.call(path, { body }), 400);
        assert.equal(e.param, param);
        assert.equal(e.code, 'sealed_not_allowed');
      }
      assert.equal((await expectJson(await gw.call('/configs'), 200)).data.length, 0);
      assert.equal((await expectJson(await gw.call('/virtual-keys'), 200)).data.length, 0);
      const inline = await assertEnvelope(
        await gw.call('/chat/completions', { headers: { 'x-gateway-config': JSON.stringify({ provider: 'openai', custom_host: mock.url, api_key: blob }) }, body: chat }),
        400,
      );
      assert.equal(inline.code, 'sealed_not_allowed');
      assert.match(inline.message, /config\.api_key\.\$sealed/);
      assert.equal(mock.requests.length, 0);
    });

    it("a config's sealed secret opens only in that config, at that place: copied elsewhere it is a 500 and nothing is sent", async () => {
      const make = async (name: string, keys: string[]) =>
        (
          await expectJson(
            await gw.call('/configs', { body: { name, config: { strategy: { mode: 'fallback' }, targets: keys.map((k) => ({ provider: 'openai', api_key: k, custom_host: mock.url })) } } }),
            201,
          )
        ).id as string;
      const a = await make('a', ['sk-config-a-0000']);
      const b = await make('b', ['sk-config-b-0000', 'sk-config-b-1111']);
      const body = async (id: string) =>
        JSON.parse((await gw.store.db.get<{ config: string }>('SELECT v.config FROM config_versions v JOIN configs c ON c.version_id = v.id WHERE c.id = ?', [id]))!.config) as {
          targets: { api_key: unknown }[];
        };
      const write = async (id: string, config: unknown) => {
        await gw.store.db.run('UPDATE config_versions SET config = ? WHERE id = (SELECT version_id FROM configs WHERE id = ?)', [JSON.stringify(config), id]);
        gw.store.changes.publish({ kind: 'config', id });
      };
      await expectJson(await gw.call('/chat/completions', { headers: { 'x-gateway-config': b }, body: chat }), 200);
      const sent = mock.requests.length;

      const fromA = await body(a);
      const inB = await body(b);
      // Another config's blob, in the same workspace.
      await write(b, { ...inB, targets: [{ ...inB.targets[0], api_key: fromA.targets[0]!.api_key }, inB.targets[1]] });
      const moved = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-config': b }, body: chat }), 500);
      assert.equal(moved.code, 'credentials_unreadable');
      // The same config's blobs, swapped between its targets.
      await write(b, { ...inB, targets: [{ ...inB.targets[0], api_key: inB.targets[1]!.api_key }, { ...inB.targets[1], api_key: inB.targets[0]!.api_key }] });
      assert.equal((await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-config': b }, body: chat }), 500)).code, 'credentials_unreadable');
      assert.equal(mock.requests.length, sent, 'nothing was sent upstream');

      await write(b, inB);
      await expectJson(await gw.call('/chat/completions', { headers: { 'x-gateway-config': b }, body: chat }), 200);
      assert.equal(mock.requests.at(-1)!.headers.authorization, 'Bearer sk-config-b-0000');
    });
  });
}
