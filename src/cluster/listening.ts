import type { EventEmitter } from 'node:events';

/**
 * Resolves once every worker listens. Rejects when one exits first, or when
 * `limitMs` passes with one still starting (its store or Redis hung after the
 * primary's migrations): the cluster's start then fails as a single
 * process's does, said and exit 1, rather than waiting with no port open.
 */
export function everyListening(workers: readonly EventEmitter[], limitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const started = Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve, reject) => {
          w.once('listening', () => resolve());
          w.once('exit', (code: number | null) => reject(new Error(`a worker exited (code ${code}) before it listened`)));
        }),
    ),
  );
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`a worker did not listen within ${limitMs} ms`)), limitMs);
  });
  return Promise.race([started, late])
    .then(() => undefined)
    .finally(() => clearTimeout(timer));
}
