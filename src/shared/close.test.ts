import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeInTurn } from './close.js';

describe('closeInTurn', () => {
  it('runs every step in order, awaiting each, and resolves when none fails', async () => {
    const ran: string[] = [];
    await closeInTurn([
      async () => {
        await new Promise((r) => setTimeout(r, 5));
        ran.push('a');
      },
      () => void ran.push('b'),
      () => undefined,
    ]);
    assert.deepEqual(ran, ['a', 'b']);
  });

  it('a step that throws or rejects stops none after it; its error is thrown once all have run', async () => {
    const ran: string[] = [];
    const writer = new Error('the writer could not flush');
    const promise = closeInTurn([
      () => Promise.reject(writer),
      () => void ran.push('redis'),
      () => void ran.push('store'),
    ]);
    await assert.rejects(promise, (err) => err === writer);
    assert.deepEqual(ran, ['redis', 'store']);
  });

  it('several failures: an AggregateError holding each, in order', async () => {
    const a = new Error('a');
    const b = new Error('b');
    const ran: string[] = [];
    await assert.rejects(
      closeInTurn([
        () => {
          throw a;
        },
        () => Promise.reject(b),
        () => void ran.push('last'),
      ]),
      (err) => err instanceof AggregateError && err.errors[0] === a && err.errors[1] === b,
    );
    assert.deepEqual(ran, ['last']);
  });
});
