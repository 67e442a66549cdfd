// Taking the usage the gateway asked for back out of a stream (src/pipeline/usage-strip.ts):
// what comes out is byte for byte the stream the provider sends without include_usage,
// wherever the chunks split; events without usage pass untouched, as the same buffers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { MAX_EVENT_BYTES } from '../src/providers/shared/sse.js';
import { stripAddedUsage, stripsAddedUsage } from '../src/pipeline/usage-strip.js';
import type { GatewayError } from '../src/shared/errors.js';
import { bytesCopied } from './support/copies.js';

/** An OpenAI chat stream (fixed ids), with or without include_usage, as OpenAI lays it out. */
function openAIStream(includeUsage: boolean, eol = '\n'): string {
  const base = '"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","system_fingerprint":"fp_1"';
  const u = includeUsage ? ',"usage":null' : '';
  const deltas = ['{"role":"assistant","content":"","refusal":null}', '{"content":"héllo ✓"}', '{"content":" \\"usage\\":null"}', '{}'];
  const events = deltas.map((d, i) => `data: {${base},"choices":[{"index":0,"delta":${d},"logprobs":null,"finish_reason":${i === 3 ? '"stop"' : 'null'}}]${u}}`);
  if (includeUsage) events.push(`data: {${base},"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`);
  events.push('data: [DONE]');
  return events.map((e) => e + eol + eol).join('');
}

/** The buffers the stripper pushes, one by one (flowing mode: none are joined on the way). */
async function run(chunks: (string | Buffer)[]): Promise<Buffer[]> {
  const out: Buffer[] = [];
  const stripped = stripAddedUsage(Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))));
  stripped.on('data', (b: Buffer) => out.push(b));
  await once(stripped, 'end');
  return out;
}

const text = async (chunks: (string | Buffer)[]): Promise<string> => Buffer.concat(await run(chunks)).toString('utf8');

/** `bytes` cut at every offset into two chunks. */
function splits(bytes: Buffer): Buffer[][] {
  return Array.from({ length: bytes.length - 1 }, (_, i) => [bytes.subarray(0, i + 1), bytes.subarray(i + 1)]);
}

