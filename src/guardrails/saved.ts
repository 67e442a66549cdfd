/**
 * Saved guardrails (/v1/guardrails) on the request path: those a config
 * names by id or slug (`input_guardrails: ["pii-guard"]`), and the default
 * guardrails of the organisation and workspace settings, which run on every
 * request of the workspace — defaults first (the organisation's, then the
 * workspace's), before the config's own, input defaults as input
 * guardrails and output defaults as output guardrails.
 *
 * A name is looked for among the request's workspace's guardrails, then the
 * organisation's. Each guardrail is compiled once (its checks validated and
 * prepared, as when it was saved: the rules may have grown stricter since)
 * and cached per workspace with the verdict of the lookup, "not found"
 * included; everything drops on a `guardrail`, `settings` or `workspace`
 * change notice, and entries live at most 30 s besides (notices lost, SQLite
 * files shared between processes). A hit is synchronous.
 *
 * A config naming a guardrail that does not exist, is archived, no longer
 * validates, or has a check that cannot run on that side is refused with a
 * 400 naming the config path (`input_guardrails[0]`): a guardrail is never
 * skipped. A default guardrail that cannot run (its settings were changed
 * around the checks of the settings routes) is the gateway's fault: a 500.
 */
import type { LRUCache } from 'lru-cache';
import { boundedMap, type OnEvict } from '../shared/bounded.js';
import { err, GatewayError, invalid, ok, type Result } from '../shared/errors.js';
import { MAX_PATTERN_WEIGHT } from '../shared/linear-regex.js';
import type { Guardrail } from '../store/guardrails.js';
import type { DefaultGuardrailKey } from '../store/settings.js';
import type { Store } from '../store/store.js';
import type { HookKind } from './check.js';
import { compileGuardrail, MAX_REQUEST_CHECKS, sidesOf, tooManyChecks, transformOf, type Hook, type Hooks, type TransformAt } from './hooks.js';

const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;
/** Ids are 36 characters, slugs at most 63: anything longer names nothing and is not worth a cache entry. */
const MAX_REF = 64;

type Found = { ok: true; slug: string; hook: Hook; sides: readonly HookKind[] } | { ok: false; code: string; message: string };

export type ResolvedHooks = Result<Hooks> | Promise<Result<Hooks>>;

/** A workspace's default guardrails as hooks, and where the first of each side rewrites. */
type Defaults = Pick<Hooks, 'before' | 'after' | 'transformAt'>;

export class SavedGuardrails {
  /** `workspace id \n reference` → the guardrail it names, compiled. */
  private readonly found: LRUCache<string, Found | Promise<Found>>;
  /** Workspace id → its default guardrails as hooks. */
  private readonly defaults: LRUCache<string, Result<Defaults> | Promise<Result<Defaults>>>;

  /** Each cache holds at most `max` entries; `onEvict` is told of each one a full cache drops (gateway.ts counts them). */
  constructor(
    private readonly store: Store,
    { max = MAX_ENTRIES, onEvict }: { max?: number; onEvict?: OnEvict } = {},
  ) {
    this.found = boundedMap(max, onEvict, TTL_MS);
    this.defaults = boundedMap(max, onEvict, TTL_MS);
    store.changes.subscribe((c) => {
      if (c.kind === 'guardrail' || c.kind === 'settings' || c.kind === 'workspace' || c.kind === 'all') {
        this.found.clear();
        this.defaults.clear();
      }
    });
  }

  /** The hooks a request of `workspaceId` runs: its defaults, then `hooks` with the saved guardrails they name resolved. */
  resolve(workspaceId: string, hooks: Hooks): ResolvedHooks {
    const d = this.defaultsOf(workspaceId);
    return d instanceof Promise ? d.then((v) => this.withDefaults(workspaceId, hooks, v)) : this.withDefaults(workspaceId, hooks, d);
  }

  private withDefaults(workspaceId: string, hooks: Hooks, defaults: Result<Defaults>): ResolvedHooks {
    if (!defaults.ok) return defaults;
    const none = defaults.value.before.length === 0 && defaults.value.after.length === 0;
    // The common case, checked without allocating: nothing to add.
    if (none && !hooks.before.some(named) && !hooks.after.some(named)) return ok(hooks);
    const refs = [...hooks.before, ...hooks.after].filter(named);
    const lookups = refs.map((h) => this.find(workspaceId, h.ref!.name));
    if (lookups.some((l) => l instanceof Promise)) return Promise.all(lookups).then((found) => combine(hooks, defaults.value, new Map(refs.map((h, i) => [h, found[i]!]))));
    return combine(hooks, defaults.value, new Map(refs.map((h, i) => [h, lookups[i] as Found])));
  }

  private defaultsOf(workspaceId: string): Result<Defaults> | Promise<Result<Defaults>> {
    return cached(this.defaults, workspaceId, async () => {
      const s = await this.store.settings.effective(workspaceId);
      const before = await this.defaultHooks(workspaceId, s.default_input_guardrails, 'default_input_guardrails', 'before');
      if (!before.ok) return before;
      const after = await this.defaultHooks(workspaceId, s.default_output_guardrails, 'default_output_guardrails', 'after');
      if (!after.ok) return after;
      const rewrites = (hooks: readonly Hook[], key: DefaultGuardrailKey): TransformAt | null => {
        const i = hooks.findIndex((h) => transformOf(h) !== undefined);
        return i === -1 ? null : { at: `${key}[${i}]`, check: transformOf(hooks[i]!)! };
      };
      const transformAt = { before: rewrites(before.value, 'default_input_guardrails'), after: rewrites(after.value, 'default_output_guardrails') };
      return ok({ before: before.value, after: after.value, transformAt });
    });
  }

