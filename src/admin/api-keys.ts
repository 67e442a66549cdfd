/**
 * /v1/api-keys: create (`/:type/:subType`; the secret is answered this once
 * and stored as its SHA-256), list, read (masked), update, delete, rotate, and
 * the one-time claim of a secret a scheduled rotation made.
 *
 * Who may do what: the `api_keys.*` scopes; organisation keys only by
 * organisation callers; workspace callers only in their own workspace (other
 * workspaces' keys are 404). Nobody but an organisation-admin key grants
 * scopes it does not hold, or takes the secret of a key holding scopes it
 * does not hold (rotation hands it the new secret). No key makes, changes,
 * deletes or takes the secret of a key whose role stands above its own
 * (access.ts `standing`): a user key acts with its user's roles, and a
 * service key as an organisation or workspace admin. A user key is made only
 * for a member of its workspace. A key may rotate itself without
 * `api_keys.rotate`, but a scheduled rotation's secret is claimed by the
 * key's owner or an admin, never by the key (see maySecretOf).
 * Times: expires_at is Unix seconds in and out, like every gateway timestamp
 * (spec); next_rotation_at and key_transition_expires_at are ISO 8601 (as Portkey's).
 * The bootstrap admin key, the organisation's way back in, is never deleted,
 * narrowed or rotated here (409): its secret follows GATEWAY_ADMIN_API_KEY.
 */
import { err, GatewayError, invalid, ok, type Result } from '../shared/errors.js';
import { BOOTSTRAP_KEY_ID, generateKey, hashKey, keyHint } from '../http/auth.js';
import type { ApiKeyFilter, ApiKeyRecord, ApiKeySubType, ApiKeyType } from '../store/api-keys.js';
import { newId } from '../store/ids.js';
import type { Workspace } from '../store/workspaces.js';
import {
  hasScope,
  keyRoles,
  KNOWN_SCOPES,
  listedWorkspace,
  notFound,
  requireOrganisation,
  requireScope,
  requireStanding,
  standing,
  visibleTo,
  WORKSPACE_ADMIN,
  writableWorkspace,
  type Caller,
} from './access.js';
import { bodyChecker, iso, LISTED_WORKSPACE, listReply, queryOf, reply, S } from './input.js';
import { enforcePeriod, policySchema, readPolicy, transitionSchema, userKeyExpiry, type PolicyInput } from './key-policy.js';
import { DEFAULT_TRANSITION_MS, periodMs } from './rotation.js';
import { route, type AdminDeps, type Reply, type Route } from './router.js';

interface KeyDefaults {
  config_id?: string;
  metadata?: Record<string, string> | null;
  allow_config_override?: boolean;
}

interface CreateBody {
  name: string;
  scopes: string[];
  workspace_id?: string;
  user_id?: string;
  description?: string | null;
  /** Unix seconds, like every timestamp the gateway answers; null or absent: never. */
  expires_at?: number | null;
  rotation_policy?: PolicyInput | null;
  defaults?: KeyDefaults | null;
  metadata?: Record<string, string> | null;
}

type UpdateBody = Partial<Pick<CreateBody, 'name' | 'scopes' | 'description' | 'expires_at' | 'rotation_policy' | 'defaults' | 'metadata'>>;

const fields = {
  name: S.name,
  scopes: { type: 'array', minItems: 1, maxItems: 200, items: { type: 'string' } },
  description: S.text,
  expires_at: { type: ['integer', 'null'], minimum: 0 },
  rotation_policy: policySchema,
  defaults: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: { config_id: S.ref, metadata: S.metadata, allow_config_override: { type: 'boolean' } },
  },
  metadata: S.metadata,
};

const checkCreate = bodyChecker<CreateBody>({
  type: 'object',
  additionalProperties: false,
  required: ['name', 'scopes'],
  properties: { ...fields, workspace_id: S.ref, user_id: S.ref },
});

// type, workspace and user are fixed at creation: naming them is "not a known field".
const checkUpdate = bodyChecker<UpdateBody>({ type: 'object', additionalProperties: false, properties: fields });

const checkRotate = bodyChecker<{ key_transition_period_ms?: number }>({
  type: 'object',
  additionalProperties: false,
  properties: { key_transition_period_ms: transitionSchema },
});

const TYPE_FILTERS: Readonly<Record<string, { type: ApiKeyType; subType: ApiKeySubType }>> = {
  'organisation-service': { type: 'organisation', subType: 'service' },
  'workspace-service': { type: 'workspace', subType: 'service' },
  'workspace-user': { type: 'workspace', subType: 'user' },
};

