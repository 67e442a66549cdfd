// The primary's wait for its first workers: done when every one listens,
// failed when one exits first or one is still starting after the limit.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { everyListening } from '../src/cluster/listening.js';

describe('everyListening', () => {
  it('resolves once every worker listens, and leaves no timer behind', async () => {
    const ws = [new EventEmitter(), new EventEmitter()];
    let done = false;
    const p = everyListening(ws, 60_000).then(() => (done = true));
    ws[0]!.emit('listening');
    await new Promise((r) => setImmediate(r));
    assert.equal(done, false, 'one worker still starting');
    ws[1]!.emit('listening');
    await p;
    // A 60 s timer left armed would hold this test's process open; node:test would then report the file late, not fail.
    assert.equal(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length, 0);
  });

  it('rejects when a worker exits before it listens, naming its code', async () => {
    const ws = [new EventEmitter(), new EventEmitter()];
    const p = everyListening(ws, 60_000);
    ws[0]!.emit('listening');
    ws[1]!.emit('exit', 3);
    await assert.rejects(p, /a worker exited \(code 3\) before it listened/);
  });

  it('rejects when a worker neither listens nor exits within the limit', async () => {
    const ws = [new EventEmitter(), new EventEmitter()];
    const p = everyListening(ws, 50);
    ws[0]!.emit('listening');
    await assert.rejects(p, /a worker did not listen within 50 ms/);
    // One that exits after the limit changes nothing (no unhandled rejection).
    ws[1]!.emit('exit', 1);
  });
});
