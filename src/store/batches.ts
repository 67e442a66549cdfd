/**
 * Gateway-managed batches (migration 19): the batch row is the job's whole
 * durable state. `next_line`/`next_offset` is the cursor (lines before it
 * have an outcome row; the offset is its byte position in the input file),
 * `claimed_line` the end of the lines a runner may have sent (claimed before
 * they are sent, so after a crash the lines between the two are known to be
 * unsafe to send again), `lease_holder`/`lease_expires_at` the process
 * running it (milliseconds). Every write of a runner names its holder: one
 * that lost its lease changes nothing.
 *
 * A batch a provider runs (migration 21, `provider_job` set) has a row of
 * the same shape, so it is listed and read like the others; its status is
 * what the provider last said (providerState). The engine leases it only once
 * the job has ended (`finalizing`), to collect its output once.
 */
import type { Db, SqlValue } from './db.js';
import { fromJson, listPage, toJson, type Page, type PageRequest } from './page.js';

export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

/** The states a runner still has work in. */
export const ACTIVE_STATUSES: readonly BatchStatus[] = ['validating', 'in_progress', 'finalizing', 'cancelling'];

export interface BatchLineError {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

/** Where a provider runs a batch: what reading, stopping and collecting it needs (no secret: those stay with the virtual key). */
export interface ProviderJob {
  provider: 'bedrock';
  /** The virtual key whose credentials created the job, and read and stop it. */
  virtualKeyId: string;
  jobArn: string;
  modelId: string;
  /** The job's input object and the prefix Bedrock writes its output under. */
  inputUri: string;
  outputUri: string;
}

export interface BatchRecord {
  id: string;
  workspaceId: string;
  apiKeyId: string;
  endpoint: string;
  inputFileId: string;
  completionWindow: string;
  status: BatchStatus;
  /** The x-gateway-* headers every line is sent with (no secret: the credentials are the virtual key's). */
  headers: Record<string, string>;
  metadata: Record<string, string> | null;
  errors: BatchLineError[] | null;
  outputFileId: string | null;
  errorFileId: string | null;
  total: number;
  completed: number;
  failed: number;
  nextLine: number;
  nextOffset: number;
  claimedLine: number;
  createdAt: number;
  inProgressAt: number | null;
  expiresAt: number;
  finalizingAt: number | null;
  completedAt: number | null;
  failedAt: number | null;
  expiredAt: number | null;
  cancellingAt: number | null;
  cancelledAt: number | null;
  /** Set when a provider runs the batch. */
  providerJob: ProviderJob | null;
}

/** A new batch: validating, nothing counted or stamped yet, unless `b` says otherwise. */
export function newBatchRecord(
  b: Pick<BatchRecord, 'id' | 'workspaceId' | 'apiKeyId' | 'endpoint' | 'inputFileId' | 'completionWindow' | 'headers' | 'metadata' | 'createdAt' | 'expiresAt'> & Partial<BatchRecord>,
): BatchRecord {
  return {
    status: 'validating',
    errors: null,
    outputFileId: null,
    errorFileId: null,
    total: 0,
    completed: 0,
    failed: 0,
    nextLine: 0,
    nextOffset: 0,
    claimedLine: 0,
    inProgressAt: null,
    finalizingAt: null,
    completedAt: null,
    failedAt: null,
    expiredAt: null,
    cancellingAt: null,
    cancelledAt: null,
    providerJob: null,
    ...b,
  };
}

type Row = Record<string, string | number | null>;

const num = (v: string | number | null | undefined): number | null => (v == null ? null : Number(v));

function toBatch(r: Row): BatchRecord {
  return {
    id: r.id as string,
    workspaceId: r.workspace_id as string,
    apiKeyId: r.api_key_id as string,
    endpoint: r.endpoint as string,
    inputFileId: r.input_file_id as string,
    completionWindow: r.completion_window as string,
    status: r.status as BatchStatus,
    headers: JSON.parse(r.headers as string) as Record<string, string>,
    metadata: fromJson(r.metadata as string | null),
    errors: fromJson(r.errors as string | null),
    outputFileId: r.output_file_id as string | null,
    errorFileId: r.error_file_id as string | null,
    total: Number(r.total),
    completed: Number(r.completed),
    failed: Number(r.failed),
    nextLine: Number(r.next_line),
    nextOffset: Number(r.next_offset),
    claimedLine: Number(r.claimed_line),
    createdAt: Number(r.created_at),
    inProgressAt: num(r.in_progress_at),
    expiresAt: Number(r.expires_at),
    finalizingAt: num(r.finalizing_at),
    completedAt: num(r.completed_at),
    failedAt: num(r.failed_at),
    expiredAt: num(r.expired_at),
    cancellingAt: num(r.cancelling_at),
    cancelledAt: num(r.cancelled_at),
    providerJob: fromJson(r.provider_job as string | null),
  };
}

/** Columns a runner may set, with their values (fixed names from code, never from input). */
export interface BatchUpdate {
  status?: BatchStatus;
  errors?: BatchLineError[];
  output_file_id?: string | null;
  error_file_id?: string | null;
  total?: number;
  completed?: number;
  failed?: number;
  in_progress_at?: number;
  finalizing_at?: number;
  completed_at?: number | null;
  failed_at?: number;
  expired_at?: number;
  cancelled_at?: number;
}

/** What a provider said of its batch, copied onto the row (no lease: the provider runs it). */
export interface ProviderState {
  status: BatchStatus;
  total: number;
  completed: number;
  failed: number;
  in_progress_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  errors: BatchLineError[] | null;
  output_file_id: string | null;
  error_file_id: string | null;
}

/** A batch the engine may lease: `provider` when a provider ran it and its output is to be collected. */
export interface Claimable {
  id: string;
  provider: boolean;
}

/** One line's outcome: the line of the output file (ok) or of the error file. */
export interface LineOutcome {
  line: number;
  ok: boolean;
  result: string;
}

export class BatchRepo {
  constructor(private readonly db: Db) {}

