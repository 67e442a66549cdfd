/**
 * A worker process of a cluster (GATEWAY_WORKERS > 1): a whole gateway on
 * the shared port (node:cluster), whose primary has prepared the store and
 * holds the log writer and, without Redis, the shared state (primary.ts).
 */
import type { Logger } from 'pino';
import { startGateway } from '../gateway.js';
import type { Settings } from '../settings.js';
import { PrimaryLink } from './link.js';
import { relayChanges } from './change-relay.js';
import { scrapeCluster } from './worker-metrics.js';
import { LogForwarder } from './log-forwarder.js';
import { drainOnSignals } from './signals.js';
import { workerShared } from './worker-state.js';

export async function runWorker(settings: Settings, logger: Logger): Promise<void> {
  const link = new PrimaryLink();
  const starting = startGateway(settings, {
    logger,
    worker: {
      logs: settings.requestLogs ? new LogForwarder(link, (message) => logger.error(message), settings.logQueueBytes) : null,
      changes: (changes) => relayChanges(link, changes),
      scrape: (metrics) => scrapeCluster(link, metrics),
      shared: (metrics) => workerShared(link, settings, metrics),
    },
  });
  const drain = drainOnSignals(starting, logger);
  // The primary died (it was SIGKILLed): no port, logs or state are left to serve with.
  process.on('disconnect', () => drain('primary gone'));
  await starting;
}
