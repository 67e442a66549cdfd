// AWS event-stream decoding, against the test vectors of awslabs/aws-c-event-stream.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { decodeMessage, EventStreamDecoder, EventStreamError, MAX_MESSAGE } from './eventstream.js';
import { bytesCopied } from '../../../test/support/copies.js';
import { encodeMessage } from '../../../test/support/mock-bedrock.js';

const VECTORS = {
  all_headers:
    '000000cc000000af0fae64ca0a6576656e742d74797065040000a00c0c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e0a626f6f6c2066616c73650109626f6f6c207472756500046279746502cf08627974652062756606001449276d2061206c6974746c6520746561706f74210974696d657374616d70080000000000845fed05696e74313603002a05696e7436340500000000028757b20475756964090102030405060708090a0b0c0d0e0f107b27666f6f273a27626172277daba5f10c',
  empty_message: '000000100000000005c248eb7d98c8ff',
  int32_header: '0000002d0000001041c424b80a6576656e742d74797065040000a00c7b27666f6f273a27626172277d36f480a0',
  payload_no_headers: '0000001d00000000fd528c5a7b27666f6f273a27626172277dc3653936',
  payload_one_str_header:
    '0000003d0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b1',
};
const CORRUPT = {
  corrupted_headers:
    '0000003d0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b61666f6f273a27626172277d8d9c08b1',
  corrupted_header_len:
    '0000003d0000002107fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b1',
  corrupted_length:
    '0000003e0000002007fd83960c636f6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e7b27666f6f273a27626172277d8d9c08b1',
  corrupted_payload: '0000001d00000000fd528c5a5b27666f6f273a27626172277dc3653936',
};
const FOO_BAR = "{'foo':'bar'}";

describe('eventstream decoding', () => {
  it('decodes the valid vectors, every header type included', () => {
    const all = decodeMessage(Buffer.from(VECTORS.all_headers, 'hex'));
    assert.equal(all.payload.toString(), FOO_BAR);
    assert.deepEqual(all.headers, {
      'event-type': 40972,
      'content-type': 'application/json',
      'bool false': false,
      'bool true': true,
      byte: -49,
      'byte buf': Buffer.from("I'm a little teapot!"),
      timestamp: new Date(8675309),
      int16: 42,
      int64: 42424242n,
      uuid: '01020304-0506-0708-090a-0b0c0d0e0f10',
    });
    assert.deepEqual(decodeMessage(Buffer.from(VECTORS.empty_message, 'hex')), { headers: {}, payload: Buffer.alloc(0) });
    assert.deepEqual(decodeMessage(Buffer.from(VECTORS.int32_header, 'hex')).headers, { 'event-type': 40972 });
    assert.equal(decodeMessage(Buffer.from(VECTORS.payload_no_headers, 'hex')).payload.toString(), FOO_BAR);
    assert.deepEqual(decodeMessage(Buffer.from(VECTORS.payload_one_str_header, 'hex')).headers, { 'content-type': 'application/json' });
  });

  for (const [name, hex] of Object.entries(CORRUPT)) {
    it(`refuses ${name}`, () => {
      assert.throws(() => new EventStreamDecoder().push(Buffer.from(hex, 'hex')), EventStreamError);
    });
  }

  it('reassembles messages fed one byte at a time', () => {
    const bytes = Buffer.concat(Object.values(VECTORS).map((h) => Buffer.from(h, 'hex')));
    const d = new EventStreamDecoder();
    const got = [];
    for (let i = 0; i < bytes.length; i++) got.push(...d.push(bytes.subarray(i, i + 1)));
    assert.equal(got.length, 5);
    assert.equal(d.pending, 0);
    assert.deepEqual(got.map((m) => m.payload.toString()), [FOO_BAR, '', FOO_BAR, FOO_BAR, FOO_BAR]);
  });

  it('a corrupt prelude fails at once, without waiting for the length it claims', () => {
    const bad = Buffer.from(VECTORS.payload_one_str_header, 'hex');
    bad.writeUInt32BE(0x7fffffff, 0);
    assert.throws(() => new EventStreamDecoder().push(bad.subarray(0, 12)), /prelude CRC mismatch/);
  });

  it("the mock's encoder reproduces a published vector byte for byte", () => {
    assert.equal(encodeMessage({ 'content-type': 'application/json' }, Buffer.from(FOO_BAR)).toString('hex'), VECTORS.payload_one_str_header);
  });

  it('decodes the same messages wherever the bytes split, into two or three chunks; earlier messages stay intact', () => {
    const messages = [encodeMessage({ ':event-type': 'a' }, Buffer.from('first')), encodeMessage({ ':event-type': 'b' }, Buffer.from('second, longer'))];
    const bytes = Buffer.concat(messages);
    const read = (pieces: Buffer[]) => {
      const d = new EventStreamDecoder();
      const got = pieces.flatMap((p) => d.push(p));
      assert.equal(d.pending, 0);
      return got.map((m) => [m.headers[':event-type'], m.payload.toString()]);
    };
    const want = [['a', 'first'], ['b', 'second, longer']];
    for (let i = 0; i <= bytes.length; i++) {
      assert.deepEqual(read([bytes.subarray(0, i), bytes.subarray(i)]), want, `split at ${i}`);
      for (let j = i; j <= bytes.length; j += 7) assert.deepEqual(read([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]), want, `split at ${i}, ${j}`);
    }
  });

  it('a long message coming in small chunks is copied in time linear in its length', async () => {
    // Gathering the message copies a few times its length; joining what is held on every chunk, ~n²/2 KiB.
    const frame = encodeMessage({ ':event-type': 'big' }, Buffer.alloc(256 * 1024, 0x61));
    const { value: got, copied } = await bytesCopied(() => {
      const d = new EventStreamDecoder();
      const out = [];
      for (let at = 0; at < frame.length; at += 1024) out.push(...d.push(frame.subarray(at, at + 1024)));
      return out;
    });
    assert.equal(got.length, 1);
    assert.equal(got[0]!.payload.length, 256 * 1024);
    assert.ok(copied <= 4 * frame.length, `copied ${copied} for a message of ${frame.length}`);
  });

  it(`a message longer than ${MAX_MESSAGE} bytes fails at its prelude, before any more is held`, () => {
    const prelude = Buffer.alloc(12);
    prelude.writeUInt32BE(MAX_MESSAGE + 1, 0);
    prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
    const d = new EventStreamDecoder();
    assert.deepEqual(d.push(prelude.subarray(0, 11)), []);
    assert.throws(() => d.push(prelude.subarray(11)), /message length 16777217 is out of range/);
  });
});
