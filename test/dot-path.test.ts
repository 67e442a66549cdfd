import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deletePath, getChild, getPath, parsePath, removeChild, validatePath } from '../src/shared/dot-path.js';

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
      assert.match(validatePath(bad)!, /^invalid path/, bad);
    }
    assert.equal(validatePath('a.b[0].c'), null);
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

describe('deletePath', () => {
  it('removes a nested key in place', () => {
    const o = { a: { b: { c: 1, d: 2 } } };
    assert.equal(deletePath(o, 'a.b.c'), true);
    assert.deepEqual(o, { a: { b: { d: 2 } } });
    assert.equal(Object.hasOwn(o.a.b, 'c'), false);
  });

  it('takes an array element out, moving later ones down', () => {
    const o = { m: ['a', 'b', 'c'] };
    assert.equal(deletePath(o, 'm[1]'), true);
    assert.deepEqual(o, { m: ['a', 'c'] });
    assert.equal(deletePath(o, 'm.1'), true);
    assert.deepEqual(o, { m: ['a'] });
    assert.equal(JSON.stringify(o), '{"m":["a"]}');
  });

  it('removes keys inside array elements', () => {
    const o = { messages: [{ role: 'user', name: 'x' }] };
    assert.equal(deletePath(o, 'messages[0].name'), true);
    assert.deepEqual(o, { messages: [{ role: 'user' }] });
  });

  it('does nothing, and does not throw, when the path is missing or malformed', () => {
    const o = { a: { b: 1 }, m: [1], s: 'str', n: null };
    const before = structuredClone(o);
    for (const p of ['x', 'a.c', 'a.b.c', 'm[1]', 'm.x', 'm.length', 's.length', 'n.x', 'x.y.z', 'a..b', 'constructor']) {
      assert.equal(deletePath(o, p), false, p);
    }
    assert.deepEqual(o, before);
    assert.equal(deletePath(undefined, 'a'), false);
  });

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
