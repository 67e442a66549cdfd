import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PROVIDER_KEYS, PROVIDER_SETTINGS } from './settings.js';

describe('provider settings', () => {
  it('no config key belongs to two providers', () => {
    const seen = new Map<string, number>();
    PROVIDER_SETTINGS.forEach((s, i) => {
      for (const key of Object.keys(s.keys)) {
        assert.equal(seen.get(key), undefined, `${key} is declared by two providers' settings`);
        seen.set(key, i);
      }
    });
    assert.deepEqual(Object.keys(PROVIDER_KEYS).sort(), [...seen.keys()].sort());
  });

});