/** A key as management shows it: never a secret, only its last characters. */
export function apiKeyView(k: ApiKeyRecord, nowMs: number): Record<string, unknown> {
  const p = k.rotationPolicy;
  const inTransition = k.previousExpiresAt !== null && k.previousExpiresAt * 1000 > nowMs;
  return {
    object: 'api-key',
    id: k.id,
    key: `****${k.keyHint ?? ''}`,
    name: k.name,
    description: k.description,
    type: `${k.type}-${k.subType}`,
    workspace_id: k.type === 'organisation' ? null : k.workspaceId,
    user_id: k.userId,
    status: k.status,
    // Organisation-admin keys hold every scope (contract).
    scopes: k.isAdmin ? [...KNOWN_SCOPES] : k.scopes,
    defaults: k.defaults,
    metadata: k.metadata,
    rotation_policy:
      p === null ? null : { rotation_period: p.rotation_period, next_rotation_at: iso(p.next_rotation_at), key_transition_period_ms: p.key_transition_period_ms },
    key_transition_expires_at: inTransition ? iso(k.previousExpiresAt) : null,
    expires_at: k.expiresAt,
    creation_mode: k.creationMode,
    created_at: k.createdAt,
    last_updated_at: k.lastUpdatedAt,
    last_rotated_at: k.lastRotatedAt,
    last_reset_at: k.lastResetAt,
  };
}

/** A key the caller may see; 404 otherwise (workspace callers never see organisation keys or other workspaces'). */
async function visibleKey(deps: AdminDeps, caller: Caller, id: string): Promise<Result<ApiKeyRecord>> {
  return visibleTo(caller, await deps.store.apiKeys.get(id), (k) => (k.type === 'organisation' ? null : k.workspaceId), 'api key', id);
}

/** Known scopes the caller holds itself, deduplicated; the first that is not → 400 or 403 naming `scopes[i]`. */
function grantable(caller: Caller, scopes: readonly string[]): Result<string[]> {
  for (const [i, s] of scopes.entries()) {
    if (!KNOWN_SCOPES.has(s)) return err(invalid(`scopes[${i}]: '${s}' is not a known scope`, `scopes[${i}]`));
  }
  for (const [i, s] of scopes.entries()) {
    if (!hasScope(caller, s)) {
      return err(new GatewayError(403, `scopes[${i}]: cannot grant '${s}', which this key does not hold`, { code: 'scope_escalation', param: `scopes[${i}]` }));
    }
  }
  return ok([...new Set(scopes)]);
}

/** 403 when key `k` stands above the caller (`doing`: what the caller would do to it). */
async function mayActOn(deps: AdminDeps, caller: Caller, k: ApiKeyRecord, doing: string): Promise<GatewayError | null> {
  return requireStanding(caller, standing(await keyRoles(deps.store, k)), `${doing} api key '${k.id}'`);
}

/**
 * Whether the caller may take a new secret of key `k`: rotating it (the
 * answer holds the new secret), or `claim`ing the one a scheduled rotation
 * sealed. A key rotates itself, but never claims its own rotated secret: its
 * old secret works until the transition ends, and whoever holds that must not
 * get the new one and lock the owner out. Anyone else needs api_keys.rotate
 * and every scope of `k` (else the secret hands it more power than it has),
 * and must be the key's owner or an admin. A user key's owner is its user
 * (another key of theirs); an admin is a workspace admin or above, and not
 * below `k`'s own role. A service key's owners are those who may manage the
 * keys of its workspace, which are admins already: workspace service keys act
 * as workspace admins, organisation ones as organisation admins.
 */
async function maySecretOf(deps: AdminDeps, caller: Caller, k: ApiKeyRecord, claim: boolean): Promise<GatewayError | null> {
  if (caller.key.id === k.id) {
    return claim
      ? new GatewayError(403, `a key cannot claim its own rotated secret (whoever holds its old one could): the key's owner or an admin claims it`, { code: 'permission_denied' })
      : null;
  }
  const denied = requireScope(caller, 'api_keys.rotate');
  if (denied !== null) return denied;
  const beyond = k.isAdmin ? (caller.key.isAdmin ? undefined : 'organisation admin') : k.scopes.find((s) => !hasScope(caller, s));
  if (beyond !== undefined) return new GatewayError(403, `this key cannot take the secret of a key holding '${beyond}', which it does not hold`, { code: 'scope_escalation' });
  if (k.subType === 'user' && k.userId === caller.key.userId) return null;
  const needed = Math.max(WORKSPACE_ADMIN, standing(await keyRoles(deps.store, k)));
  return requireStanding(caller, needed, `taking the secret of api key '${k.id}' (its owner's or an admin's to take)`);
}

