// SqliteDb keeps a bounded number of prepared statements (boundedMemo): the
// log reads' SQL varies with a caller's filters (an `IN (?, …)` per list
// length); a statement dropped from the cache is prepared again when used.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDb } from './sqlite.js';

test('statements dropped from the bounded cache still run', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-sqlite-'));
  const db = new SqliteDb(dir);
  try {
    const shape = (n: number): string => `SELECT ${n} AS n WHERE 1 IN (${Array.from({ length: n }, () => '?').join(', ')})`;
    for (let n = 1; n <= 1000; n++) assert.deepEqual(await db.get(shape(n), Array.from({ length: n }, () => 1)), { n });
    assert.deepEqual(await db.get(shape(1), [1]), { n: 1 });
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
