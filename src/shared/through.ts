import type { Readable, Transform } from 'node:stream';

/** `source` piped through `t`: an error of either ends both, and a consumer that stops early stops the source. */
export function through(source: Readable, t: Transform): Readable {
  source.once('error', (e) => t.destroy(e));
  t.once('close', () => {
    if (!source.readableEnded) source.destroy();
  });
  return source.pipe(t);
}
