// A worker's calls to its primary fail as fast as a Redis command does: a send
// the channel refused rejects at once, not after the timeout; past
// MAX_PENDING_CALLS waiting calls more are refused at once; a call that timed
// out leaves nothing behind. Over a fake channel, with mocked timers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { CALL_TIMEOUT_MS, MAX_PENDING_CALLS, PrimaryLink } from '../src/cluster/link.js';

type SendCallback = (err: Error | null) => void;

/** A process's IPC end whose `send` does what `onSend` says and never answers. */
function channel(onSend: (cb: SendCallback) => boolean = (cb) => (setImmediate(() => cb(null)), true)): NodeJS.Process {
  const c = new EventEmitter() as EventEmitter & { connected: boolean; send: unknown };
  c.connected = true;
  c.send = (_m: unknown, _h: unknown, _o: unknown, cb: SendCallback) => onSend(cb);
  return c as unknown as NodeJS.Process;
}

describe('PrimaryLink', () => {
  it('a send the channel failed rejects at once', async () => {
    const link = new PrimaryLink(channel((cb) => (setImmediate(() => cb(new Error('EPIPE'))), true)));
    const started = performance.now();
    await assert.rejects(link.call('cache.get', ['k', 0]), /could not be sent to the primary: EPIPE/);
    assert.ok(performance.now() - started < 50);
  });

  it('a send refused by a channel that has just closed rejects at once', async () => {
    const c = channel(() => {
      (c as unknown as { connected: boolean }).connected = false;
      return false;
    });
    const started = performance.now();
    await assert.rejects(new PrimaryLink(c).call('cache.get', ['k', 0]), /the primary process is gone/);
    assert.ok(performance.now() - started < 50);
  });

  it('refuses calls past MAX_PENDING_CALLS at once; a timed-out call frees its place', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const link = new PrimaryLink(channel(() => true));
    const waiting = Array.from({ length: MAX_PENDING_CALLS }, () => link.call('cache.get', ['k', 0]).then(String, (e: Error) => e.message));
    await assert.rejects(link.call('cache.get', ['k', 0]), /calls to the primary wait for an answer already/);
    t.mock.timers.tick(CALL_TIMEOUT_MS);
    const messages = await Promise.all(waiting);
    assert.ok(messages.every((m) => m === `the primary did not answer cache.get within ${CALL_TIMEOUT_MS} ms`));
    // Every timed-out call's entry is gone: a full cap of new calls is accepted again.
    const again = Array.from({ length: MAX_PENDING_CALLS }, () => link.call('cache.get', ['k', 0]).then(String, (e: Error) => e.message));
    t.mock.timers.tick(CALL_TIMEOUT_MS);
    assert.ok((await Promise.all(again)).every((m) => /did not answer/.test(m)));
  });
});
