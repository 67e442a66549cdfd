/**
 * S3 clients for the buckets virtual keys name (Bedrock batches), one per
 * region, endpoint and credential, reused: a client per call would open new
 * connections (and policed agents) for every batch read. At most `max` are
 * kept (a bounded map); past that the least recently used is dropped, and
 * closed once no call still uses it (closing destroys its sockets, a read in
 * progress with them).
 */
import { createHash } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import type { LRUCache } from 'lru-cache';
import { boundedMap, type OnEvict } from '../shared/bounded.js';

export interface S3ClientKey {
  region: string;
  endpoint?: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

interface Entry {
  client: S3Client;
  users: number;
  dropped: boolean;
}

export class S3Clients {
  private readonly entries: LRUCache<string, Entry>;

  /** `onEvict`: told of each client dropped to make room (counted in /metrics). */
  constructor(
    max: number,
    private readonly make: (k: S3ClientKey) => S3Client,
    onEvict?: OnEvict,
  ) {
    this.entries = boundedMap<Entry>(max, (id, e) => {
      drop(e);
      onEvict?.(id);
    });
  }

  /** Runs `fn` with the client of `k` (made, or the one kept), which stays open until `fn` settles. */
  async use<T>(k: S3ClientKey, fn: (client: S3Client) => Promise<T>): Promise<T> {
    // Hashed: the map's keys do not hold the secret as text.
    const id = createHash('sha256').update(JSON.stringify([k.region, k.endpoint ?? '', k.credentials.accessKeyId, k.credentials.secretAccessKey, k.credentials.sessionToken ?? ''])).digest('hex');
    let e = this.entries.get(id);
    if (e === undefined) {
      e = { client: this.make(k), users: 0, dropped: false };
      this.entries.set(id, e);
    }
    e.users++;
    try {
      return await fn(e.client);
    } finally {
      e.users--;
      if (e.dropped && e.users === 0) e.client.destroy();
    }
  }

  /** Closes every client (the process stops); one still in use when its call settles. */
  close(): void {
    for (const e of this.entries.values()) drop(e);
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

function drop(e: Entry): void {
  e.dropped = true;
  if (e.users === 0) e.client.destroy();
}
