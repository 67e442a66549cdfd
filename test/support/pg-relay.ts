/** A TCP relay to the test Postgres that a test can cut and restore: the database "goes away" as a network failure would make it. */
import net, { type AddressInfo } from 'node:net';
import { PG_URL } from './engines.js';

export interface PgRelay {
  /** `url` with its host and port replaced by the relay's. */
  through(url: string): string;
  /** Closes the listener and every relayed connection: new connections are refused. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
}

export async function startPgRelay(): Promise<PgRelay> {
  const target = new URL(PG_URL);
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  const listen = (port: number): Promise<net.Server> =>
    new Promise((resolve) => {
      const s = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname);
        for (const sock of [client, upstream]) {
          sockets.add(sock);
          sock.on('error', () => {});
          sock.on('close', () => {
            sockets.delete(sock);
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      s.listen(port, '127.0.0.1', () => resolve(s));
    });
  server = await listen(0);
  const port = (server.address() as AddressInfo).port;
  return {
    through(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    async cut() {
      const s = server;
      server = null;
      for (const sock of sockets) sock.destroy();
      if (s !== null) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    async restore() {
      server ??= await listen(port);
    },
  };
}
