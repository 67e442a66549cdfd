// Budget periods (src/limits/budget-period.ts): calendar weeks and months,
// every N days from the creation day, anchored to next_usage_reset_at (before
// and after it), months clamped to their last day, and no reset at all.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lastResetAt, periodOf } from '../src/limits/budget-period.js';

const DAY = 86_400_000;
const at = (s: string): number => Date.parse(s);
const sec = (s: string): number => at(s) / 1000;
const none = { periodicReset: null, periodicResetDays: null, nextUsageResetAt: null, createdAt: sec('2026-01-01T10:00:00Z') } as const;

describe('budget periods', () => {
  it('weekly: Monday 00:00 UTC to the next Monday', () => {
    const p = periodOf({ ...none, periodicReset: 'weekly' }, at('2026-11-22T05:00:00Z')); // a Sunday
    assert.deepEqual(p, { start: at('2026-11-16T00:00:00Z'), end: at('2026-11-23T00:00:00Z') });
  });

  it('monthly: the 1st of the month, or the anchor day clamped to short months', () => {
    assert.deepEqual(periodOf({ ...none, periodicReset: 'monthly' }, at('2026-02-10T00:00:00Z')), { start: at('2026-02-01T00:00:00Z'), end: at('2026-03-01T00:00:00Z') });
    const on31st = { ...none, periodicReset: 'monthly' as const, nextUsageResetAt: sec('2026-01-31T00:00:00Z') };
    assert.deepEqual(periodOf(on31st, at('2026-02-10T00:00:00Z')), { start: at('2026-01-31T00:00:00Z'), end: at('2026-02-28T00:00:00Z') });
    assert.deepEqual(periodOf(on31st, at('2026-03-30T00:00:00Z')), { start: at('2026-02-28T00:00:00Z'), end: at('2026-03-31T00:00:00Z') });
    assert.deepEqual(periodOf(on31st, at('2025-12-31T12:00:00Z')), { start: at('2025-12-31T00:00:00Z'), end: at('2026-01-31T00:00:00Z') });
  });

  it('every N days from the creation day, or around the anchor', () => {
    const every3 = { ...none, periodicResetDays: 3 };
    assert.deepEqual(periodOf(every3, at('2026-01-05T01:00:00Z')), { start: at('2026-01-04T00:00:00Z'), end: at('2026-01-07T00:00:00Z') });
    assert.equal(lastResetAt(every3, at('2026-01-02T00:00:00Z')), null, 'no reset in the first period');
    assert.equal(lastResetAt(every3, at('2026-01-05T01:00:00Z')), at('2026-01-04T00:00:00Z'));
    const anchored = { ...every3, nextUsageResetAt: sec('2026-03-01T00:00:00Z') };
    assert.deepEqual(periodOf(anchored, at('2026-02-28T00:00:00Z')), { start: at('2026-02-26T00:00:00Z'), end: at('2026-03-01T00:00:00Z') });
    assert.equal(periodOf(anchored, at('2026-03-01T00:00:00Z')).end, at('2026-03-01T00:00:00Z') + 3 * DAY);
  });

  it('no reset: one period that never ends', () => {
    assert.deepEqual(periodOf(none, at('2030-01-01T00:00:00Z')), { start: 0, end: null });
    assert.equal(lastResetAt(none, at('2030-01-01T00:00:00Z')), null);
  });
});
