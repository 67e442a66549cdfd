/**
 * The keep-response step waits a bounded time for a Response to be stored:
 * a database that stalls or fails does not hold, or fail, the answer.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { keepResponse } from '../src/pipeline/response-keeper.js';
import type { RequestContext } from '../src/pipeline/context.js';
import type { ResponseRepo } from '../src/store/responses.js';

function answered(): RequestContext {
  return {
    responseTurn: { input: [{ role: 'user', content: 'hi' }] },
    answer: { status: 200, headers: {}, body: JSON.stringify({ id: 'resp_sy1', object: 'response', status: 'completed', output: [] }), addedUsage: false },
    served: null,
    result: { answer: {} },
    key: { workspaceId: 'ws' },
  } as unknown as RequestContext;
}

describe('keep-response', { timeout: 10_000 }, () => {
  it('goes on when the store never answers (the write finishes behind the answer)', async () => {
    let asked = 0;
    const stalled = { save: () => (asked++, new Promise<void>(() => {})) } as unknown as ResponseRepo;
    assert.equal(await keepResponse(stalled, () => assert.fail('no error')).run(answered()), 'next');
    assert.equal(asked, 1);
  });

  it('goes on when the store fails, and says so', async () => {
    const errors: unknown[] = [];
    const failing = { save: () => Promise.reject(new Error('disk full')) } as unknown as ResponseRepo;
    assert.equal(await keepResponse(failing, (e) => errors.push(e)).run(answered()), 'next');
    assert.deepEqual(errors.map((e) => (e as Error).message), ['disk full']);
  });
});
