// The URLs and headers Azure's two adapters build for real Azure hosts (no custom host, nothing sent),
// and which credential a target uses (auth.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TargetSettings as ConfigNode } from '../settings.js';
import { azureAI as ai, azureOpenAI as openAI, withApiVersion } from './adapter.js';
import { credentialOf } from './auth.js';
import { entraCredentials } from './entra.js';
import type { AzureSettings } from './settings.js';
import type { CallInput, ProviderAdapter, ProviderCall } from '../contract.js';
import { findAdapter } from '../registry.js';
import type { Endpoint } from '../../shared/endpoint.js';
import { refusedAt } from '../../../test/support/results.js';

const PATHS: Record<Endpoint, string> = { chat: '/chat/completions', completions: '/completions', embeddings: '/embeddings', responses: '/responses', proxy: '/files?purpose=fine-tune' };

const azureOpenAI = openAI.adapter;
const azureAI = ai.adapter;

function input(provider: string, settings: ConfigNode, endpoint: Endpoint = 'chat', body: Record<string, unknown> | null = { model: 'm', messages: [] }, path = PATHS[endpoint]): CallInput<AzureSettings> {
  return { target: { provider, settings, clientAuthorization: undefined, customHost: undefined }, endpoint, path, body };
}

/** prepare() for key credentials, which answer synchronously. */
function prepared(adapter: ProviderAdapter<AzureSettings>, call: CallInput<AzureSettings>): ProviderCall {
  const r = adapter.prepare(call);
  assert.ok(!(r instanceof Promise), 'a key credential needs no exchange');
  if (!r.ok) assert.fail(r.error.message);
  return r.value;
}

