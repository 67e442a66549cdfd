// Which Azure OpenAI deployment serves a request.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chooseDeployment } from './deployments.js';
import { refusedAt } from '../../../test/support/results.js';

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
    const e = refusedAt(r, 'model');
    assert.equal(e.code, 'unknown_model_alias');
    assert.match(e.message, /unknown model alias 'gpt-5'.*'gpt-4o', 'mini', 'other-default'/);
    assert.match(refusedAt(chooseDeployment('azure-openai', { deployments: list }, 42), 'model').message, /names no model/);
  });

  it('without deployments: deployment_id and api_version, both required; an empty list counts as none', () => {
    assert.deepEqual(chooseDeployment('azure-openai', { deployments: [], deployment_id: 'x', api_version: 'y' }, 'm'), { ok: true, value: { deploymentId: 'x', apiVersion: 'y' } });
    refusedAt(chooseDeployment('azure-openai', { api_version: 'y' }, 'm'), 'deployment_id');
    refusedAt(chooseDeployment('azure-openai', { deployment_id: 'x' }, 'm'), 'api_version');
  });
});
