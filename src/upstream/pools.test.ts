// The gateway's pools by origin (pools.ts) against loopback servers that keep
// connections alive and count them: at most `max` origins hold sockets, the
// one used least recently is closed first, its calls in flight still answer.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { UpstreamCall, type UpstreamResponse } from './answer.js';
import { Cancel } from './cancel.js';
import { POOL_OPTIONS } from './client.js';
import { Pools } from './pools.js';

interface Origin {
  url: string;
  server: Server;
  /** Connections accepted, and those still open. */
  accepted: number;
  open: Set<Socket>;
  /** Answers held back by `hold`, released by `release`. */
  held: ServerResponse[];
  hold: boolean;
}

const origins: Origin[] = [];

async function origin(connection = 'keep-alive'): Promise<Origin> {
  const o: Origin = { url: '', server: createServer(), accepted: 0, open: new Set(), held: [], hold: false };
  o.server.on('connection', (s: Socket) => {
    o.accepted++;
    o.open.add(s);
    s.once('close', () => o.open.delete(s));
  });
  o.server.on('request', (req, res: ServerResponse) => {
    req.resume();
    res.setHeader('connection', connection);
    if (o.hold) o.held.push(res);
    else res.end('{}');
  });
  o.server.listen(0, '127.0.0.1');
  await once(o.server, 'listening');
  o.url = `http://127.0.0.1:${(o.server.address() as AddressInfo).port}`;
  origins.push(o);
  return o;
}

after(async () => {
  for (const o of origins) {
    o.server.closeAllConnections();
    o.server.close();
  }
});

function call(pools: Pools, o: Origin): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    pools.dispatch({ origin: o.url, path: '/', method: 'POST', headers: {}, body: '{}' }, new UpstreamCall(new Cancel(), true, resolve, reject));
  });
}

/** The status and body of a call's answer, read to its end. */
async function answer(res: Promise<UpstreamResponse>): Promise<string> {
  const r = await res;
  let body = '';
  for await (const chunk of r.body) body += String(chunk);
  return `${r.statusCode} ${body}`;
}

const answered = (pools: Pools, o: Origin): Promise<string> => answer(call(pools, o));

/** Until the servers have seen what the client did to its sockets. */
async function until(what: string, holds: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !holds(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(holds(), what);
}

/** Pools with room for one origin: `a`'s call held by its server while a call to `b` closes a's pool for room. */
async function closedInFlight(): Promise<{ pools: Pools; a: Origin; waiting: Promise<UpstreamResponse> }> {
  const pools = new Pools(POOL_OPTIONS, 1);
  const [a, b] = [await origin(), await origin()];
  a.hold = true;
  const waiting = call(pools, a);
  await until('a has the request', () => a.held.length === 1);
  assert.equal(await answered(pools, b), '200 {}');
  assert.equal(pools.size, 1);
  return { pools, a, waiting };
}

describe('Pools', () => {
  it('past `max` origins, a new one closes the pool used least recently; the others keep their sockets', async () => {
    const pools = new Pools(POOL_OPTIONS, 2);
    const [a, b, c] = [await origin(), await origin(), await origin()];
    assert.equal(await answered(pools, a), '200 {}');
    assert.equal(await answered(pools, b), '200 {}');
    assert.equal(await answered(pools, c), '200 {}');
    assert.equal(pools.size, 2);
    await until("a's socket closed", () => a.open.size === 0);
    assert.equal(b.open.size, 1);
    // b used again, so c is now the least recent: a's return closes c's pool, not b's.
    assert.equal(await answered(pools, b), '200 {}');
    assert.equal(await answered(pools, a), '200 {}');
    await until("c's socket closed", () => c.open.size === 0);
    assert.equal(b.open.size, 1);
    assert.equal(b.accepted, 1, "b's one connection was kept alive throughout");
    assert.equal(a.accepted, 2, 'a reconnected in a new pool');
    await pools.close();
    await until('every socket closed', () => a.open.size + b.open.size === 0);
  });

  it('a pool closed for a new origin lets its calls in flight answer first', async () => {
    const { pools, a, waiting } = await closedInFlight();
    a.held[0]!.end('{"late":true}');
    assert.equal(await answer(waiting), '200 {"late":true}');
    await until("a's socket closed once it answered", () => a.open.size === 0);
    await pools.close();
  });

  it('close() waits for the calls in flight of a pool closed before for room', async () => {
    const { pools, a, waiting } = await closedInFlight();
    let closed = false;
    const closing = pools.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(closed, false, "close() resolved while a's call was in flight");
    a.held[0]!.end('{}');
    assert.equal(await answer(waiting), '200 {}');
    await closing;
  });

  it('an origin undici cannot parse fails its call and closes no other pool', async () => {
    const pools = new Pools(POOL_OPTIONS, 1);
    const a = await origin();
    assert.equal(await answered(pools, a), '200 {}');
    await assert.rejects(call(pools, { ...a, url: `${a.url}?x` }), /invalid url/i);
    assert.equal(pools.size, 1);
    assert.equal(a.open.size, 1);
    await pools.close();
  });

  it('a pool whose sockets have all closed is dropped', async () => {
    const pools = new Pools(POOL_OPTIONS, 4);
    const a = await origin('close');
    assert.equal(await answered(pools, a), '200 {}');
    await until('the pool dropped', () => pools.size === 0);
    assert.equal(await answered(pools, a), '200 {}');
    await pools.close();
  });

  it('a pool that could not connect is dropped', async () => {
    const pools = new Pools(POOL_OPTIONS, 4);
    const gone = await origin();
    gone.server.close();
    await once(gone.server, 'close');
    await assert.rejects(call(pools, gone), /ECONNREFUSED/);
    assert.equal(pools.size, 0);
    await pools.close();
  });
});