  private async defaultHooks(workspaceId: string, ids: readonly string[], key: DefaultGuardrailKey, kind: HookKind): Promise<Result<Hook[]>> {
    const out: Hook[] = [];
    for (const [i, id] of ids.entries()) {
      const f = await this.find(workspaceId, id);
      const problem = !f.ok ? f.message : f.sides.includes(kind) ? null : sideProblem(f.slug, kind);
      if (problem !== null) {
        return err(new GatewayError(500, `the default guardrail ${key}[${i}] of this workspace's settings cannot run: ${problem}`, { code: 'default_guardrail_unavailable' }));
      }
      out.push({ ...(f as Extract<Found, { ok: true }>).hook, isDefault: true });
    }
    return ok(out);
  }

  private find(workspaceId: string, ref: string): Found | Promise<Found> {
    if (ref.length > MAX_REF) return unknown(ref);
    return cached(this.found, `${workspaceId}\n${ref}`, async () => compiled(await this.store.guardrails.findFor(ref, workspaceId), ref));
  }
}

const named = (h: Hook): boolean => h.ref !== undefined;

/** A cached value, or its load (shared by concurrent misses); a load that fails is not kept, and one a clear overtook is not stored. */
function cached<V extends object>(cache: LRUCache<string, V | Promise<V>>, key: string, load: () => Promise<V>): V | Promise<V> {
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const pending: Promise<V> = load().then(
    (v) => {
      if (cache.get(key) === pending) cache.set(key, v);
      return v;
    },
    (e: unknown) => {
      if (cache.get(key) === pending) cache.delete(key);
      throw e;
    },
  );
  cache.set(key, pending);
  return pending;
}

function compiled(g: Guardrail | null, ref: string): Found {
  if (g === null) return unknown(ref);
  if (g.status !== 'active') return { ok: false, code: 'archived_guardrail', message: `guardrail '${g.slug}' is archived` };
  const hook = compileGuardrail(g, { left: MAX_PATTERN_WEIGHT });
  if (!hook.ok) return { ok: false, code: 'invalid_guardrail', message: `guardrail '${g.slug}' is no longer valid: ${hook.problem.message}` };
  return { ok: true, slug: g.slug, hook: hook.value, sides: sidesOf(hook.value) };
}

function unknown(ref: string): Found {
  return { ok: false, code: 'unknown_guardrail', message: `guardrail '${ref}' is none of this workspace's or the organisation's guardrails` };
}

function sideProblem(slug: string, kind: HookKind): string {
  return `guardrail '${slug}' has a check that runs only ${kind === 'before' ? 'after' : 'before'} the request`;
}

/**
 * Defaults, then the config's hooks with each named guardrail in its place;
 * the first that cannot run is a 400 naming it. Where each side first
 * rewrites counts the guardrails brought in (defaults run first).
 */
function combine(hooks: Hooks, defaults: Defaults, found: ReadonlyMap<Hook, Found>): Result<Hooks> {
  const transformAt = { before: defaults.transformAt.before, after: defaults.transformAt.after };
  const side = (own: readonly Hook[], kind: HookKind): Result<Hook[]> => {
    let rewrites: TransformAt | null = null;
    const out: Hook[] = [];
    for (const h of own) {
      const f = found.get(h);
      if (f === undefined) {
        out.push(h);
        continue;
      }
      const at = h.ref!.at;
      const problem = !f.ok ? f : f.sides.includes(kind) ? null : { code: 'invalid_guardrail', message: sideProblem(f.slug, kind) };
      if (problem !== null) return err(invalid(`config.${at}: ${problem.message}`, at, problem.code));
      const hook = (f as Extract<Found, { ok: true }>).hook;
      const check = transformOf(hook);
      if (check !== undefined) rewrites ??= { at, check };
      out.push(hook);
    }
    // Any rewrite on a side refuses a stream or the proxy; which one is named is only for the message.
    transformAt[kind] ??= hooks.transformAt[kind] ?? rewrites;
    return ok(out);
  };
  const before = side(hooks.before, 'before');
  if (!before.ok) return before;
  const after = side(hooks.after, 'after');
  if (!after.ok) return after;
  const all = { before: [...defaults.before, ...before.value], after: [...defaults.after, ...after.value] };
  const checks = all.before.reduce((n, h) => n + h.checks.length, 0) + all.after.reduce((n, h) => n + h.checks.length, 0);
  if (checks > MAX_REQUEST_CHECKS) {
    const at = [...hooks.before, ...hooks.after].find(named)?.ref?.at;
    // The config's own checks are within the bound (compileHooks): without a saved guardrail named, the defaults passed it.
    if (at === undefined) return err(new GatewayError(500, `the default guardrails of this workspace's settings ${tooManyChecks(checks)}`, { code: 'default_guardrail_unavailable' }));
    return err(invalid(`config.${at}: with the saved and default guardrails it names, ${tooManyChecks(checks)}`, at, 'too_many_checks'));
  }
  return ok({ ...hooks, ...all, transformAt });
}
