/**
 * Stored responses (migration 18): what POST /v1/responses answered, kept
 * per workspace when the request's `store` was true, with the turn's input
 * items, for GET /v1/responses/:id, its input_items, DELETE, and
 * previous_response_id chains. The Response and its input are JSON text,
 * bounded by the caller (pipeline/responses.ts).
 */
import type { Db } from './db.js';

export interface StoredResponse {
  id: string;
  workspaceId: string;
  previousResponseId: string | null;
  status: string;
  /** The Response object, JSON text. */
  response: string;
  /** The turn's input items (each with its id), JSON text of an array. */
  input: string;
  createdAt: number;
}

interface Row {
  id: string;
  workspace_id: string;
  previous_response_id: string | null;
  status: string;
  response: string;
  input: string;
  created_at: number | string;
}

function toStored(r: Row): StoredResponse {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    previousResponseId: r.previous_response_id,
    status: r.status,
    response: r.response,
    input: r.input,
    createdAt: Number(r.created_at),
  };
}

/** One earlier turn of a chain: its input items and its Response, JSON text. */
export interface Turn {
  input: string;
  response: string;
}

export class ResponseRepo {
  constructor(private readonly db: Db) {}

  /** Keeps a response; one already stored under its id (a replayed cache hit) stays as it was. */
  async save(r: StoredResponse): Promise<void> {
    await this.db.run(
      'INSERT INTO responses (id, workspace_id, previous_response_id, status, response, input, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
      [r.id, r.workspaceId, r.previousResponseId, r.status, r.response, r.input, r.createdAt],
    );
  }

  async get(workspaceId: string, id: string): Promise<StoredResponse | null> {
    const r = await this.db.get<Row>('SELECT * FROM responses WHERE id = ? AND workspace_id = ?', [id, workspaceId]);
    return r === undefined ? null : toStored(r);
  }

  /**
   * The chain ending at `id`, oldest turn first, at most `maxTurns` turns
   * (the newest) and about `maxChars` characters of stored input and output
   * (the walk stops at the turn that passes it: `tooLarge`); empty when `id`
   * is not stored in the workspace. One recursive query, in the workspace alone.
   */
  async chain(workspaceId: string, id: string, maxTurns: number, maxChars: number): Promise<{ turns: Turn[]; cut: boolean; tooLarge: boolean }> {
    const rows = await this.db.all<{ input: string; response: string; previous_response_id: string | null; chars: number | string }>(
      `WITH RECURSIVE chain (id, previous_response_id, depth, chars) AS (
         SELECT id, previous_response_id, 1, length(input) + length(response) FROM responses WHERE id = ? AND workspace_id = ?
         UNION ALL
         SELECT r.id, r.previous_response_id, c.depth + 1, c.chars + length(r.input) + length(r.response) FROM responses r JOIN chain c ON r.id = c.previous_response_id
         WHERE r.workspace_id = ? AND c.depth < ? AND c.chars <= ?
       )
       SELECT r.input, r.response, c.previous_response_id, c.chars FROM chain c JOIN responses r ON r.id = c.id ORDER BY c.depth DESC`,
      [id, workspaceId, workspaceId, maxTurns, maxChars],
    );
    const tooLarge = rows.length > 0 && Number(rows[0]!.chars) > maxChars;
    // The oldest turn fetched still points further back: the chain is longer than maxTurns.
    const cut = !tooLarge && rows.length === maxTurns && rows[0]?.previous_response_id != null;
    return { turns: tooLarge ? [] : rows.map((r) => ({ input: r.input, response: r.response })), cut, tooLarge };
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    return (await this.db.run('DELETE FROM responses WHERE id = ? AND workspace_id = ?', [id, workspaceId])) > 0;
  }
}
