/**
 * One gateway-managed batch run by the process that holds its lease, from
 * wherever its row says it is:
 *
 *   validating  → the whole input file checked line by line → in_progress, or failed with errors.data
 *   in_progress → lines sent through the model pipeline, a window at a time → finalizing
 *                 (past expires_at the lines left are not sent: each gets a batch_expired error, expired_at is set)
 *   cancelling  → the lines in flight finish, no new one starts → its files written → cancelled
 *   finalizing  → the output and error files written from the outcomes → completed (or expired)
 *
 * A line is never sent twice: a window of lines is claimed in the row before
 * any is sent, and its outcomes and the cursor past it are written together
 * after they all finished (or earlier, for the run of lines finished in
 * order, when their answers weigh WINDOW_ANSWER_BYTES: the claim stays at the
 * window's end). A runner that finds claimed lines past the cursor
 * (its predecessor died while they were in flight) does not send them again:
 * each gets a batch_line_interrupted error.
 */
import { ENDPOINT_PATHS, type ModelEndpoint } from '../shared/endpoint.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { BatchLineError, BatchRecord, BatchRepo, BatchStatus, LineOutcome } from '../store/batches.js';
import type { ModelApi } from '../http/server.js';
import { newRequestId, seconds } from './ids.js';
import { runInProcess, type InProcessAnswer } from './in-process.js';
import { readLines, windows, type JsonlLine } from './jsonl.js';
import type { Files } from './files.js';
import { LineFile } from './line-file.js';
import { scratchPath } from './storage.js';
import { checkLine, checkLines, isLineError } from './validate.js';

export interface RunnerDeps {
  repo: BatchRepo;
  files: Files;
  models: ModelApi;
  /** The key that created the batch, when it is still active: its lines run as that key. */
  key(id: string): Promise<ApiKeyRecord | null>;
  now: () => number;
  /** This process's name in leases. */
  holder: string;
  /** Lines in flight at once. */
  concurrency: number;
  leaseMs: number;
  /** Largest line (a request body) and largest answer kept for one line. */
  maxLineBytes: number;
  maxAnswerBytes: number;
  /** Bytes of a window's finished answers held before they are recorded early (default WINDOW_ANSWER_BYTES). */
  windowAnswerBytes?: number;
}

/** The endpoints a batch may name, as its lines' `url` and the pipeline's endpoint. */
export const BATCH_ENDPOINTS: Readonly<Record<string, ModelEndpoint>> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completions',
  '/v1/embeddings': 'embeddings',
};

/** Lines claimed at once, as a multiple of the concurrency: few row writes, little lost to the window's slowest line. */
const WINDOW_PER_SLOT = 8;
/** And at most this much line text: a window's lines (and their outcomes) are held until it is recorded. */
const WINDOW_CHARS = 8 * 1024 * 1024;
/**
 * And the window's finished answers (its outcomes) held at most about this much: past it no new line of the window
 * starts, and the outcomes finished in line order are recorded (the cursor moved past them) at once. A window of
 * 256 small lines could otherwise hold 256 answers of up to maxAnswerBytes each (an embeddings batch: gigabytes).
 */
const WINDOW_ANSWER_BYTES = 8 * 1024 * 1024;
/** Outcomes read back a page at a time when the files are written. */
const OUTCOME_PAGE = 1000;
/** The longest a line waits on the gateway's own rate limit before trying again. */
const MAX_RATE_WAIT_MS = 60_000;


export class BatchRunner {
  /** Start no more lines (a cancel, the process stopping, the lease lost). */
  private stopping = false;
  private lost = false;
  private closing = false;
  private renewal: NodeJS.Timeout | null = null;

  constructor(
    private readonly id: string,
    private readonly d: RunnerDeps,
  ) {}

  /** Cancelled in this process: the lines in flight finish, no new one starts. */
  cancel(): void {
    this.stopping = true;
  }

  /** The process is stopping: like cancel, and the lease is given up at the end for another process to resume. */
  close(): void {
    this.closing = true;
    this.stopping = true;
  }

