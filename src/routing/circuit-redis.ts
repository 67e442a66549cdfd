/**
 * Circuit state in Redis, so every gateway process on the same REDIS_URL sees
 * one circuit per target: failures seen by any process count together, and
 * after the cooldown exactly one process gets the probe. Same semantics as
 * MemoryCircuitStore (circuit.ts), each operation one atomic Lua script.
 *
 * One difference is forced by sharing: the process holding the probe may die
 * before reporting it. The probe is therefore a lease of one cooldown; if no
 * outcome arrives by then, the next caller probes instead of the circuit
 * staying open for ever.
 *
 * A circuit is a hash `<prefix><key>` {failures, open_until, probe_until,
 * cooldown}; times are the callers' clock in ms. It expires a day after its
 * last recorded outcome, so targets no longer used leave nothing behind.
 *
 * While Redis cannot be reached, each process keeps circuits of its own in
 * memory (the fallback): routing goes on, breakers still trip, only no
 * longer together.
 */
import type { Redis } from 'ioredis';
import type { CircuitBreakerConfig } from '../config/types.js';
import type { MemoryKeys } from '../state/memory-keys.js';
import { LuaScript, scriptsOf, type RunScript, type Scripts } from '../state/script.js';
import { MemoryCircuitStore, type Admission, type CircuitStore } from './circuit.js';

const IDLE_TTL_MS = 24 * 60 * 60 * 1000;

/** ARGV: now. Closed while never opened; open during the cooldown and while a probe's lease runs; else this caller probes. */
const ADMIT = new LuaScript<Admission>('switchyardCircuitAdmit', `
local s = redis.call('HMGET', KEYS[1], 'open_until', 'probe_until', 'cooldown')
local open_until = tonumber(s[1] or '0')
if open_until == 0 then return 'closed' end
local now = tonumber(ARGV[1])
if now < open_until or now < tonumber(s[2] or '0') then return 'open' end
redis.call('HSET', KEYS[1], 'probe_until', now + tonumber(s[3]))
return 'probe'
`, (kv, [key], [now]) => {
  const h = kv.hash(key!);
  const openUntil = h?.get('open_until') ?? 0;
  if (h === undefined || openUntil === 0) return 'closed';
  if (now! < openUntil || now! < (h.get('probe_until') ?? 0)) return 'open';
  h.set('probe_until', now! + (h.get('cooldown') ?? 0));
  return 'probe';
});

/**
 * ARGV: failed (1|0), now, failure_threshold, cooldown_interval, ttl.
 * A success closes the circuit. A failure counts; a failed probe, or reaching
 * the threshold, opens it for a full cooldown.
 */
const RECORD = new LuaScript<number>('switchyardCircuitRecord', `
if ARGV[1] == '0' then
  redis.call('DEL', KEYS[1])
  return 0
end
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
local probing = tonumber(redis.call('HGET', KEYS[1], 'probe_until') or '0') > 0
if probing or failures >= tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'open_until', tonumber(ARGV[2]) + tonumber(ARGV[4]), 'probe_until', 0, 'cooldown', ARGV[4])
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return failures
`, recordTwin);

function recordTwin(kv: MemoryKeys, [key]: readonly string[], [failed, now, threshold, cooldown, ttl]: readonly number[]): number {
  if (failed === 0) {
    kv.del(key!);
    return 0;
  }
  const h = kv.ensureHash(key!);
  const failures = (h.get('failures') ?? 0) + 1;
  h.set('failures', failures);
  if ((h.get('probe_until') ?? 0) > 0 || failures >= threshold!) {
    h.set('open_until', now! + cooldown!);
    h.set('probe_until', 0);
    h.set('cooldown', cooldown!);
  }
  kv.expireAt(key!, kv.now() + ttl!);
  return failures;
}

/** ARGV: now. Read-only. */
const STATE = new LuaScript<'closed' | 'open' | 'half-open'>('switchyardCircuitState', `
local s = redis.call('HMGET', KEYS[1], 'open_until', 'probe_until')
local open_until = tonumber(s[1] or '0')
if open_until == 0 then return 'closed' end
local now = tonumber(ARGV[1])
if now < open_until or now < tonumber(s[2] or '0') then return 'open' end
return 'half-open'
`, (kv, [key], [now]) => {
  const h = kv.hash(key!);
  const openUntil = h?.get('open_until') ?? 0;
  if (h === undefined || openUntil === 0) return 'closed';
  return now! < openUntil || now! < (h.get('probe_until') ?? 0) ? 'open' : 'half-open';
});

export interface RedisCircuitOptions {
  prefix?: string;
  /** Answers while Redis is unreachable; default: a memory store of this process. */
  fallback?: CircuitStore;
  /** Told of every Redis failure (logs, metrics). */
  onUnavailable?: (err: unknown) => void;
}

export class RedisCircuitStore implements CircuitStore {
  private readonly prefix: string;
  private readonly fallback: CircuitStore;
  private readonly scripts: { admit: RunScript<Admission>; record: RunScript<number>; state: RunScript<'closed' | 'open' | 'half-open'> };

  constructor(
    /** Redis, or where its scripts' twins run (a cluster's primary: src/cluster). */
    redis: Redis | Scripts,
    private readonly opts: RedisCircuitOptions = {},
  ) {
    this.prefix = opts.prefix ?? 'switchyard:circuit:';
    this.fallback = opts.fallback ?? new MemoryCircuitStore();
    const on = scriptsOf(redis);
    this.scripts = { admit: on(ADMIT), record: on(RECORD), state: on(STATE) };
  }

  admit(key: string, now: number): Promise<Admission> {
    return this.run(this.scripts.admit, key, [now], () => this.fallback.admit(key, now));
  }

  async record(key: string, cfg: CircuitBreakerConfig, failed: boolean, now: number): Promise<void> {
    const ttl = cfg.cooldown_interval + IDLE_TTL_MS;
    await this.run(this.scripts.record, key, [failed ? 1 : 0, now, cfg.failure_threshold, cfg.cooldown_interval, ttl], () => this.fallback.record(key, cfg, failed, now));
  }

  state(key: string, now: number): Promise<'closed' | 'open' | 'half-open'> {
    return this.run(this.scripts.state, key, [now], () => this.fallback.state(key, now));
  }

  private async run<R, F>(script: RunScript<R>, key: string, args: number[], fallback: () => Promise<F>): Promise<R | F> {
    try {
      return await script([this.prefix + key], args);
    } catch (err) {
      this.opts.onUnavailable?.(err);
      return fallback();
    }
  }
}

/** For a cluster's primary, which runs their twins for its workers. */
export const CIRCUIT_SCRIPTS: readonly LuaScript<unknown>[] = [ADMIT, RECORD, STATE];
