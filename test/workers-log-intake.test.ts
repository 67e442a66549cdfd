// A malformed log batch from a worker never throws in the primary's message
// handler (that would end the cluster): its entries are counted as dropped
// with the writer's, and it is said once per WARN_EVERY. A closing worker's
// forwarder sends what it holds, then `logs-end`, which the primary waits
// for before it closes the writer (primary.ts).
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PrimaryLink } from '../src/cluster/link.js';
import { LogForwarder } from '../src/cluster/log-forwarder.js';
import { LogIntake, WARN_EVERY } from '../src/cluster/log-intake.js';
import type { ToPrimary } from '../src/cluster/messages.js';
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

describe('LogForwarder', () => {
  it('on close sends the entries it holds, then logs-end, once every batch was handed to the channel', async () => {
    const sent: ToPrimary[] = [];
    // A channel that hands each message on a later turn, as a busy pipe would.
    const channel = Object.assign(new EventEmitter(), {
      connected: true,
      send(m: ToPrimary, _h: unknown, _o: unknown, done: (err: Error | null) => void) {
        setTimeout(() => {
          sent.push(m);
          done(null);
        }, 5);
        return true;
      },
    });
    const forwarder = new LogForwarder(new PrimaryLink(channel as unknown as NodeJS.Process), () => assert.fail('nothing dropped'), 64 * 1024 * 1024);
    for (let i = 0; i < SEND_EVERY + 3; i++) forwarder.write(logEntry());
    await forwarder.close();
    assert.deepEqual(
      sent.map((m) => m.sy),
      ['logs', 'logs', 'logs-end'],
    );
    const entries = sent.flatMap((m) => (m.sy === 'logs' ? [m.batch.count] : []));
    assert.equal(entries.reduce((a, b) => a + b, 0), SEND_EVERY + 3);
  });
});