describe('stripping the usage the gateway added', () => {
  it('the stream with include_usage comes out as the stream without it, byte for byte', async () => {
    assert.equal(await text([openAIStream(true)]), openAIStream(false));
  });

  it('wherever the chunks split: at every byte, inside UTF-8 characters, inside the usage chunk', async () => {
    const asked = Buffer.from(openAIStream(true));
    const want = openAIStream(false);
    for (const parts of splits(asked)) assert.equal(await text(parts), want, `split at ${parts[0]!.length}`);
    const bytes = Array.from({ length: asked.length }, (_, i) => asked.subarray(i, i + 1));
    assert.equal(await text(bytes), want);
  });

  it('CRLF line ends too', async () => {
    const asked = Buffer.from(openAIStream(true, '\r\n'));
    for (const parts of splits(asked)) assert.equal(await text(parts), openAIStream(false, '\r\n'));
  });

  it('text completion streams, and JSON written with spaces', async () => {
    const chunk = (text: string, finish: string, usage: string) => `data: {"id": "cmpl-1", "object": "text_completion", "choices": [{"text": "${text}", "index": 0, "finish_reason": ${finish}}]${usage}}\n\n`;
    const asked =
      chunk('a', 'null', ', "usage": null') +
      chunk('', '"stop"', ', "usage": null') +
      'data: {"id": "cmpl-1", "object": "text_completion", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}\n\ndata: [DONE]\n\n';
    assert.equal(await text([asked]), chunk('a', 'null', '') + chunk('', '"stop"', '') + 'data: [DONE]\n\n');
  });

  it('usage null as the first key goes with the comma after it', async () => {
    assert.equal(await text(['data: {"usage":null, "id":"x","choices":[]}\n\n']), 'data: {"id":"x","choices":[]}\n\n');
  });

  it('leaves alone what only looks like usage: nested keys, text, a usage on a chunk with choices', async () => {
    const kept = [
      'data: {"id":"x","choices":[{"delta":{"usage":null}}]}\n\n',
      'data: {"id":"x","choices":[{"delta":{"content":"\\"usage\\":null"}}]}\n\n',
      'data: {"id":"x","note":"usage","choices":[]}\n\n',
      'data: {"id":"x","choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"total_tokens":3}}\n\n',
      ': a comment about "usage":null\n\n',
    ];
    for (const e of kept) assert.equal(await text([e]), e);
  });

  it('a stream cut short: a part of the usage chunk is dropped, a part of another event loses its usage null', async () => {
    const full = openAIStream(true);
    const cut = full.slice(0, full.indexOf('"choices":[],') + 25);
    assert.equal(await text([cut]), openAIStream(false).replace('data: [DONE]\n\n', ''));
    const partial = 'data: {"id":"x","choices":[{"delta":{"content":"a"}}],"usage":null';
    assert.equal(await text([partial]), 'data: {"id":"x","choices":[{"delta":{"content":"a"}}]');
  });

  it('chunks without usage go out as the very buffers that came in', async () => {
    const chunks = [Buffer.from('data: {"choices":[{"delta":{"content":"a"}}]}\n\n'), Buffer.from('data: [DONE]\n\n')];
    const out = await run(chunks);
    assert.equal(out.length, 2);
    assert.ok(out[0] === chunks[0] && out[1] === chunks[1]);
  });

  it('applies only to 2xx, uncompressed event streams the gateway asked usage for', () => {
    const sse = { 'content-type': 'text/event-stream; charset=utf-8' };
    assert.equal(stripsAddedUsage(true, 200, sse), true);
    assert.equal(stripsAddedUsage(false, 200, sse), false); // the client asked: its stream is its own
    assert.equal(stripsAddedUsage(undefined, 200, sse), false);
    assert.equal(stripsAddedUsage(true, 400, sse), false);
    assert.equal(stripsAddedUsage(true, 200, { ...sse, 'content-encoding': 'gzip' }), false);
    assert.equal(stripsAddedUsage(true, 200, { 'content-type': 'application/json' }), false);
  });

  it('a long event coming in small chunks is copied in time linear in its length', async () => {
    // Gathering the event and editing it copies a few times its length; joining what is pending on every chunk, ~n²/2 KiB.
    const size = 256 * 1024;
    const body = 'data: {"choices":[{"delta":{"content":"' + 'a'.repeat(size) + '"}}],"usage":null}\n\n';
    const chunks = Array.from({ length: Math.ceil(body.length / 1024) }, (_, i) => Buffer.from(body.slice(i * 1024, (i + 1) * 1024)));
    const { value: out, copied } = await bytesCopied(() => run(chunks));
    assert.equal(Buffer.concat(out).toString(), body.replace(',"usage":null', ''));
    assert.ok(copied <= 5 * body.length, `copied ${copied} for an event of ${body.length}`);
  });

  it(`an event past ${MAX_EVENT_BYTES} bytes without its end fails the stream: 502 bad_upstream_stream`, async () => {
    const stripped = stripAddedUsage(Readable.from([Buffer.from('data: {"id":1}\n\ndata: '), ...Array(17).fill(Buffer.alloc(1024 * 1024, 0x61))]));
    const out: Buffer[] = [];
    stripped.on('data', (b: Buffer) => out.push(b));
    const error = await new Promise<GatewayError | null>((resolve) => {
      stripped.once('error', resolve);
      stripped.once('end', () => resolve(null));
    });
    assert.ok(error !== null, 'the stream ended without an error');
    assert.equal(error.status, 502);
    assert.equal(error.code, 'bad_upstream_stream');
    assert.equal(Buffer.concat(out).toString(), 'data: {"id":1}\n\n');
  });
});
