// The server-sent-events reader every SSE stream translation uses.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SseReader } from './sse.js';

describe('cohere: SseReader', () => {
  const readAll = (pieces: (string | Buffer)[]) => {
    const r = new SseReader();
    const out = pieces.flatMap((p) => r.push(typeof p === 'string' ? Buffer.from(p) : p));
    return [...out, ...r.end()];
  };

  it('reads event and data fields, LF, CRLF and CR endings alike', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const text = `event: a${eol}data: {"x":1}${eol}${eol}: a comment${eol}data:no-space${eol}data: second line${eol}${eol}`;
      assert.deepEqual(readAll([text]), [
        { event: 'a', data: '{"x":1}' },
        { event: undefined, data: 'no-space\nsecond line' },
      ], JSON.stringify(eol));
    }
  });

  it('a CRLF split between chunks is one line ending, not two', () => {
    assert.deepEqual(readAll(['event: a\r', '\ndata: 1\r', '\n\r', '\n']), [{ event: 'a', data: '1' }]);
  });

  it('a UTF-8 character split between chunks survives', () => {
    const bytes = Buffer.from('data: é🎉\n\n');
    assert.deepEqual(readAll([...bytes].map((b) => Buffer.from([b]))), [{ event: undefined, data: 'é🎉' }]);
  });

  it('the last event counts even without its closing blank line; an event without data does not', () => {
    assert.deepEqual(readAll(['event: only-name\n\n', 'data: last']), [{ event: undefined, data: 'last' }]);
  });
});
