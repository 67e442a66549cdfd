// A worker slot whose worker keeps dying waits longer each time, however long
// each one lived short of HEALTHY_MS; a worker that was healthy that long
// starts its slot over; slots do not share a delay.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HEALTHY_MS, MAX_MS, MIN_MS, RestartBackoff } from '../src/cluster/restart-backoff.js';

describe('RestartBackoff', () => {
  it('a worker exiting 11 s after each start waits longer each time, up to MAX_MS', () => {
    const b = new RestartBackoff(2);
    let now = 0;
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      const started = now;
      now += 11_000;
      const d = b.next(0, started, now);
      delays.push(d);
      now += d;
    }
    assert.deepEqual(delays, [MIN_MS, 200, 400, 800, 1600, 3200, 6400, MAX_MS, MAX_MS, MAX_MS]);
  });

  it('a worker healthy for HEALTHY_MS starts its slot over; other slots keep theirs', () => {
    const b = new RestartBackoff(2);
    for (let i = 0; i < 5; i++) b.next(0, 0, 1000);
    b.next(1, 0, 1000);
    assert.equal(b.next(0, 0, HEALTHY_MS), MIN_MS);
    assert.equal(b.next(0, 0, 1000), 2 * MIN_MS);
    assert.equal(b.next(1, 0, 1000), 2 * MIN_MS);
  });
});
