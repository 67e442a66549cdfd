/**
 * Files the gateway keeps (migration 19): the metadata of an upload (or of
 * a batch's output), per workspace; the bytes live in the file storage
 * (batches/storage.ts) under the same id.
 */
import type { Db } from './db.js';
import { listPage, type Page, type PageRequest } from './page.js';

export interface StoredFile {
  id: string;
  workspaceId: string;
  purpose: string;
  filename: string;
  bytes: number;
  createdAt: number;
}

interface Row {
  id: string;
  workspace_id: string;
  purpose: string;
  filename: string;
  bytes: number | string;
  created_at: number | string;
}

function toFile(r: Row): StoredFile {
  return { id: r.id, workspaceId: r.workspace_id, purpose: r.purpose, filename: r.filename, bytes: Number(r.bytes), createdAt: Number(r.created_at) };
}

export class FileRepo {
  constructor(private readonly db: Db) {}

  /** Keeps a file's metadata; one already stored under its id (a batch's output written again after a restart) stays. */
  async insert(f: StoredFile): Promise<void> {
    await this.db.run('INSERT INTO files (id, workspace_id, purpose, filename, bytes, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING', [
      f.id,
      f.workspaceId,
      f.purpose,
      f.filename,
      f.bytes,
      f.createdAt,
    ]);
  }

  async get(workspaceId: string, id: string): Promise<StoredFile | null> {
    const r = await this.db.get<Row>('SELECT * FROM files WHERE id = ? AND workspace_id = ?', [id, workspaceId]);
    return r === undefined ? null : toFile(r);
  }

  list(workspaceId: string, purpose: string | undefined, page: PageRequest): Promise<Page<StoredFile>> {
    const where = ['workspace_id = ?'];
    const params = [workspaceId];
    if (purpose !== undefined) {
      where.push('purpose = ?');
      params.push(purpose);
    }
    return listPage(this.db, 'files', where, params, page, toFile);
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM files WHERE id = ? AND workspace_id = ?', [id, workspaceId])) > 0;
  }
}
