/** The gateway process: `npm start`. SIGTERM/SIGINT drain gracefully, then exit. */
import { pino } from 'pino';
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
const gateway = await startGateway(settings, { logger }).catch((err: unknown) => {
  logger.fatal({ err }, `cannot start: ${(err as Error).message}`);
  process.exit(1);
});

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
