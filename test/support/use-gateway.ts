/**
 * A suite's gateway: `useGateway` registers the node:test hooks that start
 * it before the suite's tests (on a fresh database of its engine) and stop
 * it after them, dropping that database and any Redis keys it made. The
 * handle it returns is the running gateway for the tests (and for helpers
 * that take a TestGateway).
 *
 *   for (const engine of engines()) {
 *     describe(`…(${engine.name})`, () => {
 *       const gw = useGateway(engine, { redis: true });
 *       it('…', async () => { await gw.call('/workspaces'); });
 *     });
 *   }
 *
 * Tests whose subject is starting gateways (several at once, a refused
 * start) call startTestGateway themselves.
 */
import type { LookupFunction } from 'node:net';
import { after, before } from 'node:test';
import type { Logger } from 'pino';
import type { Settings } from '../../src/settings.js';
import { scratchEngine, type TestEngine } from './engines.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import { freePort } from './http.js';
import { connect, dropPrefix, REDIS_URL, testPrefix } from './redis.js';

export interface GatewayOptions {
  /**
   * Environment on top of the engine's database (OTEL_EXPORTER_OTLP_ENDPOINT,
   * API_KEY_PREFIX, …); a function when it is known only once earlier hooks
   * ran (a collector's URL), called as the gateway starts.
   */
  env?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  /** Settings the environment does not reach (maxBodyBytes, semanticCacheEntries, …). */
  settings?: Partial<Settings>;
  /** Reads what the gateway logs (default: silent). */
  logger?: Logger;
  /**
   * true: shared state in the test Redis, under a key prefix of this
   * suite's own, dropped after it. 'unreachable': a REDIS_URL nobody
   * answers on. false: none (the default).
   */
  redis?: boolean | 'unreachable';
  /** DNS for its upstream calls (support/dns.ts), instead of the machine's. */
  lookup?: LookupFunction;
}

/** The suite's gateway, while it runs. */
export class SuiteGateway implements TestGateway {
  private running: TestGateway | null = null;
  private startedOn: Record<string, string> | null = null;

  constructor(
    private readonly prefix: string | undefined,
    private readonly settings: Partial<Settings>,
    private readonly logger: Logger | undefined,
    private readonly lookup?: LookupFunction,
  ) {}

  /** The prefix of the keys it keeps in Redis (options.redis true), known while the suite is declared. */
  get redisPrefix(): string {
    if (this.prefix === undefined) throw new Error('the suite gateway keeps nothing in Redis: useGateway(…, { redis: true })');
    return this.prefix;
  }

  /** The environment it was started with: a gateway started with it too shares its database (and Redis). */
  get env(): Record<string, string> {
    if (this.startedOn === null) throw new Error('the suite gateway has not been started yet');
    return this.startedOn;
  }

  /** Starts it on `env` (useGateway's before hook does). */
  async start(env: Record<string, string>): Promise<void> {
    this.startedOn = env;
    this.running = await startTestGateway(env, this.settings, this.logger, this.lookup);
  }

  /** Stops it and starts another on the same data, as a restarted process would. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start(this.env);
  }

  private get gw(): TestGateway {
    if (this.running === null) throw new Error('the suite gateway is not running: use it in tests and hooks, not while the suite is declared, nor after stop()');
    return this.running;
  }

  get url(): string {
    return this.gw.url;
  }
  get v1(): string {
    return this.gw.v1;
  }
  get store(): TestGateway['store'] {
    return this.gw.store;
  }
  get clock(): TestGateway['clock'] {
    return this.gw.clock;
  }
  call(...args: Parameters<TestGateway['call']>): Promise<Response> {
    return this.gw.call(...args);
  }
  rotateDueKeys(): Promise<number> {
    return this.gw.rotateDueKeys();
  }
  close(): Promise<void> {
    return this.stop();
  }

  /** Stops it now (a test of shutdown); the suite's after hook then has nothing to stop. */
  async stop(): Promise<void> {
    const gw = this.running;
    this.running = null;
    await gw?.stop();
  }
}

/**
 * The suite's gateway on a fresh database of `engine` (a scratch SQLite one
 * when none is given), started before the suite's tests and stopped after.
 */
export function useGateway(engine?: TestEngine, options?: GatewayOptions): SuiteGateway;
export function useGateway(options?: GatewayOptions): SuiteGateway;
export function useGateway(a?: TestEngine | GatewayOptions, b?: GatewayOptions): SuiteGateway {
  const [engine, options] = isEngine(a) ? [a, b] : [undefined, a];
  return useGateways(engine, options, 1)[0]!;
}

/**
 * Two gateway processes on one database and one Redis (keys under a prefix
 * of the suite's own), as a deployment of two would run: started one after
 * the other (the second on the migrated database), on one clock (rate
 * windows and cache ages agree).
 */
export function useGatewayPair(engine: TestEngine, options: Omit<GatewayOptions, 'redis'> = {}): readonly [SuiteGateway, SuiteGateway] {
  const [first, second] = useGateways(engine, { ...options, redis: true }, 2);
  return [first!, second!];
}

function useGateways(engine: TestEngine | undefined, options: GatewayOptions = {}, n: number): SuiteGateway[] {
  const db = engine ?? scratchEngine();
  // Made now, so that a suite can name its keys while it is declared.
  const prefix = options.redis === true ? testPrefix() : undefined;
  const settings = prefix === undefined ? { ...options.settings } : { redisKeyPrefix: prefix, ...options.settings };
  const gateways = Array.from({ length: n }, () => new SuiteGateway(prefix, settings, options.logger, options.lookup));
  let data: Record<string, string> | null = null;

  before(async () => {
    data = await db.fresh();
    const env = { ...data, ...(await redisEnv(options.redis)), ...(typeof options.env === 'function' ? await options.env() : options.env) };
    for (const g of gateways) await g.start(env);
    for (const g of gateways.slice(1)) g.clock.now = gateways[0]!.clock.now;
  });

  after(async () => {
    for (const g of gateways) await g.stop();
    if (data !== null) await db.drop(data);
    if (prefix !== undefined) {
      const redis = connect();
      await dropPrefix(redis, prefix);
      redis.disconnect();
    }
  });

  return gateways;
}

async function redisEnv(redis: GatewayOptions['redis']): Promise<Record<string, string>> {
  if (redis === true) return { REDIS_URL };
  if (redis === 'unreachable') return { REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
  return {};
}

function isEngine(x: unknown): x is TestEngine {
  return typeof x === 'object' && x !== null && 'fresh' in x;
}
