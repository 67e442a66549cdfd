/**
 * Prompts on the request path (a run, POST /v1/prompts/:id/completions, or
 * a config's `prompt_id`): the prompt a reference names in the key's
 * workspace, with its version and partials read and checked
 * (prompts/load.ts), and where its credential routes; and the roles a key
 * acts with, for the prompt's `access`. Both are cached: a hit is
 * synchronous. Prompts drop on a `prompt` change notice, roles on a
 * `user`, `api_key` or `workspace` one; every entry lives at most 30 s
 * besides (notices lost, SQLite files shared between processes). Each
 * cache is bounded.
 */
import type { LRUCache } from 'lru-cache';
import { parseConfig } from '../config/schema.js';
import type { Config } from '../config/types.js';
import { loadPrompt, type LoadedPrompt } from '../prompts/load.js';
import { planFor, type Plan } from '../routing/plan.js';
import { boundedMap, type OnEvict } from '../shared/bounded.js';
import type { Result } from '../shared/errors.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import { fixedRoles, keyRoles, type Roles } from '../store/roles.js';
import type { Store } from '../store/store.js';

const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;
/** An id or slug with `@version`: anything longer names nothing and is not worth a cache entry. */
const MAX_REF = 128;

/** A prompt ready to run: loaded, and the plan its credential makes (null: it names a saved config, or nothing). */
export interface ReadyPrompt {
  loaded: LoadedPrompt;
  credentialPlan: Result<Plan> | null;
}

export type PromptLookup = Result<ReadyPrompt | null> | Promise<Result<ReadyPrompt | null>>;

export class SavedPrompts {
  /** `workspace id \n reference` → the prompt it names (null: none). */
  private readonly found: LRUCache<string, { value: PromptLookup }>;
  /** Key id → its roles (user keys only: service keys' follow from their kind). */
  private readonly roles: LRUCache<string, { value: Roles | Promise<Roles> }>;

  constructor(
    private readonly store: Store,
    { max = MAX_ENTRIES, onEvict }: { max?: number; onEvict?: OnEvict } = {},
  ) {
    this.found = boundedMap(max, onEvict, TTL_MS);
    this.roles = boundedMap(max, onEvict, TTL_MS);
    store.changes.subscribe((c) => {
      if (c.kind === 'prompt' || c.kind === 'all') this.found.clear();
      if (c.kind === 'user' || c.kind === 'api_key' || c.kind === 'workspace' || c.kind === 'all') this.roles.clear();
    });
  }

  /** The prompt `ref` (id or slug, `@version` optional) of the workspace; null when there is none. */
  find(workspaceId: string, ref: string): PromptLookup {
    if (ref.length > MAX_REF) return { ok: true, value: null };
    const key = `${workspaceId}\n${ref}`;
    const hit = this.found.get(key);
    if (hit !== undefined) return hit.value;
    const entry: { value: PromptLookup } = {
      value: loadPrompt(this.store.prompts, workspaceId, ref).then(
        (r) => {
          const value: Result<ReadyPrompt | null> = r.ok && r.value !== null ? { ok: true, value: { loaded: r.value, credentialPlan: credentialPlan(r.value) } } : (r as Result<null>);
          // Kept only if no change dropped it meanwhile: the next request reads again.
          if (this.found.get(key) === entry) entry.value = value;
          return value;
        },
        (e: unknown) => {
          if (this.found.get(key) === entry) this.found.delete(key);
          throw e;
        },
      ),
    };
    this.found.set(key, entry);
    return entry.value;
  }

  /** The roles `key` acts with. */
  rolesOf(key: ApiKeyRecord): Roles | Promise<Roles> {
    const fixed = fixedRoles(key);
    if (fixed !== null) return fixed;
    const hit = this.roles.get(key.id);
    if (hit !== undefined) return hit.value;
    const entry: { value: Roles | Promise<Roles> } = {
      value: keyRoles(this.store.users, key).then(
        (r) => {
          if (this.roles.get(key.id) === entry) entry.value = r;
          return r;
        },
        (e: unknown) => {
          if (this.roles.get(key.id) === entry) this.roles.delete(key.id);
          throw e;
        },
      ),
    };
    this.roles.set(key.id, entry);
    return entry.value;
  }
}

/** The plan of the prompt's own credential (`virtual_key`, or `@slug` for a provider), validated as a config naming it would be. */
function credentialPlan(l: LoadedPrompt): Result<Plan> | null {
  const vk = l.prompt.virtualKey;
  if (vk === null || l.prompt.configId !== null) return null;
  const parsed = parseConfig(vk.startsWith('@') ? { provider: vk } : { virtual_key: vk });
  return parsed.ok ? { ok: true, value: planFor(parsed.value as Config) } : parsed;
}