function bootstrapFixed(what: string): GatewayError {
  return new GatewayError(409, `the bootstrap admin key cannot be ${what}`, { code: 'conflict' });
}

function keyKind(type: string, subType: string): Result<{ type: ApiKeyType; subType: ApiKeySubType }> {
  if (type !== 'organisation' && type !== 'workspace') return err(invalid(`type: '${type}' is not one of organisation, workspace`, 'type'));
  if (subType !== 'service' && subType !== 'user') return err(invalid(`sub_type: '${subType}' is not one of service, user`, 'sub_type'));
  if (type === 'organisation' && subType === 'user') {
    return err(invalid('sub_type: organisation keys are service keys; a user key belongs to a workspace', 'sub_type'));
  }
  return ok({ type, subType });
}

/** expires_at from a request: absent → keep `current`; else null or a future time, capped for user keys by user_api_key_ttl. */
function expiry(asked: number | null | undefined, current: number | null | undefined, user: boolean, ttl: number | null, now: number): Result<number | null> {
  if (asked != null && asked <= now) return err(invalid('expires_at: must be in the future (Unix seconds)', 'expires_at'));
  if (asked === undefined && current !== undefined) return ok(current);
  return user ? userKeyExpiry(asked, ttl, now) : ok(asked ?? null);
}

async function create(caller: Caller, params: Readonly<Record<string, string>>, body: unknown, deps: AdminDeps): Promise<Result<Reply>> {
  const kind = keyKind(params.type!, params.subType!);
  if (!kind.ok) return kind;
  const { type, subType } = kind.value;
  const denied = (type === 'organisation' ? requireOrganisation(caller, 'creating an organisation key') : null) ?? requireScope(caller, 'api_keys.create');
  if (denied !== null) return err(denied);
  const input = checkCreate(body);
  if (!input.ok) return input;
  const b = input.value;
  const scopes = grantable(caller, b.scopes);
  if (!scopes.ok) return scopes;

  let ws: Workspace;
  if (type === 'organisation') {
    if (b.workspace_id !== undefined) return err(invalid('workspace_id: organisation keys belong to no workspace', 'workspace_id'));
    ws = await deps.store.workspaces.default();
  } else {
    const acting = await writableWorkspace(deps.store, caller, b.workspace_id);
    if (!acting.ok) return acting;
    ws = acting.value;
  }
  const user = subType === 'user';
  if (!user && b.user_id !== undefined) return err(invalid('user_id: only user keys belong to a user', 'user_id'));
  if (user && b.user_id === undefined) return err(invalid('user_id: is required for a user key', 'user_id'));
  // The new key acts with these roles: a user's in the workspace, or an admin's for a service key.
  const roles = await keyRoles(deps.store, { type, subType, isAdmin: false, userId: b.user_id ?? null, workspaceId: ws.id });
  if (user && roles.workspaceRole === null) {
    // An unknown user too: a workspace key learns nothing of users outside its workspace.
    return err(new GatewayError(404, `user '${b.user_id}' is not a member of workspace '${ws.slug}'`, { code: 'not_found', param: 'user_id' }));
  }
  const below = requireStanding(caller, standing(roles), user ? `a key acting as user '${b.user_id}'` : `a ${type} service key`, user ? 'user_id' : 'sub_type');
  if (below !== null) return err(below);

  const nowMs = deps.now();
  const now = Math.floor(nowMs / 1000);
  const settings = await deps.store.settings.effective(ws.id);
  const expiresAt = expiry(b.expires_at, undefined, user, settings.user_api_key_ttl, now);
  if (!expiresAt.ok) return expiresAt;
  const asked = user ? enforcePeriod(b.rotation_policy ?? null, settings.user_api_key_rotation_period) : ok(b.rotation_policy ?? null);
  if (!asked.ok) return asked;
  const policy = asked.value === null ? null : readPolicy(asked.value, nowMs);
  if (policy !== null && !policy.ok) return policy;

  const secret = generateKey(deps.apiKeyPrefix);
  const id = newId();
  await deps.store.apiKeys.insert({
    id,
    name: b.name,
    description: b.description ?? null,
    type,
    subType,
    isAdmin: false,
    workspaceId: ws.id,
    userId: b.user_id ?? null,
    scopes: scopes.value,
    hash: hashKey(secret),
    keyHint: keyHint(secret),
    previousHash: null,
    previousExpiresAt: null,
    rotationPolicy: policy?.value ?? null,
    lastRotatedAt: null,
    defaults: (b.defaults as Record<string, unknown> | null | undefined) ?? null,
    metadata: b.metadata ?? null,
    creationMode: 'api',
    status: 'active',
    expiresAt: expiresAt.value,
    createdAt: now,
    lastUpdatedAt: now,
    lastResetAt: null,
  });
  return reply(201, { id, key: secret, object: 'api-key' });
}

