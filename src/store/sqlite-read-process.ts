/**
 * A SQLite read process (started by sqlite-reads.ts): answers reads on a
 * read-only connection of its own, one at a time, so that a long scan runs
 * here, not on the thread that serves requests, and can be killed.
 */
import { setPriority } from 'node:os';
import type { FromReader, ToReader } from './sqlite-reads.js';
import { SqliteDb } from './sqlite.js';

/** Niceness of this process: 10 (of 19), as the log writer's: a caller's scan yields the core to requests. */
const READER_NICE = 10;

try {
  setPriority(READER_NICE);
} catch {
  // Not permitted, or not supported: the reads compete as equals.
}

const db = new SqliteDb(process.argv[2]!, { readOnly: true });

process.on('message', async (m: ToReader) => {
  let answer: FromReader;
  try {
    answer = { id: m.id, rows: m.method === 'all' ? await db.all(m.sql, m.params) : await db.get(m.sql, m.params) };
  } catch (e) {
    const err = e as { message?: unknown; code?: unknown };
    answer = { id: m.id, error: { message: String(err.message ?? e), code: typeof err.code === 'string' ? err.code : undefined } };
  }
  process.send!(answer);
});
// The gateway went away (closed, or died without killing it): nothing is left to answer.
process.on('disconnect', () => process.exit(0));
