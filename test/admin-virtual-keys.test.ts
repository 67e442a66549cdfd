// /v1/virtual-keys on both engines: create (provider rules, the credential set),
// read, list, update, delete, workspace scoping, scopes, encryption at rest,
// and a restart on the same data (with the right and a wrong encryption key).
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { engines } from './support/engines.js';
import { startTestGateway } from './support/gateway.js';
import { assertEnvelope } from './support/http.js';
import { createWorkspace, expectJson, workspaceKey } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const KEY = 'sk-vk-test-0123456789abcdefWXYZ';
const OTHER_KEY = 'sk-vk-test-second-key-9876lmno';
const ALL = ['virtual_keys.create', 'virtual_keys.read', 'virtual_keys.list', 'virtual_keys.update', 'virtual_keys.delete'];

for (const engine of engines()) {
  describe(`virtual keys (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let wsB: string;
    let keyB: string;

    before(async () => {
      wsB = await createWorkspace(gw, 'Team B');
      keyB = await workspaceKey(gw, wsB, ALL);
    });

    const create = (body: Record<string, unknown>, headers?: Record<string, string>) => gw.call('/virtual-keys', { body, headers });

    it('creates a virtual key: {id, slug, object}; GET by id or slug shows the key masked and the non-secret fields', async () => {
      const made = await expectJson(
        await create({ name: 'Prod OpenAI', provider: 'openai', key: KEY, slug: 'prod-openai', note: 'main', custom_host: 'http://127.0.0.1:9/v1', vendor_organization: 'org-1' }),
        201,
      );
      assert.deepEqual(Object.keys(made).sort(), ['id', 'object', 'slug']);
      assert.equal(made.object, 'virtual-key');
      assert.equal(made.slug, 'prod-openai');
      for (const ref of [made.id, 'prod-openai']) {
        const res = await gw.call(`/virtual-keys/${ref}`);
        const text = await res.clone().text();
        const vk = await expectJson(res, 200);
        assert.equal(vk.id, made.id);
        assert.equal(vk.name, 'Prod OpenAI');
        assert.equal(vk.provider, 'openai');
        assert.equal(vk.status, 'active');
        assert.equal(vk.note, 'main');
        assert.equal(vk.custom_host, 'http://127.0.0.1:9/v1');
        assert.equal(vk.vendor_organization, 'org-1');
        assert.equal(vk.masked_key, '****WXYZ');
        assert.equal(vk.integration_id, null);
        assert.equal(typeof vk.created_at, 'number');
        assert.ok(!text.includes(KEY.slice(0, -4)), 'the key is never shown');
      }
    });

    it('a short key shows no characters; aliases resolve to the provider; other providers authenticate their own way', async () => {
      const short = await expectJson(await create({ name: 'short', provider: 'openai', key: 'sk-short' }), 201);
      assert.equal((await expectJson(await gw.call(`/virtual-keys/${short.id}`), 200)).masked_key, '****');

      const aws = await expectJson(await create({ name: 'aws', provider: 'cloud1', cloud1_access_key_id: 'AKIAEXAMPLE', cloud1_secret_access_key: 'aws-secret-value', cloud1_region: 'eu-west-1' }), 201);
      const awsView = await expectJson(await gw.call(`/virtual-keys/${aws.id}`), 200);
      assert.equal(awsView.provider, 'bedrock');
      assert.equal(awsView.cloud1_region, 'eu-west-1');
      assert.equal(awsView.masked_cloud1_secret_access_key, '****');
      assert.equal(awsView.masked_cloud1_access_key_id, '****');
      assert.equal(awsView.cloud1_secret_access_key, undefined);
      assert.equal(awsView.masked_key, undefined);

      await expectJson(await create({ name: 'local', provider: 'ollama', custom_host: 'http://127.0.0.1:11434/v1' }), 201);
      const vertex = { type: 'service_account', client_email: 'a@b.iam.gserviceaccount.com', private_key: 'PRIVATE', token_uri: 'http://127.0.0.1:9/token' };
      await expectJson(await create({ name: 'gcp', provider: 'vertex-ai', cloud2_region: 'us-central1', cloud2_service_account_json: vertex }), 201);
      await expectJson(
        await create({ name: 'entra', provider: 'azure-openai', resource_name: 'res', cloud3_entra_tenant_id: 't', cloud3_entra_client_id: 'c', cloud3_entra_client_secret: 's' }),
        201,
      );
      const azure = await expectJson(
        await create({
          name: 'azure',
          provider: 'azure-openai',
          key: KEY,
          resource_name: 'res',
          deployments: [{ deployment_id: 'gpt4o', alias: 'gpt-4o', api_version: '2024-10-21', is_default: true }],
        }),
        201,
      );
      const azureView = await expectJson(await gw.call(`/virtual-keys/${azure.id}`), 200);
      assert.deepEqual(azureView.deployments, [{ deployment_id: 'gpt4o', alias: 'gpt-4o', api_version: '2024-10-21', is_default: true }]);
    });

    it('refuses bad input with a 400 naming the field, and stores nothing', async () => {
      const before = (await expectJson(await gw.call('/virtual-keys?limit=100'), 200)).data.length;
      const cases: [Record<string, unknown>, string][] = [
        [{ provider: 'openai', key: KEY }, 'name'],
        [{ name: 'x', key: KEY }, 'provider'],
        [{ name: 'x', provider: 'no-such-provider', key: KEY }, 'provider'],
        [{ name: 'x', provider: 'openai' }, 'key'],
        [{ name: 'x', provider: 'openai', key: '' }, 'key'],
        [{ name: 'x', provider: 'openai', key: KEY, custom_host: 'not a url' }, 'custom_host'],
        [{ name: 'x', provider: 'openai', key: KEY, cloud1_region: 7 }, 'cloud1_region'],
        [{ name: 'x', provider: 'openai', key: KEY, surprise: true }, 'surprise'],
        [{ name: 'x', provider: 'openai', key: KEY, slug: 'Bad Slug' }, 'slug'],
        [{ name: 'x', provider: 'bedrock', cloud1_access_key_id: 'AKIA' }, 'cloud1_secret_access_key'],
        [{ name: 'x', provider: 'bedrock' }, 'key'],
        [{ name: 'x', provider: 'vertex-ai', cloud2_service_account_json: { a: 1 } }, 'key'],
        [{ name: 'x', provider: 'azure-openai', cloud3_entra_tenant_id: 't', cloud3_entra_client_id: 'c' }, 'cloud3_entra_client_secret'],
        [{ name: 'x', provider: 'vllm' }, 'key'],
        [{ name: 'x', provider: 'openai', key: KEY, deployments: [{ alias: 'a' }] }, 'deployments[0].deployment_id'],
        [{ name: 'x', integration_id: 'whatever', key: KEY }, 'key'],
      ];
      for (const [body, param] of cases) {
        const err = await assertEnvelope(await create(body), 400);
        assert.equal(err.param, param, `${JSON.stringify(body)}: ${err.message}`);
        assert.ok(err.message.startsWith(param), err.message);
      }
      assert.equal((await expectJson(await gw.call('/virtual-keys?limit=100'), 200)).data.length, before);
    });

    it('slugs are unique per workspace: 409 in the same one, fine in another', async () => {
      await expectJson(await create({ name: 'a', provider: 'openai', key: KEY, slug: 'dup-slug' }), 201);
      const err = await assertEnvelope(await create({ name: 'b', provider: 'openai', key: KEY, slug: 'dup-slug' }), 409);
      assert.equal(err.param, 'slug');
      await expectJson(await create({ name: 'b', provider: 'openai', key: KEY, slug: 'dup-slug', workspace_id: wsB }), 201);
    });

    it('lists newest first with contract paging, never showing a key', async () => {
      const res = await gw.call('/virtual-keys?limit=2');
      const text = await res.clone().text();
      const page = await expectJson(res, 200);
      assert.equal(page.object, 'list');
      assert.equal(page.data.length, 2);
      assert.equal(page.has_more, true);
      assert.equal(page.first_id, page.data[0].id);
      const next = await expectJson(await gw.call(`/virtual-keys?limit=2&after=${page.last_id}`), 200);
      assert.ok(next.data.every((v: { id: string }) => v.id < page.last_id));
      assert.ok(!text.includes(KEY.slice(0, -4)));
      const err = await assertEnvelope(await gw.call('/virtual-keys?limit=0'), 400);
      assert.equal(err.param, 'limit');
    });

    it('a workspace key sees only its workspace: others are 404, lists hold only its own', async () => {
      const a = await expectJson(await create({ name: 'in default', provider: 'openai', key: KEY, slug: 'only-default' }), 201);
      const asB = { 'x-gateway-api-key': keyB };
      await assertEnvelope(await gw.call(`/virtual-keys/${a.id}`, { headers: asB }), 404);
      await assertEnvelope(await gw.call('/virtual-keys/only-default', { headers: asB }), 404);
      await assertEnvelope(await gw.call(`/virtual-keys/${a.id}`, { method: 'PUT', headers: asB, body: { name: 'mine now' } }), 404);
      await assertEnvelope(await gw.call(`/virtual-keys/${a.id}`, { method: 'DELETE', headers: asB }), 404);
      const own = await expectJson(await gw.call('/virtual-keys', { headers: asB, body: { name: 'b own', provider: 'openai', key: KEY } }), 201);
      const list = await expectJson(await gw.call('/virtual-keys?limit=100', { headers: asB }), 200);
      assert.ok(list.data.length > 0);
      assert.ok(list.data.every((v: { workspace_id: string }) => v.workspace_id === wsB));
      assert.ok(list.data.some((v: { id: string }) => v.id === own.id));
      const denied = await assertEnvelope(await gw.call('/virtual-keys', { headers: asB, body: { name: 'x', provider: 'openai', key: KEY, workspace_id: 'default' } }), 403);
      assert.equal(denied.param, 'workspace_id');
      // Organisation keys see every workspace's, or one's.
      const onlyB = await expectJson(await gw.call(`/virtual-keys?limit=100&workspace_id=${wsB}`), 200);
      assert.ok(onlyB.data.every((v: { workspace_id: string }) => v.workspace_id === wsB));
      assert.equal((await expectJson(await gw.call(`/virtual-keys/${own.id}`), 200)).workspace_id, wsB);
    });

    it('each route needs its scope: 403 naming it', async () => {
      const readOnly = await workspaceKey(gw, wsB, ['virtual_keys.read']);
      const h = { 'x-gateway-api-key': readOnly };
      const made = await expectJson(await gw.call('/virtual-keys', { headers: { 'x-gateway-api-key': keyB }, body: { name: 's', provider: 'openai', key: KEY } }), 201);
      for (const [path, method, scope] of [
        ['/virtual-keys', 'POST', 'virtual_keys.create'],
        ['/virtual-keys', 'GET', 'virtual_keys.list'],
        [`/virtual-keys/${made.id}`, 'PUT', 'virtual_keys.update'],
        [`/virtual-keys/${made.id}`, 'DELETE', 'virtual_keys.delete'],
      ] as const) {
        const err = await assertEnvelope(await gw.call(path, { method, headers: h, body: method === 'POST' || method === 'PUT' ? { name: 'n' } : undefined }), 403);
        assert.equal(err.param, scope);
      }
      await expectJson(await gw.call(`/virtual-keys/${made.id}`, { headers: h }), 200);
    });

    it('PUT changes name, note, key (re-encrypted) and provider fields; null clears one; bad input changes nothing', async () => {
      const made = await expectJson(await create({ name: 'to update', provider: 'openai', key: KEY, custom_host: 'http://127.0.0.1:9/v1' }), 201);
      const rowBefore = await gw.store.db.get<{ credentials: string }>('SELECT credentials FROM virtual_keys WHERE id = ?', [made.id]);
      const res = await gw.call(`/virtual-keys/${made.id}`, { method: 'PUT', body: { name: 'updated', note: 'n2', key: OTHER_KEY, cloud1_region: 'x', custom_host: null } });
      const text = await res.clone().text();
      const vk = await expectJson(res, 200);
      assert.equal(vk.name, 'updated');
      assert.equal(vk.note, 'n2');
      assert.equal(vk.masked_key, '****lmno');
      assert.equal(vk.custom_host, undefined);
      assert.equal(vk.cloud1_region, 'x');
      assert.ok(!text.includes(OTHER_KEY.slice(0, -4)));
      const rowAfter = await gw.store.db.get<{ credentials: string }>('SELECT credentials FROM virtual_keys WHERE id = ?', [made.id]);
      assert.notEqual(rowAfter!.credentials, rowBefore!.credentials);

      for (const [body, param] of [
        [{ custom_host: 'ftp://x' }, 'custom_host'],
        [{ key: null }, 'key'],
        [{ name: '' }, 'name'],
        [{ provider: 'anthropic' }, 'provider'],
      ] as const) {
        const err = await assertEnvelope(await gw.call(`/virtual-keys/${made.id}`, { method: 'PUT', body }), 400);
        assert.equal(err.param, param, err.message);
      }
      const unchanged = await expectJson(await gw.call(`/virtual-keys/${made.id}`), 200);
      assert.equal(unchanged.name, 'updated');
      assert.equal(unchanged.masked_key, '****lmno');
    });

    it('DELETE removes it: then 404', async () => {
      const made = await expectJson(await create({ name: 'gone', provider: 'openai', key: KEY }), 201);
      const del = await expectJson(await gw.call(`/virtual-keys/${made.id}`, { method: 'DELETE' }), 200);
      assert.deepEqual(del, { id: made.id, object: 'virtual-key', deleted: true });
      await assertEnvelope(await gw.call(`/virtual-keys/${made.id}`), 404);
      await assertEnvelope(await gw.call(`/virtual-keys/${made.id}`, { method: 'DELETE' }), 404);
    });

    it('credentials are encrypted at rest: no provider secret in any row, each blob bound to its row', async () => {
      const secret = `sk-at-rest-${randomBytes(8).toString('hex')}`;
      const awsSecret = `aws-at-rest-${randomBytes(8).toString('hex')}`;
      const a = await expectJson(await create({ name: 'rest a', provider: 'openai', key: secret }), 201);
      await expectJson(await create({ name: 'rest b', provider: 'bedrock', cloud1_access_key_id: 'AKIAREST', cloud1_secret_access_key: awsSecret }), 201);
      const rows = await gw.store.db.all<Record<string, unknown>>('SELECT * FROM virtual_keys');
      const dump = JSON.stringify(rows);
      assert.ok(!dump.includes(secret) && !dump.includes(awsSecret) && !dump.includes('AKIAREST'), 'secrets appear in the table');
      const row = rows.find((r) => r.id === a.id)!;
      assert.match(String(row.credentials), /^v1:/);

      // The blob is bound to its row: copied onto another, it does not decrypt (an update must read it to merge).
      const other = await expectJson(await create({ name: 'rest c', provider: 'openai', key: OTHER_KEY }), 201);
      await gw.store.db.run('UPDATE virtual_keys SET credentials = ? WHERE id = ?', [String(row.credentials), other.id]);
      const err = await assertEnvelope(await gw.call(`/virtual-keys/${other.id}`, { method: 'PUT', body: { cloud1_region: 'x' } }), 500);
      assert.equal(err.code, 'credentials_unreadable');
      assert.ok(!err.message.includes(secret));
    });

    it('a restart on the same data keeps them; a wrong GATEWAY_ENCRYPTION_KEY refuses to start', async () => {
      const made = await expectJson(await create({ name: 'survivor', provider: 'openai', key: KEY, slug: 'survivor' }), 201);
      await gw.restart();
      const vk = await expectJson(await gw.call('/virtual-keys/survivor'), 200);
      assert.equal(vk.id, made.id);
      assert.equal(vk.masked_key, '****WXYZ');
      await gw.stop();
      await assert.rejects(startTestGateway({ ...gw.env, GATEWAY_ENCRYPTION_KEY: randomBytes(32).toString('hex') }), /GATEWAY_ENCRYPTION_KEY does not match/);
      await gw.restart();
      await expectJson(await gw.call(`/virtual-keys/${made.id}`), 200);
    });
  });
}