async function update(caller: Caller, id: string, b: UpdateBody, deps: AdminDeps): Promise<Result<Reply>> {
  const found = await visibleKey(deps, caller, id);
  if (!found.ok) return found;
  const k = found.value;
  const below = await mayActOn(deps, caller, k, 'changing');
  if (below !== null) return err(below);
  if (k.id === BOOTSTRAP_KEY_ID && (b.scopes !== undefined || b.expires_at !== undefined || b.rotation_policy !== undefined)) {
    return err(bootstrapFixed('narrowed, given an expiry or a rotation policy'));
  }
  const scopes = b.scopes === undefined ? ok(k.scopes) : grantable(caller, b.scopes);
  if (!scopes.ok) return scopes;

  const nowMs = deps.now();
  const now = Math.floor(nowMs / 1000);
  const settings = await deps.store.settings.effective(k.workspaceId);
  const user = k.subType === 'user';
  const expiresAt = expiry(b.expires_at, k.expiresAt, user, settings.user_api_key_ttl, now);
  if (!expiresAt.ok) return expiresAt;
  let policy = k.rotationPolicy;
  if (b.rotation_policy === null) {
    if (user && settings.user_api_key_rotation_period !== null) {
      return err(invalid(`rotation_policy: the organisation enforces a ${settings.user_api_key_rotation_period} rotation period for user keys`, 'rotation_policy'));
    }
    policy = null;
  } else if (b.rotation_policy !== undefined) {
    const asked = user ? enforcePeriod(b.rotation_policy, settings.user_api_key_rotation_period) : ok(b.rotation_policy);
    if (!asked.ok) return asked;
    const read = readPolicy(asked.value!, nowMs);
    if (!read.ok) return read;
    policy = read.value;
  }

  const changed = await deps.store.apiKeys.patch(
    k.id,
    {
      name: b.name ?? k.name,
      description: b.description === undefined ? k.description : b.description,
      scopes: scopes.value,
      rotationPolicy: policy,
      defaults: b.defaults === undefined ? k.defaults : (b.defaults as Record<string, unknown> | null),
      metadata: b.metadata === undefined ? k.metadata : b.metadata,
      expiresAt: expiresAt.value,
    },
    now,
  );
  const updated = changed ? await deps.store.apiKeys.get(k.id) : null;
  return updated === null ? err(notFound('api key', id)) : reply(200, apiKeyView(updated, nowMs));
}

async function rotate(caller: Caller, id: string, body: unknown, deps: AdminDeps): Promise<Result<Reply>> {
  const found = await visibleKey(deps, caller, id);
  if (!found.ok) return found;
  const k = found.value;
  const denied = await maySecretOf(deps, caller, k, false);
  if (denied !== null) return err(denied);
  if (k.id === BOOTSTRAP_KEY_ID) return err(bootstrapFixed('rotated: its secret follows GATEWAY_ADMIN_API_KEY'));
  const input = checkRotate(body);
  if (!input.ok) return input;
  const period = k.rotationPolicy?.rotation_period ?? null;
  const transition = input.value.key_transition_period_ms ?? k.rotationPolicy?.key_transition_period_ms ?? DEFAULT_TRANSITION_MS;
  if (period !== null && transition >= periodMs(period)) {
    return err(invalid(`key_transition_period_ms: must be shorter than the key's ${period} rotation period`, 'key_transition_period_ms'));
  }
  const nowMs = deps.now();
  const inTransition = (): GatewayError =>
    new GatewayError(409, `api key '${id}' is still in a rotation's transition period (a key has at most two live secrets); rotate again after it ends`, {
      code: 'rotation_in_progress',
    });
  if (k.previousExpiresAt !== null && k.previousExpiresAt * 1000 > nowMs) return err(inTransition());

  const secret = generateKey(deps.apiKeyPrefix);
  const transitionEndsAt = Math.floor((nowMs + transition) / 1000);
  const rotated = await deps.store.apiKeys.rotate({
    id: k.id,
    fromHash: k.hash,
    hash: hashKey(secret),
    keyHint: keyHint(secret),
    transitionEndsAt,
    at: Math.floor(nowMs / 1000),
  });
  // Another rotation replaced the secret between our read and our claim.
  if (!rotated) return err(inTransition());
  return reply(200, { id: k.id, key: secret, key_transition_expires_at: iso(transitionEndsAt) });
}

