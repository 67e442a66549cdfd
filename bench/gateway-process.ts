/**
 * A gateway process for the bench (bench/run.ts) and the soak (bench/soak.ts):
 * the built dist/src/main.js with the environment and flags of `npm start`, on loopback, with
 * settings from a clean slate, its output in a log file of its own; and the
 * waits and calls both make around it.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnTracked } from './children.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url)); // dist/bench/*.js → repository root
export const GATEWAY_MAIN = join(ROOT, 'dist/src/main.js');
/** The environment and runtime flags `npm start` gives node, so what is measured is the process users run. */
export const { env: START_ENV, flags: START_FLAGS } = startScript();
/** START_ENV as the shell words that set it, for the commands the reports print. */
export const START_ENV_WORDS = Object.entries(START_ENV).map(([k, v]) => `${k}=${v}`);

/** The admin key every gateway started here has (GATEWAY_ADMIN_API_KEY); the load uses it too. */
export const BENCH_KEY = 'bench-key-0123456789abcdefghijklmn';

/** Settings a run sets or leaves at their defaults, never inherited from the caller's shell. */
const OWN_SETTINGS = ['DATABASE_URL', 'REDIS_URL', 'REDIS_KEY_PREFIX', 'GATEWAY_REQUEST_LOGS'];

/** `NAME=value … node <flags> dist/src/main.js`, the shape of the start script. */
function startScript(): { env: Record<string, string>; flags: string[] } {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const words = start.split(/\s+/);
  const node = words.indexOf('node');
  const assignments = words.slice(0, Math.max(node, 0)).map((w) => /^([A-Z_][A-Z0-9_]*)=(\S*)$/.exec(w));
  if (node === -1 || words.at(-1) !== 'dist/src/main.js' || assignments.some((a) => a === null)) throw new Error(`unexpected start script: ${start}`);
  return { env: Object.fromEntries(assignments.map((a) => [a![1]!, a![2]!])), flags: words.slice(node + 1, -1) };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

/** Polls `ready` until true; fails fast if `child` exits first. */
export async function waitReady(what: string, child: ChildProcess, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what}: process exited (${child.exitCode ?? child.signalCode})`);
    if (await ready().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not ready after ${timeoutMs} ms`);
}

export interface GatewaySpawn {
  port: number;
  /** Gets gateway.log (stdout and stderr) and data/ (GATEWAY_DATA_DIR); made if missing. */
  dir: string;
  /** Settings on top of the common ones. */
  env?: Record<string, string>;
  /** A command the node process runs under, e.g. `taskset -c 0`. */
  wrap?: string[];
  /** Node flags after those of `npm start`. */
  nodeArgs?: string[];
  /** Another checkout whose build (dist/src/main.js) runs instead of this one's (the bench's BENCH_BASELINE). */
  root?: string;
}

/** Starts the gateway; it is up once waitHealthy says so. */
export function spawnGateway(g: GatewaySpawn): ChildProcess {
  mkdirSync(g.dir, { recursive: true });
  const env = { ...process.env };
  for (const name of OWN_SETTINGS) delete env[name];
  const out = openSync(join(g.dir, 'gateway.log'), 'a');
  const root = g.root ?? ROOT;
  const argv = [...(g.wrap ?? []), process.execPath, ...START_FLAGS, ...(g.nodeArgs ?? []), join(root, 'dist/src/main.js')];
  return spawnTracked(argv[0]!, argv.slice(1), {
    cwd: root,
    stdio: ['ignore', out, out],
    env: {
      ...env,
      ...START_ENV,
      PORT: String(g.port),
      HOST: '127.0.0.1',
      GATEWAY_DATA_DIR: join(g.dir, 'data'),
      GATEWAY_ADMIN_API_KEY: BENCH_KEY,
      LOG_LEVEL: 'warn',
      // One process unless a variant asks for workers (auto would fork one per core).
      GATEWAY_WORKERS: '1',
      ...g.env,
    },
  });
}

export async function waitHealthy(base: string, proc: ChildProcess, timeoutMs = 30_000): Promise<void> {
  const health = async (): Promise<boolean> => (await fetch(`${base}/health`, { signal: AbortSignal.timeout(1000) })).ok;
  await waitReady('/health', proc, health, timeoutMs);
}

/**
 * The gateway's log writer thread (named sy-log-writer, src/logs/writer-thread.ts)
 * kept on `core`, the load core: the request thread keeps the server core, as a
 * deployment with a second core would have it. Everything else of the process stays there.
 * A writer thread starts with the first log entry and is replaced by a new one after a
 * minute without any (src/logs/writer.ts), so the process's threads are looked at every
 * 100 ms until it exits, and each new writer thread is moved as it appears.
 */
export function pinLogWriter(pid: number, core: number): void {
  const moved = new Set<string>();
  const look = (): void => {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return clearInterval(timer); // the process is gone
    }
    for (const tid of tids) {
      if (moved.has(tid)) continue;
      let comm = '';
      try {
        comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      } catch {
        continue;
      }
      if (comm !== 'sy-log-writer') continue;
      moved.add(tid);
      try {
        execFileSync('taskset', ['-pc', String(core), tid], { stdio: 'ignore' });
      } catch {
        // the thread ended meanwhile
      }
    }
  };
  const timer = setInterval(look, 100).unref();
  look();
}

/** The last lines of a gateway's log, for a failure's report. */
export function gatewayLogTail(dir: string): string {
  try {
    return readFileSync(join(dir, 'gateway.log'), 'utf8').trim().split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}

/** A management call with the bench key; rejects unless 2xx. */
export async function admin(base: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<unknown> {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': BENCH_KEY },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: status ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as unknown;
}
