/**
 * Auto-created user keys (spec 1.15.0). When a workspace's effective
 * `user_api_key_auto_create` is on, a user who joins it (created with
 * workspaces, accepting an invite, through a SCIM group, or added to it) gets
 * one workspace-user key there, never a second. The key expires after
 * `user_api_key_ttl` when that is set and follows the enforced
 * `user_api_key_rotation_period`. Its secret exists only in the answer of the
 * call that made it (`api_keys: [{id, workspace_id, key}]`): the provisioning
 * caller hands it to the user.
 */
import { generateKey, hashKey, keyHint } from '../http/auth.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { Db } from '../store/db.js';
import { newId } from '../store/ids.js';
import type { EffectiveSettings } from '../store/settings.js';
import type { User } from '../store/users.js';
import type { Workspace } from '../store/workspaces.js';
import { DEFAULT_TRANSITION_MS, nextRotation } from './rotation.js';
import type { AdminDeps } from './router.js';

/**
 * What a workspace member does day to day: call models, use the workspace's
 * configs, credentials and prompts, read logs. Nothing that changes the
 * workspace; a broader key is made by hand.
 */
export const AUTO_KEY_SCOPES: readonly string[] = [
  'completions.write',
  'configs.read',
  'configs.list',
  'virtual_keys.read',
  'virtual_keys.list',
  'prompts.read',
  'prompts.list',
  'prompts.render',
  'prompts.run',
  'logs.view',
  'logs.list',
];

/** A key just made, secret included: shown in this answer only. */
export interface IssuedKey {
  id: string;
  workspace_id: string;
  key: string;
}

/** Makes the user's key in `workspace` if its settings ask for one and the user has none; inside the caller's transaction. */
export async function autoCreateKey(deps: AdminDeps, tx: Db, settings: EffectiveSettings, user: Pick<User, 'id' | 'email'>, workspace: Workspace): Promise<IssuedKey | null> {
  if (!settings.user_api_key_auto_create || workspace.status === 'archived') return null;
  if (await deps.store.users.members.hasAutoKey(user.id, workspace.id, tx)) return null;
  const nowMs = deps.now();
  const at = Math.floor(nowMs / 1000);
  const secret = generateKey(deps.apiKeyPrefix);
  const period = settings.user_api_key_rotation_period;
  const ttl = settings.user_api_key_ttl;
  const key: ApiKeyRecord = {
    id: newId(),
    name: `${user.email} in ${workspace.name}`,
    description: 'Created automatically when the user joined the workspace',
    type: 'workspace',
    subType: 'user',
    isAdmin: false,
    workspaceId: workspace.id,
    userId: user.id,
    scopes: [...AUTO_KEY_SCOPES],
    hash: hashKey(secret),
    keyHint: keyHint(secret),
    previousHash: null,
    previousExpiresAt: null,
    rotationPolicy:
      period === null
        ? null
        : { rotation_period: period, next_rotation_at: Math.floor(nextRotation(period, nowMs) / 1000), key_transition_period_ms: DEFAULT_TRANSITION_MS },
    lastRotatedAt: null,
    defaults: null,
    metadata: null,
    creationMode: 'auto',
    status: 'active',
    expiresAt: ttl === null ? null : at + ttl,
    createdAt: at,
    lastUpdatedAt: at,
    lastResetAt: null,
  };
  await deps.store.apiKeys.insert(key, tx);
  return { id: key.id, workspace_id: workspace.id, key: secret };
}