  async run(): Promise<void> {
    this.renewal = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.d.leaseMs / 3)));
    this.renewal.unref();
    let done = false;
    try {
      for (let b = await this.d.repo.load(this.id); b !== null && !this.lost && !this.closing; b = await this.d.repo.load(this.id)) {
        if (b.status === 'validating') await this.validate(b);
        else if (b.status === 'in_progress') {
          // Stopped while the row still says in_progress (a cancel not yet written): the lease goes back, a later poll resumes.
          if (this.stopping) return;
          await this.runLines(b);
        }
        else if (b.status === 'cancelling') done = await this.finalize(b, 'cancelled');
        else if (b.status === 'finalizing') done = await this.finalize(b, b.expiredAt !== null ? 'expired' : 'completed');
        else done = true;
        if (done) return;
      }
    } finally {
      clearInterval(this.renewal);
      if (!this.lost) await this.d.repo.release(this.id, this.d.holder);
    }
  }

  private async renew(): Promise<void> {
    const status = await this.d.repo.renew(this.id, this.d.holder, this.d.now() + this.d.leaseMs).catch(() => undefined);
    if (status === null) this.lose();
    else if (status === 'cancelling') this.stopping = true;
  }

  private lose(): void {
    this.lost = true;
    this.stopping = true;
  }

  private at(): number {
    return seconds(this.d.now());
  }

  /** Reads the whole input file: in_progress with its count of lines, or failed with what is wrong. */
  private async validate(b: BatchRecord): Promise<void> {
    const input = await this.d.files.open(b.workspaceId, b.inputFileId);
    let errors: BatchLineError[] = [];
    let total = 0;
    if (input === null) errors.push({ code: 'invalid_file', message: `input file '${b.inputFileId}' is gone`, param: 'input_file_id', line: null });
    else {
      try {
        ({ errors, total } = await checkLines(readLines(input, 0, 0, this.d.maxLineBytes), b.endpoint, this.d.maxLineBytes));
      } finally {
        input.destroy();
      }
    }
    if (errors.length > 0) {
      if (!(await this.d.repo.finish(b.id, this.d.holder, 'validating', { status: 'failed', failed_at: this.at(), errors, total }))) await this.checkLease();
      return;
    }
    if ((await this.d.repo.set(b.id, this.d.holder, 'validating', { status: 'in_progress', in_progress_at: this.at(), total })) === null) await this.checkLease();
  }

  /** After a guarded write changed nothing: either the status moved (a cancel), or the lease is gone. */
  private async checkLease(): Promise<void> {
    if ((await this.d.repo.renew(this.id, this.d.holder, this.d.now() + this.d.leaseMs)) === null) this.lose();
  }

  private async runLines(b: BatchRecord): Promise<void> {
    const key = await this.d.key(b.apiKeyId);
    if (key === null) {
      const error = { code: 'inactive_api_key', message: 'the gateway key that created the batch is no longer active', param: null, line: null };
      if (!(await this.d.repo.finish(b.id, this.d.holder, 'in_progress', { status: 'failed', failed_at: this.at(), errors: [error] }))) await this.checkLease();
      return;
    }
    const input = await this.d.files.open(b.workspaceId, b.inputFileId, b.nextOffset);
    if (input === null) {
      const error = { code: 'invalid_file', message: `input file '${b.inputFileId}' is gone`, param: 'input_file_id', line: null };
      if (!(await this.d.repo.finish(b.id, this.d.holder, 'in_progress', { status: 'failed', failed_at: this.at(), errors: [error] }))) await this.checkLease();
      return;
    }
    let expiredAt: number | null = null;
    try {
      for await (const window of windows(readLines(input, b.nextLine, b.nextOffset, this.d.maxLineBytes), this.d.concurrency * WINDOW_PER_SLOT, WINDOW_CHARS)) {
        expiredAt = await this.runWindow(b, key, window, expiredAt);
        if (this.stopping) return;
      }
    } finally {
      input.destroy();
    }
    const fields = expiredAt === null ? { status: 'finalizing' as const, finalizing_at: this.at() } : { status: 'finalizing' as const, finalizing_at: this.at(), expired_at: expiredAt };
    if ((await this.d.repo.set(b.id, this.d.holder, 'in_progress', fields)) === null) await this.checkLease();
  }

  /**
   * One window: claimed, its lines started in order while nothing stops
   * them (at most `concurrency` in flight), then the outcomes of those that
   * started and the cursor past the last of them recorded together. While
   * the finished answers held weigh windowAnswerBytes or more, no line
   * starts, and the run of lines finished in order is recorded at once (the
   * claim kept at the window's end, so lines still in flight are never sent
   * again after a restart): what the window holds is that budget plus the
   * answers of the lines in flight when it was passed.
   * Returns when the batch expired (the lines left are failed, not sent).
   */
  private async runWindow(b: BatchRecord, key: ApiKeyRecord, window: JsonlLine[], expiredAt: number | null): Promise<number | null> {
    const now = this.at();
    if (expiredAt === null && now >= b.expiresAt) expiredAt = now;
    const last = window[window.length - 1]!;
    if (expiredAt === null) {
      const status = await this.d.repo.claim(b.id, this.d.holder, last.line + 1, this.d.now() + this.d.leaseMs);
      if (status === null) {
        this.lose();
        return expiredAt;
      }
      if (status !== 'in_progress' || this.stopping) {
        // Stopped (or cancelled) while the claim was written: no line of the window starts, so the claim goes back to
        // the cursor, the window's first line; left past it, the next runner would fail those lines as interrupted.
        this.stopping = true;
        if ((await this.d.repo.claim(b.id, this.d.holder, window[0]!.line, this.d.now() + this.d.leaseMs)) === null) this.lose();
        return expiredAt;
      }
    }
    const budget = this.d.windowAnswerBytes ?? WINDOW_ANSWER_BYTES;
    // The lines started and not yet recorded, in line order; `done` once its outcome (if any: a blank line has none) is in.
    const pending: { l: JsonlLine; done: boolean; outcome: LineOutcome | null }[] = [];
    let held = 0;
    const finish = (slot: (typeof pending)[number], o: LineOutcome | null): void => {
      slot.done = true;
      slot.outcome = o;
      held += o?.result.length ?? 0;
    };
    /** The last line recorded early in this window: the claim was kept past it. */
    let recorded: JsonlLine | null = null;
    /** Records the run of finished lines at the front of `pending` with the cursor past it; false when the batch must stop. */
    const recordDone = async (claimEnd: number | undefined): Promise<boolean> => {
      let n = 0;
      while (n < pending.length && pending[n]!.done) n++;
      // Nothing to record, unless the claim an early record kept past the cursor must end at it now (a stop with nothing in flight).
      if (n === 0 && (claimEnd !== undefined || recorded === null || recorded.line === last.line)) return true;
      const run = pending.splice(0, n);
      const outcomes: LineOutcome[] = [];
      for (const p of run) if (p.outcome !== null) outcomes.push(p.outcome);
      const end = n > 0 ? run[n - 1]!.l : recorded!;
      recorded = end;
      const status = await this.d.repo.record(b.id, this.d.holder, outcomes, { line: end.line + 1, offset: end.end }, claimEnd);
      for (const o of outcomes) held -= o.result.length;
      if (status === null) this.lose();
      else if (status !== 'in_progress') this.stopping = true;
      return status === 'in_progress';
    };
    const running = new Set<Promise<void>>();
    for (const l of window) {
      // A free slot (and room for answers) first, then the stop check: a cancel or shutdown that came while waiting starts nothing more.
      while (running.size >= this.d.concurrency || (held >= budget && running.size > 0)) {
        await Promise.race(running);
        if (held >= budget && !(await recordDone(last.line + 1))) break;
      }
      if (held >= budget && !this.stopping) await recordDone(last.line + 1);
      if (this.stopping) break;
      const slot: (typeof pending)[number] = { l, done: false, outcome: null };
      pending.push(slot);
      if (isBlank(l)) {
        finish(slot, null);
        continue;
      }
      const c = checkLine(l.text, l.line, b.endpoint, this.d.maxLineBytes);
      // Checked while validating: a line that fails now was changed since, and is not sent.
      if (isLineError(c)) {
        finish(slot, failure(l.line, null, { code: c.code, message: c.message }));
        continue;
      }
      if (expiredAt !== null) {
        finish(slot, failure(l.line, c.customId, { code: 'batch_expired', message: 'the batch expired before this request was sent' }));
        continue;
      }
      if (l.line < b.claimedLine) {
        finish(slot, failure(l.line, c.customId, { code: 'batch_line_interrupted', message: 'the gateway stopped while this request was in flight; it is not sent again' }));
        continue;
      }
      const p = this.send(b, key, l.line, c.customId, c.body).then((o) => {
        finish(slot, o);
        running.delete(p);
      });
      running.add(p);
    }
    await Promise.all(running);
    // The claim ends at the cursor: lines of the window not started are not claimed any more.
    await recordDone(undefined);
    return expiredAt;
  }

  /** One line through the pipeline; a refusal by the gateway's own rate limit (nothing was sent) waits and tries again. */
  private async send(b: BatchRecord, key: ApiKeyRecord, line: number, customId: string, body: Record<string, unknown>): Promise<LineOutcome> {
    const endpoint = BATCH_ENDPOINTS[b.endpoint]!;
    const bytes = Buffer.from(JSON.stringify(body));
    for (;;) {
      const answer = await runInProcess(this.d.models, { key, endpoint, method: 'POST', path: ENDPOINT_PATHS[endpoint], headers: { ...b.headers }, body: bytes }, this.d.maxAnswerBytes);
      const wait = rateLimitWait(answer);
      if (wait === null || this.stopping || this.at() + wait / 1000 >= b.expiresAt) return outcome(line, customId, answer);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /** Writes the output and error files from the outcomes, then the batch's final state; whether it was written. */
  private async finalize(b: BatchRecord, final: 'completed' | 'expired' | 'cancelled'): Promise<boolean> {
    const output = await this.writeFile(b, true);
    const error = await this.writeFile(b, false);
    const at = this.at();
    const stamp = final === 'completed' ? { completed_at: at } : final === 'cancelled' ? { cancelled_at: at } : {};
    const written = await this.d.repo.finish(b.id, this.d.holder, b.status as BatchStatus, { status: final, output_file_id: output, error_file_id: error, ...stamp });
    if (!written) await this.checkLease();
    return written;
  }

  /** The batch's output (ok) or error file, in line order; null when it would be empty. */
  private async writeFile(b: BatchRecord, ok: boolean): Promise<string | null> {
    const file = new LineFile(scratchPath(this.d.files.storage, b.id));
    try {
      for (let after = -1; ; ) {
        const page = await this.d.repo.outcomes(b.id, ok, after, OUTCOME_PAGE);
        for (const o of page) await file.write(o.result);
        if (page.length < OUTCOME_PAGE) break;
        after = page[page.length - 1]!.line;
      }
      return await this.d.files.createBatchFile(b, ok ? 'output' : 'error', file, this.at());
    } finally {
      await file.discard();
    }
  }
}

function isBlank(l: JsonlLine): boolean {
  return l.text !== null && l.text.trim() === '';
}

function failure(line: number, customId: string | null, error: { code: string; message: string }): LineOutcome {
  return { line, ok: false, result: JSON.stringify({ id: newRequestId(), custom_id: customId, response: null, error }) };
}

/** A line's answer as a line of the output file (2xx) or of the error file. */
function outcome(line: number, customId: string, a: InProcessAnswer): LineOutcome {
  if (a.body === null) return failure(line, customId, { code: 'response_too_large', message: 'the answer was larger than a batch line may keep' });
  const text = a.body.toString('utf8');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // kept as text: a provider's answer that is not JSON
  }
  const ok = a.status >= 200 && a.status < 300;
  const response = { status_code: a.status, request_id: a.headers['x-gateway-trace-id'] ?? null, body };
  const e = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  const error = ok ? null : { code: typeof e?.code === 'string' ? e.code : `http_${a.status}`, message: typeof e?.message === 'string' ? e.message : text.slice(0, 1000) };
  return { line, ok, result: JSON.stringify({ id: newRequestId(), custom_id: customId, response, error }) };
}

/** How long to wait before sending again when the gateway's own rate limit refused the line (no provider was called); null otherwise. */
function rateLimitWait(a: InProcessAnswer): number | null {
  if (a.status !== 429 || a.headers['x-gateway-provider'] !== undefined) return null;
  const after = Number(a.headers['retry-after']);
  return Number.isFinite(after) && after >= 0 ? Math.min(MAX_RATE_WAIT_MS, Math.max(100, after * 1000)) : null;
}
