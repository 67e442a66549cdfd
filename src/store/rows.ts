/** Row shapes and conversions both engines share: the schema is the same, so is the mapping. */
import type { ApiKeyRecord } from './types.js';

export interface ApiKeyRow {
  id: string;
  name: string;
  type: string;
  sub_type: string;
  is_admin: number;
  workspace_id: string;
  user_id: string | null;
  scopes: string;
  key_hash: string;
  status: string;
  expires_at: number | null;
  created_at: number;
  last_reset_at: number | null;
}

export function toKey(r: ApiKeyRow): ApiKeyRecord {
  return {
    id: r.id,
    name: r.name,
    type: r.type as ApiKeyRecord['type'],
    subType: r.sub_type as ApiKeyRecord['subType'],
    isAdmin: r.is_admin === 1,
    workspaceId: r.workspace_id,
    userId: r.user_id,
    scopes: JSON.parse(r.scopes) as string[],
    hash: r.key_hash,
    status: r.status as ApiKeyRecord['status'],
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    lastResetAt: r.last_reset_at,
  };
}

/** Unix seconds, the unit of every stored timestamp. */
export function now(): number {
  return Math.floor(Date.now() / 1000);
}
