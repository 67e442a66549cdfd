// The shared Redis connection: up against the CI's Redis; a Redis that is not
// there or goes away makes commands fail at once (no queueing) and shows as
// down, and its return is noticed without a restart. A TCP proxy in front of
// the real server stands in for the network: closing it is Redis going away.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { SharedRedis, type RedisStatus } from '../src/state/redis.js';
import { readSettings } from '../src/settings.js';
import { freePort, until } from './support/http.js';
import { REDIS_URL, RedisProxy } from './support/redis.js';

describe('shared redis connection', () => {
  const opened: SharedRedis[] = [];
  const proxies: RedisProxy[] = [];
  afterEach(async () => {
    for (const r of opened.splice(0)) await r.close();
    for (const p of proxies.splice(0)) await p.stop();
  });
  function open(url: string, onStatus?: (s: RedisStatus) => void): SharedRedis {
    const r = new SharedRedis(url, { maxBackoffMs: 100, onStatus });
    opened.push(r);
    return r;
  }

  it('does not connect until started; then is up and answers', async () => {
    const r = open(REDIS_URL);
    assert.equal(r.status(), 'down');
    assert.equal(r.client.status, 'wait');
    await r.start();
    assert.equal(r.status(), 'up');
    assert.equal(await r.ping(), true);
    assert.equal(await r.client.set('sy_test_conn', '1', 'PX', 1000), 'OK');
  });

  it('with nothing listening: start resolves, status is down, commands fail at once', async () => {
    const r = open(`redis://127.0.0.1:${await freePort()}`);
    await r.start();
    assert.equal(r.status(), 'down');
    const t0 = performance.now();
    await assert.rejects(r.client.get('x'), /enableOfflineQueue|writeable/);
    assert.equal(await r.ping(), false);
    assert.ok(performance.now() - t0 < 100, 'no waiting for a connection');
  });

  it('started while Redis is away: comes up when Redis does', async () => {
    const proxy = new RedisProxy(await freePort());
    proxies.push(proxy);
    const r = open(proxy.url);
    await r.start();
    assert.equal(r.status(), 'down');
    await proxy.start();
    await until('status up', () => r.status() === 'up');
    assert.equal(await r.ping(), true);
  });

  it('Redis going away: down, commands fail fast; back: up again without a restart', async () => {
    const proxy = new RedisProxy(await freePort());
    proxies.push(proxy);
    await proxy.start();
    const seen: RedisStatus[] = [];
    const r = open(proxy.url, (s) => seen.push(s));
    await r.start();
    assert.equal(r.status(), 'up');

    await proxy.stop();
    await until('status down', () => r.status() === 'down');
    const t0 = performance.now();
    await assert.rejects(r.client.incr('sy_test_gone'));
    assert.ok(performance.now() - t0 < 100, 'failed without queueing');

    await proxy.start();
    await until('status up', () => r.status() === 'up');
    assert.equal(await r.ping(), true);
    assert.deepEqual(seen, ['up', 'down', 'up']);
  });

  it('a command in flight when the connection drops fails instead of being resent later', async () => {
    const proxy = new RedisProxy(await freePort());
    proxies.push(proxy);
    await proxy.start();
    const r = open(proxy.url);
    await r.start();
    const key = `sy_test_inflight_${process.pid}`;
    // The script keeps the server busy for 300 ms before counting: the connection drops while it runs.
    const slowIncr = `
      local t = redis.call('TIME')
      local start = t[1] * 1000000 + t[2]
      repeat local n = redis.call('TIME') until n[1] * 1000000 + n[2] - start > 300000
      redis.call('INCR', KEYS[1])
      redis.call('PEXPIRE', KEYS[1], 5000)
      return 1`;
    const pending = r.client.eval(slowIncr, 1, key);
    await sleep(50);
    await proxy.stop();
    await assert.rejects(pending);
    await proxy.start();
    await until('status up', () => r.status() === 'up');
    await sleep(50);
    assert.equal(await r.client.get(key), '1', 'nothing was resent after the reconnect');
    await r.client.del(key);
  });

  it('close ends the connection', async () => {
    const r = open(REDIS_URL);
    await r.start();
    await r.close();
    assert.equal(r.client.status, 'end');
    assert.equal(r.status(), 'down');
  });

  it('closed while Redis is away: no reconnect when it returns', async () => {
    const proxy = new RedisProxy(await freePort());
    proxies.push(proxy);
    await proxy.start();
    const r = open(proxy.url);
    await r.start();
    await proxy.stop();
    await until('status down', () => r.status() === 'down');
    await r.close();
    await proxy.start();
    await sleep(300);
    assert.equal(r.status(), 'down');
    // Closing a connection that never came up is fine too.
    const never = open(`redis://127.0.0.1:${await freePort()}`);
    await never.start();
    await never.close();
    assert.equal(never.status(), 'down');
  });

  it('REDIS_URL is read from the environment and must be a redis URL', () => {
    assert.equal(readSettings({}).redisUrl, undefined);
    assert.equal(readSettings({ REDIS_URL: '' }).redisUrl, undefined);
    assert.equal(readSettings({ REDIS_URL: 'redis://127.0.0.1:6379/2' }).redisUrl, 'redis://127.0.0.1:6379/2');
    assert.equal(readSettings({ REDIS_URL: 'rediss://cache.internal:6380' }).redisUrl, 'rediss://cache.internal:6380');
    for (const bad of ['127.0.0.1:6379', 'http://127.0.0.1:6379', 'redis://:hunter2@[bad']) {
      assert.throws(
        () => readSettings({ REDIS_URL: bad }),
        (e: Error) => e.message.startsWith('REDIS_URL') && !e.message.includes('hunter2'),
      );
    }
  });
});
