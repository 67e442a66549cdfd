/** Small helpers shared by the black-box HTTP tests. */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** Asserts the contract's error envelope and returns it. */
export async function assertEnvelope(
  res: Response,
  status: number,
): Promise<{ message: string; type: string; code: string; param: string | null }> {
  const text = await res.text();
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${text}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  return envelopeOf(text);
}

/** Parses an error body and checks it has exactly the contract's shape. */
export function envelopeOf(text: string): { message: string; type: string; code: string; param: string | null } {
  const body = JSON.parse(text) as { error: { message: string; type: string; code: string; param: string | null } };
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  assert.equal(typeof body.error.type, 'string');
  assert.equal(typeof body.error.code, 'string');
  assert.ok(body.error.param === null || typeof body.error.param === 'string');
  return body.error;
}

/** A port nobody listens on right now (for child processes that cannot report theirs). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Reads an SSE body, noting when each `data:` event arrived (performance.now()). */
export async function readEvents(res: Response): Promise<{ data: string; at: number }[]> {
  const events: { data: string; at: number }[] = [];
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const at = performance.now();
    buf += decoder.decode(chunk, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) !== -1) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      for (const line of block.split('\n')) if (line.startsWith('data: ')) events.push({ data: line.slice(6), at });
    }
  }
  return events;
}

/**
 * Reads a relayed SSE answer and checks it is the provider's events in order and
 * was not buffered: the first event arrives within `firstWithinMs` of `t0`, the
 * last at least `spreadMs` after the first (a buffering relay delivers them together).
 */
export async function assertStreamedAsSent(res: Response, sent: string[], t0: number, firstWithinMs: number, spreadMs: number): Promise<void> {
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events = await readEvents(res);
  assert.deepEqual(
    events.map((e) => e.data),
    [...sent, '[DONE]'],
  );
  const first = events[0]!.at - t0;
  const last = events.at(-1)!.at - t0;
  assert.ok(first < firstWithinMs && last - first >= spreadMs, `first at ${first.toFixed(0)} ms, last at ${last.toFixed(0)} ms`);
}

/** Reads `get` until `done` holds of what it gave, and returns that; fails after `ms`, naming the last value. */
export async function untilValue<T>(what: string, get: () => Promise<T>, done: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (done(v)) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await sleep(25);
  }
}

/** Waits until `cond` holds; fails after `ms`. */
export async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Writes an answer that never ends, as fast as the reader reads it, until the connection closes (a provider or token
 * endpoint that would fill the gateway's memory if read whole). Returns the bytes written so far.
 */
export function endlessAnswer(res: ServerResponse, contentType = 'application/json', fill = 32): () => number {
  let written = 0;
  res.writeHead(200, { 'content-type': contentType });
  const chunk = Buffer.alloc(64 * 1024, fill);
  const pump = (): void => {
    while (!res.destroyed) {
      written += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  pump();
  return () => written;
}
