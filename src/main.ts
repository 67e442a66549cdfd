/** The gateway process: `npm start`. SIGTERM/SIGINT drain gracefully, then exit. */
import { pino } from 'pino';
import { startGateway } from './gateway.js';
import { readSettings } from './settings.js';

const settings = readSettings();
const logger = pino({ level: settings.logLevel });
const gateway = await startGateway(settings, { logger });

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    gateway.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
