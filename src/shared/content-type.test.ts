import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isEventStreamType, isJsonType, isReadable } from './content-type.js';

describe('content types', () => {
  it('JSON: application/json and application/…+json, parameters and case aside', () => {
    for (const t of ['application/json', 'Application/JSON; charset=utf-8', ' application/problem+json ', 'application/vnd.api+json;v=1']) assert.ok(isJsonType(t), t);
    for (const t of [undefined, '', 'text/json+x', 'text/plain', 'application/jsonl', 'multipart/form-data', ['application/json']]) assert.ok(!isJsonType(t), String(t));
  });
  it('event streams, parameters and case aside', () => {
    assert.ok(isEventStreamType('Text/Event-Stream; charset=utf-8'));
    assert.ok(!isEventStreamType('text/event-streams'));
    assert.ok(!isEventStreamType(undefined));
  });
  it('readable unless a content coding was applied', () => {
    assert.ok(isReadable({}));
    assert.ok(isReadable({ 'content-encoding': 'identity' }));
    assert.ok(!isReadable({ 'content-encoding': 'gzip' }));
  });
});
