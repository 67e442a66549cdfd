// Unit tests of the Azure adapters' pure parts: the URLs and headers prepare() builds for
// real Azure hosts (no custom host, nothing sent), deployment choice, the Model Inference
// API's request edits, credential choice, the authority host, and the config keys added
// for Entra ID client credentials.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../src/config/schema.js';
import type { ConfigNode } from '../src/config/types.js';
import { credentialOf } from '../src/providers/azure/auth.js';
import { chooseDeployment } from '../src/providers/azure/deployments.js';
import { authorityHost, DEFAULT_AUTHORITY, entraCredentials } from '../src/providers/azure/entra.js';
import { azureAI as ai, azureOpenAI as openAI, withApiVersion } from '../src/providers/azure/adapter.js';
import { toInferenceChat } from '../src/providers/azure/chat/request.js';
import type { AzureSettings } from '../src/providers/azure/settings.js';
import type { CallInput, ProviderAdapter, ProviderCall } from '../src/providers/contract.js';
import { findAdapter } from '../src/providers/registry.js';
import type { Endpoint } from '../src/shared/endpoint.js';
import type { GatewayError, Result } from '../src/shared/errors.js';

const PATHS: Record<Endpoint, string> = { chat: '/chat/completions', completions: '/completions', embeddings: '/embeddings', proxy: '/files?purpose=fine-tune' };

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

function refused(r: Result<unknown, GatewayError> | Promise<unknown>, param: string): GatewayError {
  assert.ok(!(r instanceof Promise));
  if (r.ok) assert.fail(`expected a 400 naming ${param}`);
  assert.equal(r.error.status, 400);
  assert.equal(r.error.param, param);
  return r.error;
}

describe('azure-openai prepare()', () => {
  const node: ConfigNode = { provider: 'azure-openai', api_key: 'k', resource_name: 'contoso-eu', deployment_id: 'gpt4o', api_version: '2024-10-21' };

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
    refused(azureOpenAI.prepare(input('azure-openai', { ...node, resource_name: undefined })), 'resource_name');
    const e = refused(azureOpenAI.prepare(input('azure-openai', { ...node, resource_name: '' })), 'resource_name');
    assert.match(e.message, /resource_name \(or cloud3_resource_name\)/);
    refused(azureOpenAI.prepare(input('azure-openai', { ...node, resource_name: 'bad.name' })), 'resource_name');
    refused(azureOpenAI.prepare(input('azure-openai', { ...node, cloud3_resource_name: '-x', resource_name: undefined })), 'cloud3_resource_name');
    refused(azureOpenAI.prepare(input('azure-openai', { ...node, api_version: undefined })), 'api_version');
  });
});

