/**
 * Virtual keys: a workspace's stored provider credentials, addressed by id or
 * slug (x-gateway-virtual-key, config virtual_key) or as `@slug` providers.
 * A row either holds its own credentials (one encrypted blob, bound to the
 * row's id) or points at an integration whose credentials it uses. The blob
 * is opaque here: encryption and decryption belong to the callers that hold
 * the key (admin routes, the credential cache).
 */
import { deleteAndAnnounce, type Changes } from './changes.js';
import type { Db } from './db.js';
import { nowSeconds } from './ids.js';
import { fromJson, listPage, toJson, type Page, type PageRequest } from './page.js';

export interface VirtualKey {
  id: string;
  slug: string;
  workspaceId: string;
  name: string;
  /** Canonical provider name (aliases resolved at creation). */
  provider: string;
  /** Set: a provider whose credentials come from this integration; credentials is then null. */
  integrationId: string | null;
  /** Encrypted JSON of every target key the credential supplies (api_key, hosts, cloud settings). */
  credentials: string | null;
  /** What a GET may show of those: non-secret values as they are, secret ones masked. */
  settings: Record<string, unknown> | null;
  note: string | null;
  status: string;
  createdAt: number;
  lastUpdatedAt: number;
  lastResetAt: number | null;
}

interface Row {
  id: string;
  slug: string;
  workspace_id: string;
  name: string;
  provider: string;
  integration_id: string | null;
  credentials: string | null;
  settings: string | null;
  note: string | null;
  status: string;
  created_at: number;
  last_updated_at: number;
  last_reset_at: number | null;
}

function toVirtualKey(r: Row): VirtualKey {
  return {
    id: r.id,
    slug: r.slug,
    workspaceId: r.workspace_id,
    name: r.name,
    provider: r.provider,
    integrationId: r.integration_id,
    credentials: r.credentials,
    settings: fromJson(r.settings),
    note: r.note,
    status: r.status,
    createdAt: r.created_at,
    lastUpdatedAt: r.last_updated_at,
    lastResetAt: r.last_reset_at,
  };
}

export type NewVirtualKey = Omit<VirtualKey, 'status' | 'createdAt' | 'lastUpdatedAt' | 'lastResetAt'>;
export type VirtualKeyPatch = Partial<Pick<VirtualKey, 'name' | 'note' | 'credentials' | 'settings'>>;

/** Inserts a row with `db` (a transaction's, when an integration creates its default provider); publishes nothing. */
export async function insertVirtualKey(db: Db, k: NewVirtualKey): Promise<void> {
  const at = nowSeconds();
  await db.run(
    `INSERT INTO virtual_keys (id, slug, workspace_id, name, provider, integration_id, credentials, settings, note, status, created_at, last_updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)`,
    [k.id, k.slug, k.workspaceId, k.name, k.provider, k.integrationId, k.credentials, toJson(k.settings), k.note, at, at],
  );
}

export class VirtualKeyRepo {
  constructor(
    private readonly db: Db,
    private readonly changes: Changes,
  ) {}

  /** Throws a unique violation when the slug is taken in the workspace. */
  async create(k: NewVirtualKey): Promise<VirtualKey> {
    await insertVirtualKey(this.db, k);
    // Drops cached "no such key" answers for this slug.
    this.changes.publish({ kind: 'virtual_key', id: k.id });
    return (await this.get(k.id))!;
  }

  async get(id: string): Promise<VirtualKey | null> {
    const r = await this.db.get<Row>('SELECT * FROM virtual_keys WHERE id = ?', [id]);
    return r === undefined ? null : toVirtualKey(r);
  }

  /**
   * In one workspace, by id or slug (`bySlugOnly`: `@slug` names a slug). A
   * slug may look like another key's id: the id wins.
   */
  async find(workspaceId: string, ref: string, bySlugOnly = false): Promise<VirtualKey | null> {
    const r = bySlugOnly
      ? await this.db.get<Row>('SELECT * FROM virtual_keys WHERE workspace_id = ? AND slug = ?', [workspaceId, ref])
      : await this.db.get<Row>(
          'SELECT * FROM virtual_keys WHERE workspace_id = ? AND (id = ? OR slug = ?) ORDER BY CASE WHEN id = ? THEN 0 ELSE 1 END LIMIT 1',
          [workspaceId, ref, ref, ref],
        );
    return r === undefined ? null : toVirtualKey(r);
  }

  /** Newest first; `workspaceId` undefined: every workspace's. */
  list(workspaceId: string | undefined, page: PageRequest): Promise<Page<VirtualKey>> {
    return workspaceId === undefined
      ? listPage(this.db, 'virtual_keys', [], [], page, toVirtualKey)
      : listPage(this.db, 'virtual_keys', ['workspace_id = ?'], [workspaceId], page, toVirtualKey);
  }

  async update(id: string, patch: VirtualKeyPatch): Promise<VirtualKey | null> {
    const current = await this.get(id);
    if (current === null) return null;
    const next = { ...current, ...patch };
    await this.db.run(
      'UPDATE virtual_keys SET name = ?, note = ?, credentials = ?, settings = ?, last_updated_at = ? WHERE id = ?',
      [next.name, next.note, next.credentials, toJson(next.settings), nowSeconds(), id],
    );
    this.changes.publish({ kind: 'virtual_key', id });
    return this.get(id);
  }

  delete(id: string): Promise<boolean> {
    return deleteAndAnnounce(this.db, this.changes, 'virtual_keys', { kind: 'virtual_key', id });
  }
}
