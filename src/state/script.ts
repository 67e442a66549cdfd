/**
 * The atomic operations that shared counters and circuits are made of, each
 * a Lua script Redis runs atomically, and its twin in JavaScript over
 * MemoryKeys (memory-keys.ts): without Redis, the primary of a gateway with
 * several worker processes (src/cluster) runs the twins for its workers, so
 * the same counter and circuit classes, leases and all, are exact across
 * them as they are across processes sharing Redis. A twin does what its
 * script does, command for command; the conformance suites run each class
 * over Redis and over the twins (test/limits-counter.test.ts,
 * test/circuit-store.test.ts).
 */
import type { Redis } from 'ioredis';
import type { MemoryKeys } from './memory-keys.js';

/** A script defined on a connection (LuaScript.on): runs it with these keys and args; rejects when Redis cannot be reached. */
export type RunScript<R> = (keys: readonly string[], args: readonly (string | number)[]) => Promise<R>;

/** Where scripts run: Redis (`redisScripts`), this process's memory (`memoryScripts`), or a cluster's primary (cluster/worker-state.ts). */
export type Scripts = <R>(script: LuaScript<R>) => RunScript<R>;

/** A script's twin: the same effect on MemoryKeys, synchronously (one process, so atomic). Args arrive as sent (numbers). */
export type ScriptTwin<R> = (kv: MemoryKeys, keys: readonly string[], args: readonly number[]) => R;

/** A script's command as defineCommand puts it on the connection: numkeys, then keys and args (arrays are flattened). */
type ScriptCommand = (this: Redis, numkeys: number, keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;

/**
 * A Lua script run as a command of the connection (ioredis defineCommand):
 * ioredis sends its source (EVAL) the first time on each connection and
 * again after NOSCRIPT (a restarted server, SCRIPT FLUSH), else its SHA-1
 * (EVALSHA), and pipelines it with the other commands of the turn. Redis
 * runs a script atomically, which is what makes a check-and-count exact
 * across processes.
 */
export class LuaScript<R> {
  /** `name`: the command's name on the connection, unique among the gateway's scripts. */
  constructor(
    readonly name: string,
    private readonly lua: string,
    readonly twin: ScriptTwin<R>,
  ) {}

  /** The script on `redis`, defined there on first use: runs it with `keys` and `args`. */
  on(redis: Redis): RunScript<R> {
    const defined = (redis.scriptsSet as Record<string, { lua: string } | undefined>)[this.name];
    if (defined === undefined) redis.defineCommand(this.name, { lua: this.lua });
    else if (defined.lua !== this.lua) throw new Error(`two Lua scripts are named ${this.name}`);
    const run = (redis as unknown as Record<string, ScriptCommand>)[this.name]!;
    return (keys, args) => run.call(redis, keys.length, keys, args) as Promise<R>;
  }
}

/** Scripts on a Redis connection. */
export function redisScripts(redis: Redis): Scripts {
  return (script) => script.on(redis);
}

/** Scripts run by their twins on `kv`, in this process. */
export function memoryScripts(kv: MemoryKeys): Scripts {
  return (script) => async (keys, args) => script.twin(kv, keys, args.map(Number));
}

/** What the counter and circuit classes take: a Redis connection (as before), or scripts run elsewhere. */
export function scriptsOf(where: Redis | Scripts): Scripts {
  return typeof where === 'function' ? where : redisScripts(where);
}
