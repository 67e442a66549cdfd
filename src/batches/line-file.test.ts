// A JSONL scratch file: discarded with writes in flight it ends nothing but itself, and a
// stream that failed says so at the next write or end instead of leaving them waiting.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LineFile } from './line-file.js';

describe('LineFile', () => {
  it('writes lines and counts them; discard removes the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-lines-'));
    try {
      const f = new LineFile(join(dir, 'a.jsonl'));
      await f.write('{"a":1}');
      await f.write('{"b":2}');
      assert.equal(await f.end(), 2);
      assert.equal(readFileSync(f.path, 'utf8'), '{"a":1}\n{"b":2}\n');
      await f.discard();
      assert.equal(existsSync(f.path), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('discarded while its writes are in flight, no error escapes (an unheard one would end the process)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-lines-'));
    const uncaught: unknown[] = [];
    const listener = (e: unknown): void => void uncaught.push(e);
    process.on('uncaughtException', listener);
    try {
      // Without a listener, most of these throw ERR_STREAM_DESTROYED from the write's callback.
      const files = Array.from({ length: 100 }, (_, i) => new LineFile(join(dir, `${i}.jsonl`)));
      await Promise.all(files.map((f) => f.write('x'.repeat(100))));
      await Promise.all(files.map((f) => f.discard()));
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(uncaught, []);
    } finally {
      process.off('uncaughtException', listener);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a file that cannot be opened fails its next write or its end, not a wait for ever', async () => {
    const f = new LineFile(join(tmpdir(), 'sy-no-such-dir', 'x', 'a.jsonl'));
    await new Promise((r) => setTimeout(r, 50));
    await assert.rejects(f.write('{}'), /ENOENT/);
    await assert.rejects(f.end(), /ENOENT/);
    await f.discard();
  });
});
