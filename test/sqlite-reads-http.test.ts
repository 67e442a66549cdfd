// On SQLite (the single-machine default) a log or analytics read over many
// logs runs in a read process (store/sqlite-reads.ts): the gateway goes on
// answering other callers while it scans, where a read on the request
// thread would hold every one of them until it finished.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from './support/identity.js';
import { useGateway } from './support/use-gateway.js';

const LOGS = 400_000;

describe('SQLite log reads off the request thread (HTTP)', { timeout: 120_000 }, () => {
  const gw = useGateway();
  const to = Date.now();

  before(async () => {
    // Inserted in one statement on the store's own connection: the request path would take minutes for as many.
    await gw.store.db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${LOGS})
      INSERT INTO request_logs (id, created_at_ms, trace_id, workspace_id, api_key_id, provider, model, endpoint, method, path, status, latency_ms, log_format)
      SELECT printf('log-%08d', i), ${to} - i * 10, 't', 'ws', 'k', 'openai', 'model-' || (i % 50), 'chat', 'POST', '/v1/chat/completions', 200, i % 1000, 'openai' FROM n`);
  });

  it('answers /health while a group over every log is read, and the group after', async () => {
    const done: string[] = [];
    const window = `start_time=${Math.floor((to - LOGS * 10 - 1000) / 1000)}&end_time=${Math.ceil(to / 1000) + 1}`;
    const group = expect(gw.call(`/analytics/groups/model?columns=cost,p99_latency&${window}`), 200).then((body) => {
      done.push('group');
      return body;
    });
    await sleep(50);
    const health = await fetch(`${gw.url}/health`);
    assert.equal(health.status, 200);
    await health.arrayBuffer();
    done.push('health');
    const body = await group;
    assert.deepEqual(done, ['health', 'group']);
    assert.equal(body.total, 50);
  });
});
