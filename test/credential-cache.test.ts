// The credential cache on its own: synchronous hits, TTL, change notices, the
// bound on its size, lookups racing a write, and blobs that do not decrypt.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredCredential } from '../src/routing/credentials.js';
import { CredentialCache } from '../src/routing/credential-cache.js';
import type { Result } from '../src/shared/errors.js';
import { newId } from '../src/store/ids.js';
import { Secrets } from '../src/store/secrets.js';
import { SqliteDb } from '../src/store/sqlite.js';
import { Store } from '../src/store/store.js';

describe('credential cache', () => {
  let dir: string;
  let store: Store;
  let ws: string;
  const secrets = Secrets.fromKey(randomBytes(32));
  let clock: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-credcache-'));
    store = new Store(new SqliteDb(dir));
    await store.migrate();
    ws = (await store.workspaces.default()).id;
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    clock = 1_000_000;
  });

  async function addKey(slug: string, key: string): Promise<string> {
    const id = newId();
    await store.virtualKeys.create({
      id, slug, workspaceId: ws, name: slug, provider: 'openai', integrationId: null, note: null, settings: null,
      credentials: secrets.encrypt(JSON.stringify({ api_key: key }), id),
    });
    return id;
  }

  const cache = (opts: { onUnreadable?: (what: string, id: string) => void; max?: number } = {}) =>
    new CredentialCache(store, secrets, () => clock, opts.onUnreadable, opts.max);

  async function value(r: Result<StoredCredential | null> | Promise<Result<StoredCredential | null>>): Promise<StoredCredential | null> {
    const out = await r;
    assert.ok(out.ok);
    return out.value;
  }

  it('a miss reads the store; a hit is synchronous and the same object', async () => {
    const id = await addKey('sync-hit', 'sk-1');
    const c = cache();
    const first = c.resolve(ws, 'virtual_key', 'sync-hit');
    assert.ok(first instanceof Promise);
    const cred = await value(first);
    assert.equal(cred?.id, id);
    assert.equal(cred?.fields.api_key, 'sk-1');
    const second = c.resolve(ws, 'virtual_key', 'sync-hit');
    assert.ok(!(second instanceof Promise));
    assert.equal(await value(second), cred);
    // By id it is another entry, and `@slug` looks up slugs only.
    assert.ok(c.resolve(ws, 'virtual_key', id) instanceof Promise);
    assert.equal(await value(c.resolve(ws, 'provider', id)), null);
  });

  it('entries expire after 30 s', async () => {
    await addKey('ttl', 'sk-ttl');
    const c = cache();
    await value(c.resolve(ws, 'virtual_key', 'ttl'));
    clock += 30_000;
    assert.ok(!(c.resolve(ws, 'virtual_key', 'ttl') instanceof Promise));
    clock += 1;
    assert.ok(c.resolve(ws, 'virtual_key', 'ttl') instanceof Promise);
  });

  it('a change notice drops the key’s entries; a new key replaces a cached "not found"; all drops everything', async () => {
    const id = await addKey('changing', 'sk-old');
    const c = cache();
    await value(c.resolve(ws, 'virtual_key', 'changing'));
    assert.equal(await value(c.resolve(ws, 'virtual_key', 'not-yet')), null);
    await store.virtualKeys.update(id, { credentials: secrets.encrypt(JSON.stringify({ api_key: 'sk-new' }), id) });
    const after = c.resolve(ws, 'virtual_key', 'changing');
    assert.ok(after instanceof Promise);
    assert.equal((await value(after))?.fields.api_key, 'sk-new');
    await addKey('not-yet', 'sk-late');
    assert.equal((await value(c.resolve(ws, 'virtual_key', 'not-yet')))?.fields.api_key, 'sk-late');
    store.changes.deliver({ kind: 'all', id: '*' });
    assert.ok(c.resolve(ws, 'virtual_key', 'changing') instanceof Promise);
  });

  it('an integration change drops its providers', async () => {
    const integrationId = newId();
    const providerId = newId();
    const made = await store.integrations.create(
      {
        id: integrationId, slug: `int-${integrationId.slice(-6)}`, name: 'i', description: null, provider: 'openai', workspaceId: ws,
        credentials: secrets.encrypt(JSON.stringify({ api_key: 'sk-int' }), integrationId), configurations: null, pricingAdjustments: null, secretMappings: null,
      },
      { id: providerId, slug: 'int-provider', workspaceId: ws, name: 'p', provider: 'openai', integrationId, credentials: null, settings: null, note: null },
    );
    assert.ok(made.ok);
    const c = cache();
    const cred = await value(c.resolve(ws, 'provider', 'int-provider'));
    assert.equal(cred?.fields.api_key, 'sk-int');
    assert.equal(cred?.integrationId, integrationId);
    assert.equal(cred?.allowAllModels, true);
    await store.integrations.putModels(integrationId, [{ slug: 'm', enabled: false, configurations: null, pricingConfig: null }], false);
    const updated = await value(c.resolve(ws, 'provider', 'int-provider'));
    assert.equal(updated?.allowAllModels, false);
    assert.deepEqual(updated?.models.get('m'), { enabled: false, customHost: undefined, pricing: null });
  });

  it('holds at most `max` entries, dropping the oldest', async () => {
    for (const s of ['cap-a', 'cap-b', 'cap-c']) await addKey(s, `sk-${s}`);
    const c = cache({ max: 2 });
    for (const s of ['cap-a', 'cap-b', 'cap-c']) await value(c.resolve(ws, 'virtual_key', s));
    assert.ok(c.resolve(ws, 'virtual_key', 'cap-a') instanceof Promise, 'the oldest went');
    assert.ok(!(c.resolve(ws, 'virtual_key', 'cap-c') instanceof Promise));
  });

  it('concurrent misses share one lookup', async () => {
    await addKey('shared-miss', 'sk-shared');
    const c = cache();
    const a = c.resolve(ws, 'virtual_key', 'shared-miss');
    const b = c.resolve(ws, 'virtual_key', 'shared-miss');
    assert.ok(a instanceof Promise);
    assert.equal(a, b);
    assert.equal(await value(a), await value(b));
  });

  it('a lookup that overlaps a change is answered but neither kept nor shared with later callers', async () => {
    const id = await addKey('racing', 'sk-before');
    const c = cache();
    const pending = c.resolve(ws, 'virtual_key', 'racing');
    store.changes.publish({ kind: 'virtual_key', id });
    const later = c.resolve(ws, 'virtual_key', 'racing');
    assert.ok(later instanceof Promise);
    assert.notEqual(later, pending);
    await value(pending);
    await value(later);
    // The later lookup began after the change: it is kept.
    assert.ok(!(c.resolve(ws, 'virtual_key', 'racing') instanceof Promise));
  });

  it('another workspace finds nothing', async () => {
    await addKey('mine-only', 'sk-mine');
    const other = await store.workspaces.create({ slug: 'other-ws', name: 'o', description: null, metadata: null, settings: null, defaults: null });
    assert.equal(await value(cache().resolve(other.id, 'virtual_key', 'mine-only')), null);
  });

  it('a blob that does not decrypt is a 500 naming the key, told to onUnreadable with the id only', async () => {
    const id = await addKey('garbled', 'sk-garbled');
    const moved = await addKey('moved-from', 'sk-moved');
    const row = await store.db.get<{ credentials: string }>('SELECT credentials FROM virtual_keys WHERE id = ?', [moved]);
    await store.virtualKeys.update(id, { credentials: row!.credentials });
    const told: [string, string][] = [];
    const out = await cache({ onUnreadable: (what, at) => told.push([what, at]) }).resolve(ws, 'virtual_key', 'garbled');
    assert.ok(!out.ok);
    assert.equal(out.error.status, 500);
    assert.equal(out.error.code, 'credentials_unreadable');
    assert.deepEqual(told, [["virtual key 'garbled'", id]]);
  });
});
