/**
 * Encryption at rest of provider credentials and other secrets: AES-256-GCM
 * under GATEWAY_ENCRYPTION_KEY (or a key generated into the data dir, mode
 * 0600). Each ciphertext is bound to the object it belongs to (associated
 * data), so a blob copied onto another row does not decrypt. The database
 * keeps a check value of the key: starting with the wrong key fails at once
 * rather than on the first request that needs a credential.
 */
import { createCipheriv, createDecipheriv, createHmac, hash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from './db.js';

const VERSION = 'v1';
const KEY_FILE = 'encryption.key';

export class Secrets {
  private constructor(private readonly key: Buffer) {}

  /**
   * GATEWAY_ENCRYPTION_KEY: 32 bytes as 64 hex characters or base64, or any
   * passphrase of at least 32 characters (hashed to 32 bytes). Unset: a random
   * key in the data dir, made on first start.
   */
  static load(configured: string | undefined, dataDir: string): Secrets {
    if (configured !== undefined) return new Secrets(parseKey(configured));
    const file = join(dataDir, KEY_FILE);
    if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    return new Secrets(parseKey(readFileSync(file, 'utf8').trim()));
  }

  /** Test and tooling use: a Secrets over a raw 32-byte key. */
  static fromKey(key: Buffer): Secrets {
    if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
    return new Secrets(key);
  }

  encrypt(plain: string, boundTo: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(boundTo));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}:${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${ct.toString('base64')}`;
  }

  /** Throws when the blob was not made by this key for this object. */
  decrypt(blob: string, boundTo: string): string {
    const [version, iv, tag, ct] = blob.split(':');
    if (version !== VERSION || iv === undefined || tag === undefined || ct === undefined) throw new Error('unrecognised ciphertext');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64')), decipher.final()]).toString('utf8');
  }

  /**
   * Records this key's check value in a fresh database, or compares it with
   * the recorded one: every process of one database must share the key.
   */
  async verifyAgainst(db: Db): Promise<void> {
    const check = createHmac('sha256', this.key).update('switchyard encryption key check').digest('hex');
    await db.run("INSERT INTO meta (name, value) VALUES ('encryption_key_check', ?) ON CONFLICT DO NOTHING", [check]);
    const stored = await db.get<{ value: string }>("SELECT value FROM meta WHERE name = 'encryption_key_check'");
    if (stored?.value !== check) {
      throw new Error(
        'GATEWAY_ENCRYPTION_KEY does not match the key this database was set up with: stored credentials could not be read. ' +
          'Start every gateway process of one database with the same GATEWAY_ENCRYPTION_KEY.',
      );
    }
  }
}

function parseKey(text: string): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  const b64 = Buffer.from(text, 'base64');
  if (b64.length === 32 && /^[A-Za-z0-9+/_-]{43}=?$/.test(text)) return b64;
  if (text.length >= 32) return hash('sha256', text, 'buffer');
  throw new Error('GATEWAY_ENCRYPTION_KEY must be 32 bytes (64 hex characters or base64) or a passphrase of at least 32 characters');
}
