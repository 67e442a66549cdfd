import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { getChild, getPath, parsePath, removeChild } from '../src/shared/dot-path.js';

describe('parsePath', () => {
  it('reads dots and brackets alike', () => {
    assert.deepEqual(parsePath('a.b.0.c'), ['a', 'b', 0, 'c']);
    assert.deepEqual(parsePath('a.b[0].c'), ['a', 'b', 0, 'c']);
    assert.deepEqual(parsePath('messages[2][1]'), ['messages', 2, 1]);
    assert.deepEqual(parsePath('[0].x'), [0, 'x']);
    assert.deepEqual(parsePath('model'), ['model']);
  });

  it('keeps non-canonical numbers as keys', () => {
    assert.deepEqual(parsePath('a.01.-1.1e3'), ['a', '01', '-1', '1e3']);
    assert.deepEqual(parsePath('a.99999999999999999999'), ['a', '99999999999999999999']);
  });

  it('caches: the same path gives the same segments', () => {
    assert.equal(parsePath('x.y[3]'), parsePath('x.y[3]'));
  });

  it('rejects malformed paths', () => {
    for (const bad of ['', '.a', 'a.', 'a..b', 'a[', 'a[]', 'a[x]', 'a[-1]', 'a[0]b', 'a.[0]', 'a]', 'a[0]]']) {
      assert.equal(parsePath(bad), null, bad);
    }
  });
});

describe('getPath', () => {
  const body = {
    model: 'gpt',
    messages: [
      { role: 'system', content: 'x' },
      { role: 'user', content: 'y', name: 'ann' },
    ],
    response_format: { json_schema: { strict: true } },
    nothing: null,
    byIndex: { '0': 'zero' },
  };

  it('reads nested keys and array indices', () => {
    assert.equal(getPath(body, 'model'), 'gpt');
    assert.equal(getPath(body, 'messages[1].name'), 'ann');
    assert.equal(getPath(body, 'messages.1.name'), 'ann');
    assert.equal(getPath(body, 'response_format.json_schema.strict'), true);
    assert.equal(getPath(body, 'nothing'), null);
    assert.equal(getPath(body, 'byIndex.0'), 'zero');
    assert.equal(getPath(body, 'byIndex[0]'), 'zero');
  });

  it('is undefined for anything missing, without throwing', () => {
    assert.equal(getPath(body, 'messages[5].role'), undefined);
    assert.equal(getPath(body, 'messages[0].name'), undefined);
    assert.equal(getPath(body, 'model.length'), undefined);
    assert.equal(getPath(body, 'nothing.x'), undefined);
    assert.equal(getPath(body, 'x.y.z'), undefined);
    assert.equal(getPath(body, 'a..b'), undefined);
    assert.equal(getPath(null, 'a'), undefined);
  });

  it('sees own properties only, and no array properties', () => {
    assert.equal(getPath(body, 'constructor'), undefined);
    assert.equal(getPath(body, 'model.toString'), undefined);
    assert.equal(getPath(body, 'messages.length'), undefined);
    assert.equal(getPath(body, 'messages.map'), undefined);
    assert.equal(getChild(body.messages, 'length'), undefined);
  });
});

describe('removeChild', () => {
  it('removeChild works on objects and arrays', () => {
    const arr = [1, 2, 3];
    assert.equal(removeChild(arr, 0), true);
    assert.deepEqual(arr, [2, 3]);
    assert.equal(removeChild(arr, 'length'), false);
    const obj: Record<string, unknown> = { 0: 'x' };
    assert.equal(removeChild(obj, 0), true);
    assert.deepEqual(obj, {});
    assert.equal(removeChild('str', 0), false);
  });
});
