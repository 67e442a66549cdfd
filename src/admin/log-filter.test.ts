import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { logFilter } from './log-filter.js';

const filter = (q: string) => logFilter(new URLSearchParams(q));

describe('logFilter: status', () => {
  it('codes and classes, each once; a code its class takes is left out', () => {
    const f = filter('status=200, 404,4xx,200,5XX,503,4xx');
    assert.ok(f.ok);
    assert.deepEqual(f.value.status, { exact: [200], classes: [4, 5] });
  });

  it('a list repeated to the length of a URL stays one entry', () => {
    const f = filter(`status=${Array.from({ length: 4000 }, () => '429').join(',')}`);
    assert.ok(f.ok);
    assert.deepEqual(f.value.status, { exact: [429], classes: [] });
  });

  it('names the part that is neither a code nor a class', () => {
    const f = filter('status=200,6xx');
    assert.ok(!f.ok);
    assert.equal(f.error.param, 'status');
    assert.match(f.error.message, /'6xx' is neither a status code nor a class/);
  });
});