  async insert(b: BatchRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO batches (id, workspace_id, api_key_id, endpoint, input_file_id, completion_window, status, headers, metadata, errors, total, created_at, failed_at, expires_at, provider_job)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        b.id,
        b.workspaceId,
        b.apiKeyId,
        b.endpoint,
        b.inputFileId,
        b.completionWindow,
        b.status,
        JSON.stringify(b.headers),
        toJson(b.metadata),
        toJson(b.errors),
        b.total,
        b.createdAt,
        b.failedAt,
        b.expiresAt,
        toJson(b.providerJob),
      ],
    );
  }

  async get(workspaceId: string, id: string): Promise<BatchRecord | null> {
    const r = await this.db.get<Row>('SELECT * FROM batches WHERE id = ? AND workspace_id = ?', [id, workspaceId]);
    return r === undefined ? null : toBatch(r);
  }

  /** A batch by id alone, for the runner that holds its lease. */
  async load(id: string): Promise<BatchRecord | null> {
    const r = await this.db.get<Row>('SELECT * FROM batches WHERE id = ?', [id]);
    return r === undefined ? null : toBatch(r);
  }

  list(workspaceId: string, page: PageRequest): Promise<Page<BatchRecord>> {
    return listPage(this.db, 'batches', ['workspace_id = ?'], [workspaceId], page, toBatch);
  }

  /** validating or in_progress → cancelling (a gateway-run batch; a provider's is cancelled at the provider); null when the batch is unknown, its status otherwise (unchanged when it was in another state). */
  async requestCancel(workspaceId: string, id: string, at: number): Promise<BatchRecord | null> {
    await this.db.run(
      "UPDATE batches SET status = 'cancelling', cancelling_at = ? WHERE id = ? AND workspace_id = ? AND status IN ('validating', 'in_progress') AND provider_job IS NULL",
      [at, id, workspaceId],
    );
    return this.get(workspaceId, id);
  }

  /**
   * A provider-run batch's state as the provider gave it; the row after. An ended batch, or one whose output is
   * being collected (finalizing), no longer changes here: a slower, older read cannot undo it.
   */
  async providerState(workspaceId: string, id: string, u: ProviderState): Promise<BatchRecord | null> {
    await this.db.run(
      `UPDATE batches SET status = ?, total = ?, completed = ?, failed = ?, in_progress_at = ?, finalizing_at = ?, completed_at = ?, failed_at = ?, expired_at = ?,
         cancelling_at = ?, cancelled_at = ?, errors = ?, output_file_id = ?, error_file_id = ?
        WHERE id = ? AND workspace_id = ? AND provider_job IS NOT NULL AND status NOT IN ('finalizing', 'completed', 'failed', 'expired', 'cancelled')`,
      [u.status, u.total, u.completed, u.failed, u.in_progress_at, u.finalizing_at, u.completed_at, u.failed_at, u.expired_at, u.cancelling_at, u.cancelled_at, toJson(u.errors), u.output_file_id, u.error_file_id, id, workspaceId],
    );
    return this.get(workspaceId, id);
  }

  /** Batches with work left whose lease is free or lapsed, oldest first: the gateway's, and providers' whose output waits to be collected. */
  async claimable(nowMs: number, limit: number): Promise<Claimable[]> {
    const rows = await this.db.all<{ id: string; provider: number | string }>(
      `SELECT id, CASE WHEN provider_job IS NULL THEN 0 ELSE 1 END AS provider FROM batches WHERE ${LEASABLE}
         AND (lease_holder IS NULL OR lease_expires_at < ?) ORDER BY id LIMIT ?`,
      [...ACTIVE_STATUSES, nowMs, limit],
    );
    return rows.map((r) => ({ id: r.id, provider: Number(r.provider) === 1 }));
  }

  /** Takes the lease of a batch with work left when it is free or lapsed; whether this holder has it now. */
  async takeLease(id: string, holder: string, nowMs: number, untilMs: number): Promise<boolean> {
    const n = await this.db.run(
      `UPDATE batches SET lease_holder = ?, lease_expires_at = ?
        WHERE id = ? AND ${LEASABLE} AND (lease_holder IS NULL OR lease_expires_at < ? OR lease_holder = ?)`,
      [holder, untilMs, id, ...ACTIVE_STATUSES, nowMs, holder],
    );
    return n > 0;
  }

  /** Extends the lease; the batch's status, or null when this holder lost it. */
  async renew(id: string, holder: string, untilMs: number): Promise<BatchStatus | null> {
    return this.update(id, holder, { lease_expires_at: untilMs });
  }

  /** Lines before `line` may be sent from now on; the status, or null when the lease is lost. */
  claim(id: string, holder: string, line: number, untilMs: number): Promise<BatchStatus | null> {
    return this.update(id, holder, { claimed_line: line, lease_expires_at: untilMs });
  }

  /** Sets what a runner moved to; the status after, or null when the lease is lost. */
  set(id: string, holder: string, from: BatchStatus, u: BatchUpdate): Promise<BatchStatus | null> {
    return this.updateOn(this.db, id, holder, columns(u), from);
  }

  /**
   * A run of lines' outcomes and the cursor past them, together or not at
   * all, under the lease; the status after, or null when the lease is lost
   * (then nothing is written). Every line before the cursor has its outcome;
   * the claim ends at `claimEnd`: the cursor by default (none after it was
   * sent), or the window's end when lines past the cursor are still in flight.
   */
  async record(
    id: string,
    holder: string,
    outcomes: readonly LineOutcome[],
    next: { line: number; offset: number },
    claimEnd = next.line,
  ): Promise<BatchStatus | null> {
    let ok = 0;
    for (const o of outcomes) if (o.ok) ok++;
    return this.db.transaction(async (tx) => {
      const row = await tx.get<{ status: BatchStatus }>(
        `UPDATE batches SET completed = completed + ?, failed = failed + ?, next_line = ?, next_offset = ?, claimed_line = ?
          WHERE id = ? AND lease_holder = ? RETURNING status`,
        [ok, outcomes.length - ok, next.line, next.offset, claimEnd, id, holder],
      );
      if (row === undefined) return null;
      await tx.insertMany(
        'batch_outcomes',
        ['batch_id', 'line', 'ok', 'result'],
        outcomes.map((o) => [id, o.line, o.ok ? 1 : 0, o.result]),
      );
      return row.status;
    });
  }

  /** Outcomes of one kind in line order, a page after `afterLine`. */
  async outcomes(id: string, ok: boolean, afterLine: number, limit: number): Promise<{ line: number; result: string }[]> {
    const rows = await this.db.all<{ line: number | string; result: string }>(
      'SELECT line, result FROM batch_outcomes WHERE batch_id = ? AND ok = ? AND line > ? ORDER BY line LIMIT ?',
      [id, ok ? 1 : 0, afterLine, limit],
    );
    return rows.map((r) => ({ line: Number(r.line), result: r.result }));
  }

  /** The batch's end: its last fields set, the lease given up, the outcome rows (now in its files) dropped. */
  async finish(id: string, holder: string, from: BatchStatus, u: BatchUpdate): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const row = await this.updateOn(tx, id, holder, { ...columns(u), lease_holder: null, lease_expires_at: null }, from);
      if (row === null) return false;
      await tx.run('DELETE FROM batch_outcomes WHERE batch_id = ?', [id]);
      return true;
    });
  }

  /** Gives up the lease (a process that stops), so another takes the batch over at once. */
  async release(id: string, holder: string): Promise<void> {
    await this.db.run('UPDATE batches SET lease_holder = NULL, lease_expires_at = NULL WHERE id = ? AND lease_holder = ?', [id, holder]);
  }

  private update(id: string, holder: string, set: Record<string, SqlValue>): Promise<BatchStatus | null> {
    return this.updateOn(this.db, id, holder, set);
  }

  /** The guarded update every runner write is: this holder's lease, and the status it expects when `from` is given. */
  private async updateOn(db: Db, id: string, holder: string, set: Record<string, SqlValue>, from?: BatchStatus): Promise<BatchStatus | null> {
    const names = Object.keys(set);
    const row = await db.get<{ status: BatchStatus }>(
      `UPDATE batches SET ${names.map((n) => `${n} = ?`).join(', ')} WHERE id = ? AND lease_holder = ?${from === undefined ? '' : ' AND status = ?'} RETURNING status`,
      [...names.map((n) => set[n] as SqlValue), id, holder, ...(from === undefined ? [] : [from])],
    );
    return row?.status ?? null;
  }
}

/** A row the engine may lease (ACTIVE_STATUSES as parameters): a gateway batch with work left, or a provider's ended job whose output is not collected yet. */
const LEASABLE = `status IN (${ACTIVE_STATUSES.map(() => '?').join(', ')}) AND (provider_job IS NULL OR status = 'finalizing')`;

function columns(u: BatchUpdate): Record<string, SqlValue> {
  const set: Record<string, SqlValue> = {};
  for (const [k, v] of Object.entries(u)) set[k] = k === 'errors' ? toJson(v) : (v as SqlValue);
  return set;
}
