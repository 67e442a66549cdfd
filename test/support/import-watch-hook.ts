// Module resolve hook (module.register, run off the main thread): posts the URL of every
// module resolved from now on to the port import-watch.ts handed over.
import type { MessagePort } from 'node:worker_threads';

let port: MessagePort;

export function initialize(data: { port: MessagePort }): void {
  port = data.port;
}

type Next = (specifier: string, context: unknown) => Promise<{ url: string }>;

export async function resolve(specifier: string, context: unknown, next: Next): Promise<{ url: string }> {
  const resolved = await next(specifier, context);
  port.postMessage(resolved.url);
  return resolved;
}
