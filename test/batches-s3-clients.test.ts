// The S3 clients of virtual keys' buckets (src/batches/s3-clients.ts): one per region, endpoint and credential,
// reused across calls; at most `max` kept (a bounded map), the least recently used closed, but never under a call
// still using it, each eviction told to the caller (switchyard_bounded_evictions_total{map="s3_clients"}).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { S3Clients, type S3ClientKey } from '../src/batches/s3-clients.js';

const key = (id: string, secret = 's'): S3ClientKey => ({ region: 'us-west-2', credentials: { accessKeyId: id, secretAccessKey: secret } });

function clients(max: number) {
  const made: { id: string; destroyed: boolean }[] = [];
  const evicted: string[] = [];
  const cache = new S3Clients(
    max,
    (k) => {
      const c = { id: k.credentials.accessKeyId, destroyed: false };
      made.push(c);
      return { destroy: () => (c.destroyed = true) } as unknown as S3Client;
    },
    (id) => evicted.push(id),
  );
  return { cache, made, evicted };
}

describe('S3 clients kept per credential', () => {
  it('one client per region, endpoint and credential, reused by later calls; another secret is another client', async () => {
    const { cache, made } = clients(8);
    const first = await cache.use(key('a'), async (c) => c);
    assert.equal(await cache.use(key('a'), async (c) => c), first);
    await cache.use(key('a', 'rotated'), async () => {});
    await cache.use({ ...key('a'), endpoint: 'http://minio:9000' }, async () => {});
    await cache.use({ ...key('a'), region: 'eu-west-1' }, async () => {});
    await cache.use({ ...key('a'), credentials: { ...key('a').credentials, sessionToken: 't' } }, async () => {});
    assert.deepEqual(made.map((m) => m.id), ['a', 'a', 'a', 'a', 'a']);
    assert.equal(cache.size, 5);
  });

  it('at most max kept: the least recently used is closed, and its eviction told (counted in /metrics)', async () => {
    const { cache, made, evicted } = clients(2);
    await cache.use(key('a'), async () => {});
    await cache.use(key('b'), async () => {});
    await cache.use(key('a'), async () => {}); // a is the most recent now
    await cache.use(key('c'), async () => {});
    assert.equal(cache.size, 2);
    assert.deepEqual(made.map((m) => [m.id, m.destroyed]), [['a', false], ['b', true], ['c', false]]);
    // Told once, by the hashed key: never the secret as text.
    assert.equal(evicted.length, 1);
    assert.match(evicted[0]!, /^[0-9a-f]{64}$/);
    // Closing is not an eviction.
    cache.close();
    assert.equal(evicted.length, 1);
    assert.deepEqual(made.map((m) => m.destroyed), [true, true, true]);
  });

  it('a client dropped while a call uses it is closed when that call settles, not before', async () => {
    const { cache, made } = clients(1);
    let release!: () => void;
    const long = cache.use(key('a'), () => new Promise<void>((r) => (release = r)));
    await cache.use(key('b'), async () => {});
    assert.deepEqual(made.map((m) => m.destroyed), [false, false]);
    release();
    await long;
    assert.deepEqual(made.map((m) => m.destroyed), [true, false]);
    cache.close();
    assert.deepEqual([cache.size, made[1]!.destroyed], [0, true]);
  });
});
