/** Workspaces and workspace keys for tests of workspace-scoped objects. */
import assert from 'node:assert/strict';
import type { ApiKeyRecord } from '../../src/store/api-keys.js';
import { keyRecord } from './keys.js';
import type { TestGateway } from './gateway.js';

/** A new workspace, made through the API; its id. */
export async function createWorkspace(gw: TestGateway, name: string): Promise<string> {
  const res = await gw.call('/workspaces', { body: { name } });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { id: string }).id;
}

/** A workspace service key seeded in the store; its secret. */
export async function workspaceKey(gw: TestGateway, workspaceId: string, scopes: string[], overrides: Partial<ApiKeyRecord> = {}): Promise<string> {
  const rec = keyRecord({ workspaceId, scopes, ...overrides });
  await gw.store.apiKeys.insert(rec);
  return `secret-${rec.id}`;
}

/** The parsed JSON body, after checking the status (the body is in the failure message). */
export async function expectJson<T = Record<string, any>>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}