describe('azure-openai prepare()', () => {
  const node: ConfigNode = { api_key: 'k', resource_name: 'contoso-eu', deployment_id: 'gpt4o', api_version: '2024-10-21' };

  it('is registered under its name and the cloud3 alias (loaded on first use, then cached)', async () => {
    for (const name of ['azure-openai', 'cloud3']) {
      const found = await findAdapter(name);
      assert.ok(found.ok && found.value === azureOpenAI);
    }
    const ai = await findAdapter('azure-ai');
    assert.ok(ai.ok && ai.value === azureAI);
    assert.ok(!(findAdapter('azure-ai') instanceof Promise), 'a loaded adapter is found synchronously');
  });

  it('builds https://{resource}.openai.azure.com/openai/deployments/{id}/{op}?api-version=… for each endpoint', () => {
    for (const endpoint of ['chat', 'completions', 'embeddings'] as const) {
      const call = prepared(azureOpenAI, input('azure-openai', node, endpoint));
      assert.equal(call.url, `https://contoso-eu.openai.azure.com/openai/deployments/gpt4o${PATHS[endpoint]}?api-version=2024-10-21`);
      assert.deepEqual(call.headers, { 'api-key': 'k' });
      assert.equal(call.body, undefined, 'the client\'s bytes go on');
      assert.equal(call.kind, 'relayed', 'the answer is relayed as Azure sent it');
    }
  });

  it('relays the Responses API at /openai/responses (or /openai/v1/responses), the body naming the deployment', () => {
    const body = { model: 'gpt-4o', input: 'hi' };
    const dated = prepared(azureOpenAI, input('azure-openai', node, 'responses', body));
    assert.equal(dated.url, 'https://contoso-eu.openai.azure.com/openai/responses?api-version=2024-10-21');
    assert.deepEqual(JSON.parse(String(dated.kind === 'relayed' && dated.body)), { model: 'gpt4o', input: 'hi' });
    const v1 = prepared(azureOpenAI, input('azure-openai', { ...node, api_version: 'v1' }, 'responses', body));
    assert.equal(v1.url, 'https://contoso-eu.openai.azure.com/openai/v1/responses');
    assert.ok(azureOpenAI.nativeResponses === true && azureAI.nativeResponses !== true, 'azure-ai is served over its chat API');
  });

  it('reads the cloud3_* spellings; the plain ones win', () => {
    const prefixed: ConfigNode = { api_key: 'k', cloud3_resource_name: 'res3', cloud3_deployment_id: 'dep3', cloud3_api_version: '2024-06-01' };
    assert.equal(prepared(azureOpenAI, input('azure-openai', prefixed)).url, 'https://res3.openai.azure.com/openai/deployments/dep3/chat/completions?api-version=2024-06-01');
    const both: ConfigNode = { ...prefixed, resource_name: 'res', deployment_id: 'dep', api_version: '2024-10-21' };
    assert.equal(prepared(azureOpenAI, input('azure-openai', both)).url, 'https://res.openai.azure.com/openai/deployments/dep/chat/completions?api-version=2024-10-21');
  });

  it('encodes the deployment id into the path', () => {
    assert.equal(
      prepared(azureOpenAI, input('azure-openai', { ...node, deployment_id: 'a b/c' })).url,
      'https://contoso-eu.openai.azure.com/openai/deployments/a%20b%2Fc/chat/completions?api-version=2024-10-21',
    );
  });

  it('v1 API: /openai/v1/{op}, the body\'s model replaced by the deployment id (and left alone when it already is)', () => {
    const call = prepared(azureOpenAI, input('azure-openai', { ...node, api_version: 'v1' }, 'embeddings', { model: 'text-embedding', input: 'x' }));
    assert.equal(call.url, 'https://contoso-eu.openai.azure.com/openai/v1/embeddings');
    assert.deepEqual(JSON.parse(call.body as string), { model: 'gpt4o', input: 'x' });
    assert.equal(prepared(azureOpenAI, input('azure-openai', { ...node, api_version: 'v1' }, 'chat', { model: 'gpt4o', messages: [] })).body, undefined);
  });

  it('generic proxy: {host}/openai{path} with the api-version added (v1: /openai/v1{path}); no deployment needed', () => {
    const noDeployment: ConfigNode = { api_key: 'k', resource_name: 'contoso-eu', api_version: '2024-10-21' };
    assert.equal(prepared(azureOpenAI, input('azure-openai', noDeployment, 'proxy', null)).url, 'https://contoso-eu.openai.azure.com/openai/files?purpose=fine-tune&api-version=2024-10-21');
    assert.equal(prepared(azureOpenAI, input('azure-openai', { ...noDeployment, api_version: 'v1' }, 'proxy', null)).url, 'https://contoso-eu.openai.azure.com/openai/v1/files?purpose=fine-tune');
    assert.equal(prepared(azureOpenAI, input('azure-openai', { api_key: 'k', resource_name: 'r' }, 'proxy', null, '/files')).url, 'https://r.openai.azure.com/openai/files');
    // Only deployments: the default one's api-version (else the first's), as Azure needs one on these routes.
    const deployments = [
      { deployment_id: 'a', alias: 'a', api_version: '2024-06-01' },
      { deployment_id: 'b', alias: 'b', api_version: '2024-10-21', is_default: true },
    ];
    assert.equal(prepared(azureOpenAI, input('azure-openai', { api_key: 'k', resource_name: 'r', deployments }, 'proxy', null, '/fine_tuning/jobs')).url, 'https://r.openai.azure.com/openai/fine_tuning/jobs?api-version=2024-10-21');
    assert.equal(prepared(azureOpenAI, input('azure-openai', { api_key: 'k', resource_name: 'r', deployments: deployments.slice(0, 1) }, 'proxy', null, '/batches')).url, 'https://r.openai.azure.com/openai/batches?api-version=2024-06-01');
  });

  it('a custom host replaces https://{resource}.openai.azure.com (trailing slash tolerated)', () => {
    const call = input('azure-openai', { ...node, resource_name: undefined });
    call.target.customHost = 'https://apim.example.net/aoai/';
    const built = prepared(azureOpenAI, call);
    assert.equal(built.url, 'https://apim.example.net/aoai/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21');
  });

  it('passthrough (no parsed body) uses the default deployment', () => {
    const deployments = [
      { alias: 'a', deployment_id: 'dep-a', api_version: '2024-10-21' },
      { alias: 'b', deployment_id: 'dep-b', api_version: '2024-06-01', is_default: true },
    ];
    assert.match(prepared(azureOpenAI, input('azure-openai', { api_key: 'k', resource_name: 'r', deployments }, 'chat', null)).url, /\/deployments\/dep-b\/.*2024-06-01$/);
  });

  it('refuses missing and malformed keys with a 400 naming them', () => {
    refusedAt(azureOpenAI.prepare(input('azure-openai', { ...node, resource_name: undefined })), 'resource_name');
    const e = refusedAt(azureOpenAI.prepare(input('azure-openai', { ...node, resource_name: '' })), 'resource_name');
    assert.match(e.message, /resource_name \(or cloud3_resource_name\)/);
    refusedAt(azureOpenAI.prepare(input('azure-openai', { ...node, resource_name: 'bad.name' })), 'resource_name');
    refusedAt(azureOpenAI.prepare(input('azure-openai', { ...node, cloud3_resource_name: '-x', resource_name: undefined })), 'cloud3_resource_name');
    refusedAt(azureOpenAI.prepare(input('azure-openai', { ...node, api_version: undefined })), 'api_version');
  });
});

