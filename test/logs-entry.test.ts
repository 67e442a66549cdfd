import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { buildRecord } from '../src/logs/build.js';
import { EntryBatch, unpack, type LogEntry, type PackedBatch } from '../src/logs/entry.js';
import { LOG_BODY_MAX_CHARS } from '../src/logs/redact.js';
import { logEntry as entry } from './support/logs.js';

/** A batch as the writer thread receives it: through a real port, its buffer transferred. */
function cross(batch: PackedBatch): PackedBatch {
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(batch, [batch.bytes]);
  const got = receiveMessageOnPort(port2)!.message as PackedBatch;
  port1.close();
  return got;
}

describe('log entry batches', () => {
  it('every field crosses to the writer thread as it was, bytes included, in order', () => {
    const a = entry();
    const b = entry({ traceId: 'trace-2', requestBody: null, requestBytes: 0, answerHead: null, answerText: 'held whole', status: 502, cut: true, metadata: null });
    const c = entry({ traceId: 'trace-3', answerTail: Buffer.from('the end') });
    const batch = new EntryBatch();
    for (const e of [a, b, c]) batch.add(e);
    const packed = batch.take();
    assert.equal(batch.count, 0, 'the batch is emptied');
    const out = unpack(cross(packed));
    assert.equal(out.length, 3);
    const plain = (e: LogEntry) => ({
      ...e,
      requestBody: e.requestBody && Buffer.from(e.requestBody).toString(),
      answerHead: e.answerHead && Buffer.from(e.answerHead).toString(),
      answerTail: e.answerTail && Buffer.from(e.answerTail).toString(),
    });
    assert.deepEqual(out.map(plain), [a, b, c].map(plain));
  });

  it('the record made of an entry: usage read, cost times the multiplier, secrets redacted', async () => {
    const r = await buildRecord(unpack(cross(withOne(entry())))[0]!);
    assert.equal(r.totalTokens, 15);
    assert.equal(r.tokensEstimated, false);
    assert.equal(r.latencyMs, 13);
    assert.equal(r.upstreamTtfbMs, 3);
    assert.ok(r.costUsd !== null && r.costUsd > 0);
    const single = await buildRecord(entry({ pricingMultiplier: 1 }));
    assert.ok(Math.abs(r.costUsd - 2 * single.costUsd!) < 1e-15, 'the integration multiplier applies');
    assert.match(r.requestBody!, /"api_key":"\[REDACTED\]"/);
    assert.equal(r.requestHeaders!['user-agent'], '[REDACTED]');
    assert.ok(r.id.length > 0);
  });

  it('a request body cut at the log limit says how much is missing', async () => {
    const big = Buffer.alloc(LOG_BODY_MAX_CHARS, 'a');
    const r = await buildRecord(entry({ requestBody: big, requestBytes: LOG_BODY_MAX_CHARS + 10 }));
    assert.ok(r.requestBody!.endsWith('…[cut: 10 more bytes]'));
  });
});

function withOne(e: LogEntry): PackedBatch {
  const b = new EntryBatch();
  b.add(e);
  return b.take();
}
