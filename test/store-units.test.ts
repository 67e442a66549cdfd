// Unit tests of the store's small pieces: time-ordered ids, slugs, secrets at
// rest, placeholder conversion, and SQLite's transaction gate.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toPgPlaceholders } from '../src/store/db.js';
import { newId, newSlug, SLUG_PATTERN } from '../src/store/ids.js';
import { migrate } from '../src/store/migrations.js';
import { openSecrets } from '../src/store/key-setup.js';
import { keyMaterial, readKeySource, Secrets } from '../src/store/secrets.js';
import { SqliteDb } from '../src/store/sqlite.js';

describe('newId', () => {
  it('is a version-7 UUID', () => {
    assert.match(newId(), /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('sorts in creation order, also within one millisecond and when the clock steps back', () => {
    const ids: string[] = [];
    for (let i = 0; i < 5000; i++) ids.push(newId(1_800_000_000_000));
    ids.push(newId(1_700_000_000_000)); // clock went back: still after the others
    ids.push(newId(Date.now() + 10_000_000));
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('carries the millisecond timestamp in its first 48 bits', () => {
    const ms = Date.UTC(2031, 0, 1);
    const id = newId(ms);
    assert.ok(parseInt(id.replace(/-/g, '').slice(0, 12), 16) >= ms);
  });
});

describe('newSlug', () => {
  it('is the name in kebab case plus a random tail, always a valid slug', () => {
    assert.match(newSlug('My  Team / Prod!'), /^my-team-prod-[0-9a-f]{6}$/);
    assert.match(newSlug('Ünïcödé'), /^unicode-[0-9a-f]{6}$/);
    assert.match(newSlug('!!!'), /^[0-9a-f]{6}$/);
    for (const name of ['a', 'x'.repeat(300), '日本語']) assert.match(newSlug(name), SLUG_PATTERN);
    assert.notEqual(newSlug('same'), newSlug('same'));
  });
});

describe('toPgPlaceholders', () => {
  it('numbers the placeholders in order', () => {
    assert.equal(toPgPlaceholders('SELECT * FROM t WHERE a = ? AND b IN (?, ?)'), 'SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)');
    assert.equal(toPgPlaceholders('SELECT 1'), 'SELECT 1');
  });
});

describe('Secrets', () => {
  const secrets = Secrets.fromKey(randomBytes(32));

  it('round-trips, with a fresh IV each time', () => {
    const a = secrets.encrypt('sk-live-123', 'obj-1');
    const b = secrets.encrypt('sk-live-123', 'obj-1');
    assert.notEqual(a, b);
    assert.ok(!a.includes('sk-live-123'));
    assert.equal(secrets.decrypt(a, 'obj-1'), 'sk-live-123');
  });

  it('refuses a blob bound to another object, a tampered blob, and another key', () => {
    const blob = secrets.encrypt('sk-live-123', 'obj-1');
    assert.throws(() => secrets.decrypt(blob, 'obj-2'));
    const parts = blob.split(':');
    const ct = Buffer.from(parts[3]!, 'base64');
    ct[0]! ^= 1;
    assert.throws(() => secrets.decrypt([...parts.slice(0, 3), ct.toString('base64')].join(':'), 'obj-1'));
    assert.throws(() => Secrets.fromKey(randomBytes(32)).decrypt(blob, 'obj-1'));
    assert.throws(() => secrets.decrypt('v0:x:y:z', 'obj-1'), /unrecognised/);
  });

  it('takes hex or base64 as the key itself, longer text as a passphrase; refuses a short one', () => {
    const raw = randomBytes(32);
    const source = (text: string) => ({ text, origin: 'GATEWAY_ENCRYPTION_KEY', file: null });
    assert.deepEqual(keyMaterial(source(raw.toString('hex'))), { kind: 'raw', key: raw });
    assert.deepEqual(keyMaterial(source(raw.toString('base64'))), { kind: 'raw', key: raw });
    assert.deepEqual(keyMaterial(source('correct horse battery staple, stapled twice')), { kind: 'passphrase', text: 'correct horse battery staple, stapled twice' });
    assert.throws(() => keyMaterial(source('too short')), /GATEWAY_ENCRYPTION_KEY must be 32 bytes/);
  });

  it('generates a key file readable by its owner only, and reuses it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-secrets-'));
    try {
      const first = readKeySource(undefined, undefined, dir);
      assert.equal(first.file, join(dir, 'encryption.key'));
      assert.equal(statSync(join(dir, 'encryption.key')).mode & 0o777, 0o600);
      assert.equal(keyMaterial(first).kind, 'raw');
      assert.equal(readKeySource(undefined, undefined, dir).text, first.text);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a database set up with one key refuses another', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-secrets-'));
    const db = new SqliteDb(dir);
    const source = (key: Buffer) => ({ text: key.toString('hex'), origin: 'GATEWAY_ENCRYPTION_KEY', file: null });
    try {
      await migrate(db);
      const key = randomBytes(32);
      await openSecrets(source(key), db);
      const again = await openSecrets(source(key), db);
      assert.equal(again.secrets.decrypt(Secrets.fromKey(key).encrypt('z', 'o'), 'o'), 'z');
      await assert.rejects(openSecrets(source(randomBytes(32)), db), /GATEWAY_ENCRYPTION_KEY does not match/);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SqliteDb', () => {
  it('makes new databases with 16 kB pages (request logs cost less CPU a row)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-pages-'));
    const db = new SqliteDb(dir);
    try {
      await migrate(db);
      assert.deepEqual(await db.all('PRAGMA page_size'), [{ page_size: 16384 }]);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("transactions: statements from elsewhere wait for an open transaction instead of joining it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-tx-'));
    const db = new SqliteDb(dir);
    try {
      await db.exec('CREATE TABLE t (v INTEGER)');
      let outsideRan = false;
      const tx = db.transaction(async (t) => {
        await t.run('INSERT INTO t (v) VALUES (1)');
        await new Promise((r) => setTimeout(r, 20));
        assert.equal(outsideRan, false);
        throw new Error('roll back');
      });
      const outside = db.run('INSERT INTO t (v) VALUES (2)').then(() => (outsideRan = true));
      await assert.rejects(tx, /roll back/);
      await outside;
      // The rolled-back insert is gone; the outside one, run after, stays.
      assert.deepEqual(await db.all('SELECT v FROM t'), [{ v: 2 }]);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
