/**
 * Saved configs on the request path: `x-gateway-config: <id or slug>`, a
 * key's pinned config and a workspace's default config, read from memory.
 * A hit is two Map reads and a clock read, synchronous and allocation-free:
 * the cached value is the finished Result holding the Plan. A miss reads the
 * store once (concurrent misses share the read); answers, "not found"
 * included, live 30 s and all drop at once on any `config` change notice
 * (configs change rarely; a default moving between configs touches several
 * entries, and a new config may satisfy a reference that failed before).
 */
import { parseConfig } from '../config/schema.js';
import { HEADER_PLAN, planFor, type Plan } from '../routing/plan.js';
import { openConfig, unplacedSecret } from '../config/secrets.js';
import { GatewayError, invalid, type Result } from '../shared/errors.js';
import type { StoredConfig } from '../store/configs.js';
import type { Secrets } from '../store/secrets.js';
import type { Store } from '../store/store.js';

const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;
/** Ids are 36 characters, slugs at most 63: anything longer names nothing and is not worth a cache entry. */
const MAX_REF = 64;
const HEADER = 'x-gateway-config';

export type PlanLookup = Result<Plan> | Promise<Result<Plan>>;

/** No config: provider and credentials come from the request headers. */
export const HEADERS_ONLY: Result<Plan> = { ok: true, value: HEADER_PLAN };

interface Entry {
  at: number;
  value: PlanLookup;
}

export class SavedConfigs {
  /** Workspace id → reference (id or slug) → entry: no key string is built per request. */
  private readonly refs = new Map<string, Map<string, Entry>>();
  /** Workspace id → its default config's plan, HEADERS_ONLY when it has none. */
  private readonly defaults = new Map<string, Entry>();
  private size = 0;
  /** Bumped by every drop: a read that began before it does not store its possibly stale answer. */
  private generation = 0;

  constructor(
    private readonly store: Store,
    private readonly secrets: Secrets,
    private readonly clock: () => number = Date.now,
  ) {
    store.changes.subscribe((c) => {
      if (c.kind === 'config' || c.kind === 'all') this.clear();
    });
  }

  /** The plan of the config `ref` (id or slug) of this workspace; another workspace's config is as unknown as a missing one. */
  byRef(workspaceId: string, ref: string): PlanLookup {
    const now = this.clock();
    const hit = this.refs.get(workspaceId)?.get(ref);
    if (hit !== undefined && now - hit.at <= TTL_MS) return hit.value;
    if (ref.length > MAX_REF) return unknown(ref);
    this.makeRoom();
    let inWorkspace = this.refs.get(workspaceId);
    if (inWorkspace === undefined) {
      inWorkspace = new Map();
      this.refs.set(workspaceId, inWorkspace);
    }
    return this.load(inWorkspace, ref, now, this.store.configs.find(ref, workspaceId), ref);
  }

  /** The plan of the workspace's default config, or HEADERS_ONLY when it has none. */
  defaultOf(workspaceId: string): PlanLookup {
    const now = this.clock();
    const hit = this.defaults.get(workspaceId);
    if (hit !== undefined && now - hit.at <= TTL_MS) return hit.value;
    this.makeRoom();
    return this.load(this.defaults, workspaceId, now, this.store.configs.findDefault(workspaceId), null);
  }

  private load(map: Map<string, Entry>, key: string, now: number, read: Promise<StoredConfig | null>, ref: string | null): Promise<Result<Plan>> {
    const generation = this.generation;
    const pending: Promise<Result<Plan>> = read.then(
      (c) => {
        const value = toPlan(c, ref, this.secrets);
        if (generation === this.generation) map.set(key, { at: now, value });
        return value;
      },
      (e: unknown) => {
        // A failed read is not an answer: the next request tries again.
        if (generation === this.generation && map.get(key)?.value === pending) {
          map.delete(key);
          this.size--;
        }
        throw e;
      },
    );
    if (!map.has(key)) this.size++;
    map.set(key, { at: now, value: pending });
    return pending;
  }

  /** Bounded memory: when full, start over (a full cache means many distinct references, most of them junk). */
  private makeRoom(): void {
    if (this.size >= MAX_ENTRIES) this.clear();
  }

  private clear(): void {
    this.generation++;
    this.refs.clear();
    this.defaults.clear();
    this.size = 0;
  }
}

/** `ref` null: the workspace default, where no config means routing by headers. */
function toPlan(c: StoredConfig | null, ref: string | null, secrets: Secrets): Result<Plan> {
  if (c === null) return ref === null ? HEADERS_ONLY : unknown(ref);
  if (c.status !== 'active') return { ok: false, error: invalid(`saved config '${c.slug}' is archived`, HEADER, 'archived_config') };
  let body: unknown;
  try {
    body = openConfig(c.config, secrets, c.id);
  } catch {
    return { ok: false, error: new GatewayError(500, `the stored secrets of saved config '${c.slug}' cannot be decrypted`, { code: 'credentials_unreadable' }) };
  }
  // Validated when saved; validated again because the rules may have grown stricter since.
  const parsed = parseConfig(body);
  if (!parsed.ok) return { ok: false, error: invalid(`saved config '${c.slug}' is no longer valid: ${parsed.error.message}`, HEADER, 'invalid_config') };
  // Saved before such configs were refused: its secret would go wherever the request's headers say.
  const unplaced = unplacedSecret(body);
  if (unplaced !== null) {
    return { ok: false, error: invalid(`saved config '${c.slug}' holds a secret at ${unplaced} but names no provider there: save it again with one`, HEADER, 'invalid_config') };
  }
  // The version id names the plan's circuits: a new version starts with fresh circuit state.
  return { ok: true, value: { ...planFor(parsed.value, c.versionId), configId: c.id } };
}

function unknown(ref: string): Result<Plan> {
  return { ok: false, error: invalid(`saved config '${ref}' not found`, HEADER, 'unknown_config') };
}
