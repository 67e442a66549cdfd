/**
 * The encryption key meets its database. The database keeps, in `meta`:
 * the key's check value (every process of one database must share the key,
 * and one with another key refuses to start, rather than fail on the first
 * request that needs a credential), the scrypt salt and parameters of a
 * passphrase, and the at-rest format.
 *
 * Format 2 (this release): a passphrase is stretched with scrypt, and a
 * saved config's secrets are bound to their config and place in it. A
 * database of an earlier release (a check value, no format) was written
 * with a passphrase's unsalted SHA-256 and config secrets bound to their
 * workspace: at the first start it is re-wrapped, in the transaction that
 * checks the key. Every blob is decrypted with the old key and binding and
 * encrypted with the new ones, and the old check value is replaced: keeping
 * the old blobs readable would keep them testable offline at one SHA-256
 * per guess, which is what scrypt is for. Processes of the earlier release
 * then refuse to start on this database (the check value differs).
 */
import { hash } from 'node:crypto';
import { formatPath, type SchemaPath } from '../shared/json-schema.js';
import type { Db } from './db.js';
import { configSecretBinding, derive, keyMaterial, newKdf, Secrets, type KdfParams, type KeySource } from './secrets.js';

const FORMAT = '2';
/** Arbitrary constant naming the key-setup lock (Postgres): processes starting together set the database up once. */
const KEY_SETUP_LOCK = 0x5377_6b73;

/** What a first start on an earlier release's database did. */
export interface Rewrapped {
  /** Blobs encrypted again under the new key or binding. */
  blobs: number;
  /** Rows whose blobs did not decrypt before either (`table id`): left as they were. */
  unreadable: string[];
}

export interface OpenedSecrets {
  secrets: Secrets;
  /** Set when this start re-wrapped an earlier release's data. */
  rewrapped: Rewrapped | null;
}

/**
 * The key from `source`, checked against `db` (recording its check value and
 * scrypt parameters in a new database, re-wrapping an earlier release's data).
 */
export async function openSecrets(source: KeySource, db: Db): Promise<OpenedSecrets> {
  const material = keyMaterial(source);
  return db.transaction(async (tx) => {
    if (tx.engine === 'postgres') await tx.get('SELECT pg_advisory_xact_lock(?)', [KEY_SETUP_LOCK]);
    const meta = new Map(
      (await tx.all<{ name: string; value: string }>("SELECT name, value FROM meta WHERE name IN ('encryption_key_check', 'encryption_kdf', 'encryption_format')")).map(
        (r) => [r.name, r.value],
      ),
    );
    const check = meta.get('encryption_key_check');
    const mismatch = (): Error =>
      new Error(
        `${source.origin} does not match the key this database was set up with: stored credentials could not be read. ` +
          'Start every gateway process of one database with the same GATEWAY_ENCRYPTION_KEY (or GATEWAY_ENCRYPTION_KEY_FILE).',
      );

    if (check !== undefined && meta.get('encryption_format') === FORMAT) {
      const stored = meta.get('encryption_kdf');
      if ((material.kind === 'passphrase') !== (stored !== undefined)) throw mismatch();
      const secrets = Secrets.fromKey(material.kind === 'raw' ? material.key : await derive(material.text, JSON.parse(stored!) as KdfParams));
      if (secrets.checkValue() !== check) throw mismatch();
      return { secrets, rewrapped: null };
    }

    // A new database, or an earlier release's: the key and parameters this one keeps from now on.
    const kdf = material.kind === 'passphrase' ? newKdf() : null;
    const secrets = Secrets.fromKey(material.kind === 'raw' ? material.key : await derive(material.text, kdf!));
    let rewrapped: Rewrapped | null = null;
    if (check !== undefined) {
      const old = Secrets.fromKey(material.kind === 'raw' ? material.key : hash('sha256', material.text, 'buffer'));
      if (old.checkValue() !== check) throw mismatch();
      rewrapped = await rewrap(tx, old, secrets, material.kind === 'passphrase');
    }
    const set = async (name: string, value: string): Promise<void> => {
      await tx.run('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value', [name, value]);
    };
    await set('encryption_key_check', secrets.checkValue());
    if (kdf !== null) await set('encryption_kdf', JSON.stringify(kdf));
    await set('encryption_format', FORMAT);
    return { secrets, rewrapped };
  });
}

/** Tables whose column holds one blob bound to the row's id. */
const ROW_BLOBS = [
  ['virtual_keys', 'credentials'],
  ['integrations', 'credentials'],
  ['api_keys', 'rotated_key'],
] as const;

/**
 * An earlier release's blobs under the new key (`rekey`: the rows bound to
 * their ids; without it their key is unchanged), and saved config secrets
 * bound to their config and path instead of their workspace.
 */
async function rewrap(tx: Db, from: Secrets, to: Secrets, rekey: boolean): Promise<Rewrapped> {
  const out: Rewrapped = { blobs: 0, unreadable: [] };
  if (rekey) {
    for (const [table, column] of ROW_BLOBS) {
      for (const row of await tx.all<{ id: string; blob: string }>(`SELECT id, ${column} AS blob FROM ${table} WHERE ${column} IS NOT NULL`)) {
        let plain: string;
        try {
          plain = from.decrypt(row.blob, row.id);
        } catch {
          out.unreadable.push(`${table} ${row.id}`);
          continue;
        }
        await tx.run(`UPDATE ${table} SET ${column} = ? WHERE id = ?`, [to.encrypt(plain, row.id), row.id]);
        out.blobs++;
      }
    }
  }
  const versions = await tx.all<{ id: string; config: string; config_id: string; workspace_id: string }>(
    'SELECT v.id, v.config, v.config_id, c.workspace_id FROM config_versions v JOIN configs c ON c.id = v.config_id',
  );
  for (const v of versions) {
    let changed = false;
    let unreadable = false;
    const body = mapSealed(JSON.parse(v.config) as unknown, ['config'], (blob, path) => {
      try {
        const sealed = to.encrypt(from.decrypt(blob, v.workspace_id), configSecretBinding(v.config_id, formatPath(path)));
        changed = true;
        out.blobs++;
        return sealed;
      } catch {
        unreadable = true;
        return blob;
      }
    });
    if (unreadable) out.unreadable.push(`config_versions ${v.id}`);
    if (changed) await tx.run('UPDATE config_versions SET config = ? WHERE id = ?', [JSON.stringify(body), v.id]);
  }
  return out;
}

/**
 * A copy of a stored config body with each `{"$sealed": blob}` (the form of
 * config/secrets.ts) replaced by `{"$sealed": fn(blob, path)}`; `path` as
 * config/secrets.ts names secrets (`config.targets[0].api_key`).
 */
function mapSealed(value: unknown, path: SchemaPath, fn: (blob: string, path: SchemaPath) => string): unknown {
  if (Array.isArray(value)) return value.map((v, i) => mapSealed(v, [...path, i], fn));
  if (value === null || typeof value !== 'object') return value;
  const sealed = (value as { $sealed?: unknown }).$sealed;
  if (typeof sealed === 'string') return { $sealed: fn(sealed, path) };
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapSealed(v, [...path, k], fn)]));
}
