/** Helpers for the identity suites: JSON answers, seeded keys of any kind, and error checks. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { hashKey } from '../../src/http/auth.js';
import type { ApiKeyRecord } from '../../src/store/api-keys.js';
import type { TestGateway } from './gateway.js';
import { keyRecord } from './keys.js';

// Answers are checked field by field; a loose type keeps the tests readable.
export type Json = any;

export async function json(res: Response): Promise<Json> {
  return res.json();
}

/** Calls and expects `status`; returns the body. */
export async function expect(res: Promise<Response>, status: number): Promise<Json> {
  const r = await res;
  const body = await r.json();
  assert.equal(r.status, status, JSON.stringify(body));
  return body;
}

/** Expects the contract's error envelope with `status` and, when given, `param`. */
export async function expectError(res: Promise<Response>, status: number, param?: string | null): Promise<Json> {
  const body = await expect(res, status);
  assert.equal(typeof body.error?.message, 'string', JSON.stringify(body));
  if (param !== undefined) assert.equal(body.error.param, param, body.error.message);
  return body;
}

/** Stores a key directly (the /v1/api-keys routes are not this suite's) and returns its secret. */
export async function seedKey(gw: TestGateway, overrides: Partial<ApiKeyRecord> = {}): Promise<string> {
  const secret = `sk-test-${randomBytes(12).toString('hex')}`;
  const workspaceId = overrides.workspaceId ?? (await gw.store.workspaces.default()).id;
  await gw.store.apiKeys.insert(keyRecord({ id: `key-${randomBytes(6).toString('hex')}`, ...overrides, workspaceId, hash: hashKey(secret) }));
  return secret;
}

export function as(secret: string): Record<string, string> {
  return { 'x-gateway-api-key': secret };
}

let n = 0;
/** A fresh, unique email for each call. */
export function email(tag = 'user'): string {
  return `${tag}.${process.pid}.${++n}.${randomBytes(3).toString('hex')}@example.com`;
}

export async function createWorkspace(gw: TestGateway, name = `ws ${randomBytes(3).toString('hex')}`): Promise<Json> {
  return expect(gw.call('/workspaces', { body: { name } }), 201);
}
