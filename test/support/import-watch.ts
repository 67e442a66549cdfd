// Which modules a process loads from now on: the URLs of every import resolved after
// watchImports(), including the static imports of modules imported dynamically later.
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

export interface ImportWatch {
  /** Every URL resolved so far: messages from the hook thread are drained up to now first. */
  seen(): Promise<string[]>;
}

export function watchImports(): ImportWatch {
  const { port1, port2 } = new MessageChannel();
  const urls: string[] = [];
  let waiting: { marker: string; resolve: () => void } | null = null;
  port1.on('message', (url: string) => {
    urls.push(url);
    if (waiting !== null && url === waiting.marker) waiting.resolve();
  });
  port1.unref();
  register('./import-watch-hook.js', import.meta.url, { data: { port: port2 }, transferList: [port2] });
  let n = 0;
  return {
    async seen() {
      // Messages arrive in order: once a marker imported now comes back, all earlier ones have.
      const marker = `data:text/javascript,export default ${n++}`;
      const back = new Promise<void>((resolve) => (waiting = { marker, resolve }));
      await import(marker);
      await back;
      return urls.slice();
    },
  };
}
