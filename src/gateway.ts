/**
 * Composition root: builds the store, auth, router and server from settings.
 * main.ts runs it as a process; tests start it in-process on port 0.
 */
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { MemoryCircuitStore } from './routing/circuit.js';
import { Router } from './routing/router.js';
import { ensureBootstrapKey, KeyAuthenticator } from './server/auth.js';
import { createGatewayServer } from './server/http.js';
import { Metrics } from './server/metrics.js';
import type { Settings } from './settings.js';
import { openStore } from './store/open.js';
import type { Store } from './store/types.js';
import { closeUpstreams } from './upstream/client.js';

export interface Gateway {
  url: string;
  store: Store;
  /** Graceful: stop accepting, finish in-flight work within the grace period, release everything. */
  close(): Promise<void>;
}

export interface GatewayOptions {
  logger?: Logger;
  /** Wall clock for circuit cooldowns (tests). */
  now?: () => number;
}

export async function startGateway(settings: Settings, opts: GatewayOptions = {}): Promise<Gateway> {
  const logger = opts.logger ?? pino({ level: settings.logLevel });
  mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
  const store = await openStore(settings);
  await store.migrate();
  await store.defaultWorkspace();
  const generated = await ensureBootstrapKey(store, settings.adminApiKey, settings.apiKeyPrefix);
  if (generated !== null) {
    // Printed once, never logged: the store keeps only its hash.
    process.stdout.write(`Generated organisation admin key (shown once, store it now): ${generated}\n`);
  }

  const circuits = new MemoryCircuitStore();
  const metrics = new Metrics();
  const { server, drain } = createGatewayServer({
    auth: new KeyAuthenticator(store),
    databaseUp: () => store.ping(),
    router: new Router({ circuits, now: opts.now ?? Date.now }),
    metrics,
    maxBodyBytes: settings.maxBodyBytes,
    onError: (err) => logger.error({ err }, 'unhandled error in request'),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}`;
  logger.info({ url }, 'switchyard listening');

  return {
    url,
    store,
    async close() {
      await drain(settings.shutdownGraceMs);
      await closeUpstreams().catch(() => {});
      await store.close();
    },
  };
}
