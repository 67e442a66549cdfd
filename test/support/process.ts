/**
 * Runs the built gateway (`node dist/src/main.js`) as a child process, for
 * what only a real process shows: the bootstrap key on stdout, SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'node:test';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './http.js';

/** dist/src/main.js, found from this file's place in dist/test/support. */
export const MAIN_JS = fileURLToPath(new URL('../../src/main.js', import.meta.url));

export interface GatewayProcess {
  child: ChildProcess;
  port: number;
  /** http://127.0.0.1:PORT */
  url: string;
  /** Everything written to stdout / stderr so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still running (test clean-up). */
  kill(): void;
}

/**
 * Starts the gateway on a free port with `env` on top of a clean environment
 * (no inherited GATEWAY_*, PORT, HOST, DATABASE_URL or REDIS_URL), without
 * waiting for it to be ready.
 */
export async function spawnMain(env: Record<string, string>): Promise<GatewayProcess> {
  const port = await freePort();
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('GATEWAY_') && k !== 'PORT' && k !== 'HOST' && k !== 'DATABASE_URL' && k !== 'REDIS_URL') base[k] = v;
  }
  const child = spawn(process.execPath, [MAIN_JS], {
    env: { ...base, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  return {
    child,
    port,
    url: `http://127.0.0.1:${port}`,
    stdout: () => out,
    stderr: () => err,
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** spawnMain, then waits until /health answers (15 s at most). */
export async function spawnGateway(env: Record<string, string>): Promise<GatewayProcess> {
  const gw = await spawnMain(env);
  const gone = (): boolean => gw.child.exitCode !== null || gw.child.signalCode !== null;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (gone()) throw new Error(`gateway exited before it was ready\nstdout: ${gw.stdout()}\nstderr: ${gw.stderr()}`);
    try {
      const res = await fetch(`${gw.url}/health`);
      if (res.status === 200) {
        await res.arrayBuffer();
        return gw;
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      gw.kill();
      throw new Error(`gateway not ready within 15 s\nstdout: ${gw.stdout()}\nstderr: ${gw.stderr()}`);
    }
    await sleep(50);
  }
}

/**
 * For a describe block: `start(env)` spawns a gateway on a data directory of
 * its own with `base` under `env`; after each test it is SIGKILLed (with the
 * processes `alsoKill` names, asked before: a cluster's workers) and its
 * directory removed.
 */
export function useSpawnedGateway(
  prefix: string,
  base: Record<string, string>,
  alsoKill: (gw: GatewayProcess) => number[] = () => [],
): (env?: Record<string, string>) => Promise<GatewayProcess> {
  let running: { gw?: GatewayProcess; dataDir: string } | undefined;
  afterEach(() => {
    if (running === undefined) return;
    const { gw, dataDir } = running;
    running = undefined;
    const others = gw === undefined ? [] : alsoKill(gw);
    gw?.kill();
    for (const pid of others) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });
  return async (env = {}) => {
    running = { dataDir: mkdtempSync(join(tmpdir(), prefix)) };
    running.gw = await spawnGateway({ GATEWAY_DATA_DIR: running.dataDir, ...base, ...env });
    return running.gw;
  };
}
