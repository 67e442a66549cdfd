/**
 * Encryption at rest of provider credentials and other secrets: AES-256-GCM
 * under a 32-byte key. Each ciphertext is bound to the object it belongs to
 * (associated data), so a blob copied onto another row does not decrypt.
 *
 * The key comes from GATEWAY_ENCRYPTION_KEY, or the file
 * GATEWAY_ENCRYPTION_KEY_FILE names, or a key generated into the data dir
 * (mode 0600): 32 bytes as 64 hex characters or base64, or a passphrase of
 * at least 32 characters, stretched with scrypt under a salt and parameters
 * the database keeps (key-setup.ts), so a copy of the database costs a
 * guesser one scrypt per guess.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, scrypt } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const VERSION = 'v1';
/** The generated key's file in the data dir. */
export const KEY_FILE = 'encryption.key';

/** Where the key came from: said in messages (never the key), and checked against the database's place. */
export interface KeySource {
  /** The key as given: 32 bytes as hex or base64, or a passphrase. */
  text: string;
  /** How messages name it: the variable, or the generated file. */
  origin: string;
  /** The file it was read from (GATEWAY_ENCRYPTION_KEY_FILE or the generated one); null from the environment. */
  file: string | null;
}

/** The key as given: a full-strength 32-byte key is used as it is; a passphrase must be stretched. */
export type KeyMaterial = { kind: 'raw'; key: Buffer } | { kind: 'passphrase'; text: string };

/** scrypt's parameters, stored with the database that uses them (key-setup.ts). */
export interface KdfParams {
  name: 'scrypt';
  /** base64, 16 random bytes. */
  salt: string;
  N: number;
  r: number;
  p: number;
}

/**
 * scrypt's cost for a new database (OWASP's password storage guidance:
 * N=2^17, r=8, p=1): 128 MiB and about a second, once per start.
 */
const SCRYPT_COST = { N: 2 ** 17, r: 8, p: 1 } as const;

/**
 * The key source: GATEWAY_ENCRYPTION_KEY, else the file
 * GATEWAY_ENCRYPTION_KEY_FILE names, else the data dir's generated key (made
 * on first start, mode 0600). Both variables set is refused by settings.ts.
 */
export function readKeySource(configured: string | undefined, keyFile: string | undefined, dataDir: string): KeySource {
  if (configured !== undefined) return { text: configured, origin: 'GATEWAY_ENCRYPTION_KEY', file: null };
  if (keyFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(keyFile, 'utf8').trim();
    } catch (e) {
      throw new Error(`GATEWAY_ENCRYPTION_KEY_FILE: cannot read ${keyFile} (${(e as { code?: string }).code ?? (e as Error).message})`);
    }
    if (text === '') throw new Error(`GATEWAY_ENCRYPTION_KEY_FILE: ${keyFile} is empty`);
    return { text, origin: `GATEWAY_ENCRYPTION_KEY_FILE (${keyFile})`, file: keyFile };
  }
  const file = join(dataDir, KEY_FILE);
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  return { text: readFileSync(file, 'utf8').trim(), origin: `the generated key ${file}`, file };
}

/** 32 bytes as 64 hex characters or base64 are a key; any other text of at least 32 characters is a passphrase. */
export function keyMaterial(source: KeySource): KeyMaterial {
  const { text } = source;
  if (/^[0-9a-fA-F]{64}$/.test(text)) return { kind: 'raw', key: Buffer.from(text, 'hex') };
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) return { kind: 'raw', key: Buffer.from(text, 'base64') };
  if (text.length >= 32) return { kind: 'passphrase', text };
  throw new Error(`${source.origin} must be 32 bytes (64 hex characters or base64) or a passphrase of at least 32 characters`);
}

/** Fresh scrypt parameters: a new salt at the current cost. */
export function newKdf(): KdfParams {
  return { name: 'scrypt', salt: randomBytes(16).toString('base64'), ...SCRYPT_COST };
}

/** The 32-byte key a passphrase stands for under `kdf`. */
export function derive(passphrase: string, kdf: KdfParams): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    // scrypt needs 128·N·r bytes; Node's default ceiling (32 MiB) is below the cost chosen.
    scrypt(passphrase, Buffer.from(kdf.salt, 'base64'), 32, { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 256 * kdf.N * kdf.r }, (e, key) =>
      e === null ? resolve(key) : reject(e),
    ),
  );
}

/**
 * What a saved config's secret at `path` (`config.targets[0].api_key`) is
 * bound to: the config and the place in it, so a sealed value copied into
 * another config, or to another target of the same one, does not decrypt.
 */
export function configSecretBinding(configId: string, path: string): string {
  return `${configId}:${path}`;
}

export class Secrets {
  private constructor(private readonly key: Buffer) {}

  /** A Secrets over a 32-byte key. */
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

  /** The value the database keeps to tell this key from another: a MAC, so it says nothing of the key itself. */
  checkValue(): string {
    return createHmac('sha256', this.key).update('switchyard encryption key check').digest('hex');
  }
}