async function rotatedKey(caller: Caller, id: string, deps: AdminDeps): Promise<Result<Reply>> {
  const found = await visibleKey(deps, caller, id);
  if (!found.ok) return found;
  const k = found.value;
  const denied = await maySecretOf(deps, caller, k, true);
  if (denied !== null) return err(denied);
  const sealed = await deps.store.apiKeys.takeRotatedKey(k.id);
  if (sealed === null) return err(new GatewayError(404, `api key '${id}' has no rotated secret waiting to be claimed`, { code: 'not_found' }));
  return reply(200, { id: k.id, key: deps.secrets.decrypt(sealed, k.id), key_transition_expires_at: iso(k.previousExpiresAt) });
}

export const apiKeyRoutes: Route[] = [
  // The scope before the body is read; create() then checks what the key type in the path needs (an organisation caller).
  route({
    method: 'POST',
    path: '/api-keys/:type/:subType',
    description: 'Creates a gateway key: type organisation or workspace, sub-type service or user. The answer holds the secret, this once.',
    handlerBody: checkCreate,
    scope: 'api_keys.create',
    handler: ({ caller, params, body }, deps) => create(caller, params, body, deps),
  }),
  route({
    method: 'GET',
    path: '/api-keys',
    description: 'Lists gateway keys (never their secrets), filtered by type and workspace.',
    query: queryOf({ type: { enum: Object.keys(TYPE_FILTERS) }, ...LISTED_WORKSPACE }),
    scope: 'api_keys.list',
    paged: true,
    async handler({ caller, query, page }, deps) {
      const filter: ApiKeyFilter = {};
      const type = query.get('type');
      if (type !== null) {
        const kind = TYPE_FILTERS[type];
        if (kind === undefined) return err(invalid(`type: '${type}' is not one of ${Object.keys(TYPE_FILTERS).join(', ')}`, 'type'));
        Object.assign(filter, kind);
      }
      const workspaceId = await listedWorkspace(deps.store, caller, query);
      if (!workspaceId.ok) return workspaceId;
      filter.workspaceId = workspaceId.value;
      const nowMs = deps.now();
      return listReply(await deps.store.apiKeys.list(filter, page), (k) => apiKeyView(k, nowMs));
    },
  }),
  route({
    method: 'GET',
    path: '/api-keys/:id',
    description: 'One gateway key: scopes, defaults, rotation policy and state, the last characters of its secret.',
    scope: 'api_keys.read',
    async handler({ caller, params }, deps) {
      const k = await visibleKey(deps, caller, params.id!);
      return k.ok ? reply(200, apiKeyView(k.value, deps.now())) : k;
    },
  }),
  route({
    method: 'PUT',
    path: '/api-keys/:id',
    description: "Changes a gateway key's name, scopes, expiry, rotation policy, defaults or metadata.",
    scope: 'api_keys.update',
    body: checkUpdate,
    handler: ({ caller, params, body }, deps) => update(caller, params.id!, body, deps),
  }),
  route({
    method: 'DELETE',
    path: '/api-keys/:id',
    description: 'Deletes a gateway key: it stops working at once on every gateway process.',
    scope: 'api_keys.delete',
    async handler({ caller, params }, deps) {
      const k = await visibleKey(deps, caller, params.id!);
      if (!k.ok) return k;
      const below = await mayActOn(deps, caller, k.value, 'deleting');
      if (below !== null) return err(below);
      if (k.value.id === BOOTSTRAP_KEY_ID) return err(bootstrapFixed('deleted'));
      if (!(await deps.store.apiKeys.delete(k.value.id))) return err(notFound('api key', params.id!));
      return reply(200, { id: k.value.id, object: 'api-key', deleted: true });
    },
  }),
  // maySecretOf, after the key is found: a key rotates itself without api_keys.rotate; its rotated secret is for its owner or an admin.
  route({
    method: 'POST',
    path: '/api-keys/:id/rotate',
    description: 'Rotates a gateway key: a new secret (answered once); the old one keeps working for the transition period.',
    handlerBody: checkRotate,
    // A key rotates itself without the scope; any other key's rotation needs it (maySecretOf checks the rest).
    scope: 'api_keys.rotate',
    ownKeyFree: true,
    handler: ({ caller, params, body }, deps) => rotate(caller, params.id!, body, deps),
  }),
  route({
    method: 'POST',
    path: '/api-keys/:id/rotated-key',
    description: 'Claims the secret a scheduled rotation made, once.',
    // Never the calling key's own (maySecretOf): always the scope.
    scope: 'api_keys.rotate',
    handler: ({ caller, params }, deps) => rotatedKey(caller, params.id!, deps),
  }),
];
