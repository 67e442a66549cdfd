/**
 * The gateway process: `npm start`. SIGTERM/SIGINT drain gracefully, then exit.
 * With GATEWAY_WORKERS above 1, this process is the primary of a cluster and
 * each worker runs this file again as a worker (src/cluster, docs/workers.md).
 */
import cluster from 'node:cluster';
import { pino } from 'pino';
import { runPrimary } from './cluster/primary.js';
import { drainOnSignals } from './cluster/signals.js';
import { runWorker } from './cluster/worker.js';
import { startGateway } from './gateway.js';
import { readSettings } from './settings.js';

let settings: ReturnType<typeof readSettings>;
try {
  settings = readSettings();
} catch (err) {
  process.stderr.write(`switchyard: ${(err as Error).message}\n`);
  process.exit(1);
}
const logger = pino({ level: settings.logLevel });
// A start that cannot succeed (bad settings, database unreachable, wrong encryption key) says why in one line and exits 1.
const failed = (err: unknown): never => {
  logger.fatal({ err }, `cannot start: ${(err as Error).message}`);
  process.exit(1);
};
if (cluster.isWorker) await runWorker(settings, logger).catch(failed);
else if (settings.workers > 1) await runPrimary(settings, logger).catch(failed);
else drainOnSignals(startGateway(settings, { logger }).catch(failed), logger);
