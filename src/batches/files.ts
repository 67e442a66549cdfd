/**
 * The gateway's files: metadata in the store, bytes in the file storage,
 * always together (the bytes are stored first, so a listed file can be
 * read; a delete drops the row first, so nobody reads a file being removed).
 */
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { FileRepo, StoredFile } from '../store/files.js';
import { batchFileId } from './ids.js';
import type { LineFile } from './line-file.js';
import type { FileStorage } from './storage.js';

export class Files {
  constructor(
    readonly repo: FileRepo,
    readonly storage: FileStorage,
  ) {}

  /** Keeps the complete local file at `path` as a file of the workspace. */
  async create(f: Omit<StoredFile, 'bytes'>, path: string): Promise<StoredFile> {
    const bytes = (await stat(path)).size;
    await this.storage.put(f.id, path, bytes);
    const file = { ...f, bytes };
    await this.repo.insert(file);
    return file;
  }

  /** A batch's output or error file from its finished LineFile (ended here); null, and nothing kept, when it has no lines. */
  async createBatchFile(b: { id: string; workspaceId: string }, kind: 'output' | 'error', file: LineFile, createdAt: number): Promise<string | null> {
    if ((await file.end()) === 0) return null;
    const f = await this.create({ id: batchFileId(b.id, kind), workspaceId: b.workspaceId, purpose: 'batch_output', filename: `${b.id}_${kind}.jsonl`, createdAt }, file.path);
    return f.id;
  }

  /** The file's bytes from `start`, when the workspace has it; null otherwise. */
  async open(workspaceId: string, id: string, start = 0): Promise<Readable | null> {
    if ((await this.repo.get(workspaceId, id)) === null) return null;
    return this.storage.read(id, start);
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    if (!(await this.repo.delete(workspaceId, id))) return false;
    await this.storage.delete(id);
    return true;
  }
}

/** The file object of OpenAI's Files API. */
export function fileObject(f: StoredFile): Record<string, unknown> {
  return {
    id: f.id,
    object: 'file',
    bytes: f.bytes,
    created_at: f.createdAt,
    filename: f.filename,
    purpose: f.purpose,
    status: 'processed',
    status_details: null,
    expires_at: null,
  };
}
