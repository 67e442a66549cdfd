// A gateway process killed with SIGTERM under load: every request whose
// client got a whole answer is in the logs after a restart, on both engines.
// The load runs from several concurrent clients, so requests are in flight
// when the signal lands.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { engines } from './support/engines.js';
import { startTestGateway } from './support/gateway.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { spawnGateway } from './support/process.js';

const KEY = 'logs-shutdown-admin-key-0123456789';
const CLIENTS = 16;

for (const engine of engines()) {
  describe(`SIGTERM under load keeps every answered request's log (${engine.name})`, { timeout: 90_000 }, () => {
    let mock: MockOpenAI;
    const dirs: string[] = [];

    before(async () => {
      mock = await startMockOpenAI();
    });
    after(async () => {
      await mock.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
      await engine.cleanup();
    });

    it('answered requests before and during the drain are all logged once', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-logs-shutdown-'));
      dirs.push(dataDir);
      const env = { ...(await engine.fresh()), GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_API_KEY: KEY };
      const gw = await spawnGateway(env);
      const answered: string[] = [];
      let stopping = false;
      let streams = 0;

      const client = async (): Promise<void> => {
        while (!stopping || answered.length === 0) {
          const traceId = randomUUID();
          const stream = streams++ % 4 === 0;
          try {
            const res = await fetch(`${gw.url}/v1/chat/completions`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-gateway-api-key': KEY, 'x-gateway-provider': 'openai', 'x-gateway-custom-host': mock.url, 'x-gateway-trace-id': traceId },
              body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `load ${traceId}` }], stream }),
            });
            await res.text();
            if (res.status === 200) answered.push(traceId);
          } catch {
            // Refused or cut by the shutdown: not an answer, not required in the logs.
            if (stopping) return;
          }
        }
      };
      // Sixteen clients back to back: requests are in flight whenever the signal lands.
      const load = Promise.all(Array.from({ length: CLIENTS }, client));
      // Until the load is under way, however slow the machine: at least 1.5 s and 50 answers (at most 20 s).
      const began = Date.now();
      await sleep(1_500);
      while (answered.length <= 50 && Date.now() - began < 20_000) await sleep(100);
      const before = answered.length;
      gw.child.kill('SIGTERM');
      stopping = true;
      const exit = await gw.exited;
      await load;
      assert.equal(exit.code, 0, gw.stderr());
      assert.ok(before > 50, `load ran (${before} answers before the signal)`);

      const again = await startTestGateway({ ...env, GATEWAY_ADMIN_API_KEY: KEY });
      try {
        const logged = new Map<string, number>();
        let after: string | undefined;
        for (;;) {
          const page = (await (await again.call(`/logs?limit=100${after === undefined ? '' : `&after=${after}`}`, { headers: { 'x-gateway-api-key': KEY } })).json()) as { data: { id: string; trace_id: string; status: number }[] };
          for (const l of page.data) logged.set(l.trace_id, (logged.get(l.trace_id) ?? 0) + 1);
          if (page.data.length < 100) break;
          after = page.data.at(-1)!.id;
        }
        const missing = answered.filter((t) => !logged.has(t));
        assert.deepEqual(missing, [], `${missing.length} of ${answered.length} answered requests not logged`);
        assert.ok([...logged.values()].every((n) => n === 1), 'each logged once');
      } finally {
        await again.stop();
        mock.reset();
      }
    });
  });
}
