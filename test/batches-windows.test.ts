// A batch's lines are run a window at a time, and a window is held whole until
// its outcomes are recorded: its size is bounded in characters as well as lines.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { windows, type JsonlLine } from '../src/batches/jsonl.js';

async function* lines(sizes: number[]): AsyncGenerator<JsonlLine> {
  let end = 0;
  for (const [line, n] of sizes.entries()) yield { line, text: n < 0 ? null : 'x'.repeat(n), end: (end += Math.max(n, 0) + 1) };
}

async function shape(sizes: number[], maxLines: number, maxChars: number): Promise<number[][]> {
  const out: number[][] = [];
  for await (const w of windows(lines(sizes), maxLines, maxChars)) out.push(w.map((l) => l.line));
  return out;
}

describe('batch windows', () => {
  it('end at maxLines lines of small text', async () => {
    assert.deepEqual(await shape([1, 1, 1, 1, 1], 2, 1000), [[0, 1], [2, 3], [4]]);
  });

  it('end once they hold maxChars of text, however few their lines; a longer line is a window of its own', async () => {
    assert.deepEqual(await shape([400, 400, 400, 2000, 10, 10], 100, 1000), [[0, 1, 2], [3], [4, 5]]);
  });

  it('count a line too long to keep (null text) as nothing held', async () => {
    assert.deepEqual(await shape([-1, -1, 600, 600], 100, 1000), [[0, 1, 2, 3]]);
  });
});
