/** Assertions on Result values (src/shared/errors.ts), for unit tests. */
import assert from 'node:assert/strict';
import type { GatewayError, Result } from '../../src/shared/errors.js';

/** The value of a Result that must be ok (the failure's param and message are the assertion's message). */
export function value<T>(r: Result<T, GatewayError>): T {
  assert.ok(r.ok, r.ok ? '' : `${r.error.param}: ${r.error.message}`);
  return r.value;
}

/** The error of a Result that must be a refusal. */
export function refusal(r: Result<unknown, GatewayError>): GatewayError {
  assert.ok(!r.ok, 'expected a refusal');
  return r.error;
}

/** The 400 naming `param` that a synchronous answer (not a promise) must be. */
export function refusedAt(r: Result<unknown, GatewayError> | Promise<unknown>, param: string): GatewayError {
  assert.ok(!(r instanceof Promise), 'answered synchronously');
  const e = refusal(r);
  assert.equal(e.status, 400);
  assert.equal(e.param, param);
  return e;
}
