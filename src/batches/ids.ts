/**
 * Ids of the files and batches the gateway keeps: `file-sy…` and `batch_sy…`
 * tell them from a provider's own (OpenAI's `file-…`, `batch_…`), so a
 * request naming one of those goes on to the provider. The hex is a
 * time-ordered UUID: ids sort in creation order, as lists page.
 */
import { newId } from '../store/ids.js';

export const FILE_PREFIX = 'file-sy';
export const BATCH_PREFIX = 'batch_sy';

const hex = (): string => newId().replaceAll('-', '');

export const newFileId = (): string => FILE_PREFIX + hex();
export const newBatchId = (): string => BATCH_PREFIX + hex();
/** The id of one request of a batch, as a line of its output or error file names it. */
export const newRequestId = (): string => `batch_req_${hex()}`;

/** The id of a batch's output or error file: fixed, so a batch finished again after a restart writes the same file. */
export function batchFileId(batchId: string, kind: 'output' | 'error'): string {
  return `${FILE_PREFIX}${batchId.slice(BATCH_PREFIX.length)}${kind === 'output' ? 'o' : 'e'}`;
}

export function isGatewayFileId(id: unknown): id is string {
  return typeof id === 'string' && id.length > FILE_PREFIX.length && id.startsWith(FILE_PREFIX);
}

export function isGatewayBatchId(id: unknown): id is string {
  return typeof id === 'string' && id.length > BATCH_PREFIX.length && id.startsWith(BATCH_PREFIX);
}

/** A time in ms as the Unix seconds a Batch object's `*_at` fields hold. */
export const seconds = (ms: number): number => Math.floor(ms / 1000);
