// A gateway batch's runner records a window's finished lines early once their answers weigh windowAnswerBytes,
// keeping the claim at the window's end (src/batches/runner.ts runWindow). A restart after such an early record,
// in the middle of the window, sends no line twice, on a real store of each engine:
//   - a process that stops: its lines in flight finish and are recorded, the next runner resumes at the cursor;
//   - a process that dies right after the early record: its lines in flight may have been sent, so the next
//     runner (once the lease lapsed) sends none of the claimed lines again: batch_line_interrupted.
//   - a process told to stop while it claims the next window: that window's claim goes back to the cursor.
// The upstream counts each line (by its custom_id) as it is sent.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { Files } from '../src/batches/files.js';
import { BatchRunner, type RunnerDeps } from '../src/batches/runner.js';
import { DiskStorage } from '../src/batches/storage.js';
import type { ApiKeyRecord } from '../src/store/api-keys.js';
import { newBatchRecord, type BatchRecord, type BatchRepo } from '../src/store/batches.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';
import { engines } from './support/engines.js';

const LINES = 40;
const ANSWER_CHARS = 2_000;
const LEASE_MS = 60_000;

for (const engine of engines()) {
  describe(`batch runner: a restart after an early record (${engine.name})`, { timeout: 60_000 }, () => {
    let env: Record<string, string>;
    let dir: string;
    let store: Store;
    let files: Files;
    let workspaceId: string;
    let clock: number;
    /** Times each custom_id reached the upstream. */
    let sent: Map<string, number>;

    beforeEach(async () => {
      env = await engine.fresh();
      dir = env.GATEWAY_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'switchyard-restart-'));
      store = await openStore({ dataDir: dir, databaseUrl: env.DATABASE_URL });
      await store.migrate();
      workspaceId = (await store.workspaces.default()).id;
      const storage = new DiskStorage(join(dir, 'files'));
      await storage.init();
      files = new Files(store.files, storage);
      clock = 1_000_000_000;
      sent = new Map();
    });
    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
      await engine.drop(env);
    });
    after(() => engine.cleanup());

    /** An in_progress batch of LINES chat lines over a gateway file. */
    async function batch(): Promise<BatchRecord> {
      const input = Array.from({ length: LINES }, (_, i) => JSON.stringify({ custom_id: `req-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content: `req-${i}` }] } })).join('\n') + '\n';
      mkdirSync(files.storage.scratch, { recursive: true });
      const path = join(files.storage.scratch, 'input');
      writeFileSync(path, input);
      await files.create({ id: 'file-syinput', workspaceId, purpose: 'batch', filename: 'input.jsonl', createdAt: 1 }, path);
      const b = newBatchRecord({ id: 'batch_syrestart', workspaceId, apiKeyId: 'k', endpoint: '/v1/chat/completions', inputFileId: 'file-syinput', completionWindow: 'immediate', headers: {}, metadata: null, createdAt: 1, expiresAt: Number.MAX_SAFE_INTEGER, status: 'in_progress', total: LINES });
      await store.batches.insert(b);
      return b;
    }

    /** The upstream: counts the line by its custom_id (the message), answers ANSWER_CHARS, every third line slower (answers finish out of order). */
    const models = {
      async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
        const id = /req-\d+/.exec(await text(req))![0];
        sent.set(id, (sent.get(id) ?? 0) + 1);
        await sleep(Number(id.slice(4)) % 3 === 0 ? 6 : 1);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'x'.repeat(ANSWER_CHARS) } }] }));
      },
    };

    const runner = (id: string, holder: string, repo: BatchRepo, concurrency = 3) =>
      new BatchRunner(id, {
        repo,
        files,
        models: models as unknown as RunnerDeps['models'],
        key: async () => ({ id: 'k', workspaceId }) as unknown as ApiKeyRecord,
        now: () => clock,
        holder,
        concurrency,
        leaseMs: LEASE_MS,
        maxLineBytes: 1024 * 1024,
        maxAnswerBytes: 1024 * 1024,
        // Three answers: early records start well inside the first window (8 lines a slot).
        windowAnswerBytes: 3 * ANSWER_CHARS,
      });

    /** The store, with a hook after each record written of a window's early run (its claim past its cursor). */
    const watched = (onEarly: (p: Promise<unknown>) => Promise<unknown>): BatchRepo =>
      new Proxy(store.batches, {
        get(target, name, receiver) {
          const v = Reflect.get(target, name, receiver) as unknown;
          if (name !== 'record' || typeof v !== 'function') return v;
          return (...args: Parameters<BatchRepo['record']>) => {
            const written = target.record(...args);
            return args[4] !== undefined && args[4] > args[3].line ? onEarly(written) : written;
          };
        },
      });

    /** The batch's output and error lines, read from its files once it completed. */
    async function results(id: string) {
      const b = (await store.batches.load(id))!;
      assert.equal(b.status, 'completed');
      const lines = async (file: string | null) => (file === null ? [] : (await text((await files.open(workspaceId, file))!)).trim().split('\n').map((l) => JSON.parse(l) as { custom_id: string; error: { code: string } | null }));
      return { b, ok: await lines(b.outputFileId), errors: await lines(b.errorFileId) };
    }

    // One slot: nothing is in flight when it stops (every line started was recorded early); three: some are.
    for (const concurrency of [1, 3]) it(`a process that stops after an early record (concurrency ${concurrency}): the next runner resumes at the cursor, each line sent exactly once`, async () => {
      const b = await batch();
      let one!: BatchRunner;
      let cursorAtStop = -1;
      const repo = watched(async (written) => {
        const status = await written;
        if (cursorAtStop < 0) {
          cursorAtStop = (await store.batches.load(b.id))!.nextLine;
          one.close();
        }
        return status;
      });
      one = runner(b.id, 'one', repo, concurrency);
      assert.equal(await store.batches.takeLease(b.id, 'one', clock, clock + LEASE_MS), true);
      await one.run();
      const stopped = (await store.batches.load(b.id))!;
      // Stopped in the middle of the first window, after an early record.
      assert.ok(cursorAtStop > 0 && cursorAtStop < 8 * concurrency, `early record up to ${cursorAtStop}`);
      assert.ok(stopped.nextLine < LINES && stopped.status === 'in_progress', `stopped at ${stopped.nextLine}`);
      assert.equal(stopped.claimedLine, stopped.nextLine, 'the claim of a runner that stopped ends at its cursor');

      assert.equal(await store.batches.takeLease(b.id, 'two', clock, clock + LEASE_MS), true);
      await runner(b.id, 'two', store.batches).run();
      const { b: done, ok, errors } = await results(b.id);
      assert.deepEqual([done.completed, done.failed], [LINES, 0]);
      assert.deepEqual(errors, []);
      const ids = Array.from({ length: LINES }, (_, i) => `req-${i}`);
      assert.deepEqual(ok.map((o) => o.custom_id), ids);
      for (const id of ids) assert.equal(sent.get(id), 1, `${id} sent ${sent.get(id)} times`);
    });

    // The claim of the next window is written while the process is told to stop: no line of that window starts, so its
    // claim goes back to the cursor (none was sent) and the next runner sends them all, none failed as interrupted.
    it('a process that stops while claiming a window: the claim goes back to the cursor, the next runner sends every line once', async () => {
      const b = await batch();
      let one!: BatchRunner;
      const claims: number[] = [];
      const repo = new Proxy(store.batches, {
        get(target, name, receiver) {
          const v = Reflect.get(target, name, receiver) as unknown;
          if (name !== 'claim' || typeof v !== 'function') return v;
          return async (...args: Parameters<BatchRepo['claim']>) => {
            const status = await target.claim(...args);
            claims.push(args[2]);
            // The second window's claim: the first was run and recorded, the cursor is past 0.
            if (claims.length === 2) one.close();
            return status;
          };
        },
      });
      one = runner(b.id, 'one', repo);
      assert.equal(await store.batches.takeLease(b.id, 'one', clock, clock + LEASE_MS), true);
      await one.run();
      const stopped = (await store.batches.load(b.id))!;
      assert.deepEqual(claims, [24, 40, 24], 'the first window, the second, the second given back');
      assert.equal(stopped.nextLine, 8 * 3, 'the first window recorded');
      assert.equal(stopped.claimedLine, stopped.nextLine, 'the claim of a runner that stopped while claiming ends at its cursor');

      assert.equal(await store.batches.takeLease(b.id, 'two', clock, clock + LEASE_MS), true);
      await runner(b.id, 'two', store.batches).run();
      const { b: done, ok, errors } = await results(b.id);
      assert.deepEqual(errors, []);
      assert.deepEqual([done.completed, done.failed], [LINES, 0]);
      const ids = Array.from({ length: LINES }, (_, i) => `req-${i}`);
      assert.deepEqual(ok.map((o) => o.custom_id), ids);
      for (const id of ids) assert.equal(sent.get(id), 1, `${id} sent ${sent.get(id)} times`);
    });

    it('a process that dies right after an early record: the next runner sends none of its claimed lines again', async () => {
      const b = await batch();
      let dead = false;
      // The record is written, then the process is gone: nothing more of it reaches the store.
      const repo = watched(async (written) => {
        await written;
        dead = true;
        return new Promise(() => {});
      });
      const dying = new Proxy(repo, {
        get(target, name, receiver) {
          const v = Reflect.get(target, name, receiver) as unknown;
          return typeof v !== 'function' ? v : (...args: unknown[]) => (dead ? new Promise(() => {}) : (v as (...a: unknown[]) => unknown).apply(target, args));
        },
      });
      assert.equal(await store.batches.takeLease(b.id, 'one', clock, clock + LEASE_MS), true);
      void runner(b.id, 'one', dying).run();
      for (let waited = 0; !dead; waited += 5) {
        assert.ok(waited < 10_000, 'no early record');
        await sleep(5);
      }
      // Its lines in flight still reach the upstream (they were sent before it died).
      await sleep(50);
      const row = (await store.batches.load(b.id))!;
      assert.ok(row.nextLine > 0 && row.claimedLine > row.nextLine, `cursor ${row.nextLine}, claim ${row.claimedLine}`);
      const sentBefore = new Set(sent.keys());

      // Its lease lapses; another runner takes the batch over.
      clock += LEASE_MS + 1;
      assert.equal(await store.batches.takeLease(b.id, 'two', clock, clock + LEASE_MS), true);
      await runner(b.id, 'two', store.batches).run();
      const { b: done, ok, errors } = await results(b.id);
      for (const [id, n] of sent) assert.equal(n, 1, `${id} sent ${n} times`);
      // Every line once in the files: answered, or interrupted (claimed by the dead runner, past its cursor).
      const ids = [...ok, ...errors].map((o) => o.custom_id).sort();
      assert.deepEqual(ids, Array.from({ length: LINES }, (_, i) => `req-${i}`).sort());
      assert.deepEqual([done.completed + done.failed, done.failed], [LINES, row.claimedLine - row.nextLine]);
      for (const e of errors) {
        assert.equal(e.error?.code, 'batch_line_interrupted');
        assert.equal(Number(e.custom_id.slice(4)) >= row.nextLine && Number(e.custom_id.slice(4)) < row.claimedLine, true, e.custom_id);
      }
      // Some of the interrupted lines were in flight when it died: exactly those are not sent twice.
      assert.ok(errors.some((e) => sentBefore.has(e.custom_id)), 'no line was in flight at the death');
    });
  });
}
