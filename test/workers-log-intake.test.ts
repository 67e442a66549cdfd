// A malformed log batch from a worker never throws in the primary's message
// handler (that would end the cluster): its entries are counted as dropped
// with the writer's, and it is said once per WARN_EVERY.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LogIntake, WARN_EVERY } from '../src/cluster/log-intake.js';
import { EntryBatch, type PackedBatch } from '../src/logs/entry.js';
import type { LogQueueStats } from '../src/logs/queue.js';
import { SEND_EVERY } from '../src/logs/writer.js';
import { logEntry } from './support/logs.js';

function writer(throws = false): { written: PackedBatch[]; writeBatch(b: PackedBatch): void; stats(): LogQueueStats } {
  return {
    written: [],
    writeBatch(b) {
      if (throws) throw new Error('DataCloneError');
      this.written.push(b);
    },
    stats: () => ({ depth: 0, bytes: 0, flushed: 0, spilled: 0, replayed: 0, dropped: 2, storeDown: false }),
  };
}

function batch(n: number): PackedBatch {
  const b = new EntryBatch();
  for (let i = 0; i < n; i++) b.add(logEntry());
  return b.take();
}

describe('LogIntake', () => {
  it('hands a well-formed batch to the writer', () => {
    const w = writer();
    const intake = new LogIntake(w, () => assert.fail('no warning'));
    intake.take(batch(3));
    assert.equal(w.written.length, 1);
    assert.equal(intake.stats().dropped, 2);
  });

  it('drops and counts a malformed batch, warning once per WARN_EVERY', () => {
    const w = writer();
    const warnings: string[] = [];
    const intake = new LogIntake(w, (m) => warnings.push(m));
    const good = batch(3);
    intake.take({ ...good, values: good.values.slice(1) }); // 3 entries said, fewer values
    intake.take(null);
    intake.take({ ...good, bytes: 'not a buffer' });
    assert.equal(w.written.length, 0);
    assert.equal(intake.stats().dropped, 2 + 3 + 1 + 3);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /not a packed batch of entries\): 3 entries dropped/);
    for (let i = 3; i < WARN_EVERY + 1; i++) intake.take({ sy: 'garbage' });
    assert.equal(warnings.length, 2);
    // A count no worker sends (more than SEND_EVERY) is not believed: one entry lost, not a billion.
    const before = intake.stats().dropped;
    intake.take({ sy: 'garbage', count: 1e9 });
    intake.take({ sy: 'garbage', count: SEND_EVERY + 1 });
    assert.equal(intake.stats().dropped, before + 2);
  });

  it('a batch the writer throws on is dropped, not thrown', () => {
    const intake = new LogIntake(writer(true), () => {});
    assert.doesNotThrow(() => intake.take(batch(2)));
    assert.equal(intake.stats().dropped, 2 + 2);
  });
});
