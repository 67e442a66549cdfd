/**
 * The gateway variants measured side by side under the same load: the
 * defaults (request logs on: the headline `gateway` row), request logs off,
 * and logs on plus a Redis-backed rate limit that every request is counted
 * against and none reaches. A variant's cost is its throughput next to the
 * defaults'. Each variant is a gateway process of its own (bench/run.ts).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { dropPrefix } from '../test/support/redis.js';
import { admin } from './gateway-process.js';
import type { Target } from './measure.js';
import type { GatewayName } from './report.js';

/** The gateway up and answering /health, before any check or load. */
export interface StartedGateway {
  base: string;
  target: Target;
}

export interface GatewayVariant {
  name: GatewayName;
  /** What differs from the defaults, for the report. */
  about: string;
  /** Settings on top of the common ones (bench/run.ts). */
  env: Record<string, string>;
  /** Another checkout whose build (dist/src/main.js) runs instead of this one's. */
  root?: string;
  /** The cores it may run on (`taskset -c`); the server core when unset. */
  cpus?: string;
  /** Headers that route the bench's requests to `upstream` (a base URL) instead of x-gateway-provider and x-gateway-custom-host. */
  routing?(upstream: string): Record<string, string>;
  /**
   * Once the gateway is up, before the checks and the load. Fails (rejects)
   * when the variant is not what it claims; resolves with the number of
   * model requests it made (they are logged like the load's).
   */
  setUp?(gw: StartedGateway): Promise<number>;
  /** After the gateway has stopped, on every path out (error and Ctrl-C included). */
  tearDown?(): Promise<void>;
}

const REDIS_URL = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
/** Far above anything one core serves in a minute: every request is counted, none refused. */
const RATE_LIMIT_RPM = 1e9;

async function withRedis<T>(use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => {}); // a failed connection rejects the command below, which says enough
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

async function anyKeyUnder(redis: Redis, prefix: string): Promise<boolean> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) return true;
    cursor = next;
  } while (cursor !== '0');
  return false;
}

/**
 * Logs on, counters in Redis under a key prefix of this run's own, and one
 * requests-per-minute policy on the bench key's workspace (the default one,
 * where the bootstrap admin key makes its requests), grouped by key.
 */
function redisRateLimit(): GatewayVariant {
  const prefix = `sy_bench_${randomBytes(6).toString('hex')}:`;
  return {
    name: 'gateway, Redis rate limit',
    about: `REDIS_URL=${REDIS_URL} (key prefix of the run's own, deleted after), one rate-limit policy: workspace default, group by api_key, ${RATE_LIMIT_RPM.toExponential()} requests per minute (every request counted in Redis, none refused: checked against units its process counted there ahead of use, the next lease asked for before the last runs out, src/limits/redis-counter.ts)`,
    env: { REDIS_URL, REDIS_KEY_PREFIX: prefix },
    async setUp({ base, target }) {
      const health = (await admin(base, '/health')) as { status?: string };
      if (health.status !== 'ok') throw new Error(`/health says ${health.status}: Redis at ${REDIS_URL} unreachable?`);
      await admin(base, '/v1/policies/rate-limits', {
        method: 'POST',
        body: {
          name: 'bench',
          conditions: [{ key: 'workspace_id', value: 'default' }],
          group_by: [{ key: 'api_key' }],
          type: 'requests',
          unit: 'rpm',
          value: RATE_LIMIT_RPM,
        },
      });
      // One request must show the policy applied and its counter in Redis, or the figures measure nothing.
      const res = await fetch(target.url('chat'), { method: 'POST', headers: target.headers('chat'), body: target.body('chat'), signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      const limit = res.headers.get('x-gateway-ratelimit-limit-requests');
      if (res.status !== 200 || limit !== String(RATE_LIMIT_RPM)) {
        throw new Error(`rate limit not applied: status ${res.status}, x-gateway-ratelimit-limit-requests ${limit}`);
      }
      if (!(await withRedis((r) => anyKeyUnder(r, prefix)))) throw new Error(`no counter under ${prefix} in Redis after a limited request`);
      return 1;
    },
    async tearDown() {
      await withRedis((r) => dropPrefix(r, prefix)).catch((err: Error) => {
        throw new Error(`keys under ${prefix} in ${REDIS_URL} not deleted: ${err.message}`);
      });
    },
  };
}

/** In report order; the first is the headline gateway. */
export function gatewayVariants(): GatewayVariant[] {
  return [
    { name: 'gateway', about: 'the defaults: every request logged with its bodies, SQLite in a fresh GATEWAY_DATA_DIR', env: {} },
    { name: 'gateway, logs off', about: 'GATEWAY_REQUEST_LOGS=off', env: { GATEWAY_REQUEST_LOGS: 'off' } },
    {
      name: 'gateway, 2 workers',
      about:
        'GATEWAY_WORKERS=2 (src/cluster, docs/workers.md): two worker processes behind one port, the primary holding the log writer, on both cores (`taskset -c 0,1`): wrk, the orchestrator and the log writer share core 1 with the second worker, so its req/s against the headline gateway is the scaling this 2-core machine allows, not what two free cores give; its CPU µs/req counts core 0 only',
      env: { GATEWAY_WORKERS: '2' },
      cpus: '0,1',
    },
    redisRateLimit(),
    inlineConfig(),
    inputChecks(),
    ...baseline(),
  ];
}

/** Three built-in checks every request passes, as an inline config's input guardrails (issue 16: under 10 % of throughput). */
export const INPUT_CHECKS = [
  { 'default.regexMatch': { rule: '[0-9]{13,16}', not: true } },
  { 'default.wordCount': { minWords: 1, maxWords: 10_000 } },
  { 'default.contains': { words: ['password', 'secret'], operator: 'none' } },
];

/** The checks variant's config without its checks: what routing by an inline config costs, apart from what the checks cost. */
function inlineConfig(): GatewayVariant {
  return {
    name: 'gateway, inline config',
    about: 'the defaults, requests routed by an inline x-gateway-config ({provider, custom_host}) instead of the x-gateway-provider and x-gateway-custom-host headers',
    env: {},
    routing: (upstream) => ({ 'x-gateway-config': JSON.stringify({ provider: 'openai', custom_host: upstream }) }),
  };
}

function inputChecks(): GatewayVariant {
  return {
    name: 'gateway, 3 input checks',
    about: `the defaults, requests routed by an inline x-gateway-config whose input_guardrails run ${INPUT_CHECKS.map((c) => Object.keys(c)[0]).join(', ')} (every request passes them)`,
    env: {},
    routing: (upstream) => ({ 'x-gateway-config': JSON.stringify({ provider: 'openai', custom_host: upstream, input_guardrails: INPUT_CHECKS }) }),
  };
}

/**
 * BENCH_BASELINE=<checkout>: another build of the gateway (say a worktree of
 * the last release, built) measured in the same rounds with the defaults, so
 * a change is judged against what it replaces under the same load and noise.
 */
function baseline(): GatewayVariant[] {
  const root = process.env.BENCH_BASELINE;
  if (!root) return [];
  if (!existsSync(join(root, 'dist/src/main.js'))) throw new Error(`BENCH_BASELINE=${root}: no dist/src/main.js there (run npm run build in it)`);
  let commit = 'unknown commit';
  try {
    commit = execFileSync('git', ['-C', root, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim().slice(0, 100);
  } catch {
    // not a git checkout: the directory names it
  }
  return [{ name: 'gateway at baseline', about: `the defaults, built from ${root} (${commit})`, env: {}, root }];
}
