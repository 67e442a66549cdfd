/**
 * Debian's headless Chromium for the console's end-to-end tests: installed
 * with apt-get when missing (CI runs as root on a Debian machine); null, with
 * the reason, only when that install is impossible.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

export function ensureChromium(): { path: string } | { path: null; why: string } {
  if (existsSync(CHROMIUM)) return { path: CHROMIUM };
  const apt = (args: string[]) => spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 900_000, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  let run = apt(['install', '-y', 'chromium']);
  // A fresh machine has no package lists yet.
  if (!existsSync(CHROMIUM)) {
    apt(['update']);
    run = apt(['install', '-y', 'chromium']);
  }
  if (existsSync(CHROMIUM)) return { path: CHROMIUM };
  const why = run.error?.message ?? run.stderr?.toString().trim().split('\n').at(-1) ?? `exit ${run.status}`;
  return { path: null, why: `headless Chromium is not installed and \`apt-get install -y chromium\` failed (${why})` };
}
