/**
 * Every process the bench starts goes through here, so that one call (or the
 * process 'exit' hook, on any path out) ends them all.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';

const live = new Set<ChildProcess>();

export function spawnTracked(cmd: string, args: string[], opts: SpawnOptions = {}): ChildProcess {
  const child = spawn(cmd, args, opts);
  live.add(child);
  const forget = (): void => {
    live.delete(child);
  };
  child.once('exit', forget);
  child.once('error', forget);
  return child;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves when the child has exited, or with false after `ms`. */
export async function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return true;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const result = await Promise.race([once(child, 'exit').then(() => true), timeout]);
  clearTimeout(timer);
  return result;
}

/** SIGTERM, then SIGKILL if the child is still there after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (exited(child) || child.pid === undefined) return;
  child.kill('SIGTERM');
  if (await waitExit(child, graceMs)) return;
  child.kill('SIGKILL');
  await waitExit(child, 2000);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((child) => stopChild(child)));
}

// Last resort when the bench dies without reaching stopAll: nothing async runs here, so kill outright.
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion, killing it if it outlives `timeoutMs`. */
export async function runToEnd(cmd: string, args: string[], timeoutMs: number): Promise<Finished> {
  const child = spawnTracked(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const outcome = await Promise.race([waitExit(child, timeoutMs), spawnError]);
  if (outcome instanceof Error) throw outcome;
  if (!outcome) {
    child.kill('SIGKILL');
    await waitExit(child, 2000);
    throw new Error(`${cmd} ${args.join(' ')}: still running after ${timeoutMs} ms, killed`);
  }
  // 'exit' can precede the last reads from the pipes; 'close' comes after them.
  if (child.stdout && !child.stdout.closed) await once(child.stdout, 'close');
  if (child.stderr && !child.stderr.closed) await once(child.stderr, 'close');
  return { code: child.exitCode, stdout, stderr };
}

/**
 * A bench script run alone: `main` gets a temp dir of its own; on its end,
 * failure or Ctrl-C every process started here is stopped, the dir removed,
 * and the process exits (1 on failure, said under `[bench <name>]`).
 */
export function runAlone(name: string, main: (tmp: string) => Promise<void>): void {
  const tmp = mkdtempSync(join(os.tmpdir(), `switchyard-bench-${name}-`));
  const end = async (code: number): Promise<never> => {
    await stopAll();
    rmSync(tmp, { recursive: true, force: true });
    process.exit(code);
  };
  process.once('SIGINT', () => void end(130));
  main(tmp).then(
    () => end(0),
    (err: unknown) => {
      process.stderr.write(`[bench ${name}] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      return end(1);
    },
  );
}
