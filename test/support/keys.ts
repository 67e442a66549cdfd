/** A complete stored key record for tests that seed the store directly. */
import { randomBytes } from 'node:crypto';
import { hashKey } from '../../src/http/auth.js';
import type { ApiKeyRecord } from '../../src/store/api-keys.js';

export function keyRecord(overrides: Partial<ApiKeyRecord> & { workspaceId: string }): ApiKeyRecord {
  const id = overrides.id ?? `key-${randomBytes(4).toString('hex')}`;
  return {
    id,
    name: `Key ${id}`,
    description: null,
    type: 'workspace',
    subType: 'service',
    isAdmin: false,
    userId: null,
    scopes: ['completions.write', 'configs.read'],
    hash: hashKey(`secret-${id}`),
    keyHint: null,
    previousHash: null,
    previousExpiresAt: null,
    rotationPolicy: null,
    lastRotatedAt: null,
    defaults: null,
    metadata: null,
    creationMode: 'api',
    status: 'active',
    expiresAt: null,
    createdAt: 1_700_000_000,
    lastUpdatedAt: 1_700_000_000,
    lastResetAt: null,
    ...overrides,
  };
}