describe('azure-ai prepare()', () => {
  it('serverless: https://{endpoint}.{region}.models.ai.azure.com/v1/{op}, Bearer key', () => {
    const node: ConfigNode = { api_key: 'k', cloud3_deployment_type: 'serverless', cloud3_endpoint_name: 'llama-abc', cloud3_region: 'eastus2' };
    for (const endpoint of ['chat', 'completions', 'embeddings'] as const) {
      const call = prepared(azureAI, input('azure-ai', node, endpoint));
      assert.equal(call.url, `https://llama-abc.eastus2.models.ai.azure.com/v1${PATHS[endpoint]}`);
      assert.deepEqual(call.headers, { authorization: 'Bearer k' });
      assert.equal(call.body, undefined);
    }
  });

  it('serverless: the deployment name is the host label when no endpoint name is given', () => {
    const node: ConfigNode = { api_key: 'k', cloud3_deployment_type: 'serverless', cloud3_deployment_name: 'Phi-3-mini-xyz', cloud3_region: 'swedencentral' };
    assert.equal(prepared(azureAI, input('azure-ai', node)).url, 'https://Phi-3-mini-xyz.swedencentral.models.ai.azure.com/v1/chat/completions');
  });

  it('managed: https://{endpoint}.{region}.inference.ml.azure.com, azureml-model-deployment header', () => {
    const node: ConfigNode = { api_key: 'k', cloud3_deployment_type: 'managed', cloud3_endpoint_name: 'my-endpoint', cloud3_region: 'westeurope', cloud3_deployment_name: 'blue' };
    const call = prepared(azureAI, input('azure-ai', node));
    assert.equal(call.url, 'https://my-endpoint.westeurope.inference.ml.azure.com/v1/chat/completions');
    assert.deepEqual(call.headers, { authorization: 'Bearer k', 'azureml-model-deployment': 'blue' });
  });

  it('with an api-version: the Model Inference API root, the version, pass-through; only chat bodies are edited', () => {
    const node: ConfigNode = { api_key: 'k', cloud3_deployment_type: 'serverless', cloud3_endpoint_name: 'e', cloud3_region: 'r1', cloud3_api_version: '2024-05-01-preview' };
    const chat = prepared(azureAI, input('azure-ai', node, 'chat', { model: 'm', messages: [], max_completion_tokens: 9 }));
    assert.equal(chat.url, 'https://e.r1.models.ai.azure.com/chat/completions?api-version=2024-05-01-preview');
    assert.equal(chat.headers['extra-parameters'], 'pass-through');
    assert.deepEqual(JSON.parse(chat.body as string), { model: 'm', messages: [], max_tokens: 9 });
    const embed = prepared(azureAI, input('azure-ai', node, 'embeddings', { model: 'm', input: 'x', max_completion_tokens: 1 }));
    assert.equal(embed.url, 'https://e.r1.models.ai.azure.com/embeddings?api-version=2024-05-01-preview');
    assert.equal(embed.body, undefined);
    const unchanged = prepared(azureAI, input('azure-ai', node, 'chat', { model: 'm', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(unchanged.body, undefined);
  });

  it('generic proxy: {host}/v1{path}, or {host}{path}?api-version=… on the Model Inference API', () => {
    const node: ConfigNode = { api_key: 'k', cloud3_deployment_type: 'serverless', cloud3_endpoint_name: 'e', cloud3_region: 'r1' };
    assert.equal(prepared(azureAI, input('azure-ai', node, 'proxy', null, '/models')).url, 'https://e.r1.models.ai.azure.com/v1/models');
    const v = prepared(azureAI, input('azure-ai', { ...node, cloud3_api_version: '2024-05-01-preview' }, 'proxy', null, '/info'));
    assert.equal(v.url, 'https://e.r1.models.ai.azure.com/info?api-version=2024-05-01-preview');
    assert.equal(v.headers['extra-parameters'], undefined);
  });
});

describe('withApiVersion', () => {
  it('adds the version unless the query has one', () => {
    assert.equal(withApiVersion('https://h/p', '2024-10-21'), 'https://h/p?api-version=2024-10-21');
    assert.equal(withApiVersion('https://h/p?a=1', '2024-10-21'), 'https://h/p?a=1&api-version=2024-10-21');
    assert.equal(withApiVersion('https://h/p?api-version=x', '2024-10-21'), 'https://h/p?api-version=x');
    assert.equal(withApiVersion('https://h/p', undefined), 'https://h/p');
  });
});

describe('credentials', () => {
  const target = (settings: ConfigNode, clientAuthorization?: string) => ({ provider: 'azure-openai', settings, clientAuthorization, customHost: undefined });
  const scope = 'https://cognitiveservices.azure.com/.default';
  const entra = { cloud3_entra_tenant_id: 't', cloud3_entra_client_id: 'c', cloud3_entra_client_secret: 's' };
  const jwt = 'eyJ0eXAiOiJKV1QifQ.eyJhdWQiOiJ4In0.c2ln';

  it('precedence: Entra, api_key, the config\'s Authorization, the client\'s', () => {
    assert.deepEqual(credentialOf(target({ ...entra, api_key: 'k' }), scope), { ok: true, value: { kind: 'entra', entra: { tenantId: 't', clientId: 'c', clientSecret: 's', scope } } });
    assert.deepEqual(credentialOf(target({ api_key: 'k', Authorization: 'Bearer a' }, 'Bearer b'), scope), { ok: true, value: { kind: 'key', key: 'k' } });
    assert.deepEqual(credentialOf(target({ Authorization: 'Bearer a' }, 'Bearer b'), scope), { ok: true, value: { kind: 'key', key: 'a' } });
    assert.deepEqual(credentialOf(target({}, 'bearer b'), scope), { ok: true, value: { kind: 'key', key: 'b' } });
    assert.deepEqual(credentialOf(target({}, 'plain-key'), scope), { ok: true, value: { kind: 'key', key: 'plain-key' } });
  });

  it('a JWT is an access token, anything else a key', () => {
    assert.deepEqual(credentialOf(target({}, `Bearer ${jwt}`), scope), { ok: true, value: { kind: 'token', token: jwt } });
  });

  it('cloud3_entra_scope replaces the default scope', () => {
    const r = entraCredentials('azure-openai', { ...entra, cloud3_entra_scope: 'api://x/.default' }, scope);
    assert.ok(r.ok && r.value?.scope === 'api://x/.default');
  });

  it('none, or a partial Entra set: 400 naming the key', () => {
    refusedAt(credentialOf(target({}), scope), 'api_key');
    refusedAt(credentialOf(target({}, '  '), scope), 'api_key');
    refusedAt(credentialOf(target({ cloud3_entra_tenant_id: 't', cloud3_entra_client_secret: 's', api_key: 'k' }), scope), 'cloud3_entra_client_id');
  });

  it('the keys go where each API reads them', () => {
    assert.deepEqual(prepared(azureOpenAI, { ...input('azure-openai', { resource_name: 'r', deployment_id: 'd', api_version: 'v' }), target: target({ resource_name: 'r', deployment_id: 'd', api_version: 'v' }, `Bearer ${jwt}`) }).headers, {
      authorization: `Bearer ${jwt}`,
    });
    const aiNode: ConfigNode = { cloud3_deployment_type: 'serverless', cloud3_endpoint_name: 'e', cloud3_region: 'r' };
    assert.deepEqual(prepared(azureAI, { ...input('azure-ai', aiNode), target: { ...target(aiNode, 'Bearer key-1'), provider: 'azure-ai' } }).headers, { authorization: 'Bearer key-1' });
  });
});
