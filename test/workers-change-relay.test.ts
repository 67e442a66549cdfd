// The relay of store changes between a cluster's workers never queues without
// bound: past MAX_IN_FLIGHT notices not yet sent it drops them, and the next
// notice that goes is `all`, so a receiver drops its caches rather than keep a
// stale entry. The relay across real workers: workers-http.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ChangeSender, isChange, MAX_IN_FLIGHT } from '../src/cluster/change-relay.js';
import type { Change } from '../src/store/changes.js';

describe('ChangeSender', () => {
  it('sends each change while the channel keeps up', () => {
    const sent: Change[] = [];
    const s = new ChangeSender((c, done) => (sent.push(c), done(true), true));
    s.send({ kind: 'api_key', id: 'a' });
    s.send({ kind: 'config', id: 'b' });
    assert.deepEqual(sent, [
      { kind: 'api_key', id: 'a' },
      { kind: 'config', id: 'b' },
    ]);
  });

  it('holds at most MAX_IN_FLIGHT unsent; after a drop the next notice is `all`', () => {
    const sent: Change[] = [];
    const pending: Array<(ok: boolean) => void> = [];
    const s = new ChangeSender((c, done) => (sent.push(c), pending.push(done), true));
    for (let i = 0; i < MAX_IN_FLIGHT + 50; i++) s.send({ kind: 'api_key', id: String(i) });
    assert.equal(sent.length, MAX_IN_FLIGHT);
    pending.shift()!(true);
    s.send({ kind: 'api_key', id: 'late' });
    assert.deepEqual(sent.at(-1), { kind: 'all', id: '*' });
    pending.shift()!(true);
    s.send({ kind: 'api_key', id: 'later' });
    assert.deepEqual(sent.at(-1), { kind: 'api_key', id: 'later' });
  });

  it('a failed send or a closed channel makes the next notice `all`', () => {
    const sent: Change[] = [];
    let open = false;
    const s = new ChangeSender((c, done) => {
      if (!open) return false;
      sent.push(c);
      done(sent.length !== 1);
      return true;
    });
    s.send({ kind: 'api_key', id: 'lost' });
    open = true;
    s.send({ kind: 'api_key', id: 'x' }); // fails after handing
    s.send({ kind: 'api_key', id: 'y' });
    s.send({ kind: 'api_key', id: 'z' });
    assert.deepEqual(sent, [
      { kind: 'all', id: '*' },
      { kind: 'all', id: '*' },
      { kind: 'api_key', id: 'z' },
    ]);
  });

  it('the primary relays only well-formed changes', () => {
    assert.ok(isChange({ kind: 'api_key', id: 'k' }));
    for (const bad of [null, 'api_key:k', { kind: 'api_key' }, { kind: 1, id: 'k' }, { kind: 'x', id: 'y'.repeat(2000) }]) assert.ok(!isChange(bad));
  });
});
