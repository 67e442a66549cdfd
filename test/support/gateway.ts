/**
 * Starts a real gateway in-process on an ephemeral port with a fresh data dir,
 * and gives tests a fetch that carries the admin key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { LookupFunction } from 'node:net';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { startGateway, type Gateway } from '../../src/gateway.js';
import { readSettings, type Settings } from '../../src/settings.js';

export const ADMIN_KEY = 'test-admin-key-0123456789abcdefghij';

export interface TestGateway extends Gateway {
  /** base URL including /v1 */
  v1: string;
  /** A manual clock for circuit cooldowns: advance(ms) moves it forward. */
  clock: { now: number; advance(ms: number): void };
  /** fetch a /v1 path with the admin key (unless headers override it). */
  call(path: string, init?: { method?: string; headers?: Record<string, string>; body?: unknown }): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * A gateway on a fresh data dir, or on the one env's GATEWAY_DATA_DIR names
 * (then the caller owns it and stop() leaves it: a restart test starts a
 * second gateway on the same dir).
 */
export async function startTestGateway(
  env: Record<string, string> = {},
  overrides: Partial<Settings> = {},
  /** A logger to read what the gateway logs (default: silent). */
  logger: Logger = pino({ level: 'silent' }),
  /** DNS for its upstream calls (support/dns.ts), instead of the machine's. */
  lookup?: LookupFunction,
): Promise<TestGateway> {
  const owned = env.GATEWAY_DATA_DIR === undefined;
  const dir = env.GATEWAY_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'switchyard-test-'));
  const settings: Settings = {
    ...readSettings({ GATEWAY_DATA_DIR: dir, GATEWAY_ADMIN_API_KEY: ADMIN_KEY, PORT: '0', ...env }),
    shutdownGraceMs: 5_000,
    ...overrides,
  };
  const clock = {
    now: Date.now(),
    advance(ms: number) {
      clock.now += ms;
    },
  };
  const gw = await startGateway(settings, { logger, now: () => clock.now, lookup });
  const v1 = `${gw.url}/v1`;
  return Object.assign(gw, {
    v1,
    clock,
    call(path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
      const body = init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
      return fetch(v1 + path, {
        method: init.method ?? (body === undefined ? 'GET' : 'POST'),
        headers: { 'x-gateway-api-key': ADMIN_KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
        body,
      });
    },
    async stop() {
      await gw.close();
      if (owned) rmSync(dir, { recursive: true, force: true });
    },
  });
}
