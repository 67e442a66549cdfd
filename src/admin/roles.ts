/**
 * Roles on the identity routes: the schema of a role field (case-insensitive
 * on input, stored lower-case), and who may manage users and roles.
 */
import type { SchemaObject } from 'ajv';
import { GatewayError } from '../shared/errors.js';
import type { Caller } from './access.js';

/** A string matching one of `roles` in any case (`Admin`, `MEMBER`); lower-case it after checking. */
export function roleSchema(roles: readonly string[]): SchemaObject {
  const anyCase = (word: string): string => [...word].map((c) => `[${c}${c.toUpperCase()}]`).join('');
  return { type: 'string', pattern: `^(?:${roles.map(anyCase).join('|')})$`, description: `one of ${roles.join(', ')}` };
}

/** Only owners make owners, or change or remove one: an admin cannot raise itself above admin. */
export function requireOwnerFor(caller: Caller, role: string, param = 'role'): GatewayError | null {
  return role !== 'owner' || caller.orgRole === 'owner'
    ? null
    : new GatewayError(403, 'only an organisation owner may grant, change or remove the owner role', { code: 'permission_denied', param });
}
