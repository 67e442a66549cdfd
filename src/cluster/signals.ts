/**
 * SIGTERM and SIGINT drain a gateway (in-flight requests finish within the
 * grace period), then the process exits: 0 when it closed cleanly. The one
 * process of GATEWAY_WORKERS=1, every worker of a cluster and its primary
 * stop so. Set while the gateway still starts: a signal then lets the start
 * end (its migrations are not cut halfway), then closes what it opened.
 */
import type { Logger } from 'pino';

/** What a signal stops: a gateway, or a cluster's primary (told why). */
export interface Stoppable {
  close(why: string): Promise<void>;
}

/** Returns the drain, for what else should start it (a worker whose primary is gone). */
export function drainOnSignals(target: Stoppable | Promise<Stoppable>, logger: Logger): (why: string) => void {
  let stopping = false;
  const drain = (why: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal: why }, 'draining');
    Promise.resolve(target)
      .then((t) => t.close(why))
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => drain(signal));
  return drain;
}
