// boundedMemo computes a key once while it is kept, and keeps at most `max`
// keys: past them the oldest goes and is computed again when next asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundedMemo } from './memo.js';

test('boundedMemo keeps at most max keys, dropping the oldest', () => {
  const computed: string[] = [];
  const memo = boundedMemo(3, (k) => {
    computed.push(k);
    return k.length;
  });
  for (const k of ['a', 'bb', 'a', 'ccc', 'bb']) memo(k);
  assert.deepEqual(computed, ['a', 'bb', 'ccc']);
  memo('dddd'); // a goes
  memo('bb');
  memo('a');
  assert.deepEqual(computed, ['a', 'bb', 'ccc', 'dddd', 'a']);
  for (let i = 0; i < 10_000; i++) memo(`k${i}`);
  memo('ccc');
  assert.equal(computed.at(-1), 'ccc', 'computed again after 10,000 other keys');
});
