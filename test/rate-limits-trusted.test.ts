// Rate limits grouped by metadata (issue 15 item 6): the caller sets x-gateway-metadata,
// so a policy grouped by metadata.<key> is dodged by a fresh value per request — unless
// the entry is `trusted`, when only the key's own defaults.metadata counts: requests of a
// key without that default share one group, whatever the caller sends.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertEnvelope } from './support/http.js';
import { keyRecord } from './support/keys.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { createWorkspace, expectJson } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

describe('rate limits grouped by metadata', { timeout: 60_000 }, () => {
  const gw = useGateway();
  let openai: MockOpenAI;

  before(async () => {
    openai = await startMockOpenAI();
  });
  after(() => openai.close());

  /** A workspace with a 2-requests-a-minute policy grouped by metadata.team, and a key (with `defaults`). */
  async function limited(trusted: boolean, defaults: Record<string, unknown> | null): Promise<(team: string) => Promise<number>> {
    const ws = await createWorkspace(gw, `trust ${Math.random().toString(36).slice(2, 8)}`);
    const groupBy = trusted ? { key: 'metadata.team', trusted: true } : { key: 'metadata.team' };
    await expectJson(
      await gw.call('/policies/rate-limits', { body: { conditions: [{ key: 'workspace_id', value: ws }], group_by: [groupBy], type: 'requests', unit: 'rpm', value: 2, workspace_id: ws } }),
      201,
    );
    const k = keyRecord({ workspaceId: ws, scopes: ['completions.write'], defaults });
    await gw.store.apiKeys.insert(k);
    return async (team) => {
      const res = await gw.call('/chat/completions', {
        headers: { 'x-gateway-api-key': `secret-${k.id}`, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url, authorization: 'Bearer sk', 'x-gateway-metadata': JSON.stringify({ team }) },
        body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      });
      await res.arrayBuffer();
      return res.status;
    };
  }

  it('an untrusted group is dodged by a fresh value per request (documented, not a bug)', async () => {
    const send = await limited(false, null);
    assert.deepEqual([await send('t1'), await send('t2'), await send('t3'), await send('t4')], [200, 200, 200, 200]);
  });

  it('a trusted group ignores the caller’s value: a key without the default shares one group', async () => {
    const send = await limited(true, null);
    assert.deepEqual([await send('t1'), await send('t2'), await send('t3')], [200, 200, 429]);
  });

  it('a trusted group counts by the key’s own defaults.metadata', async () => {
    const send = await limited(true, { metadata: { team: 'red' } });
    assert.deepEqual([await send('t1'), await send('red'), await send('t3')], [200, 200, 429]);
  });

  it('only a metadata entry can be trusted: anything else is a 400 naming it, and nothing is stored', async () => {
    const ws = await createWorkspace(gw, `trust-bad ${Math.random().toString(36).slice(2, 8)}`);
    const res = await gw.call('/policies/rate-limits', {
      body: { conditions: [{ key: 'workspace_id', value: ws }], group_by: [{ key: 'api_key', trusted: true }], type: 'requests', unit: 'rpm', value: 2, workspace_id: ws },
    });
    assert.equal((await assertEnvelope(res, 400)).param, 'group_by[0].trusted');
    const list = await expectJson<{ data: unknown[] }>(await gw.call(`/policies/rate-limits?workspace_id=${ws}`), 200);
    assert.equal(list.data.length, 0);
  });

  it('a trusted entry is shown as stored', async () => {
    const ws = await createWorkspace(gw, `trust-show ${Math.random().toString(36).slice(2, 8)}`);
    const made = await expectJson<{ id: string }>(
      await gw.call('/policies/rate-limits', {
        body: { conditions: [{ key: 'metadata.env', value: 'prod', trusted: true }], group_by: [{ key: 'metadata.team', trusted: true }], type: 'requests', unit: 'rpm', value: 2, workspace_id: ws },
      }),
      201,
    );
    const got = await expectJson<{ conditions: unknown; group_by: unknown }>(await gw.call(`/policies/rate-limits/${made.id}`), 200);
    assert.deepEqual(got.conditions, [{ key: 'metadata.env', value: 'prod', trusted: true }]);
    assert.deepEqual(got.group_by, [{ key: 'metadata.team', trusted: true }]);
  });
});
