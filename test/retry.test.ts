// Unit tests of the retry policy's waits: the bounds the HTTP tests cannot
// afford to wait for (the 60 s Retry-After cap) or cannot pin (jitter).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backoffMs, DEFAULT_RETRY_CODES, isRetriable, MAX_RETRY_AFTER_MS, retryAfterMs } from '../src/routing/retry.js';

describe('backoffMs', () => {
  it('is 100 ms · 2^n scaled by a jitter factor in [0.5, 1)', () => {
    for (let n = 0; n < 6; n++) {
      const ceiling = 100 * 2 ** n;
      assert.equal(backoffMs(n, () => 0), ceiling / 2, `n=${n}, lowest`);
      assert.equal(backoffMs(n, () => 0.5), ceiling * 0.75, `n=${n}, middle`);
      const top = backoffMs(n, () => 0.999999);
      assert.ok(top <= ceiling && top >= ceiling * 0.99, `n=${n}, highest ${top}`);
    }
  });

  it('stays within its bounds for real random values', () => {
    for (let i = 0; i < 1000; i++) {
      const n = i % 5;
      const v = backoffMs(n);
      assert.ok(v >= 50 * 2 ** n && v <= 100 * 2 ** n, `n=${n}: ${v}`);
    }
  });

  it('is capped (10 s) however many retries came before', () => {
    assert.ok(backoffMs(7, () => 0.999999) <= 10_000);
    assert.ok(backoffMs(50, () => 0.999999) <= 10_000);
    assert.equal(backoffMs(50, () => 0), 5_000);
  });
});

describe('retryAfterMs', () => {
  const NOW = Date.parse('2025-01-01T00:00:00Z');

  it('reads retry-after-ms as milliseconds', () => {
    assert.equal(retryAfterMs({ 'retry-after-ms': '300' }), 300);
    assert.equal(retryAfterMs({ 'retry-after-ms': '0' }), 0);
    assert.equal(retryAfterMs({ 'retry-after-ms': '12.5' }), 12.5);
  });

  it('reads retry-after as seconds', () => {
    assert.equal(retryAfterMs({ 'retry-after': '1' }), 1000);
    assert.equal(retryAfterMs({ 'retry-after': '0.5' }), 500);
  });

  it('reads retry-after as an HTTP date, never negative', () => {
    assert.equal(retryAfterMs({ 'retry-after': new Date(NOW + 5000).toUTCString() }, NOW), 5000);
    assert.equal(retryAfterMs({ 'retry-after': new Date(NOW - 5000).toUTCString() }, NOW), 0);
  });

  it('retry-after-ms wins over retry-after', () => {
    assert.equal(retryAfterMs({ 'retry-after-ms': '200', 'retry-after': '30' }), 200);
  });

  it('an unusable retry-after-ms falls back to retry-after', () => {
    assert.equal(retryAfterMs({ 'retry-after-ms': 'soon', 'retry-after': '2' }), 2000);
    assert.equal(retryAfterMs({ 'retry-after-ms': '-5', 'retry-after': '2' }), 2000);
  });

  it('caps every form at 60 s', () => {
    assert.equal(MAX_RETRY_AFTER_MS, 60_000);
    assert.equal(retryAfterMs({ 'retry-after-ms': '600000' }), 60_000);
    assert.equal(retryAfterMs({ 'retry-after': '3600' }), 60_000);
    assert.equal(retryAfterMs({ 'retry-after': new Date(NOW + 3_600_000).toUTCString() }, NOW), 60_000);
    assert.equal(retryAfterMs({ 'retry-after': '60' }), 60_000);
    assert.equal(retryAfterMs({ 'retry-after': '59' }), 59_000);
  });

  it('is null without a usable header', () => {
    assert.equal(retryAfterMs({}), null);
    assert.equal(retryAfterMs({ 'retry-after': 'later' }), null);
    assert.equal(retryAfterMs({ 'retry-after': '-1' }), null);
    assert.equal(retryAfterMs({ 'x-other': '5' }), null);
  });

  it('takes the first of repeated headers', () => {
    assert.equal(retryAfterMs({ 'retry-after': ['2', '9'] }), 2000);
  });
});

describe('isRetriable', () => {
  it('defaults to 429 500 502 503 504', () => {
    assert.deepEqual([...DEFAULT_RETRY_CODES].sort(), [429, 500, 502, 503, 504]);
    for (const s of [429, 500, 502, 503, 504]) assert.equal(isRetriable({ attempts: 1 }, s), true, String(s));
    for (const s of [400, 401, 404, 408, 501]) assert.equal(isRetriable({ attempts: 1 }, s), false, String(s));
  });

  it('on_status_codes replace the defaults', () => {
    assert.equal(isRetriable({ attempts: 1, on_status_codes: [400] }, 400), true);
    assert.equal(isRetriable({ attempts: 1, on_status_codes: [400] }, 503), false);
  });
});
