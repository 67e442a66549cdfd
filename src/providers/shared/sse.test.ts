// The server-sent-events reader every SSE stream translation uses.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { MAX_EVENT_BYTES, SseReader, TOO_LONG_EVENT } from './sse.js';
import { AnthropicStream } from '../anthropic/chat/stream.js';

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

  it('reads the same events wherever a stream is split, into two chunks or one byte at a time', () => {
    const bytes = Buffer.from('event: a\r\ndata: é🎉\r\n\r\n: note\rdata: x\r\rdata:1\ndata: 2\n\ndata: last');
    const want = readAll([bytes]);
    assert.deepEqual(want, [{ event: 'a', data: 'é🎉' }, { event: undefined, data: 'x' }, { event: undefined, data: '1\n2' }, { event: undefined, data: 'last' }]);
    for (let i = 1; i < bytes.length; i++) assert.deepEqual(readAll([bytes.subarray(0, i), bytes.subarray(i)]), want, `split at ${i}`);
    assert.deepEqual(readAll([...bytes].map((b) => Buffer.from([b]))), want);
  });

  it('a long line coming in small chunks is searched and copied in time linear in its length', () => {
    // What the reader does per byte, counted where it is done: characters read one by one,
    // bytes searched for a line end, bytes copied. Rescanning the line on every chunk counts ~n²/2 KiB.
    const size = 256 * 1024;
    let scanned = 0;
    let copied = 0;
    const { charCodeAt } = String.prototype;
    const { indexOf, copy } = Buffer.prototype;
    String.prototype.charCodeAt = function (this: string, i: number) {
      scanned++;
      return charCodeAt.call(this, i);
    };
    Buffer.prototype.indexOf = function (this: Buffer, ...args: Parameters<Buffer['indexOf']>) {
      const at = indexOf.apply(this, args);
      scanned += (at === -1 ? this.length : at + 1) - (typeof args[1] === 'number' ? args[1] : 0);
      return at;
    };
    Buffer.prototype.copy = function (this: Buffer, ...args: Parameters<Buffer['copy']>) {
      const n = copy.apply(this, args);
      copied += n;
      return n;
    };
    let events;
    try {
      const r = new SseReader();
      const piece = Buffer.alloc(1024, 0x61);
      r.push(Buffer.from('data: '));
      for (let sent = 0; sent < size; sent += piece.length) assert.deepEqual(r.push(piece), []);
      events = r.push(Buffer.from('\n\n'));
    } finally {
      String.prototype.charCodeAt = charCodeAt;
      Buffer.prototype.indexOf = indexOf;
      Buffer.prototype.copy = copy;
    }
    assert.deepEqual(events, [{ event: undefined, data: 'a'.repeat(size) }]);
    assert.ok(scanned <= 3 * size, `scanned ${scanned} for a line of ${size}`);
    assert.ok(copied <= 3 * size, `copied ${copied} for a line of ${size}`);
  });

  it(`an event past ${MAX_EVENT_BYTES} bytes is read as unreadable data, and nothing after it`, () => {
    const MiB = Buffer.alloc(1024 * 1024, 0x61);
    // One line that never ends.
    let r = new SseReader();
    r.push(Buffer.from('data: {"id":1}\n\ndata: '));
    const pushed = Array.from({ length: 17 }, () => r.push(MiB));
    assert.deepEqual(pushed.slice(0, 15), Array(15).fill([]));
    assert.deepEqual(pushed[15], [{ event: undefined, data: TOO_LONG_EVENT }]);
    assert.deepEqual(pushed[16], []);
    assert.deepEqual([...r.push(Buffer.from('\n\ndata: {"id":2}\n\n')), ...r.end()], []);
    assert.throws(() => JSON.parse(TOO_LONG_EVENT));
    // Data lines that each end, in one chunk, adding up past it.
    r = new SseReader();
    const line = Buffer.concat([Buffer.from('data: '), MiB, Buffer.from('\n')]);
    assert.deepEqual(r.push(Buffer.concat(Array(17).fill(line))), [{ event: undefined, data: TOO_LONG_EVENT }]);
    // Up to it, an event is read whole.
    r = new SseReader();
    const most = Buffer.alloc(MAX_EVENT_BYTES - 'data: '.length, 0x62);
    assert.deepEqual(r.push(Buffer.concat([Buffer.from('data: '), most, Buffer.from('\n\n')])), [{ event: undefined, data: most.toString() }]);
  });

  it('a translated stream ends on an event past the limit as on any unreadable event: 502 bad_upstream_stream', async () => {
    // A whole stream, but for one event (JSON, which the translator would skip) longer than the limit.
    const event = (type: string, e: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...e })}\n\n`;
    const start = event('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], usage: { input_tokens: 1, output_tokens: 0 } } });
    const stop = event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } }) + event('message_stop', {});
    const body = [start + 'event: ping\ndata: {"type":"ping","pad":"', ...Array(17).fill('a'.repeat(1024 * 1024)), '"}\n\n' + stop].map((s) => Buffer.from(s));
    let out = '';
    for await (const c of Readable.from(body).pipe(new AnthropicStream(false))) out += c.toString();
    assert.ok(!out.includes('[DONE]'));
    const last = JSON.parse(out.trimEnd().split('\n\n').at(-1)!.replace(/^data: /, ''));
    assert.equal(last.error.code, 'bad_upstream_stream');
  });
});
