// A gateway batch's window holds its lines' answers until they are recorded:
// what it holds is bounded in bytes (windowAnswerBytes), not only in lines.
// Past the budget no line of the window starts and the run of lines finished
// in order is recorded at once, the claim kept at the window's end (a line
// still in flight is never sent again after a restart); every line's outcome
// is recorded once, in order, the cursor only moving past recorded lines.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { BatchRunner, type RunnerDeps } from '../src/batches/runner.js';
import type { ApiKeyRecord } from '../src/store/api-keys.js';
import type { BatchRecord, BatchRepo, BatchStatus, LineOutcome } from '../src/store/batches.js';

const ANSWER_CHARS = 10_000;
const answerChars = JSON.stringify({ object: 'list', data: [{ embedding: 'x'.repeat(ANSWER_CHARS) }] }).length;
const line = (i: number): string =>
  JSON.stringify({ custom_id: `req-${i}`, method: 'POST', url: '/v1/embeddings', body: { model: 'text-embedding-3-small', input: `hello ${i}` } });

interface Recorded {
  lines: number[];
  chars: number;
  next: { line: number; offset: number };
  claimEnd: number | undefined;
}

async function run(lines: number, concurrency: number, windowAnswerBytes: number | undefined) {
  const text = Array.from({ length: lines }, (_, i) => line(i)).join('\n') + '\n';
  let b = { id: 'batch_1', workspaceId: 'ws', apiKeyId: 'k', endpoint: '/v1/embeddings', inputFileId: 'file-1', status: 'in_progress', headers: {}, nextLine: 0, nextOffset: 0, claimedLine: 0, expiresAt: Number.MAX_SAFE_INTEGER } as unknown as BatchRecord;
  const records: Recorded[] = [];
  const claims: number[] = [];
  // Answers made (by the fake pipeline) less those recorded: what is held, measured as each answer is made (the
  // only moment it grows), so its peak is seen exactly, whatever the timing.
  let answered = 0;
  let recorded = 0;
  let maxHeld = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const repo = {
    load: async () => b,
    claim: async (_id: string, _h: string, end: number) => (claims.push(end), 'in_progress' as BatchStatus),
    record: async (_id: string, _h: string, outcomes: readonly LineOutcome[], next: { line: number; offset: number }, claimEnd?: number) => {
      const chars = outcomes.reduce((n, o) => n + o.result.length, 0);
      recorded += outcomes.length * answerChars;
      records.push({ lines: outcomes.map((o) => o.line), chars, next, claimEnd });
      await sleep(1);
      return 'in_progress' as BatchStatus;
    },
    set: async () => ((b = { ...b, status: 'completed' }), 'completed' as BatchStatus),
    renew: async () => 'in_progress' as BatchStatus,
    release: async () => {},
  } as unknown as BatchRepo;
  const models = {
    async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      let body = '';
      for await (const c of req) body += c;
      const n = Number(/hello (\d+)/.exec(body)![1]);
      // Out of order: every third line is slower, so finished answers wait behind it.
      await sleep(n % 3 === 0 ? 5 : 1);
      const answer = JSON.stringify({ object: 'list', data: [{ embedding: 'x'.repeat(ANSWER_CHARS) }] });
      answered += answer.length;
      maxHeld = Math.max(maxHeld, answered - recorded);
      inFlight--;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
    },
  };
  const deps: RunnerDeps = {
    repo,
    files: { open: async () => Readable.from([Buffer.from(text)]) } as unknown as RunnerDeps['files'],
    models: models as unknown as RunnerDeps['models'],
    key: async () => ({ id: 'k', workspaceId: 'ws' }) as unknown as ApiKeyRecord,
    now: () => 1_000_000,
    holder: 'test',
    concurrency,
    leaseMs: 60_000,
    maxLineBytes: 1024 * 1024,
    maxAnswerBytes: 1024 * 1024,
    windowAnswerBytes,
  };
  await new BatchRunner(b.id, deps).run();
  return { records, claims, maxHeld, maxInFlight, text };
}

describe('batch runner memory', { timeout: 30_000 }, () => {
  it('a window of big answers holds at most the budget plus the answers in flight: finished runs are recorded early, the claim kept', async () => {
    const concurrency = 2;
    const budget = 3 * ANSWER_CHARS;
    const { records, claims, maxHeld, maxInFlight, text } = await run(40, concurrency, budget);
    assert.ok(maxInFlight <= concurrency);
    // Windows of 8 lines per slot: 16, 16, 8.
    assert.deepEqual(claims, [16, 32, 40]);
    // Every line recorded once, in order; the cursor moves only past recorded lines.
    assert.deepEqual(records.flatMap((r) => r.lines), Array.from({ length: 40 }, (_, i) => i));
    for (const r of records) assert.equal(r.next.line, r.lines.at(-1)! + 1);
    assert.equal(records.at(-1)!.next.offset, Buffer.byteLength(text));
    // Far more records than windows: the answers were not held for a whole window.
    assert.ok(records.length > 3 * 2, `${records.length} records`);
    // An early record keeps the claim at its window's end; the window's last record ends it at the cursor.
    for (const r of records) {
      const windowEnd = claims.find((c) => c >= r.next.line)!;
      if (r.next.line < windowEnd) assert.equal(r.claimEnd, windowEnd, `record up to ${r.next.line}`);
      else assert.equal(r.claimEnd, undefined);
    }
    // What is held: under the budget when a line starts, plus the answers of the lines in flight then.
    const bound = budget + concurrency * answerChars;
    assert.ok(maxHeld <= bound, `held ${maxHeld} > ${bound}`);
  });

  it('without a budget pressing, a window is one record (as before)', async () => {
    const { records, claims, maxHeld } = await run(40, 2, 1024 * 1024 * 1024);
    // The measure sees a whole window held: 16 answers before its record.
    assert.ok(maxHeld >= 14 * answerChars, `held ${maxHeld}`);
    assert.deepEqual(claims, [16, 32, 40]);
    assert.deepEqual(records.map((r) => [r.lines.length, r.next.line, r.claimEnd]), [[16, 16, undefined], [16, 32, undefined], [8, 40, undefined]]);
  });
});