describe('chooseDeployment', () => {
  const deployments = [
    { alias: 'gpt-4o', deployment_id: 'd1', api_version: 'v-1' },
    { alias: 'mini', deployment_id: 'd2', api_version: 'v-2', is_default: true },
    { alias: 'other-default', deployment_id: 'd3', api_version: 'v-3', is_default: true },
  ];

  it('alias match, else the first is_default', () => {
    assert.deepEqual(chooseDeployment('azure-openai', { deployments }, 'gpt-4o'), { ok: true, value: { deploymentId: 'd1', apiVersion: 'v-1' } });
    assert.deepEqual(chooseDeployment('azure-openai', { deployments }, 'GPT-4O'), { ok: true, value: { deploymentId: 'd2', apiVersion: 'v-2' } });
    assert.deepEqual(chooseDeployment('azure-openai', { deployments }, undefined), { ok: true, value: { deploymentId: 'd2', apiVersion: 'v-2' } });
  });

  it('no match and no default: 400 on model listing the aliases; the top-level deployment_id is not a fallback', () => {
    const list = deployments.map(({ alias, deployment_id, api_version }) => ({ alias, deployment_id, api_version }));
    const r = chooseDeployment('azure-openai', { deployments: list, deployment_id: 'top', api_version: 'v' }, 'gpt-5');
    const e = refused(r, 'model');
    assert.equal(e.code, 'unknown_model_alias');
    assert.match(e.message, /unknown model alias 'gpt-5'.*'gpt-4o', 'mini', 'other-default'/);
    assert.match(refused(chooseDeployment('azure-openai', { deployments: list }, 42), 'model').message, /names no model/);
  });

  it('without deployments: deployment_id and api_version, both required; an empty list counts as none', () => {
    assert.deepEqual(chooseDeployment('azure-openai', { deployments: [], deployment_id: 'x', api_version: 'y' }, 'm'), { ok: true, value: { deploymentId: 'x', apiVersion: 'y' } });
    refused(chooseDeployment('azure-openai', { api_version: 'y' }, 'm'), 'deployment_id');
    refused(chooseDeployment('azure-openai', { deployment_id: 'x' }, 'm'), 'api_version');
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

describe('toInferenceChat', () => {
  it('returns null when nothing differs', () => {
    assert.equal(toInferenceChat({ messages: [{ role: 'system', content: 's' }], max_tokens: 5, temperature: 1 }), null);
  });

  it('max_completion_tokens becomes max_tokens, winning over a max_tokens sent with it', () => {
    assert.deepEqual(toInferenceChat({ messages: [], max_completion_tokens: 10 }), { messages: [], max_tokens: 10 });
    assert.deepEqual(toInferenceChat({ messages: [], max_tokens: 99, max_completion_tokens: 10 }), { messages: [], max_tokens: 10 });
  });

  it('developer messages become system messages; other roles, parts and fields stay', () => {
    const image = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] };
    const tool = { role: 'tool', tool_call_id: 'c1', content: '42' };
    const body = { messages: [{ role: 'developer', content: 'rules', name: 'ops' }, image, tool], tools: [{ type: 'function', function: { name: 'f' } }] };
    const out = toInferenceChat(body)!;
    assert.deepEqual(out.messages, [{ role: 'system', content: 'rules', name: 'ops' }, image, tool]);
    assert.deepEqual(out.tools, body.tools);
    assert.equal(body.messages[0]!.role, 'developer', 'the input is not modified');
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
    refused(credentialOf(target({}), scope), 'api_key');
    refused(credentialOf(target({}, '  '), scope), 'api_key');
    refused(credentialOf(target({ cloud3_entra_tenant_id: 't', cloud3_entra_client_secret: 's', api_key: 'k' }), scope), 'cloud3_entra_client_id');
  });

  it('the keys go where each API reads them', () => {
    assert.deepEqual(prepared(azureOpenAI, { ...input('azure-openai', { resource_name: 'r', deployment_id: 'd', api_version: 'v' }), target: target({ resource_name: 'r', deployment_id: 'd', api_version: 'v' }, `Bearer ${jwt}`) }).headers, {
      authorization: `Bearer ${jwt}`,
    });
    const aiNode: ConfigNode = { cloud3_deployment_type: 'serverless', cloud3_endpoint_name: 'e', cloud3_region: 'r' };
    assert.deepEqual(prepared(azureAI, { ...input('azure-ai', aiNode), target: { ...target(aiNode, 'Bearer key-1'), provider: 'azure-ai' } }).headers, { authorization: 'Bearer key-1' });
  });
});

describe('authorityHost', () => {
  it('defaults to login.microsoftonline.com and normalises as the SDKs do', () => {
    assert.deepEqual(authorityHost({}), { ok: true, value: DEFAULT_AUTHORITY });
    assert.deepEqual(authorityHost({ AZURE_AUTHORITY_HOST: 'login.microsoftonline.us/' }), { ok: true, value: 'https://login.microsoftonline.us' });
    assert.deepEqual(authorityHost({ AZURE_AUTHORITY_HOST: 'http://127.0.0.1:9/' }), { ok: true, value: 'http://127.0.0.1:9' });
    const bad = authorityHost({ AZURE_AUTHORITY_HOST: 'http://exa mple' });
    assert.ok(!bad.ok && bad.error.status === 500);
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

describe('config schema: Entra ID client credential keys', () => {
  const keys = { cloud3_entra_tenant_id: 't', cloud3_entra_client_id: 'c', cloud3_entra_client_secret: 's' };

  it('are accepted as strings, and together with provider form a key group', () => {
    assert.ok(parseConfig({ provider: 'azure-openai', ...keys, resource_name: 'r', deployment_id: 'd', api_version: 'v' }).ok);
    assert.ok(parseConfig({ provider: 'azure-ai', api_key: 'k', ...keys }).ok);
  });

  it('must be strings', () => {
    for (const key of Object.keys(keys)) {
      const r = parseConfig({ provider: 'azure-openai', api_key: 'k', [key]: 42 });
      assert.ok(!r.ok);
      assert.equal(r.error.param, key);
    }
  });

  it('the key group needs all three', () => {
    const r = parseConfig({ provider: 'azure-openai', cloud3_entra_tenant_id: 't', cloud3_entra_client_id: 'c' });
    assert.ok(!r.ok);
    assert.match(r.error.message, /provider\+cloud3_entra_tenant_id\+cloud3_entra_client_id\+cloud3_entra_client_secret/);
  });
});
