// Unit tests of the key lifetime rules: rotation policies, the organisation's enforced
// period for user keys, and the user key TTL.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { enforcePeriod, readPolicy, userKeyExpiry } from '../src/admin/key-policy.js';

// Wednesday 2026-05-13 10:30 UTC.
const NOW = Date.UTC(2026, 4, 13, 10, 30);
const sec = (ms: number): number => ms / 1000;

describe('readPolicy', () => {
  it('a period alone: its next rotation (Monday / the 1st, 00:00 UTC), transition 30 minutes', () => {
    assert.deepEqual(readPolicy({ rotation_period: 'weekly' }, NOW), {
      ok: true,
      value: { rotation_period: 'weekly', next_rotation_at: sec(Date.UTC(2026, 4, 18)), key_transition_period_ms: 1_800_000 },
    });
    assert.deepEqual(readPolicy({ rotation_period: 'monthly', key_transition_period_ms: 3_600_000 }, NOW), {
      ok: true,
      value: { rotation_period: 'monthly', next_rotation_at: sec(Date.UTC(2026, 5, 1)), key_transition_period_ms: 3_600_000 },
    });
  });

  it('next_rotation_at is normalised to UTC midnight of its day (offsets applied first) and wins over the period for the next run', () => {
    const r = readPolicy({ rotation_period: 'monthly', next_rotation_at: '2026-05-20T23:59:59-02:00' }, NOW);
    assert.ok(r.ok);
    assert.equal(r.value.next_rotation_at, sec(Date.UTC(2026, 4, 21)));
    const plain = readPolicy({ next_rotation_at: '2026-05-14' }, NOW);
    assert.ok(plain.ok);
    assert.deepEqual(plain.value, { rotation_period: null, next_rotation_at: sec(Date.UTC(2026, 4, 14)), key_transition_period_ms: 1_800_000 });
  });

  it('refuses: no period nor date, a day already begun, a transition as long as the period', () => {
    const refusals: [Parameters<typeof readPolicy>[0], string][] = [
      [{}, 'rotation_policy'],
      [{ rotation_period: null, next_rotation_at: null }, 'rotation_policy'],
      [{ next_rotation_at: '2026-05-13T23:00:00Z' }, 'rotation_policy.next_rotation_at'],
      [{ next_rotation_at: '2026-06-31' }, 'rotation_policy.next_rotation_at'],
      [{ rotation_period: 'weekly', key_transition_period_ms: 7 * 86_400_000 }, 'rotation_policy.key_transition_period_ms'],
      [{ rotation_period: 'monthly', key_transition_period_ms: 28 * 86_400_000 }, 'rotation_policy.key_transition_period_ms'],
    ];
    for (const [input, param] of refusals) {
      const r = readPolicy(input, NOW);
      assert.ok(!r.ok, JSON.stringify(input));
      assert.equal(r.error.status, 400);
      assert.equal(r.error.param, param, JSON.stringify(input));
    }
    // Just under the period is fine; a one-off date has no period to stay under.
    assert.ok(readPolicy({ rotation_period: 'weekly', key_transition_period_ms: 7 * 86_400_000 - 1 }, NOW).ok);
    assert.ok(readPolicy({ next_rotation_at: '2026-06-01', key_transition_period_ms: 40 * 86_400_000 }, NOW).ok);
  });
});

describe('enforcePeriod', () => {
  it('nothing enforced: the request as it is', () => {
    assert.deepEqual(enforcePeriod(null, null), { ok: true, value: null });
    assert.deepEqual(enforcePeriod({ rotation_period: 'weekly' }, null), { ok: true, value: { rotation_period: 'weekly' } });
  });

  it('enforced: no policy or no period gets it; the same period passes; another one, or an explicit null, is refused', () => {
    assert.deepEqual(enforcePeriod(null, 'monthly'), { ok: true, value: { rotation_period: 'monthly' } });
    assert.deepEqual(enforcePeriod({ key_transition_period_ms: 3_600_000 }, 'monthly'), {
      ok: true,
      value: { rotation_period: 'monthly', key_transition_period_ms: 3_600_000 },
    });
    assert.deepEqual(enforcePeriod({ rotation_period: 'weekly' }, 'weekly'), { ok: true, value: { rotation_period: 'weekly' } });
    for (const period of ['weekly', null] as const) {
      const r = enforcePeriod({ rotation_period: period }, 'monthly');
      assert.ok(!r.ok);
      assert.equal(r.error.param, 'rotation_policy.rotation_period');
    }
  });
});

describe('userKeyExpiry', () => {
  const now = sec(NOW);
  it('no TTL: whatever was asked (absent: never)', () => {
    assert.deepEqual(userKeyExpiry(undefined, null, now), { ok: true, value: null });
    assert.deepEqual(userKeyExpiry(now + 5, null, now), { ok: true, value: now + 5 });
  });

  it('a TTL: the default and the maximum; never is refused', () => {
    assert.deepEqual(userKeyExpiry(undefined, 3600, now), { ok: true, value: now + 3600 });
    assert.deepEqual(userKeyExpiry(now + 3600, 3600, now), { ok: true, value: now + 3600 });
    for (const asked of [now + 3601, null]) {
      const r = userKeyExpiry(asked, 3600, now);
      assert.ok(!r.ok);
      assert.equal(r.error.param, 'expires_at');
    }
  });
});
