// Stored secrets go only where their owner put them (issue 15 item 1), on both
// engines: an update that changes where a stored secret is sent (custom_host,
// a region, an Azure resource, an Entra tenant, a Vertex project, an
// integration model's host, a saved config target's provider or host) without
// giving the secret again is a 400 naming the field and changes nothing; with
// the secret it is taken. A request-time config cannot override those fields
// of stored credentials either.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { engines } from './support/engines.js';
import { assertEnvelope } from './support/http.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { expectJson } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

const chat = (model = 'gpt-4o') => ({ model, messages: [{ role: 'user', content: 'hi' }] });
const put = { method: 'PUT' } as const;

for (const engine of engines()) {
  describe(`stored secrets keep their destination (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let home: MockOpenAI;
    let elsewhere: MockOpenAI;

    before(async () => {
      home = await startMockOpenAI({ name: 'home' });
      elsewhere = await startMockOpenAI({ name: 'elsewhere' });
    });
    after(async () => {
      await home.close();
      await elsewhere.close();
    });

    /** A chat request by `headers`; asserts it reached `upstream` with `Bearer <key>`. */
    async function reaches(headers: Record<string, string>, key: string, upstream: MockOpenAI, model = 'gpt-4o'): Promise<void> {
      const before = upstream.requests.length;
      await expectJson(await gw.call('/chat/completions', { headers, body: chat(model) }), 200);
      assert.equal(upstream.requests.length, before + 1);
      assert.equal(upstream.requests.at(-1)!.headers.authorization, `Bearer ${key}`);
    }

    async function refused(res: Response, param: string, code = 'secret_required'): Promise<void> {
      const e = await assertEnvelope(res, 400);
      assert.equal(e.param, param);
      assert.equal(e.code, code);
    }

    it('virtual keys: a new or removed custom_host needs the key in the same request', async () => {
      const key = `sk-vk-${randomBytes(8).toString('hex')}`;
      const vk = await expectJson(await gw.call('/virtual-keys', { body: { name: 'vk', provider: 'openai', key, slug: 'vk-host', custom_host: home.url } }), 201);
      const path = `/virtual-keys/${vk.id}`;

      await refused(await gw.call(path, { ...put, body: { custom_host: elsewhere.url } }), 'custom_host');
      await refused(await gw.call(path, { ...put, body: { custom_host: null, name: 'renamed' } }), 'custom_host');
      const view = await expectJson(await gw.call(path), 200);
      assert.equal(view.custom_host, home.url);
      assert.equal(view.name, 'vk', 'a refused update changes nothing');
      await reaches({ 'x-gateway-virtual-key': 'vk-host' }, key, home);

      // The same host again is no change; other fields change freely.
      await expectJson(await gw.call(path, { ...put, body: { custom_host: home.url, vendor_organization: 'org-2' } }), 200);
      const moved = `sk-vk-moved-${randomBytes(8).toString('hex')}`;
      await expectJson(await gw.call(path, { ...put, body: { custom_host: elsewhere.url, key: moved } }), 200);
      await reaches({ 'x-gateway-virtual-key': 'vk-host' }, moved, elsewhere);
      assert.equal(home.requests.filter((r) => r.headers.authorization === `Bearer ${moved}`).length, 0);
    });

    it('virtual keys: cloud regions, Azure resources and tenants, Vertex projects need every stored secret again', async () => {
      const aws = await expectJson(
        await gw.call('/virtual-keys', {
          body: { name: 'aws', provider: 'bedrock', cloud1_access_key_id: 'AKIAREGIONTEST', cloud1_secret_access_key: 'aws-secret-value', cloud1_region: 'eu-west-1' },
        }),
        201,
      );
      const awsPath = `/virtual-keys/${aws.id}`;
      const e = await assertEnvelope(await gw.call(awsPath, { ...put, body: { cloud1_region: 'us-east-1' } }), 400);
      assert.equal(e.param, 'cloud1_region');
      assert.match(e.message, /cloud1_access_key_id, cloud1_secret_access_key/);
      // Half the secrets is not enough: the other half would still go to the new region.
      await refused(await gw.call(awsPath, { ...put, body: { cloud1_region: 'us-east-1', cloud1_secret_access_key: 'aws-secret-2' } }), 'cloud1_region');
      // Removing the region moves the key to the default one.
      await refused(await gw.call(awsPath, { ...put, body: { cloud1_region: null } }), 'cloud1_region');
      assert.equal((await expectJson(await gw.call(awsPath), 200)).cloud1_region, 'eu-west-1');
      const moved = await expectJson(
        await gw.call(awsPath, { ...put, body: { cloud1_region: 'us-east-1', cloud1_access_key_id: 'AKIAREGIONTEST', cloud1_secret_access_key: 'aws-secret-value' } }),
        200,
      );
      assert.equal(moved.cloud1_region, 'us-east-1');

      const azure = await expectJson(
        await gw.call('/virtual-keys', {
          body: { name: 'az', provider: 'azure-openai', resource_name: 'home-res', cloud3_entra_tenant_id: 't1', cloud3_entra_client_id: 'c1', cloud3_entra_client_secret: 'entra-secret' },
        }),
        201,
      );
      for (const field of ['resource_name', 'cloud3_resource_name', 'cloud3_entra_tenant_id', 'cloud3_entra_scope']) {
        await refused(await gw.call(`/virtual-keys/${azure.id}`, { ...put, body: { [field]: 'other' } }), field);
      }
      await expectJson(await gw.call(`/virtual-keys/${azure.id}`, { ...put, body: { cloud3_entra_client_id: 'c2' } }), 200);

      const account = { type: 'service_account', client_email: 'a@b.iam.gserviceaccount.com', private_key: 'PRIVATE', token_uri: 'http://127.0.0.1:9/token' };
      const gcp = await expectJson(
        await gw.call('/virtual-keys', { body: { name: 'gcp', provider: 'vertex-ai', cloud2_region: 'us-central1', cloud2_project_id: 'p1', cloud2_service_account_json: account } }),
        201,
      );
      await refused(await gw.call(`/virtual-keys/${gcp.id}`, { ...put, body: { cloud2_project_id: 'p2' } }), 'cloud2_project_id');
      await refused(await gw.call(`/virtual-keys/${gcp.id}`, { ...put, body: { cloud2_region: 'europe-west4' } }), 'cloud2_region');
      // The token endpoint is inside the key file: a new token_uri is a new key file, which is the secret itself.
      await expectJson(
        await gw.call(`/virtual-keys/${gcp.id}`, { ...put, body: { cloud2_region: 'europe-west4', cloud2_service_account_json: { ...account, token_uri: 'http://127.0.0.1:8/token' } } }),
        200,
      );
    });

    it('integrations: a new configurations.custom_host needs the key', async () => {
      const key = `sk-int-${randomBytes(8).toString('hex')}`;
      const made = await expectJson(
        await gw.call('/integrations', { body: { name: 'Int', ai_provider_id: 'openai', key, slug: 'int-host', workspace_id: 'default', configurations: { custom_host: home.url } } }),
        201,
      );
      const path = `/integrations/${made.id}`;
      await refused(await gw.call(path, { ...put, body: { configurations: { custom_host: elsewhere.url } } }), 'configurations.custom_host');
      await refused(await gw.call(path, { ...put, body: { configurations: { custom_host: null }, description: 'changed' } }), 'configurations.custom_host');
      const view = await expectJson(await gw.call(path), 200);
      assert.equal(view.configurations.custom_host, home.url);
      assert.equal(view.description, null);
      await reaches({ 'x-gateway-provider': '@int-host' }, key, home);

      await expectJson(await gw.call(path, { ...put, body: { configurations: { custom_host: elsewhere.url }, key } }), 200);
      await reaches({ 'x-gateway-provider': '@int-host' }, key, elsewhere);
    });

    it("integration models: setting, changing or removing a model's custom_host needs the integration's secrets, the stored ones", async () => {
      const key = `sk-models-${randomBytes(8).toString('hex')}`;
      const made = await expectJson(
        await gw.call('/integrations', { body: { name: 'Models', ai_provider_id: 'openai', key, slug: 'int-models', workspace_id: 'default', configurations: { custom_host: home.url } } }),
        201,
      );
      const models = `/integrations/${made.id}/integration-models`;
      const hosted = (host: string) => ({ slug: 'hosted', enabled: true, configurations: { custom_host: host } });

      await refused(await gw.call(models, { ...put, body: { models: [{ slug: 'plain', enabled: true }, hosted(elsewhere.url)] } }), 'models[1].configurations.custom_host');
      await refused(await gw.call(models, { ...put, body: { models: [hosted(elsewhere.url)], key: 'sk-a-guess' } }), 'key', 'secret_mismatch');
      await refused(await gw.call(models, { ...put, body: { models: [hosted(elsewhere.url)], key, configurations: { custom_host: home.url } } }), 'configurations.custom_host', 'invalid_request');
      assert.equal((await expectJson(await gw.call(models), 200)).total, 0, 'refused puts stored nothing');
      await reaches({ 'x-gateway-provider': '@int-models' }, key, home, 'hosted');

      await expectJson(await gw.call(models, { ...put, body: { models: [hosted(elsewhere.url)], key } }), 200);
      await reaches({ 'x-gateway-provider': '@int-models' }, key, elsewhere, 'hosted');
      // Models whose host stays need nothing; moving one again, or back, needs the key again.
      await expectJson(await gw.call(models, { ...put, body: { models: [{ ...hosted(elsewhere.url), enabled: true }, { slug: 'plain', enabled: true }] } }), 200);
      await refused(await gw.call(models, { ...put, body: { models: [{ slug: 'hosted', enabled: true }] } }), 'models[0].configurations.custom_host');
      await reaches({ 'x-gateway-provider': '@int-models' }, key, elsewhere, 'hosted');
    });

    it("saved configs: a masked secret is kept only while its target's provider and destination stay", async () => {
      const key = `sk-config-${randomBytes(8).toString('hex')}`;
      const config = { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: key, custom_host: home.url }, { provider: 'bedrock', api_key: 'x', cloud1_region: 'eu-west-1' }] };
      const saved = await expectJson(await gw.call('/configs', { body: { name: 'moving', config } }), 201);
      const path = `/configs/${saved.id}`;
      const shown = (await expectJson(await gw.call(path), 200)).config as typeof config;
      assert.equal(shown.targets[0]!.api_key, '********');
      const withTarget = (i: number, edit: Record<string, unknown>) => ({ ...shown, targets: shown.targets.map((t, j) => (j === i ? { ...t, ...edit } : t)) });

      await refused(await gw.call(path, { ...put, body: { config: withTarget(0, { custom_host: elsewhere.url }) } }), 'config.targets[0].custom_host');
      await refused(await gw.call(path, { ...put, body: { config: withTarget(0, { provider: 'azure-openai', resource_name: 'r', api_version: 'v1', deployment_id: 'd' }) } }), 'config.targets[0].provider');
      await refused(await gw.call(path, { ...put, body: { config: withTarget(1, { cloud1_region: 'us-east-1' }) } }), 'config.targets[1].cloud1_region');
      // Reordered targets: the mask at targets[0] would take the openai key to bedrock.
      await refused(await gw.call(path, { ...put, body: { config: { ...shown, targets: [shown.targets[1], shown.targets[0]] } } }), 'config.targets[0].provider');
      assert.equal((await expectJson(await gw.call(path), 200)).version, 1, 'refused updates made no version');
      await reaches({ 'x-gateway-config': saved.id }, key, home);

      // The secret itself with the new host is taken; so is a mask whose target stays where it was.
      await expectJson(await gw.call(path, { ...put, body: { config: withTarget(0, { custom_host: elsewhere.url, api_key: key }) } }), 200);
      await reaches({ 'x-gateway-config': saved.id }, key, elsewhere);
      const again = (await expectJson(await gw.call(path), 200)).config;
      await expectJson(await gw.call(path, { ...put, body: { config: { ...again, retry: { attempts: 1 } } } }), 200);
      await reaches({ 'x-gateway-config': saved.id }, key, elsewhere);

      // A secret beside a virtual key keeps that key: pointing it at another one is a new destination.
      const viaKey = await expectJson(await gw.call('/configs', { body: { name: 'via-vk', config: { virtual_key: 'vk-host', api_key: key } } }), 201);
      const viaShown = (await expectJson(await gw.call(`/configs/${viaKey.id}`), 200)).config;
      await refused(await gw.call(`/configs/${viaKey.id}`, { ...put, body: { config: { ...viaShown, virtual_key: 'int-host' } } }), 'config.virtual_key');
    });

    it('a saved target holding a secret names its provider: else each request would pick where the secret goes', async () => {
      for (const [config, param] of [
        [{ retry: { attempts: 1 }, api_key: 'sk-anywhere' }, 'config.provider'],
        [{ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: 'a' }, { strategy: { mode: 'single' }, targets: [{ passthrough: true, api_key: 'b' }] }] }, 'config.targets[1].targets[0].provider'],
      ] as const) {
        await refused(await gw.call('/configs', { body: { name: 'unplaced', config } }), param, 'invalid_request');
      }
    });

    it('a target saved before that rule, holding a secret and no provider, is refused at request time: headers cannot pick where it goes', async () => {
      const saved = await expectJson(await gw.call('/configs', { body: { name: 'old', config: { provider: 'openai', api_key: 'sk-saved-long-ago', custom_host: home.url, retry: { attempts: 1 } } } }), 201);
      // As a config saved by an older version was stored: the provider and host left to the request.
      const row = (await gw.store.db.get<{ id: string; config: string }>('SELECT id, config FROM config_versions WHERE config_id = ?', [saved.id]))!;
      const { provider: _p, custom_host: _h, ...unplaced } = JSON.parse(row.config) as Record<string, unknown>;
      await gw.store.db.run('UPDATE config_versions SET config = ? WHERE id = ?', [JSON.stringify(unplaced), row.id]);
      await gw.restart();
      const headers = { 'x-gateway-config': saved.id as string, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': elsewhere.url };
      const sent = elsewhere.requests.length;
      const e = await assertEnvelope(await gw.call('/chat/completions', { headers, body: chat() }), 400);
      assert.equal(e.code, 'invalid_config');
      assert.match(e.message, /names no provider/);
      assert.equal(elsewhere.requests.length, sent, 'the stored secret went nowhere');
    });

    it('a request-time config cannot point stored credentials elsewhere: 400 naming the config path, nothing sent', async () => {
      await expectJson(
        await gw.call('/virtual-keys', {
          body: { name: 'aws-rt', provider: 'bedrock', slug: 'aws-rt', cloud1_access_key_id: 'AKIARUNTIME', cloud1_secret_access_key: 'aws-runtime-secret', cloud1_region: 'eu-west-1' },
        }),
        201,
      );
      await expectJson(await gw.call('/virtual-keys', { body: { name: 'az-rt', provider: 'azure-openai', slug: 'az-rt', key: 'azure-key-123', resource_name: 'home-res', api_version: 'v1' } }), 201);
      const cases: [Record<string, unknown>, string][] = [
        [{ virtual_key: 'aws-rt', cloud1_region: 'us-west-2' }, 'config.cloud1_region'],
        [{ provider: '@aws-rt', cloud1_region: 'us-west-2' }, 'config.cloud1_region'],
        [{ strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'az-rt', resource_name: 'attacker-res' }] }, 'config.targets[0].resource_name'],
        [{ virtual_key: 'az-rt', cloud3_resource_name: 'attacker-res' }, 'config.cloud3_resource_name'],
      ];
      const sent = home.requests.length + elsewhere.requests.length;
      for (const [config, param] of cases) {
        await refused(await gw.call('/chat/completions', { headers: { 'x-gateway-config': JSON.stringify(config) }, body: chat() }), param, 'destination_not_allowed');
      }
      const host = await assertEnvelope(await gw.call('/chat/completions', { headers: { 'x-gateway-config': JSON.stringify({ virtual_key: 'vk-host', custom_host: home.url }) }, body: chat() }), 400);
      assert.equal(host.code, 'custom_host_not_allowed');
      assert.equal(home.requests.length + elsewhere.requests.length, sent);
    });
  });
}
